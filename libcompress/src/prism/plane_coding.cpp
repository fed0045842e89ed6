// plane_coding.cpp - payload = [u16: 2-bit method per context] then, for
// each context whose method is not 0, [varint stored bytes][payload]; a
// context's bits are packed in code order (bit i at bit i % 8 of byte i / 8,
// unused high bits zero).
//
// The bit work (planes as u64 words of 64 codes, significance, context
// masks, the five context streams) is plane_split_hd.hpp's MANS_HD code,
// run here by one thread with table-driven PEXT / PDEP; this file adds the
// lossless stage of each stream and the segment layout.
#include "prism/plane_coding.hpp"

#include <algorithm>
#include <cstring>

#include "backend.hpp"
#include "core/byte_io.hpp"
#include "core/team.hpp"  // SoloTeam
#include "core/status.hpp"
#include "prism/cpu_kernels.hpp"
#include "prism/lossless.hpp"
#include "prism/plane_split_hd.hpp"

namespace mans::detail::prism {
namespace {

// Bits of a word in the planes before b (the part a reader already has).
std::uint32_t higher_mask(unsigned b, unsigned planes, Coding c) {
    std::uint32_t m = 0;
    for (unsigned k = 0; k < b; ++k) m = with_plane_bit(m, k, planes, c, 1);
    return m;
}

// The segment of a plane from its five streams (stream k: the first
// ceil(bits[k] / 8) bytes of streams + k * stride), each with its best
// method (lossless.hpp).
void put_sub_blobs(const std::uint32_t* streams, std::uint64_t stride, const std::uint64_t* bits,
                   std::vector<std::uint8_t>* out) {
    Encoded e[kPlaneStreams];
    Method method[kPlaneStreams];
    const std::uint8_t* payload[kPlaneStreams];
    std::size_t size[kPlaneStreams];
    for (unsigned k = 0; k < kPlaneStreams; ++k) {
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(streams + k * stride);
        encode_best(bytes, static_cast<std::size_t>((bits[k] + 7) / 8), 1, true, &e[k]);
        method[k] = e[k].method;
        payload[k] = e[k].bytes.data();
        size[k] = e[k].bytes.size();
    }
    out->resize(plane_segment_bytes(method, size));
    write_plane_segment(method, payload, size, out->data());
}

Errc get_sub_blob(ByteReader* r, Method method, std::uint64_t nbits, std::vector<std::uint8_t>* bits) {
    std::uint64_t stored = 0;
    const std::uint8_t* p = nullptr;
    if (method != Method::zero && (!r->read_varint64(&stored) || stored > r->remaining())) return Errc::corrupt_block;
    r->take(static_cast<std::size_t>(stored), &p);
    const std::size_t nbytes = static_cast<std::size_t>((nbits + 7) / 8);
    bits->resize(nbytes);
    const Errc e = decode_payload(method, p, static_cast<std::size_t>(stored), bits->data(), nbytes, 1);
    if (e != Errc::ok) return e;
    if ((nbits % 8) && ((*bits)[nbytes - 1] >> (nbits % 8))) return Errc::corrupt_block;
    return Errc::ok;
}

void count_context_bits_portable(const std::uint64_t* sig, const std::uint64_t* fresh, std::uint64_t len,
                                 PlaneSplitScratch* scratch, std::uint64_t* total) {
    count_context_bits(SoloTeam{}, sig, fresh, len, scratch, total);
}

void split_plane_tables(const std::uint64_t* plane, const std::uint64_t* sig, const std::uint64_t* fresh,
                        std::uint64_t len, PlaneSplitScratch* scratch, std::uint32_t* streams, std::uint64_t* bits) {
    split_plane_one_pass(plane, sig, fresh, len, scratch, streams, bits, TableBitGather{});
}

void merge_plane_tables(const std::uint8_t* const* stream, const std::uint64_t* sig, const std::uint64_t* fresh,
                        std::uint64_t len, const PlaneSplitScratch& scratch, std::uint64_t* plane) {
    merge_plane(SoloTeam{}, stream, sig, fresh, len, scratch, plane, TableBitGather{});
}

}  // namespace

const PlaneBitKernels kTablePlaneBits{"tables", count_context_bits_portable, split_plane_tables, merge_plane_tables};

void transpose_planes_one_thread(const std::uint32_t* words, std::uint64_t len, unsigned planes, Coding c,
                                 std::uint64_t* bits, CodeRows code_rows) {
    const std::uint64_t nw = plane_word_count(len);
    unsigned row_of_plane[kMaxPlanes];  // the representation bit that holds plane b
    for (unsigned b = 0; b < planes; ++b)
        row_of_plane[b] = ctz32(with_plane_bit(0, b, planes, c, 1));
    std::uint64_t rows[32];
    for (std::uint64_t w = 0; w < nw; ++w) {
        const unsigned n = static_cast<unsigned>(len - 64 * w < 64 ? len - 64 * w : 64);
        code_rows(words + 64 * w, n, rows);
        for (unsigned b = 0; b < planes; ++b) bits[static_cast<std::uint64_t>(b) * nw + w] = rows[row_of_plane[b]];
    }
}

void split_plane_chunks(const std::uint32_t* words, std::uint64_t len, unsigned planes, Coding c,
                        bool after_zero_plane, const PlaneStreamsVisitor& visit) {
    const SoloTeam team;
    const std::uint64_t nw = plane_word_count(len);
    const std::uint64_t stride = stream_word_count(len);
    std::vector<std::uint64_t> bits(static_cast<std::size_t>(planes) * nw);
    transpose_planes_one_thread(words, len, planes, c, bits.data(), cpu_backend().prism_kernels().code_rows);
    std::vector<std::uint64_t> sig(nw, 0);    // significant in the planes before b
    std::vector<std::uint64_t> fresh(nw, 0);  // ... and first in plane b - 1
    std::vector<std::uint32_t> streams(static_cast<std::size_t>(kPlaneStreams * stride));
    PlaneSplitScratch scratch;
    const PlaneBitKernels& kernels = cpu_backend().plane_bits();
    auto split = [&](unsigned b, const std::uint64_t* plane, const std::uint64_t* fr, bool variant) {
        if (!plane_has_bits(team, plane, nw)) return;
        std::uint64_t stream_bits[kPlaneStreams];
        kernels.split(plane, sig.data(), fr, len, &scratch, streams.data(), stream_bits);
        visit(b, variant, streams.data(), stride, stream_bits);
    };
    for (unsigned b = 0; b < planes; ++b) {
        const std::uint64_t* plane = bits.data() + static_cast<std::size_t>(b) * nw;
        split(b, plane, fresh.data(), false);
        if (b == 1 && after_zero_plane) {  // an all-zero plane between leaves no code fresh
            const std::vector<std::uint64_t> none(nw, 0);
            split(b, plane, none.data(), true);
        }
        advance_significance(team, plane, sig.data(), fresh.data(), nw);
    }
}

void encode_plane_chunks(const std::uint32_t* words, std::uint64_t len, unsigned planes, Coding c,
                         std::vector<std::vector<std::uint8_t>>* out, std::vector<std::uint8_t>* after_zero_plane) {
    out->assign(planes, {});
    if (after_zero_plane) after_zero_plane->clear();
    split_plane_chunks(words, len, planes, c, after_zero_plane != nullptr,
                       [&](unsigned b, bool variant, const std::uint32_t* streams, std::uint64_t stride,
                           const std::uint64_t* bits) {
                           put_sub_blobs(streams, stride, bits, variant ? after_zero_plane : &(*out)[b]);
                       });
}

Errc decode_plane_chunks(const std::uint8_t* const* payload, const std::size_t* size, std::uint32_t* words,
                         std::uint64_t len, unsigned b0, unsigned b1, unsigned planes, Coding c) {
    const SoloTeam team;
    const std::uint64_t nw = plane_word_count(len);
    std::vector<std::uint64_t> sig(nw), fresh(nw, 0), plane(nw);
    significance_words(team, words, len, higher_mask(b0, planes, c), sig.data());
    if (b0) {  // fresh: significant now, but not before plane b0 - 1
        significance_words(team, words, len, higher_mask(b0 - 1, planes, c), fresh.data());
        for (std::uint64_t w = 0; w < nw; ++w) fresh[w] = sig[w] & ~fresh[w];
    }
    std::vector<std::uint8_t> bytes[kPlaneStreams];
    PlaneSplitScratch scratch;
    const PlaneBitKernels& kernels = cpu_backend().plane_bits();
    const PrismCpuKernels& prism_kernels = cpu_backend().prism_kernels();
    for (unsigned b = b0; b < b1; ++b) {
        const std::size_t i = b - b0;
        if (size[i] == 0) {  // an all-zero plane chunk: nothing becomes significant
            std::fill(fresh.begin(), fresh.end(), 0);
            continue;
        }
        std::uint64_t count[kPlaneStreams];
        kernels.count(sig.data(), fresh.data(), len, &scratch, count);
        ByteReader r(payload[i], size[i]);
        std::uint16_t methods = 0;
        if (!r.read(&methods) || (methods >> (2 * kPlaneStreams))) return Errc::corrupt_block;
        const std::uint8_t* stream[kPlaneStreams];
        for (unsigned k = 0; k < kPlaneStreams; ++k) {
            MANS_RETURN_IF_ERROR(get_sub_blob(&r, static_cast<Method>(methods >> (2 * k) & 3), count[k], &bytes[k]));
            stream[k] = bytes[k].data();
        }
        if (r.remaining() != 0) return Errc::corrupt_block;
        kernels.merge(stream, sig.data(), fresh.data(), len, scratch, plane.data());
        prism_kernels.deposit_plane(plane.data(), len, with_plane_bit(0, b, planes, c, 1), words);
        advance_significance(team, plane.data(), sig.data(), fresh.data(), nw);
    }
    return Errc::ok;
}

}  // namespace mans::detail::prism
