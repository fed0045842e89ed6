// hd_compile_check.cu - builds the shared (MANS_HD) PRISM code for the GPU
// although no module kernel runs it yet: the per-point quantizer and
// reconstruction, the interpolation stencils, the code words, the zero
// elimination and the bit work of bitplane chunks (with a warp as the
// team, backends/gpu/warp_team.hpp), the per-point steps of a pass, the
// truncation statistics, the lossless stage's screening and choice for
// a batch of streams, the segment layout and a level's assembly. CI compiles this with nvcc
// and hipcc (tests/CMakeLists.txt), so code that a GPU could not run fails
// the build here; the CPU tests run the same functions. (The MANS code is
// compiled by the modules, whose kernels run it.)
#include <cstddef>
#include <cstdint>

#include "warp_team.hpp"  // first: it includes the runtime's headers

#include "device_exec.hpp"

#include "core/bitmap_hd.hpp"
#include "core/scan_hd.hpp"
#include "prism/chunk_coding_hd.hpp"
#include "prism/codes.hpp"
#include "prism/error_stats_hd.hpp"
#include "prism/geometry.hpp"
#include "prism/level_assembly_hd.hpp"
#include "prism/mask_hd.hpp"
#include "prism/plane_split_hd.hpp"
#include "prism/point_math.hpp"
#include "prism/selection_hd.hpp"
#include "prism/stream_batch_hd.hpp"
#include "prism/traverse.hpp"
#include "prism/truncation_stats_hd.hpp"
#include "prism/zero_elim_hd.hpp"

namespace p = mans::detail::prism;

// Quantizes n points against their predictions and rebuilds them.
__global__ void prism_quantize_points(const float* x, const double* pred, std::size_t n, double step, double eb,
                                      double bound, std::int32_t* codes, std::uint32_t* words, float* back) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const p::QuantizedPoint q = p::quantize_point<float>(x[i], pred[i], step, eb, bound);
    codes[i] = q.code;
    words[i] = p::encode_code(q.code, p::Coding::negabinary);
    const std::int32_t kept = p::decode_word(words[i] & ~1u, p::Coding::negabinary) +
                              p::truncation_error(words[i], q.code, p::planes_for(words[i], p::Coding::negabinary) - 1,
                                                  p::planes_for(words[i], p::Coding::negabinary), p::Coding::negabinary);
    back[i] = p::to_element<float>(p::reconstruct_point(pred[i], step, static_cast<double>(kept)));
}

// Cubic and linear stencils along axis 0 of a 1D line of n values.
__global__ void prism_predict_line(const double* work, std::size_t n, std::uint64_t u, double* pred) {
    const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::uint64_t c = (2 * k + 1) * u;
    if (c >= n) return;
    const std::uint64_t stride = 1, dims = n;
    pred[k] = p::predict_point(work, c, &c, &dims, &stride, 1, 1u, u, p::Kind::cubic) +
              p::interp_1d(work + c, c, u, n, 1, p::Kind::linear);
}

// Zero elimination of one chunk per thread (encode, then decode back).
__global__ void prism_zero_elim_chunks(const std::uint8_t* src, std::size_t chunk, std::size_t chunks,
                                       std::uint8_t* maps, std::uint8_t* out, std::uint8_t* back, mans::Errc* status) {
    const std::size_t c = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= chunks) return;
    const std::size_t map_bytes = p::zero_elim_map_bytes(chunk);
    std::uint8_t* o = out + c * (chunk + map_bytes);
    const std::size_t size = p::zero_elim_encode_into(src + c * chunk, chunk, maps + c * map_bytes, o);
    status[c] = p::zero_elim_decode(o, size, back + c * chunk, chunk);
}

// A batch of a level's bitplane chunks (chunk_coding_hd.hpp), one warp per
// chunk: words, plane count and truncation statistics; the forms' scan
// (a thread per tile, one thread, a thread per chunk); the planes' context
// streams (transposed by ballots); then, after the lossless stage
// (prism_screen_streams & co. below on cc.batch), the segments.
__device__ mans::detail::WarpTeam chunk_warp(std::uint64_t (*area)[mans::detail::kTeamSharedWords]) {
    return mans::detail::WarpTeam{threadIdx.x % mans::detail::kWarp, area[threadIdx.x / mans::detail::kWarp]};
}
constexpr unsigned kChunkWarps = 4;  // warps per thread block

