// block_encoder.cpp - picks a mapping for each block and writes its payload
// (encode_block in block_codec.hpp).
#include <algorithm>
#include <cstring>

#include "core/byte_io.hpp"
#include "entropy/cost_model.hpp"
#include "mapping/block_codec.hpp"
#include "mapping/elements.hpp"
#include "mapping/hybrid_tokens.hpp"
#include "mapping/token_map.hpp"

namespace mans::detail {

namespace {

// Mode selection looks at a sample: the whole block when it is small, else
// evenly spaced runs of consecutive elements (runs keep the delta predictor
// meaningful).
constexpr std::size_t kSampleRun = 256;
constexpr std::size_t kSampleRuns = 32;

struct Stats {
    std::uint64_t min = 0, max = 0;
    std::uint64_t sum = 0;  // of biased values; only read for B <= 32, where it cannot overflow
};

template <typename U>
class BlockEncoder {
public:
    using E = Elem<U>;
    // `nested`: codes the index array of a dictionary block, which may not
    // itself use a dictionary.
    BlockEncoder(const std::uint8_t* src, std::size_t n, std::uint64_t flip, const RansKernels& k,
                 BlockScratch& sc, std::vector<std::uint8_t>& out, bool nested = false)
        : x_(src), n_(n), flip_(flip), kernels_(k), sc_(sc), out_(out),
          lay_(LaneLayout::make(n, lanes_for(n))), nested_(nested) {}

    void run(ModeHint hint) {
        const std::size_t start = out_.size();
        stats_ = block_stats();
        if (hint == ModeHint::automatic && stats_.min == stats_.max) hint = ModeHint::constant;
        bool ok = false;
        if (hint != ModeHint::automatic) {
            ok = put_mode(hint);
        } else {
            Candidate ranked[kCandidates];
            rank_modes(ranked);
            ok = put_mode(ranked[0].hint);
            // Data with few distinct values spread over a wide range (holes)
            // may code better as indices into a dictionary; that is decided
            // by coding both.
            if (ok && dictionary_candidate_) {
                const std::size_t first_end = out_.size();
                if (put_mode(ModeHint::dictionary) && out_.size() - first_end < first_end - start)
                    out_.erase(out_.begin() + static_cast<std::ptrdiff_t>(start),
                               out_.begin() + static_cast<std::ptrdiff_t>(first_end));
                else
                    out_.resize(first_end);
            }
        }
        // Never expand: a block that does not shrink is stored.
        if (!ok || out_.size() - start >= 1 + n_ * sizeof(U)) {
            out_.resize(start);
            put_stored();
        }
    }

private:
    struct Candidate {
        ModeHint hint;
        std::uint64_t cost;  // estimated bits on the sample, 16.16
    };
    static constexpr unsigned kCandidates = 5;

    // Appends the payload of one mapping; false when it cannot code the block.
    bool put_mode(ModeHint hint) {
        const std::size_t start = out_.size();
        bool ok = false;
        switch (hint) {
            case ModeHint::constant: ok = stats_.min == stats_.max && put_constant(); break;
            case ModeHint::token_center: ok = put_token(Predictor::center); break;
            case ModeHint::token_delta: ok = put_token(Predictor::lane_previous); break;
            case ModeHint::token_repeat: ok = put_token(Predictor::center_repeat); break;
            case ModeHint::adm: ok = adm_possible() && put_adm(); break;
            case ModeHint::byte_planes: ok = put_byte_planes(); break;
            case ModeHint::dictionary: ok = !nested_ && put_dictionary(); break;
            default: break;
        }
        if (!ok) out_.resize(start);
        return ok;
    }

    Stats block_stats() const {
        Stats s;
        s.min = E::mask;
        s.max = 0;
        for (std::size_t i = 0; i < n_; ++i) {
            const std::uint64_t u = load_biased<U>(x_, i, flip_);
            s.min = u < s.min ? u : s.min;
            s.max = u > s.max ? u : s.max;
            s.sum += u;
        }
        return s;
    }

