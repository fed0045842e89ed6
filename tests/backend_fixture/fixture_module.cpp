// fixture_module.cpp - stand-in GPU backend modules for the loader and
// dispatch tests.
//
// Built several times (tests/CMakeLists.txt), each as libmans_backend_cuda.so
// in its own folder, with one FIXTURE_* macro choosing how it misbehaves.
// It needs no GPU runtime. FIXTURE_CODER implements encode_blocks and
// decode_blocks on the host with the GPU kernels' per-block bodies
// (mapping/block_batch.hpp), so the core's dispatch paths, the module ABI
// and the kernels' coders are tested here; it codes as a warp does, with
// a team of 32 (core/team.hpp: LoopTeam, each phase's ranks in reverse on
// every other block, so that a race between ranks changes the bytes); FIXTURE_CODER_FAILS fails at
// "run time" like a GPU out of memory; FIXTURE_CODER_WRONG codes, then
// damages one byte of every block, like a miscompiled kernel;
// FIXTURE_CODER_DECODE_ONLY is FIXTURE_CODER without compression, as the
// HIP module is by default (decode_blocks, chunk_decode and PRISM
// retrieval). The coders also compress PRISM fields (all but the
// decode-only one) and reconstruct PRISM retrievals as the GPU module does
// (host_exec.hpp): the wrong one damages a byte, the failing one fails
// fields over 64 KiB.
#ifdef FIXTURE_CODER_DECODE_ONLY
#define FIXTURE_CODER 1
#define FIXTURE_NO_COMPRESS 1
#endif
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "backend_module.hpp"
#if defined(FIXTURE_CODER) || defined(FIXTURE_CODER_FAILS) || defined(FIXTURE_CODER_WRONG)
#include "mapping/block_batch.hpp"
#include "mapping/chunk_batch.hpp"
#include "mapping/host_waves.hpp"
#endif
#if (defined(FIXTURE_CODER) && !defined(FIXTURE_NO_COMPRESS)) || defined(FIXTURE_CODER_FAILS) || \
    defined(FIXTURE_CODER_WRONG)
#define FIXTURE_PRISM 1
#endif
#if defined(FIXTURE_CODER) || defined(FIXTURE_CODER_FAILS) || defined(FIXTURE_CODER_WRONG)
#define FIXTURE_PRISM_DECODE 1
#include <new>

#include "host_exec.hpp"
#include "prism/device_job.hpp"
#endif

