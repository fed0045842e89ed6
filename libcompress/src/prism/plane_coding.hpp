// plane_coding.hpp - one bitplane chunk, split by significance.
//
// Planes are always read most significant first, so when plane b of a code
// is decoded the reader already knows whether the code has a set bit in a
// higher plane. That splits plane b into two bit streams with very
// different statistics, coded separately:
//   "new"    - codes with no higher bit set: sparse significance bits;
//   "refine" - codes already significant: close to random.
// This gets the bitplanes close to the entropy of the codes themselves
// (plane b of a small code is nearly determined by its higher planes).
// docs/FORMAT.md section 4.5 is normative.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "mans/mans.hpp"
#include "prism/codes.hpp"
#include "prism/cpu_kernels.hpp"  // CodeRows

namespace mans::detail::prism {

// plane_split_hd.hpp's LoopBitGather (PEXT / PDEP) through 256 x 256 byte
// tables: the CPU's portable form (the build cannot assume BMI2, whose PDEP
// is slow on AMD cores before Zen 3 anyway). Same results, tested.
struct TableBitGather {
    std::uint64_t gather(std::uint64_t v, std::uint64_t mask) const;
    std::uint64_t scatter(std::uint64_t v, std::uint64_t mask) const;
};

struct PlaneSplitScratch;  // plane_split_hd.hpp

// One thread's split_plane (split_plane_one_pass), merge_plane and
// count_context_bits (plane_split_hd.hpp, SoloTeam) with one bit gather, as the CPU backend
// picks them (backend.hpp's plane_bits): TableBitGather and the portable
// bit count here; PEXT / PDEP and POPCNT instructions in backends/cpu where
// the CPU has fast ones. Same streams, planes and counts.
struct PlaneBitKernels {
    const char* name;
    void (*count)(const std::uint64_t* sig, const std::uint64_t* fresh, std::uint64_t len,
                  PlaneSplitScratch* scratch, std::uint64_t* total);
    void (*split)(const std::uint64_t* plane, const std::uint64_t* sig, const std::uint64_t* fresh, std::uint64_t len,
                  PlaneSplitScratch* scratch, std::uint32_t* streams, std::uint64_t* bits);
    void (*merge)(const std::uint8_t* const* stream, const std::uint64_t* sig, const std::uint64_t* fresh,
                  std::uint64_t len, const PlaneSplitScratch& scratch, std::uint64_t* plane);
};
extern const PlaneBitKernels kTablePlaneBits;

// PEXT / PDEP of one byte of a mask (TableBitGather).
struct ByteTables {
    std::uint8_t pext[256][256];  // [mask][value]: value's bits at mask, packed low
    std::uint8_t pdep[256][256];  // [mask][bits]: low bits placed at mask's positions
    std::uint8_t count[256];
    ByteTables() {
        for (unsigned m = 0; m < 256; ++m) {
            count[m] = static_cast<std::uint8_t>(__builtin_popcount(m));
            for (unsigned v = 0; v < 256; ++v) {
                unsigned ext = 0, dep = 0, k = 0;
                for (unsigned b = 0; b < 8; ++b) {
                    if (!(m >> b & 1)) continue;
                    ext |= (v >> b & 1) << k;
                    dep |= (v >> k & 1) << b;
                    ++k;
                }
                pext[m][v] = static_cast<std::uint8_t>(ext);
                pdep[m][v] = static_cast<std::uint8_t>(dep);
            }
        }
    }
};
inline const ByteTables& byte_tables() {
    static const ByteTables t;
    return t;
}

inline std::uint64_t TableBitGather::gather(std::uint64_t v, std::uint64_t mask) const {
    if (mask == ~std::uint64_t{0}) return v;
    if (!(v & mask)) return 0;
    const ByteTables& t = byte_tables();
    std::uint64_t out = 0;
    unsigned at = 0;
    for (unsigned i = 0; i < 64; i += 8) {
        const unsigned m = static_cast<unsigned>(mask >> i & 0xff);
        out |= static_cast<std::uint64_t>(t.pext[m][v >> i & 0xff]) << at;
        at += t.count[m];
    }
    return out;
}

inline std::uint64_t TableBitGather::scatter(std::uint64_t v, std::uint64_t mask) const {
    if (mask == ~std::uint64_t{0}) return v;
    if (!v) return 0;
    const ByteTables& t = byte_tables();
    std::uint64_t out = 0;
    for (unsigned i = 0; i < 64 && v; i += 8) {
        const unsigned m = static_cast<unsigned>(mask >> i & 0xff);
        out |= static_cast<std::uint64_t>(t.pdep[m][v & 0xff]) << i;
        v >>= t.count[m];
    }
    return out;
}

// transpose_planes(SoloTeam{}, ...) as the CPU encoder runs it, with the
// same result (tested): each 64 codes' bit matrix from code_rows (the CPU
// backend's prism kernel: 8 x 8 bit blocks in registers, or AVX2 byte
// shuffles and movemasks) instead of one step per set bit of every code.
void transpose_planes_one_thread(const std::uint32_t* words, std::uint64_t len, unsigned planes, Coding c,
                                 std::uint64_t* bits, CodeRows code_rows);

// The five context streams of every plane of the chunk words[0..len) that
// has a set bit, most significant plane first: visit(b, variant, streams,
// stride, bits), stream k being the first ceil(bits[k] / 8) bytes of
// streams + k * stride (plane_split_hd.hpp). With after_zero_plane, plane
// 1 is visited a second time (variant true) in the form described below.
using PlaneStreamsVisitor = std::function<void(unsigned b, bool variant, const std::uint32_t* streams,
                                               std::uint64_t stride, const std::uint64_t* bits)>;
void split_plane_chunks(const std::uint32_t* words, std::uint64_t len, unsigned planes, Coding c,
                        bool after_zero_plane, const PlaneStreamsVisitor& visit);

// Codes every plane of the chunk words[0..len): (*out)[b] is the segment
// payload of plane b, empty when the plane is all zero in this chunk.
// after_zero_plane (optional) receives plane 1 coded as if an all-zero
// plane came between planes 0 and 1: the form it takes in a level with more
// planes than the chunk needs, for sign-magnitude (level_codes.hpp).
void encode_plane_chunks(const std::uint32_t* words, std::uint64_t len, unsigned planes, Coding c,
                         std::vector<std::vector<std::uint8_t>>* out,
                         std::vector<std::uint8_t>* after_zero_plane = nullptr);

// Decodes planes [b0, b1) of a chunk (payload[i], size[i] for plane b0 + i;
// size 0 = all zero) and sets their bits in words[0..len), which must hold
// planes 0..b0-1 already. corrupt_block on any inconsistency.
Errc decode_plane_chunks(const std::uint8_t* const* payload, const std::size_t* size, std::uint32_t* words,
                         std::uint64_t len, unsigned b0, unsigned b1, unsigned planes, Coding c);

}  // namespace mans::detail::prism