    // Indices of sampled elements, in runs.
    template <typename Fn>
    void for_each_sampled(Fn&& fn) const {
        if (n_ <= kSampleRun * kSampleRuns) {
            for (std::size_t i = 0; i < n_; ++i) fn(i);
            return;
        }
        const std::size_t stride = n_ / kSampleRuns;
        for (std::size_t r = 0; r < kSampleRuns; ++r)
            for (std::size_t i = r * stride; i < r * stride + kSampleRun; ++i) fn(i);
    }

    // Median of every 4th sampled element (plenty for a center); also notes
    // whether the sample looks like few distinct values with holes between
    // them, the case a dictionary helps.
    std::uint64_t sample_median() {
        auto& s = sc_.sample;
        s.clear();
        std::size_t k = 0;
        for_each_sampled([&](std::size_t i) {
            if ((k++ & 3) == 0) s.push_back(load_biased<U>(x_, i, flip_));
        });
        std::sort(s.begin(), s.end());
        const std::uint64_t median = s[s.size() / 2];
        // Holes test on the central 98 % (outliers alone do not make holes
        // that a dictionary removes profitably).
        const std::size_t lo = s.size() / 100, hi = s.size() - 1 - s.size() / 100;
        const std::uint64_t span = s[hi] - s[lo] + 1;
        const std::size_t distinct =
            static_cast<std::size_t>(std::unique(s.begin() + static_cast<std::ptrdiff_t>(lo),
                                                 s.begin() + static_cast<std::ptrdiff_t>(hi) + 1) -
                                     (s.begin() + static_cast<std::ptrdiff_t>(lo)));
        dictionary_candidate_ = !nested_ && E::B >= 16 && s.size() >= 64 &&
                                2 * static_cast<std::uint64_t>(distinct) <= span && distinct * 4 <= s.size();
        return median;
    }

    // ADM's center as published: floor of the block mean (B <= 32 only).
    std::uint64_t mean_center() const { return stats_.sum / n_; }

    bool adm_possible() const {
        if (E::B != 16 && E::B != 32) return false;
        const std::uint64_t limit = static_cast<std::uint64_t>(kAdmStep) * kAdmMaxK;
        const std::uint64_t c = mean_center();
        return stats_.max - c <= limit && c - stats_.min <= limit;
    }