namespace {

#if defined(FIXTURE_CODER) || defined(FIXTURE_CODER_FAILS) || defined(FIXTURE_CODER_WRONG)
constexpr int kDevices = 1;
constexpr const char* kText = "Fixture GPU coder";
#elif defined(FIXTURE_DEVICE) || defined(FIXTURE_CLAIMS_COMPRESS)
constexpr int kDevices = 1;
constexpr const char* kText = "Fixture GPU";
#else
constexpr int kDevices = 0;
constexpr const char* kText = "fixture: no device";
#endif

void probe(mans_backend_probe_result* out) {
    out->device_count = kDevices;
    std::snprintf(out->text, sizeof out->text, "%s", kText);
}


#if defined(FIXTURE_CODER) || defined(FIXTURE_CODER_FAILS) || defined(FIXTURE_CODER_WRONG)
}  // namespace
// The host-memory protocol of ABI 8, as the stand-in saw it: windows
// (encode_blocks / decode_blocks calls), host calls ended, and host calls
// open now on any thread (a window opens its thread's call, end_host_call
// closes it). Tests read them to check that every stream's windows are
// followed by end_host_call, on every path.
extern "C" {
__attribute__((visibility("default"))) unsigned long long mans_fixture_windows = 0;
__attribute__((visibility("default"))) unsigned long long mans_fixture_host_calls_ended = 0;
__attribute__((visibility("default"))) long long mans_fixture_open_host_calls = 0;
}
namespace {
// What a thread keeps from one window to the next until end_host_call, as
// the GPU module keeps its device buffers: "device" areas for the window's
// arrays (host memory here, filled with garbage as the waves go).
struct HostCall {
    bool open = false;
    std::vector<unsigned char> scratch;
    std::vector<std::uint64_t> in, out, offsets, sizes, status;
};
thread_local HostCall t_host_call;
HostCall& window_call() {
    __atomic_fetch_add(&mans_fixture_windows, 1, __ATOMIC_RELAXED);
    if (!t_host_call.open) {
        t_host_call.open = true;
        __atomic_fetch_add(&mans_fixture_open_host_calls, 1, __ATOMIC_RELAXED);
    }
    return t_host_call;
}
void end_host_call() {
    if (!t_host_call.open) return;
    t_host_call = HostCall{};
    __atomic_fetch_sub(&mans_fixture_open_host_calls, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&mans_fixture_host_calls_ended, 1, __ATOMIC_RELAXED);
}
#endif

#if defined(FIXTURE_CODER) || defined(FIXTURE_CODER_WRONG)
}  // namespace
// Batches coded so far, for tests that check where `automatic` ran.
// (A braced extern "C": `extern "C" T x = 0;` makes g++ warn that x is
// initialized and declared extern.)
extern "C" {
__attribute__((visibility("default"))) unsigned long long mans_fixture_batches = 0;
}
namespace {
// One "thread" per block, each with a fresh scratch slice, as the kernels.
// The slice is filled with garbage first: the coders must not depend on
// what the memory held.
std::uint8_t* fresh_slice(std::vector<unsigned char>& buf, std::size_t bytes) {
    buf.assign(bytes + 16, 0xA5);
    return reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(buf.data()) + 15) & ~std::uintptr_t{15});
}
// The team that codes block b, with its shared words set to garbage.
constexpr unsigned kWarp = 32;
mans::detail::LoopTeam warp_team(std::uint64_t b, std::uint64_t* area) {
    for (unsigned i = 0; i < mans::detail::kTeamSharedWords; ++i) area[i] = 0xA5A5A5A5A5A5A5A5ull;
    return mans::detail::LoopTeam{kWarp, area, b % 2 == 1};
}
// Small windows, so that the tests' streams take several, and small waves
// (at most kWaveInFlight blocks, a quarter of a window when less), so that
// a window takes several too.
constexpr std::uint64_t kHostWindowBytes = 64 << 10;
constexpr std::uint64_t kWaveInFlight = 3;
constexpr std::uint64_t kGarbage = 0xA5A5A5A5A5A5A5A5ull;

// A "device" area of at least `bytes`, grown with garbage, else as the
// last window left it.
template <typename T = std::uint8_t>
T* device_area(std::vector<std::uint64_t>& v, std::size_t bytes) {
    const std::size_t words = bytes / 8 + 1;
    if (v.size() < words) v.assign(words, kGarbage);
    return reinterpret_cast<T*>(v.data());
}
// The copies of mapping/host_waves.hpp, done at once.
struct HostCopy {
    bool operator()(void* to, const void* from, std::size_t bytes, bool) const {
        std::memcpy(to, from, bytes);
        return true;
    }
};
// A window's waves as the GPU module's streams run them, here one after
// the other, last first, and each with the window's "device" areas
// refilled with garbage before its copies in: a wave whose copies miss
// part of its blocks, or whose blocks read another wave's, gets garbage,
// and an output copy reaching into a later wave's blocks spoils what that
// wave copied out.
template <typename Batch, typename In, typename Code, typename Out>
void run_waves(HostCall& c, const Batch& h, const In& in, const Code& code, const Out& out) {
    const std::uint64_t wave = mans::detail::host_wave_blocks(h.blocks, kWaveInFlight, 1);
    for (std::uint64_t k = (h.blocks + wave - 1) / wave; k-- > 0;) {
        const mans::detail::Wave w{k * wave, std::min(wave, h.blocks - k * wave)};
        for (std::vector<std::uint64_t>* a : {&c.in, &c.out, &c.sizes, &c.status}) std::fill(a->begin(), a->end(), kGarbage);
        in(w);
        for (std::uint64_t b = w.first; b < w.first + w.count; ++b) code(b);
        out(w);
    }
}