__global__ void prism_chunk_words(p::ChunkCoding cc) {
    __shared__ std::uint64_t area[kChunkWarps][mans::detail::kTeamSharedWords];
    const std::uint64_t ch = static_cast<std::uint64_t>(blockIdx.x) * kChunkWarps + threadIdx.x / mans::detail::kWarp;
    if (ch < cc.count) p::chunk_words(chunk_warp(area), cc, ch);  // whole warps leave together
}

__global__ void prism_chunk_form_tiles(p::ChunkCoding cc, std::uint64_t tile) {
    const std::uint64_t t = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t * tile < cc.count)
        cc.tile_sums[t] = mans::detail::scan_tile_sum([&](std::uint64_t ch) { return p::chunk_forms(cc, ch); },
                                                      cc.count, tile, t);
}

__global__ void prism_chunk_form_bases(p::ChunkCoding cc, std::uint64_t tile) {
    cc.form_first[cc.count] = mans::detail::scan_tile_bases(cc.tile_sums, (cc.count + tile - 1) / tile);
}

__global__ void prism_chunk_form_first(p::ChunkCoding cc, std::uint64_t tile) {
    const std::uint64_t ch = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (ch < cc.count)
        cc.form_first[ch] = mans::detail::scan_item_offset([&](std::uint64_t k) { return p::chunk_forms(cc, k); },
                                                           tile, cc.tile_sums, ch);
}

__global__ void prism_split_chunk_planes(p::ChunkCoding cc) {
    __shared__ std::uint64_t area[kChunkWarps][mans::detail::kTeamSharedWords];
    __shared__ p::PlaneSplitScratch scratch[kChunkWarps];
    const unsigned warp = threadIdx.x / mans::detail::kWarp;
    const std::uint64_t ch = static_cast<std::uint64_t>(blockIdx.x) * kChunkWarps + warp;
    if (ch < cc.count)
        p::split_chunk_planes(chunk_warp(area), cc, ch, &scratch[warp], p::LoopBitGather{}, mans::gpu::BallotTranspose{});
}

__global__ void prism_chunk_segments(p::ChunkCoding cc) {
    __shared__ std::uint64_t area[kChunkWarps][mans::detail::kTeamSharedWords];
    const std::uint64_t ch = static_cast<std::uint64_t>(blockIdx.x) * kChunkWarps + threadIdx.x / mans::detail::kWarp;
    if (ch < cc.count) p::write_chunk_segments(chunk_warp(area), cc, ch);
}

// fn(k, idx, pred, masked) for this thread's points of the thread block's
// tile of box b: the point's rank in the box, its element index, its
// prediction from the work values and whether it is masked (the part of a
// pass's point that encoding and decoding share).
// The stencil kind is `kind`, or per block from kind_bits when not null
// (c is on the full grid here: no half grid).
struct TileForm {
    p::Kind kind;
    const std::uint8_t* kind_bits;
    p::BlockGrid blocks;
};
template <typename Fn>
__device__ void for_tile_points(const double* work, const std::uint8_t* mask_bits, const p::Grid& g, const p::Box& b,
                                std::uint64_t u, const TileForm& form, Fn&& fn) {
    const std::uint64_t n = b.size();
    const std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * p::kTilePoints;
    const std::uint64_t last = n < first + p::kTilePoints ? n : first + p::kTilePoints;
    for (std::uint64_t k = first + threadIdx.x; k < last; k += blockDim.x) {
        std::uint64_t c[p::kMaxRank], idx = 0;
        p::box_point(g, b, k, c, &idx);
        const p::Kind kind = form.kind_bits ? p::block_kind(form.kind_bits, form.blocks, c) : form.kind;
        const double pred = p::predict_point(work, idx, c, g.n, g.stride, g.rank, b.axes, u, kind);
        fn(k, idx, pred, mask_bits && (mask_bits[idx / 8] >> (idx % 8) & 1));
    }
}