    // Estimates every mapping on the sample and puts the best first in `out`
    // (the best two are re-estimated with contexts). Also fixes the center
    // and the token splits.
    void rank_modes(Candidate* out) {
        center_ = sample_median();
        ValueHist hc, hd, hr;
        std::uint32_t repeats = 0;
        std::uint32_t planes[8][256] = {};
        std::uint32_t adm_codes[256] = {};
        std::uint64_t adm_bits = 0;
        const bool adm_ok = adm_possible();
        const std::uint64_t adm_c = adm_ok ? mean_center() : 0;
        const unsigned nplanes = plane_count();
        std::uint32_t sampled = 0;
        for_each_sampled([&](std::size_t i) {
            ++sampled;
            const std::uint64_t u = load_biased<U>(x_, i, flip_);
            const std::uint64_t vc = zigzag((u - center_) & E::mask, E::B);
            hc.add(vc);
            const std::uint64_t prev = i ? load_biased<U>(x_, i - 1, flip_) : center_;
            hd.add(zigzag((u - prev) & E::mask, E::B));
            // Repeats of values that would need raw bits (>= 256 needs them
            // under every split).
            if (u == prev && vc >= 256)
                ++repeats;
            else
                hr.add(vc);
            const std::uint64_t w = u - stats_.min;
            for (unsigned b = 0; b < nplanes; ++b) ++planes[b][(w >> (8 * b)) & 0xff];
            if (adm_ok) {
                unsigned k = 0;
                ++adm_codes[adm_code(u, adm_c, &k)];
                adm_bits += k;
            }
        });
        split_center_ = best_split(hc, E::B);
        split_delta_ = best_split(hd, E::B);
        split_repeat_ = repeats ? best_split(hr, E::B, repeats) : HybridChoice{};
        unsigned count = 0;
        out[count++] = {ModeHint::token_center, split_center_.cost};
        out[count++] = {ModeHint::token_delta, split_delta_.cost};
        // The repeat token only pays (and is only worth a trial) with enough repeats.
        if (repeats >= sampled / 64 && repeats) out[count++] = {ModeHint::token_repeat, split_repeat_.cost};
        std::uint64_t plane_cost = 0;
        for (unsigned b = 0; b < nplanes; ++b) plane_cost += estimate_order0_fix16(planes[b]);
        out[count++] = {ModeHint::byte_planes, plane_cost};
        if (adm_ok) out[count++] = {ModeHint::adm, estimate_order0_fix16(adm_codes) + adm_bits * kFixOne};
        // Ties break on the hint so that the order is fully determined.
        const auto by_cost = [](const Candidate& a, const Candidate& b) {
            return a.cost != b.cost ? a.cost < b.cost : a.hint < b.hint;
        };
        std::sort(out, out + count, by_cost);
        // Order-0 estimates miss what the context model gains: re-estimate
        // the closest candidates with contexts before deciding.
        const unsigned refine = count < 2 ? count : 2;
        for (unsigned c = 0; c < refine; ++c) out[c].cost = refined_cost(out[c].hint);
        std::sort(out, out + refine, by_cost);
    }

    // Context-aware estimate on the sample of a token stream whose token and
    // raw-bit count for element i come from tok_of(i, prev_u, &nraw). Sample
    // runs restart the context like lane starts do.
    template <typename TokenOf>
    std::uint64_t sample_stream_cost(TokenOf&& tok_of) const {
        std::uint32_t hist8[kMaxContexts][256] = {};
        std::uint64_t raw_bits = 0;
        std::size_t last = ~std::size_t{0};
        unsigned prev_tok = 0;
        for_each_sampled([&](std::size_t i) {
            const bool run_start = i != last + 1;
            last = i;
            const std::uint64_t prev_u = i ? load_biased<U>(x_, i - 1, flip_) : center_;
            unsigned nraw = 0;
            const unsigned tok = tok_of(i, prev_u, &nraw);
            ++hist8[run_start ? 0 : token_class8(prev_tok)][tok];
            raw_bits += nraw;
            prev_tok = tok;
        });
        return estimate_context_cost_fix16(hist8, nullptr) + raw_bits * kFixOne;
    }

    std::uint64_t refined_cost(ModeHint hint) const {
        switch (hint) {
            case ModeHint::token_center:
            case ModeHint::token_delta:
            case ModeHint::token_repeat: {
                const HybridChoice& ch = hint == ModeHint::token_center  ? split_center_
                                         : hint == ModeHint::token_delta ? split_delta_
                                                                         : split_repeat_;
                const unsigned repeat_tok = hybrid_token_count(ch.split, E::B);
                return sample_stream_cost([&](std::size_t i, std::uint64_t prev_u, unsigned* nraw) {
                    const std::uint64_t u = load_biased<U>(x_, i, flip_);
                    const std::uint64_t ref = hint == ModeHint::token_delta ? prev_u : center_;
                    unsigned tok = hybrid_token(zigzag((u - ref) & E::mask, E::B), ch.split, nraw);
                    if (hint == ModeHint::token_repeat && u == prev_u && *nraw) tok = repeat_tok, *nraw = 0;
                    return tok;
                });
            }
            case ModeHint::byte_planes: {
                std::uint64_t cost = 0;
                for (unsigned b = 0; b < plane_count(); ++b)
                    cost += sample_stream_cost([&](std::size_t i, std::uint64_t, unsigned* nraw) {
                        *nraw = 0;
                        return static_cast<unsigned>(((load_biased<U>(x_, i, flip_) - stats_.min) >> (8 * b)) & 0xff);
                    });
                return cost;
            }
            case ModeHint::adm: {
                const std::uint64_t c = mean_center();
                return sample_stream_cost([&](std::size_t i, std::uint64_t, unsigned* nraw) {
                    return adm_code(load_biased<U>(x_, i, flip_), c, nraw);  // k signal bits
                });
            }
            default:
                return ~0ull;
        }
    }