int decode_blocks(const mans_backend_block_batch* batch, mans_backend_probe_result*) {
    namespace d = mans::detail;
    ++mans_fixture_batches;
    HostCall& c = window_call();
    if (!d::block_batch_offsets_valid(*batch)) return -1;
    const unsigned esize = d::elem_bytes(static_cast<mans::DType>(batch->dtype));
    mans_backend_block_batch dev = *batch;
    dev.payloads = device_area(c.in, static_cast<std::size_t>(batch->payload_bytes));
    std::uint64_t* offsets = device_area<std::uint64_t>(c.offsets, static_cast<std::size_t>(batch->blocks + 1) * 8);
    std::memcpy(offsets, batch->offsets, static_cast<std::size_t>(batch->blocks + 1) * 8);  // once, as the module
    dev.offsets = offsets;
    dev.dst = device_area(c.out, static_cast<std::size_t>(d::wave_elems(*batch, d::Wave{0, batch->blocks}) * esize));
    dev.status = device_area<std::int32_t>(c.status, static_cast<std::size_t>(batch->blocks) * 4);
    std::uint64_t area[d::kTeamSharedWords];
    const std::size_t slice = d::block_scratch_bytes(batch->block_elems, esize);
    run_waves(
        c, *batch, [&](const d::Wave& w) { d::decode_wave_in(*batch, dev, w, HostCopy{}); },
        [&](std::uint64_t b) {
            dev.status[b] = d::decode_batch_block(dev, b, fresh_slice(c.scratch, slice), warp_team(b, area));
        },
        [&](const d::Wave& w) { d::decode_wave_out(*batch, dev, esize, w, HostCopy{}); });
#ifdef FIXTURE_CODER_WRONG
    batch->dst[0] ^= 0x01;
#endif
    return 0;
}
#ifndef FIXTURE_NO_COMPRESS
int encode_blocks(const mans_backend_encode_batch* batch, mans_backend_probe_result*) {
    namespace d = mans::detail;
    ++mans_fixture_batches;
    HostCall& c = window_call();
    const unsigned esize = d::elem_bytes(static_cast<mans::DType>(batch->dtype));
    mans_backend_encode_batch dev = *batch;
    dev.src = device_area(c.in, static_cast<std::size_t>(d::wave_elems(*batch, d::Wave{0, batch->blocks}) * esize));
    dev.slots = device_area(c.out, static_cast<std::size_t>(batch->blocks * batch->slot_bytes));
    dev.payload_bytes = device_area<std::uint64_t>(c.sizes, static_cast<std::size_t>(batch->blocks) * 8);
    dev.status = device_area<std::int32_t>(c.status, static_cast<std::size_t>(batch->blocks) * 4);
    std::uint64_t area[d::kTeamSharedWords];
    const std::size_t slice = d::encode_slice_layout(d::batch_slice_elems(*batch), esize).total;
    run_waves(
        c, *batch, [&](const d::Wave& w) { d::encode_wave_in(*batch, dev, esize, w, HostCopy{}); },
        [&](std::uint64_t b) {
            dev.status[b] = d::encode_batch_block(dev, b, fresh_slice(c.scratch, slice), warp_team(b, area));
        },
        [&](const d::Wave& w) { d::encode_wave_out(*batch, dev, w, HostCopy{}); });
#ifdef FIXTURE_CODER_WRONG
    for (std::uint64_t b = 0; b < batch->blocks; ++b)
        batch->slots[b * batch->slot_bytes + batch->payload_bytes[b] - 1] ^= 0x10;
#endif
    return 0;
}
#endif

