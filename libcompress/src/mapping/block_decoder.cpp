// block_decoder.cpp - validates and decodes one block payload
// (decode_block in block_codec.hpp). Every field is checked against the
// payload; a payload must be consumed exactly.
#include <cstring>

#include "core/bit_io.hpp"
#include "core/byte_io.hpp"
#include "mapping/block_codec.hpp"
#include "mapping/elements.hpp"
#include "mapping/hybrid_tokens.hpp"
#include "mapping/token_map.hpp"

namespace mans::detail {

namespace {

template <typename U>
class BlockDecoder {
public:
    using E = Elem<U>;
    BlockDecoder(ByteReader r, std::size_t n, std::uint8_t* dst, std::uint64_t flip, const RansKernels& k,
                 BlockScratch& sc, bool nested = false)
        : r_(r), n_(n), y_(dst), flip_(flip), kernels_(k), sc_(sc), nested_(nested) {}

    Errc run() {
        std::uint8_t mode = 0;
        if (!r_.read(&mode)) return Errc::corrupt_block;
        bool ok = false;
        switch (static_cast<BlockMode>(mode)) {
            case BlockMode::stored: ok = get_stored(); break;
            case BlockMode::constant: ok = get_constant(); break;
            case BlockMode::token: ok = get_token(); break;
            case BlockMode::adm: ok = get_adm(); break;
            case BlockMode::byte_planes: ok = get_byte_planes(); break;
            case BlockMode::dictionary: ok = !nested_ && get_dictionary(); break;
            default: return Errc::corrupt_block;
        }
        // A payload must be consumed exactly.
        if (!ok || r_.remaining() != 0) return Errc::corrupt_block;
        return Errc::ok;
    }

private:
    bool get_value(std::uint64_t* v) {
        const std::uint8_t* p = nullptr;
        if (!r_.take(sizeof(U), &p)) return false;
        *v = load_le<U>(p);
        return true;
    }

    bool get_stored() {
        const std::uint8_t* p = nullptr;
        if (!r_.take(n_ * sizeof(U), &p)) return false;
        std::memcpy(y_, p, n_ * sizeof(U));
        return true;
    }

    bool get_constant() {
        std::uint64_t v = 0;
        if (!get_value(&v)) return false;
        for (std::size_t i = 0; i < n_; ++i) store_elem<U>(y_, i, v ^ flip_);
        return true;
    }

    bool get_tokens(LaneLayout* lay) {
        return decode_token_stream(r_, n_, kernels_, sc_.stream, sc_.tokens, lay);
    }

    // A token stream, then its raw-bit section (u32 length, then exactly
    // that many bytes): the twin of the encoder's put_tokens_and_bits.
    bool get_tokens_and_bits(LaneLayout* lay, const std::uint8_t** bits, std::uint32_t* len) {
        return get_tokens(lay) && r_.read(len) && r_.take(*len, bits);
    }

    bool get_token() {
        std::uint8_t pred = 0, s = 0, m = 0;
        std::uint64_t c = 0;
        if (!r_.read(&pred) || !get_value(&c) || !r_.read(&s) || !r_.read(&m)) return false;
        const HybridSplit split{s, m};
        if (pred > 2 || !hybrid_split_valid(split, E::B, pred == 2)) return false;
        LaneLayout lay;
        const std::uint8_t* bits = nullptr;
        std::uint32_t len = 0;
        if (!get_tokens_and_bits(&lay, &bits, &len)) return false;
        return with_predictor(static_cast<Predictor>(pred), [&](auto p) {
            return reconstruct_hybrid<U, decltype(p)::value>(sc_.tokens.data(), lay, flip_, c, split, bits, len, y_);
        });
    }

    bool get_adm() {
        if (E::B != 16 && E::B != 32) return false;
        std::uint64_t c = 0;
        if (!get_value(&c)) return false;
        LaneLayout lay;
        const std::uint8_t* bits = nullptr;
        std::uint32_t len = 0;
        if (!get_tokens_and_bits(&lay, &bits, &len)) return false;
        BitReader br(bits, len);
        bool bad = false;
        const std::uint8_t* tok = sc_.tokens.data();
        for_each_element(lay, [&](std::size_t slot, std::size_t i) {
            const std::uint32_t w = br.peek32();
            if (w == 0) {  // no terminating one within kAdmMaxK bits
                bad = true;
                br.get(32);
                return;
            }
            const unsigned k = static_cast<unsigned>(__builtin_ctz(w)) + 1;
            br.get(k);
            std::uint64_t u = 0;
            bad |= !adm_value(tok[slot], k, c, E::mask, &u);
            store_elem<U>(y_, i, u ^ flip_);
        });
        return !bad && bits_exact(br, len);
    }