    unsigned plane_count() const {
        const std::uint64_t range = stats_.max - stats_.min;
        unsigned p = 0;
        while (p < sizeof(U) && (range >> (8 * p))) ++p;
        return p;
    }

    void put_le(std::uint64_t v, unsigned bytes) {
        for (unsigned b = 0; b < bytes; ++b) out_.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
    }
    void put_value(std::uint64_t v) { put_le(v, sizeof(U)); }

    void put_stored() {
        out_.push_back(static_cast<std::uint8_t>(BlockMode::stored));
        const std::size_t old = out_.size();
        out_.resize(old + n_ * sizeof(U));
        std::memcpy(out_.data() + old, x_, n_ * sizeof(U));
    }

    bool put_constant() {
        out_.push_back(static_cast<std::uint8_t>(BlockMode::constant));
        put_value(stats_.min);
        return true;
    }

    bool put_tokens_and_bits() {
        if (!encode_token_stream(sc_.tokens.data(), lay_, kernels_, sc_.stream, out_)) return false;
        put_le(sc_.bits.size(), 4);
        out_.insert(out_.end(), sc_.bits.begin(), sc_.bits.end());
        return true;
    }

    bool put_token(Predictor pred) {
        if (split_center_.cost == ~0ull) {  // forced mode: the splits are still needed
            Candidate unused[kCandidates];
            rank_modes(unused);
        }
        if (pred == Predictor::center_repeat && split_repeat_.cost == ~0ull)
            split_repeat_ = best_split(ValueHist{}, E::B, 1);  // no repeats seen: any valid split
        const HybridSplit split = pred == Predictor::center          ? split_center_.split
                                  : pred == Predictor::lane_previous ? split_delta_.split
                                                                     : split_repeat_.split;
        out_.push_back(static_cast<std::uint8_t>(BlockMode::token));
        out_.push_back(static_cast<std::uint8_t>(pred));
        put_value(center_);
        out_.push_back(static_cast<std::uint8_t>(split.s));
        out_.push_back(static_cast<std::uint8_t>(split.m));
        sc_.tokens.resize(lay_.slots());
        with_predictor(pred, [&](auto p) {
            tokenize_hybrid<U, decltype(p)::value>(x_, lay_, flip_, center_, split, sc_.tokens.data(), &sc_.bits);
            return true;
        });
        return put_tokens_and_bits();
    }

    bool put_adm() {
        const std::uint64_t c = mean_center();
        out_.push_back(static_cast<std::uint8_t>(BlockMode::adm));
        put_value(c);
        sc_.tokens.resize(lay_.slots());
        BitWriter bw(&sc_.bits, n_ * kAdmMaxK);
        for_each_element(lay_, [&](std::size_t slot, std::size_t i) {
            unsigned k = 0;
            sc_.tokens[slot] = static_cast<std::uint8_t>(adm_code(load_biased<U>(x_, i, flip_), c, &k));
            bw.put(1ull << (k - 1), k);  // k-1 zeros, then a one
        });
        bw.flush();
        return put_tokens_and_bits();
    }