// The device-memory API's steps (mapping/chunk_batch.hpp) as the kernels
// run them: wave_blocks teams, each coding every wave_blocks-th block with
// its own scratch slice (filled with garbage first, then holding what the
// team's previous block left), the teams in reverse order so that no
// result depends on the order of blocks; "device pointers" are host
// pointers here.
template <typename Fn>
void each_team(std::uint64_t wave, std::uint8_t* scratch, std::size_t slice, Fn&& fn) {
    std::uint64_t area[mans::detail::kTeamSharedWords];
    if (wave) std::memset(scratch, 0xA5, static_cast<std::size_t>(wave) * slice);
    for (std::uint64_t item = wave; item-- > 0;) fn(item, warp_team(item, area));
}
#ifndef FIXTURE_NO_COMPRESS
int chunk_encode(const mans_backend_chunk_batch* a, mans_backend_probe_result*) {
    namespace d = mans::detail;
    ++mans_fixture_batches;
    if (a->struct_size < sizeof(mans_backend_chunk_batch)) return -1;
    const unsigned esize = d::elem_bytes(static_cast<mans::DType>(a->dtype));
    const std::uint64_t wave = d::chunk_encode_wave(esize, *a);
    const d::ChunkEncodeLayout l = d::chunk_encode_layout(esize, a->block_elems, a->chunks, a->max_in_bytes, wave);
    if (l.total_blocks && wave == 0) return -1;
    each_team(wave, a->temp + l.scratch, l.slice, [&](std::uint64_t item, const d::LoopTeam& team) {
        d::encode_chunk_blocks_strided_any(*a, l, item, team);
    });
    for (std::uint64_t c = 0; c < a->chunks; ++c) d::finish_chunk_encode(*a, l, c);
    for (std::uint64_t g = 0; g < l.total_blocks; ++g) d::place_chunk_block(*a, l, g);
    return 0;
}
#endif
int chunk_decode(const mans_backend_chunk_batch* a, mans_backend_probe_result*) {
    namespace d = mans::detail;
    ++mans_fixture_batches;
    if (a->struct_size < sizeof(mans_backend_chunk_batch)) return -1;
    const std::uint64_t wave = d::chunk_decode_wave(*a);
    const d::ChunkDecodeLayout l = d::chunk_decode_layout(a->chunks, a->out_capacity, a->max_block_bytes, wave);
    if (wave == 0) return -1;
    // Each step's threads in reverse order too: a step must not read what
    // another thread of the same step writes.
    for (std::uint64_t c = a->chunks; c-- > 0;) d::parse_chunk(*a, l, c);
    for (std::uint64_t t = l.list_tiles; t-- > 0;) d::sum_list_tile(*a, l, t);
    d::scan_list_tiles(*a, l);
    for (std::uint64_t c = a->chunks; c-- > 0;) d::first_chunk_block(*a, l, c);
    for (std::uint64_t g = l.total_blocks; g-- > 0;) d::list_chunk_block(*a, l, g);
    each_team(wave, a->temp + l.scratch, l.slice, [&](std::uint64_t item, const d::LoopTeam& team) {
        d::decode_chunk_blocks_strided(*a, l, item, team);
    });
    for (std::uint64_t c = 0; c < a->chunks; ++c) d::finish_chunk_decode(*a, l, c);
    return 0;
}
#endif
#ifdef FIXTURE_CODER_FAILS
// Batches of more than 8 blocks fail, like a GPU out of memory; smaller ones
// (the core's self-test) are coded, so the module is taken and then fails.
int fail(mans_backend_probe_result* err) {
    if (err) std::snprintf(err->text, sizeof err->text, "fixture: out of device memory");
    return -1;
}
int decode_blocks(const mans_backend_block_batch* batch, mans_backend_probe_result* err) {
    window_call();  // a failed window opens the call too, as on a GPU
    if (batch->blocks > 8) return fail(err);
    const unsigned esize = mans::detail::elem_bytes(static_cast<mans::DType>(batch->dtype));
    std::vector<unsigned char> scratch((mans::detail::block_scratch_bytes(batch->block_elems, esize) + 32));
    auto* slice = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(scratch.data()) + 15) & ~std::uintptr_t{15});
    for (std::uint64_t b = 0; b < batch->blocks; ++b) batch->status[b] = mans::detail::decode_batch_block(*batch, b, slice);
    return 0;
}
int encode_blocks(const mans_backend_encode_batch* batch, mans_backend_probe_result* err) {
    window_call();
    if (batch->blocks > 8) return fail(err);
    const unsigned esize = mans::detail::elem_bytes(static_cast<mans::DType>(batch->dtype));
    std::vector<unsigned char> scratch(mans::detail::encode_slice_layout(mans::detail::batch_slice_elems(*batch), esize).total + 32);
    auto* slice = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(scratch.data()) + 15) & ~std::uintptr_t{15});
    for (std::uint64_t b = 0; b < batch->blocks; ++b) batch->status[b] = mans::detail::encode_batch_block(*batch, b, slice);
    return 0;
}
#endif

