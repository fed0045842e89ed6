// archive.hpp - the PRISM archive: preamble, header with the segment index,
// header checksum, base segment, plane segments.
// docs/FORMAT.md section 4 is the normative description.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mans/prism.hpp"
#include "prism/codes.hpp"
#include "prism/geometry.hpp"
#include "prism/lossless.hpp"

namespace mans::detail::prism {

using mans::prism::ErrorMode;
using mans::prism::FloatType;

inline constexpr std::uint8_t kCodecPrism = 2;
inline constexpr std::size_t kPreambleBytes = 16;
inline constexpr std::size_t kChecksumBytes = 4;
inline constexpr std::uint32_t kChunkCodes = 131072;  // 16 KiB of bits per plane chunk
inline constexpr std::uint64_t kMaxHeaderBytes = 1u << 30;

// Stencil family of a level: one kind everywhere, or one per block.
enum class KindMode : std::uint8_t { all_linear = 0, all_cubic = 1, per_block = 2 };

struct LevelMeta {
    Scheme scheme = Scheme::seq_forward;
    KindMode kinds = KindMode::all_cubic;
    std::uint8_t planes = 0;
    double eb = 0;    // quantization bound of the level
    double step = 0;  // code unit in data units (2 eb)
    std::uint64_t codes = 0;
    // Entry b (0..planes): largest |code error| (an integer) and sum of
    // squared code errors (rounded up) when only the first b planes are
    // read (entry `planes` is 0).
    std::vector<double> max_err;
    std::vector<double> sum_sq;
};

// A plane chunk segment: 0 bytes when the chunk's plane is all zero, else a
// significance-split payload (plane_coding.hpp).
struct Segment {
    std::uint32_t stored = 0;
};

// Header tables in compact form: code errors are integers stored as their
// distance below the largest possible value, and sums of squares as a
// 16-bit logarithm rounded up (they only feed estimates).
std::uint64_t truncation_cap(unsigned kept, unsigned planes, Coding c);
std::uint16_t encode_sum_sq(double v);
double decode_sum_sq(std::uint16_t code);

struct Header {
    FloatType type = FloatType::f32;
    Grid grid;
    ErrorMode mode = ErrorMode::absolute;
    Coding coding = Coding::negabinary;
    std::uint32_t levels = 0;
    std::uint32_t chunk_codes = kChunkCodes;
    double requested_bound = 0, abs_bound = 0;
    double value_min = 0, value_max = 0;
    double full_max_error = 0;  // max |x - T(work)| over predicted points
    double work_max_error = 0;  // max |x - work| (double reconstruction)
    double max_abs_work = 0;    // max |work| anywhere
    double full_mse = 0;        // mean (x - T(work))^2 over all points (exact ones count 0)
    double work_mse = 0;
    std::uint64_t masked_count = 0, outlier_count = 0;
    std::vector<double> fill_values;
    std::vector<LevelMeta> level;  // coarse to fine
    std::uint64_t base_bytes = 0;
    std::uint32_t base_checksum = 0;
    std::vector<Segment> segments;  // level, then plane, then chunk
    std::vector<std::uint32_t> plane_checksum;  // per (level, plane): XXH3 of the plane's chunks

    // Derived by parse/finish: where each level's segments start.
    std::vector<std::size_t> level_first_segment;
    std::vector<std::size_t> level_first_plane;  // index into plane_checksum
    std::vector<std::uint64_t> segment_offset;  // from the start of the archive
    std::uint64_t header_bytes = 0;             // preamble + header + checksum
    std::uint64_t total_bytes = 0;

    std::uint64_t chunks(unsigned l) const { return (level[l].codes + chunk_codes - 1) / chunk_codes; }
    std::size_t segment_index(unsigned l, unsigned plane, std::uint64_t chunk) const {
        return level_first_segment[l] + static_cast<std::size_t>(plane * chunks(l) + chunk);
    }
    // Byte range of planes [b0, b1) of level l.
    std::uint64_t plane_range_begin(unsigned l, unsigned b) const;
    std::uint64_t plane_range_bytes(unsigned l, unsigned b0, unsigned b1) const;
    std::size_t esize() const { return type == FloatType::f64 ? 8 : 4; }
};

// Serialises preamble + header + checksum. Sets header_bytes and offsets.
std::vector<std::uint8_t> write_header(Header* h);

// Parses the 16-byte preamble: header length (bytes between preamble and checksum).
Errc parse_preamble(const std::uint8_t* p, std::size_t n, std::uint64_t* header_len);
// Parses and validates preamble + header + checksum (all of `bytes`), then
// checks that the segments add up to exactly `archive_size`.
Errc parse_header(const std::uint8_t* bytes, std::size_t n, std::uint64_t archive_size, Header* out);

// Finishes derived fields (level_first_segment, offsets, total) after header_bytes is known.
Errc layout_segments(Header* h);

}  // namespace mans::detail::prism