// One box of a pass on the full grid: one thread block per tile of
// kTilePoints points (traverse.hpp), each thread its points from
// box_point, predict_point and encode_point, in the order
// tests/test_prism_pass_order.cpp checks against the CPU encoder; the
// stencil kind of the level, or of each block (TileForm). mask_bits may be
// null (no masked points).
template <typename T>
__global__ void prism_encode_box_tiles(const T* x, const std::uint8_t* mask_bits, p::Grid g, p::Box b, std::uint64_t u,
                                       TileForm form, double step, double eb, double bound, double* work,
                                       std::int32_t* codes, unsigned* outlier_bits) {
    for_tile_points(work, mask_bits, g, b, u, form, [&](std::uint64_t k, std::uint64_t idx, double pred, bool masked) {
        const p::EncodedPoint e = p::encode_point<T>(masked ? 0.0 : static_cast<double>(x[idx]), masked, pred, step, eb, bound);
        codes[b.first_code + k] = e.code;
        work[idx] = e.work;
        if (e.outlier) atomicOr(outlier_bits + idx / 32, 1u << (idx % 32));
    });
}
template __global__ void prism_encode_box_tiles<float>(const float*, const std::uint8_t*, p::Grid, p::Box, std::uint64_t,
                                                       TileForm, double, double, double, double*, std::int32_t*, unsigned*);
template __global__ void prism_encode_box_tiles<double>(const double*, const std::uint8_t*, p::Grid, p::Box,
                                                        std::uint64_t, TileForm, double, double, double, double*,
                                                        std::int32_t*, unsigned*);

// The reader's side of prism_encode_box_tiles: the words read so far (any
// prefix of the level's planes), outliers' stored values by point.
template <typename T>
__global__ void prism_decode_box_tiles(const std::uint32_t* words, const std::uint8_t* mask_bits,
                                       const unsigned* outlier_bits, const T* outlier_value, p::Grid g, p::Box b,
                                       std::uint64_t u, TileForm form, double step, p::Coding coding, double* work) {
    for_tile_points(work, mask_bits, g, b, u, form, [&](std::uint64_t k, std::uint64_t idx, double pred, bool masked) {
        const bool outlier = outlier_bits[idx / 32] >> (idx % 32) & 1;
        work[idx] = p::decode_point(outlier, outlier ? static_cast<double>(outlier_value[idx]) : 0.0, masked, pred, step,
                                    static_cast<double>(p::decode_word(words[b.first_code + k], coding)));
    });
}
template __global__ void prism_decode_box_tiles<float>(const std::uint32_t*, const std::uint8_t*, const unsigned*,
                                                       const float*, p::Grid, p::Box, std::uint64_t, TileForm, double,
                                                       p::Coding, double*);

// The mask and the fill detection (mask_hd.hpp): a thread per range of
// `range` points (a multiple of 8) writes its partial; the partials are
// then merged in range order (a tree with the lower ranges on the left).
template <typename T>
__global__ void prism_mask_ranges(const T* x, std::uint64_t n, std::uint64_t range, const T* fills, unsigned nfill,
                                  double cand, std::uint8_t* mask, p::ValueRange* finite, p::FillEvidence* evidence,
                                  p::MaskPartial* masked) {
    const std::uint64_t r = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::uint64_t first = r * range;
    if (first >= n) return;
    const std::uint64_t last = n < first + range ? n : first + range;
    finite[r] = p::finite_range(x, first, last);
    if (p::fill_candidate(cand)) evidence[r] = p::fill_evidence(x, first, last, cand);
    masked[r] = p::mask_range<T>(x, n, fills, nfill, first / 8, (last + 7) / 8, mask);
}
template __global__ void prism_mask_ranges<float>(const float*, std::uint64_t, std::uint64_t, const float*, unsigned,
                                                  double, std::uint8_t*, p::ValueRange*, p::FillEvidence*,
                                                  p::MaskPartial*);