#ifdef FIXTURE_PRISM
#ifdef FIXTURE_CODER_WRONG
// Damages the last byte of the levels' data before the core sees it.
struct WrongFinish {
    const mans_backend_prism_job* job;
};
int wrong_finish(void* ctx, const std::uint8_t* p, std::uint64_t n, const mans_backend_prism_base* base) {
    const auto* w = static_cast<const WrongFinish*>(ctx);
    std::vector<std::uint8_t> bad(p, p + n);
    if (!bad.empty()) bad.back() ^= 0x10;
    return w->job->finish(w->job->ctx, bad.data(), bad.size(), base);
}
#endif
// PRISM compression as the GPU module runs it (prism/device_job.hpp's
// run_prism_job), with the host executor (host_exec.hpp).
template <typename T>
int prism_compress_as(const mans_backend_prism_job& j) {
    mans_fixture::HostExec ex;
    const std::uint64_t n = j.bytes / sizeof(T);
    T* x = ex.alloc<T>(n);
    ex.to_device(x, j.data, static_cast<std::size_t>(j.bytes));
    return mans::detail::prism::run_prism_job<T>(ex, j, x);
}
int prism_compress(const mans_backend_prism_job* job, mans_backend_probe_result* err) {
    if (!job || job->struct_size < sizeof(mans_backend_prism_job)) return MANS_ERR_INVALID_ARGUMENT;
#ifdef FIXTURE_CODER_FAILS
    // Fields over 64 KiB fail, like a GPU out of memory; the self-test's
    // are coded, so the module is taken and then fails.
    if (job->bytes > 65536) {
        if (err) std::snprintf(err->text, sizeof err->text, "fixture: out of device memory");
        return MANS_ERR_BACKEND_UNAVAILABLE;
    }
#else
    (void)err;
    ++mans_fixture_batches;
#endif
    mans_backend_prism_job j = *job;
#ifdef FIXTURE_CODER_WRONG
    WrongFinish w{job};
    j.ctx = &w;
    j.finish = wrong_finish;
#endif
    try {
        return j.float_type == 8 ? prism_compress_as<float>(j) : prism_compress_as<double>(j);
    } catch (const std::bad_alloc&) {
        return MANS_ERR_OUT_OF_MEMORY;
    } catch (...) {
        return MANS_ERR_INTERNAL;
    }
}

#endif  // FIXTURE_PRISM