    bool put_byte_planes() {
        const unsigned nplanes = plane_count();
        if (nplanes == 0) return false;  // a constant block has no planes: stored/constant instead
        out_.push_back(static_cast<std::uint8_t>(BlockMode::byte_planes));
        put_value(stats_.min);
        out_.push_back(static_cast<std::uint8_t>(nplanes));
        sc_.tokens.resize(lay_.slots());
        for (unsigned b = 0; b < nplanes; ++b) {
            for_each_element(lay_, [&](std::size_t slot, std::size_t i) {
                const std::uint64_t w = load_biased<U>(x_, i, flip_) - stats_.min;
                sc_.tokens[slot] = static_cast<std::uint8_t>(w >> (8 * b));
            });
            if (!encode_token_stream(sc_.tokens.data(), lay_, kernels_, sc_.stream, out_)) return false;
        }
        return true;
    }

    void put_varint(std::uint64_t v) {
        std::uint8_t buf[kMaxVarintBytes];
        out_.insert(out_.end(), buf, buf + encode_varint(v, buf));
    }

    // Mode 5: sorted distinct values (gap-coded), then the element indices
    // as a nested u32 block coded by the same mappings.
    bool put_dictionary() {
        if (E::B < 16) return false;  // a u32 index per byte value never pays
        auto& dict = sc_.dict;
        auto& index = sc_.index;
        index.resize(n_);
        if (E::B <= 16) {
            // Counting: a map over the whole 16-bit value space.
            std::vector<std::uint32_t>& map = sc_.value_map;
            map.assign(std::size_t{1} << E::B, 0);
            for (std::size_t i = 0; i < n_; ++i) map[load_biased<U>(x_, i, flip_)] = 1;
            dict.clear();
            for (std::uint32_t v = 0; v < map.size(); ++v)
                if (map[v]) map[v] = static_cast<std::uint32_t>(dict.size()), dict.push_back(v);
            if (dict.size() * 2 > n_) return false;
            for (std::size_t i = 0; i < n_; ++i) index[i] = map[load_biased<U>(x_, i, flip_)];
        } else {
            dict.resize(n_);
            for (std::size_t i = 0; i < n_; ++i) dict[i] = load_biased<U>(x_, i, flip_);
            std::sort(dict.begin(), dict.end());
            dict.erase(std::unique(dict.begin(), dict.end()), dict.end());
            if (dict.size() * 2 > n_) return false;
            for (std::size_t i = 0; i < n_; ++i)
                index[i] = static_cast<std::uint32_t>(
                    std::lower_bound(dict.begin(), dict.end(), load_biased<U>(x_, i, flip_)) - dict.begin());
        }
        out_.push_back(static_cast<std::uint8_t>(BlockMode::dictionary));
        put_varint(dict.size() - 1);
        put_value(dict[0]);
        for (std::size_t d = 1; d < dict.size(); ++d) put_varint(dict[d] - dict[d - 1] - 1);
        BlockEncoder<std::uint32_t> nested(reinterpret_cast<const std::uint8_t*>(index.data()), n_, 0, kernels_,
                                           sc_, out_, true);
        nested.run(ModeHint::automatic);
        return true;
    }

    const std::uint8_t* x_;
    std::size_t n_;
    std::uint64_t flip_;
    const RansKernels& kernels_;
    BlockScratch& sc_;
    std::vector<std::uint8_t>& out_;
    LaneLayout lay_;
    bool nested_ = false;
    bool dictionary_candidate_ = false;
    Stats stats_;
    std::uint64_t center_ = 0;
    HybridChoice split_center_, split_delta_, split_repeat_;
};

}  // namespace

void encode_block(DType dtype, const void* src, std::size_t n, const RansKernels& kernels,
                  BlockScratch& scratch, std::vector<std::uint8_t>& out, ModeHint hint) {
    dispatch_width(dtype, [&](auto zero) {
        using U = decltype(zero);
        BlockEncoder<U> enc(static_cast<const std::uint8_t*>(src), n, sign_flip(dtype), kernels, scratch, out);
        enc.run(hint);
    });
}

}  // namespace mans::detail