template __global__ void prism_mask_ranges<double>(const double*, std::uint64_t, std::uint64_t, const double*,
                                                   unsigned, double, std::uint8_t*, p::ValueRange*, p::FillEvidence*,
                                                   p::MaskPartial*);

// The header's error statistics (error_stats_hd.hpp): a thread per block
// of kErrorStatPoints points, in point order (double sums); the blocks are
// merged in block order afterwards. The base's outlier list
// (core/bitmap_hd.hpp): a thread per range of bytes counts, then, after a
// scan of the counts, lists from its offset.
template <typename T>
__global__ void prism_error_stats_blocks(const T* x, const double* work, std::uint64_t n,
                                         const std::uint8_t* mask_bits, const std::uint8_t* outlier_bits,
                                         p::ErrorStats* blocks) {
    const std::uint64_t k = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::uint64_t first = k * p::kErrorStatPoints;
    if (first >= n) return;
    const std::uint64_t last = n < first + p::kErrorStatPoints ? n : first + p::kErrorStatPoints;
    p::ErrorStats s;
    for (std::uint64_t i = first; i < last; ++i) {
        const bool exact = i == 0 || p::bitmap_bit(mask_bits, i) || p::bitmap_bit(outlier_bits, i);
        p::add_point_error<T>(&s, work[i], exact ? 0.0 : static_cast<double>(x[i]), exact);
    }
    blocks[k] = s;
}
template __global__ void prism_error_stats_blocks<float>(const float*, const double*, std::uint64_t,
                                                         const std::uint8_t*, const std::uint8_t*, p::ErrorStats*);
template __global__ void prism_error_stats_blocks<double>(const double*, const double*, std::uint64_t,
                                                          const std::uint8_t*, const std::uint8_t*, p::ErrorStats*);

__global__ void prism_bitmap_counts(const std::uint8_t* bits, std::uint64_t bytes, std::uint64_t range,
                                    std::uint64_t* counts) {
    const std::uint64_t r = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (r * range >= bytes) return;
    counts[r] = mans::detail::bitmap_count(bits, r * range, bytes < (r + 1) * range ? bytes : (r + 1) * range);
}

__global__ void prism_bitmap_lists(const std::uint8_t* bits, std::uint64_t bytes, std::uint64_t range,
                                   const std::uint64_t* offsets, std::uint64_t* index) {
    const std::uint64_t r = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (r * range >= bytes) return;
    mans::detail::bitmap_list(bits, r * range, bytes < (r + 1) * range ? bytes : (r + 1) * range, offsets[r], index);
}

// The open-loop choice of a level's scheme and kinds (selection_hd.hpp):
// one thread block per sampled tile of a box (tile blockIdx.x * stride),
// a thread per point, the costs added to the block sums with 64-bit
// atomics (integer sums: any order gives the CPU's); then one thread
// chooses.
template <typename T>
__global__ void prism_selection_costs(const T* x, const std::uint8_t* mask_bits, p::Grid g, p::Box b, std::uint64_t u,
                                      double inv_eb, std::uint64_t stride, p::BlockGrid blocks, unsigned scheme,
                                      unsigned long long* sums) {
    const std::uint64_t n = b.size();
    const std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * stride * p::kTilePoints;
    const std::uint64_t last = n < first + p::kTilePoints ? n : first + p::kTilePoints;
    for (std::uint64_t k = first + threadIdx.x; k < last; k += blockDim.x) {
        std::uint64_t c[p::kMaxRank], idx = 0, lin = 0, cub = 0;
        p::box_point(g, b, k, c, &idx);
        if (!p::selection_point_costs(x, mask_bits, g, b, c, idx, u, inv_eb, &lin, &cub)) continue;
        const std::uint64_t blk = blocks.block_of(c);
        atomicAdd(sums + (2 * scheme) * blocks.count + blk, static_cast<unsigned long long>(lin));
        atomicAdd(sums + (2 * scheme + 1) * blocks.count + blk, static_cast<unsigned long long>(cub));
    }
}
template __global__ void prism_selection_costs<float>(const float*, const std::uint8_t*, p::Grid, p::Box,
                                                      std::uint64_t, double, std::uint64_t, p::BlockGrid, unsigned,
                                                      unsigned long long*);