#ifdef FIXTURE_PRISM_DECODE
// PRISM reconstruction as the GPU module runs it (run_prism_read_job),
// with the host executor: the wrong coder damages one value, the failing
// one fails fields over 64 KiB.
template <typename T>
int prism_decompress_as(const mans_backend_prism_read_job& j) {
    mans_fixture::HostExec ex;
    const int rc = mans::detail::prism::run_prism_read_job<T>(ex, j);
#ifdef FIXTURE_CODER_WRONG
    if (rc == MANS_OK && j.out_bytes) static_cast<std::uint8_t*>(j.out)[j.out_bytes - 1] ^= 0x10;
#endif
    return rc;
}
int prism_decompress(const mans_backend_prism_read_job* job, mans_backend_probe_result* err) {
    if (!job || job->struct_size < sizeof(mans_backend_prism_read_job) || !job->header) return MANS_ERR_INVALID_ARGUMENT;
#ifdef FIXTURE_CODER_FAILS
    if (job->out_bytes > 65536) {
        if (err) std::snprintf(err->text, sizeof err->text, "fixture: out of device memory");
        return MANS_ERR_BACKEND_UNAVAILABLE;
    }
#else
    (void)err;
    ++mans_fixture_batches;
#endif
    try {
        mans::detail::prism::Header h;
        if (mans::detail::prism::parse_header(job->header, static_cast<std::size_t>(job->header_bytes),
                                              job->archive_bytes, &h) != mans::Errc::ok)
            return MANS_ERR_INVALID_ARGUMENT;
        return h.type == mans::prism::FloatType::f32 ? prism_decompress_as<float>(*job) : prism_decompress_as<double>(*job);
    } catch (const std::bad_alloc&) {
        return MANS_ERR_OUT_OF_MEMORY;
    } catch (...) {
        return MANS_ERR_INTERNAL;
    }
}
#endif

mans_backend_module make_module() {
    mans_backend_module m{};
#ifdef FIXTURE_WRONG_ABI
    m.abi_version = 999;
#else
    m.abi_version = MANS_BACKEND_ABI_VERSION;
#endif
    m.struct_size = sizeof(mans_backend_module);
#ifdef FIXTURE_WRONG_NAME
    m.name = "hip";
#else
    m.name = "cuda";
#endif
    m.build_info = "test fixture";
    m.probe = probe;
#ifdef FIXTURE_CLAIMS_COMPRESS
    m.caps = MANS_BACKEND_CAP_MANS_COMPRESS;  // a flag without its function: not implemented
#endif
#if defined(FIXTURE_NO_COMPRESS)
    m.caps = MANS_BACKEND_CAP_MANS_DECOMPRESS | MANS_BACKEND_CAP_DEVICE_CHUNK_DECODE;
    m.decode_blocks = decode_blocks;
    m.chunk_decode = chunk_decode;
#elif defined(FIXTURE_CODER) || defined(FIXTURE_CODER_FAILS) || defined(FIXTURE_CODER_WRONG)
    m.caps = MANS_BACKEND_CAP_MANS_COMPRESS | MANS_BACKEND_CAP_MANS_DECOMPRESS;
    m.encode_blocks = encode_blocks;
    m.decode_blocks = decode_blocks;
#if defined(FIXTURE_CODER) || defined(FIXTURE_CODER_WRONG)
    m.caps |= MANS_BACKEND_CAP_DEVICE_CHUNKS;
    m.chunk_encode = chunk_encode;
    m.chunk_decode = chunk_decode;
#endif
#endif
#if defined(FIXTURE_CODER) || defined(FIXTURE_CODER_FAILS) || defined(FIXTURE_CODER_WRONG)
    m.end_host_call = end_host_call;
#endif
#if defined(FIXTURE_CODER) || defined(FIXTURE_CODER_WRONG)
    m.host_window_bytes = kHostWindowBytes;
#endif
#ifdef FIXTURE_PRISM
    m.caps |= MANS_BACKEND_CAP_PRISM_COMPRESS;
    m.prism_compress = prism_compress;
#endif
#ifdef FIXTURE_PRISM_DECODE
    m.caps |= MANS_BACKEND_CAP_PRISM_DECOMPRESS;
    m.prism_decompress = prism_decompress;
#endif
    return m;
}

const mans_backend_module kModule = make_module();

}  // namespace

#ifndef FIXTURE_NO_ENTRY
extern "C" __attribute__((visibility("default"))) const mans_backend_module* mans_backend_module_entry(uint32_t) {
    return &kModule;
}
#else
extern "C" __attribute__((visibility("default"))) const mans_backend_module* some_other_function(uint32_t) {
    return &kModule;
}
#endif