    bool get_byte_planes() {
        std::uint64_t base = 0;
        std::uint8_t nplanes = 0;
        if (!get_value(&base) || !r_.read(&nplanes) || nplanes == 0 || nplanes > sizeof(U))
            return false;
        // Accumulate the planes of w = u - base in place, then rebase.
        std::memset(y_, 0, n_ * sizeof(U));
        unsigned lanes = 0;
        for (unsigned b = 0; b < nplanes; ++b) {
            LaneLayout lay;
            if (!get_tokens(&lay)) return false;
            if (b > 0 && lay.lanes != lanes) return false;  // all planes share one layout
            lanes = lay.lanes;
            const std::uint8_t* tok = sc_.tokens.data();
            for_each_element(lay, [&](std::size_t slot, std::size_t i) {
                store_elem<U>(y_, i, load_le<U>(y_ + i * sizeof(U)) | (static_cast<std::uint64_t>(tok[slot]) << (8 * b)));
            });
        }
        bool bad = false;
        for (std::size_t i = 0; i < n_; ++i) {
            const std::uint64_t w = load_le<U>(y_ + i * sizeof(U));
            bad |= w > E::mask - base;  // the sum would leave the type's range
            store_elem<U>(y_, i, (base + w) ^ flip_);
        }
        return !bad;
    }

    bool get_dictionary() {
        std::uint64_t count_m1 = 0, value = 0;
        if (E::B < 16 || !r_.read_varint64(&count_m1) || count_m1 >= n_ || !get_value(&value)) return false;
        // Every gap takes at least one byte: bound the allocation by the input.
        if (count_m1 > r_.remaining()) return false;
        auto& dict = sc_.dict;
        dict.resize(static_cast<std::size_t>(count_m1) + 1);
        dict[0] = value;
        for (std::size_t d = 1; d < dict.size(); ++d) {
            std::uint64_t gap_m1 = 0;
            if (!r_.read_varint64(&gap_m1) || gap_m1 >= E::mask - value) return false;  // strictly inside range
            value += gap_m1 + 1;
            dict[d] = value;
        }
        // The rest of the payload is the nested u32 block of indices.
        auto& index = sc_.index;
        index.resize(n_);
        const std::uint8_t* rest = nullptr;
        const std::size_t rest_bytes = r_.remaining();
        r_.take(rest_bytes, &rest);
        BlockDecoder<std::uint32_t> nested(ByteReader(rest, rest_bytes), n_,
                                           reinterpret_cast<std::uint8_t*>(index.data()), 0, kernels_, sc_, true);
        if (nested.run() != Errc::ok) return false;
        std::uint32_t bad = 0;
        const std::uint64_t size = dict.size();
        for (std::size_t i = 0; i < n_; ++i) {
            const std::uint32_t k = index[i];
            bad |= k >= size;
            store_elem<U>(y_, i, dict[k < size ? k : 0] ^ flip_);
        }
        return !bad;
    }

    ByteReader r_;
    std::size_t n_;
    std::uint8_t* y_;
    std::uint64_t flip_;
    const RansKernels& kernels_;
    BlockScratch& sc_;
    bool nested_ = false;
};

}  // namespace

Errc decode_block(DType dtype, const std::uint8_t* payload, std::size_t size, std::size_t n,
                  void* dst, const RansKernels& kernels, BlockScratch& scratch) {
    Errc e = Errc::unsupported_dtype;
    dispatch_width(dtype, [&](auto zero) {
        using U = decltype(zero);
        BlockDecoder<U> dec(ByteReader(payload, size), n, static_cast<std::uint8_t*>(dst), sign_flip(dtype),
                            kernels, scratch);
        e = dec.run();
    });
    return e;
}

}  // namespace mans::detail