template __global__ void prism_selection_costs<double>(const double*, const std::uint8_t*, p::Grid, p::Box,
                                                       std::uint64_t, double, std::uint64_t, p::BlockGrid, unsigned,
                                                       unsigned long long*);

__global__ void prism_choose_selection(const std::uint64_t* sums, std::uint64_t nb, unsigned schemes,
                                       std::uint8_t* block_bits, p::SelectionChoice* choice) {
    *choice = p::choose_selection(sums, nb, schemes, block_bits);
}

// Truncation statistics of chunks, one warp per chunk; partials holds
// kWarp * (planes + 1) entries per chunk.
__global__ void prism_truncation_stats_chunks(const std::int32_t* codes, const std::uint32_t* words, std::uint64_t len,
                                              std::size_t chunks, unsigned planes, p::TruncationPartial* partials,
                                              p::TruncationPartial* stats) {
    constexpr unsigned kWarpsPerBlock = 4;
    __shared__ std::uint64_t area[kWarpsPerBlock][mans::detail::kTeamSharedWords];
    const unsigned warp = threadIdx.x / mans::detail::kWarp;
    const std::size_t c = static_cast<std::size_t>(blockIdx.x) * kWarpsPerBlock + warp;
    if (c >= chunks) return;
    const mans::detail::WarpTeam team{threadIdx.x % mans::detail::kWarp, area[warp]};
    p::truncation_stats(team, codes + c * len, words + c * len, len, planes, p::Coding::negabinary,
                        partials + c * mans::detail::kWarp * (planes + 1), stats + c * (planes + 1));
}

// PRISM's lossless stage for a batch of streams (stream_batch_hd.hpp):
// screening with one warp per stream (the zero test, zero elimination and
// the rANS gate's histogram in shared memory), then, after the device
// chunk encoder has coded the candidates (the module's chunk_encode
// kernels, mapping/chunk_batch.hpp), the choice with a thread per stream
// and the segment of each plane (five consecutive streams) with a thread
// per plane, into slots of segment_capacity bytes.
__global__ void prism_screen_streams(p::StreamBatch batch) {
    constexpr unsigned kWarpsPerBlock = 4;
    __shared__ std::uint64_t area[kWarpsPerBlock][mans::detail::kTeamSharedWords];
    __shared__ std::uint32_t hist[kWarpsPerBlock][256];
    const unsigned warp = threadIdx.x / mans::detail::kWarp;
    const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * kWarpsPerBlock + warp;
    if (i >= batch.count) return;
    const mans::detail::WarpTeam team{threadIdx.x % mans::detail::kWarp, area[warp]};
    p::screen_stream(team, batch, i, hist[warp]);
}

__global__ void prism_choose_streams(p::StreamBatch batch, mans_backend_chunk_batch rans) {
    const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < batch.count) p::choose_stream(batch, rans, i);
}

__global__ void prism_plane_segments(p::StreamBatch batch, std::uint8_t* segments, std::size_t segment_capacity,
                                     std::size_t* segment_bytes) {
    const std::uint64_t plane = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (plane >= batch.count / p::kPlaneStreams) return;
    const std::size_t at = static_cast<std::size_t>(plane) * p::kPlaneStreams;
    const std::size_t need = p::plane_segment_bytes(batch.method + at, batch.size + at);
    segment_bytes[plane] = need;
    if (need <= segment_capacity)
        p::write_plane_segment(batch.method + at, batch.payload + at, batch.size + at,
                               segments + plane * segment_capacity);
}

// A level's assembly (level_assembly_hd.hpp): the segment offsets by the
// tiled scan (a thread per tile, one thread, a thread per segment), the
// segments placed by a warp each, a warp per plane checksum, a thread per
// truncation table entry.
__global__ void prism_level_tile_sums(p::LevelAssembly a, std::uint64_t tile, std::uint64_t* bases) {
    const std::uint64_t t = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::uint64_t segs = p::level_segment_count(a);
    if (t * tile >= segs) return;
    bases[t] = mans::detail::scan_tile_sum([&](std::uint64_t s) { return p::level_segment_bytes(a, s); }, segs,
                                           tile, t);
}

