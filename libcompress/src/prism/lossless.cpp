// lossless.cpp - method choice and decoding of PRISM segments.
#include "prism/lossless.hpp"

#include <algorithm>
#include <cstring>

#include "core/team.hpp"  // SoloTeam
#include "prism/stream_batch_hd.hpp"  // rans_worth_trying, rans_dtype
#include "prism/zero_elim.hpp"

namespace mans::detail::prism {
namespace {

DType width_dtype(unsigned width) { return static_cast<DType>(rans_dtype(width)); }

bool all_zero(const std::uint8_t* p, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, 8);
        if (w) return false;
    }
    for (; i < n; ++i)
        if (p[i]) return false;
    return true;
}

// The device chunk encoder reproduces these streams with blocks of
// kRansBlockBytes (stream_batch_hd.hpp): the default block size used here.
static_assert(kRansBlockBytes == kDefaultBlockBytes, "rANS candidates: the default MANS block size");

// A field has thousands of plane streams of a few KiB: each thread keeps
// one MANS context (its block scratch) and one output buffer for the
// streams of up to kCachedStreamBytes, instead of allocating and clearing
// them for every stream (the one-shot calls' allocations, page faults and
// memsets). Larger inputs (the base's blobs can be as large as the field)
// and any failure of a cached context (one that could not allocate stays
// unusable) go through the one-shot calls, so that a thread keeps little
// memory and a result never depends on the thread's history. What a
// context coded before does not change its output
// (tests/test_determinism.cpp). The contexts are thread_local: PRISM must
// not run from a static destructor of the main thread.
constexpr std::size_t kCachedStreamBytes = std::size_t{1} << 20;

struct StreamCoders {
    CompressContext compressor;
    DecompressContext decompressor;
    std::vector<std::uint8_t> out;
};

StreamCoders& stream_coders() {
    thread_local StreamCoders coders;
    return coders;
}

// A MANS stream of the bytes; empty when the codec refuses (never expected).
std::vector<std::uint8_t> mans_stream(const std::uint8_t* src, std::size_t n, unsigned width) {
    CompressConfig cfg;
    cfg.dtype = width_dtype(width);
    cfg.threads = 1;  // the caller parallelises over segments
    // Always the CPU: segments are small, and a module's self-test runs
    // PRISM on the CPU while it holds the self-test lock.
    cfg.backend = mans::Backend::cpu;
    if (n <= kCachedStreamBytes) {
        StreamCoders& c = stream_coders();
        if (c.out.size() < compress_bound(n)) c.out.resize(compress_bound(n));
        const Result r = c.compressor.compress(c.out.data(), c.out.size(), src, n, cfg);
        if (r) return std::vector<std::uint8_t>(c.out.data(), c.out.data() + r.size);
    }
    std::vector<std::uint8_t> out(compress_bound(n));
    const Result r = compress(out.data(), out.size(), src, n, cfg);
    if (!r) return {};
    out.resize(r.size);
    return out;
}

// decompress through the thread's cached context where mans_stream would
// use it, else (and after any failure there) the one-shot call.
Result decompress_stream(std::uint8_t* dst, std::size_t n, const std::uint8_t* payload, std::size_t size,
                         const DecompressConfig& cfg) {
    if (n <= kCachedStreamBytes) {
        const Result r = stream_coders().decompressor.decompress(dst, n, payload, size, cfg);
        if (r) return r;
    }
    return decompress(dst, n, payload, size, cfg);
}

}  // namespace

void encode_best(const std::uint8_t* src, std::size_t n, unsigned width, bool try_rans, Encoded* out) {
    out->bytes.clear();
    out->rans_tried = false;
    if (all_zero(src, n)) {
        out->method = pick_method(n, true, 0, 0);
        return;
    }
    std::vector<std::uint8_t> rze, rans;
    zero_elim_encode(src, n, &rze);
    // Zero elimination wins outright on sparse data; rANS is only worth its
    // time when that left most of the bytes.
    const std::size_t best_so_far = std::min(n, rze.size());
    std::uint32_t hist[256];
    out->rans_tried = rans_worth_trying(SoloTeam{}, src, n, width, try_rans, best_so_far, hist);
    if (out->rans_tried) rans = mans_stream(src, n, width);
    out->method = pick_method(n, false, rze.size(), rans.size());
    switch (out->method) {
        case Method::raw: out->bytes.assign(src, src + n); break;
        case Method::zero_elim: out->bytes.swap(rze); break;
        case Method::mans_rans: out->bytes.swap(rans); break;
        case Method::zero: break;
    }
}

Errc decode_payload(Method method, const std::uint8_t* payload, std::size_t size, std::uint8_t* dst,
                    std::size_t n, unsigned width) {
    switch (method) {
        case Method::zero:
            if (size != 0) return Errc::corrupt_block;
            if (n) std::memset(dst, 0, n);
            return Errc::ok;
        case Method::raw:
            if (size != n) return Errc::corrupt_block;
            if (n) std::memcpy(dst, payload, n);
            return Errc::ok;
        case Method::zero_elim:
            return zero_elim_decode(payload, size, dst, n);
        case Method::mans_rans: {
            if (n % width != 0) return Errc::corrupt_block;
            FrameInfo info{};
            if (get_frame_info(payload, size, &info) != Errc::ok) return Errc::corrupt_block;
            if (info.dtype != static_cast<mans_dtype>(width_dtype(width)) || info.raw_bytes != n || info.compressed_bytes != size)
                return Errc::corrupt_block;
            DecompressConfig cfg;
            cfg.threads = 1;
            cfg.backend = mans::Backend::cpu;  // as in mans_stream
            const Result r = decompress_stream(dst, n, payload, size, cfg);
            if (!r || r.size != n) return Errc::corrupt_block;
            return Errc::ok;
        }
    }
    return Errc::corrupt_block;
}

}  // namespace mans::detail::prism