__global__ void prism_level_tile_bases(p::LevelAssembly a, std::uint64_t tile, std::uint64_t* bases,
                                       std::uint64_t* offsets) {
    const std::uint64_t segs = p::level_segment_count(a);
    offsets[segs] = mans::detail::scan_tile_bases(bases, (segs + tile - 1) / tile);
}

__global__ void prism_level_offsets(p::LevelAssembly a, std::uint64_t tile, const std::uint64_t* bases,
                                    std::uint64_t* offsets) {
    const std::uint64_t s = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s >= p::level_segment_count(a)) return;
    offsets[s] = mans::detail::scan_item_offset([&](std::uint64_t k) { return p::level_segment_bytes(a, k); }, tile,
                                                bases, s);
}

__global__ void prism_place_level_segments(p::LevelAssembly a) {
    constexpr unsigned kWarpsPerBlock = 4;
    __shared__ std::uint64_t area[kWarpsPerBlock][mans::detail::kTeamSharedWords];
    const unsigned warp = threadIdx.x / mans::detail::kWarp;
    const std::uint64_t s = static_cast<std::uint64_t>(blockIdx.x) * kWarpsPerBlock + warp;
    if (s >= p::level_segment_count(a)) return;
    p::place_level_segment(mans::detail::WarpTeam{threadIdx.x % mans::detail::kWarp, area[warp]}, a, s);
}

__global__ void prism_level_checksums(p::LevelAssembly a, std::uint32_t* checksums) {
    constexpr unsigned kWarpsPerBlock = 4;
    __shared__ std::uint64_t area[kWarpsPerBlock][mans::detail::kTeamSharedWords];
    const unsigned warp = threadIdx.x / mans::detail::kWarp;
    const unsigned b = blockIdx.x * kWarpsPerBlock + warp;
    if (b >= a.planes) return;
    const mans::detail::WarpTeam team{threadIdx.x % mans::detail::kWarp, area[warp]};
    const std::uint32_t sum = p::level_plane_checksum(team, a, b);
    if (team.leads()) checksums[b] = sum;
}

__global__ void prism_level_truncation(p::LevelAssembly a, double* max_err, double* sum_sq) {
    const unsigned kept = blockIdx.x * blockDim.x + threadIdx.x;
    if (kept <= a.planes) p::level_truncation_entry(a, kept, max_err + kept, sum_sq + kept);
}

// The whole PRISM encoder over the GPU executor (prism/device_encoder.hpp
// with device_exec.hpp): every launch of its composition, as lambdas, for
// f32 and f64 (tests/test_prism_device_order.cpp runs the same code with a
// host executor).
template mans::Errc p::device_compress<float, mans::gpu::DeviceExec>(mans::gpu::DeviceExec&, const float*,
                                                                      const mans::prism::CompressConfig&,
                                                                      std::vector<std::uint8_t>*, p::DeviceRanges);
template mans::Errc p::device_compress<double, mans::gpu::DeviceExec>(mans::gpu::DeviceExec&, const double*,
                                                                       const mans::prism::CompressConfig&,
                                                                       std::vector<std::uint8_t>*, p::DeviceRanges);
// And the reconstruction (prism/device_decoder.hpp; its host run is
// tests/test_prism_device_decode.cpp).
template mans::Errc p::device_reconstruct<float, mans::gpu::DeviceExec>(
    mans::gpu::DeviceExec&, const p::Header&, const p::BaseData&, const std::vector<const std::uint8_t*>&,
    const std::vector<std::uint32_t>&, float*);
template mans::Errc p::device_reconstruct<double, mans::gpu::DeviceExec>(
    mans::gpu::DeviceExec&, const p::Header&, const p::BaseData&, const std::vector<const std::uint8_t*>&,
    const std::vector<std::uint32_t>&, double*);
