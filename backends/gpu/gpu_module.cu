// gpu_module.cu - the CUDA / HIP backend module (libmans_backend_cuda.so,
// libmans_backend_hip.so): one source for both runtimes (gpu_runtime.hpp).
//
// What it implements today:
// - the device probe;
// - MANS compression and decompression (encode_blocks, decode_blocks): the
//   CPU's block encoder and decoder (mapping/block_batch.hpp, MANS_HD), so
//   the bytes are the CPU's by construction; the core frames the stream and
//   computes and checks the checksums. A block is decoded and encoded by
//   one warp (a team, core/team.hpp: rANS lane j is warp lane j, the copies
//   and element loops are split); a stream's windows share device buffers
//   and streams until end_host_call;
// - the device-memory API's chunks (chunk_encode, chunk_decode:
//   mapping/chunk_batch.hpp's steps);
// - PRISM compression (prism_compress): prism/device_encoder.hpp's steps
//   over DeviceExec (device_exec.hpp), the rANS candidates by chunk_encode;
//   the core encodes the base and writes the archive (prism/device_job.hpp);
// - PRISM reconstruction (prism_decompress: prism/device_decoder.hpp), into
//   host or device memory;
// - a development self-test (rans_decode_lanes: one warp decodes one rANS
//   token stream with the MANS_HD lane step the CPU decoder runs).
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "gpu_runtime.hpp"  // first: the runtime's headers define __host__ etc.

#include "backend_module.hpp"
#include "warp_team.hpp"
#include "entropy/rans.hpp"
#include "mapping/block_batch.hpp"
#include "mapping/chunk_batch.hpp"
#include "mapping/host_waves.hpp"
// MANS_GPU_PRISM_DECODE: PRISM retrieval (prism_decompress), which needs
// the chunk decoder only, so it is in a module built without the encoder
// too (the HIP module's default).
#ifndef MANS_GPU_PRISM_DECODE
#define MANS_GPU_PRISM_DECODE 1
#endif
#if MANS_GPU_ENCODE || MANS_GPU_PRISM_DECODE
#include <new>

#include "device_exec.hpp"
#include "prism/device_job.hpp"
#endif

#ifndef MANS_GPU_NAME
#error "MANS_GPU_NAME (\"cuda\" or \"hip\") must be defined by the build"
#endif
#ifndef MANS_GPU_TARGETS
#define MANS_GPU_TARGETS "?"
#endif

namespace {

using namespace mans::detail;

// ---------------------------------------------------------------- kernels

// The rANS lane loop with a warp: thread j runs lane j
// (rans_decode_as_member, with the warp's ballot).
struct WarpLanes {
    unsigned lane;

    __host__ __device__ bool operator()(const RansDecodeArgs& a) const {
#ifdef MANS_GPU_DEVICE_PASS
        mans_gpu_syncwarp();  // tables and words were written by other lanes
        const bool ok = rans_decode_as_member(a, lane, [](bool p) { return mans_gpu_ballot(p); });
        mans_gpu_syncwarp();  // the tokens are read by other lanes next
        return ok;
#else
        return rans_decode_reference(a);
#endif
    }
};

#if MANS_GPU_ENCODE
// The warp operations of the encoder's lane loop (MemberEncodeLanes,
// mapping/block_batch.hpp, which the CPU tests run with threads).
struct WarpOps {
    unsigned lane;
    std::uint64_t* area;  // the WarpTeam's
    __host__ __device__ void sync() const {
#ifdef MANS_GPU_DEVICE_PASS
        mans_gpu_syncwarp();
#endif
    }
    __host__ __device__ std::uint64_t ballot(bool p) const {
#ifdef MANS_GPU_DEVICE_PASS
        return mans_gpu_ballot(p);
#else
        return p;  // the host pass never runs a kernel
#endif
    }
    __host__ __device__ std::uint64_t* shared() const { return area; }
};
using WarpEncodeLanes = MemberEncodeLanes<WarpOps>;
#endif

// One warp decodes one stream (the development self-test).
// status: 1 clean end, 0 corrupt.
__global__ void rans_decode_warp(const std::uint32_t* table, unsigned contexts, unsigned prob_bits,
                                 LaneLayout lay, const std::uint32_t* states, const std::uint16_t* words,
                                 std::uint64_t nwords, std::uint8_t* out, int* status) {
    RansDecodeArgs a;
    a.table = table;
    a.contexts = contexts;
    a.prob_bits = prob_bits;
    a.layout = lay;
    for (unsigned j = 0; j < kMaxLanes; ++j) a.states[j] = j < lay.lanes ? states[j] : kStateLow;
    a.words = words;
    a.nwords = static_cast<std::size_t>(nwords);
    a.out = out;
    const bool ok = WarpLanes{static_cast<unsigned>(threadIdx.x)}(a);
    if (threadIdx.x == 0) *status = ok ? 1 : 0;
}

// Thread blocks of kWarpsPerGroup warps, one MANS block per warp, each warp
// with its part of the group's shared memory as its team's shared words.
constexpr unsigned kWarpsPerGroup = 4;

// This thread's place in such a launch: its lane, the item (block) of the
// launch its warp codes, and the warp's team. `area` is the group's shared
// array, declared in the kernel.
struct WarpSlot {
    unsigned lane;
    std::uint64_t item;
    WarpTeam team;
};
__device__ WarpSlot warp_slot(std::uint64_t (*area)[kTeamSharedWords]) {
    const unsigned w = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    return {lane, static_cast<std::uint64_t>(blockIdx.x) * kWarpsPerGroup + w, WarpTeam{lane, area[w]}};
}

// Warp w of the launch decodes block first + w of the batch, with its own
// scratch slice.
__global__ void decode_blocks_warp_per_block(mans_backend_block_batch batch, std::uint64_t first,
                                             std::uint64_t count, std::uint8_t* scratch, std::size_t slice) {
    __shared__ std::uint64_t area[kWarpsPerGroup][kTeamSharedWords];
    const WarpSlot s = warp_slot(area);
    if (s.item >= count) return;  // the whole warp
    const std::int32_t status =
        decode_batch_block(batch, first + s.item, scratch + s.item * slice, s.team, WarpLanes{s.lane});
    if (s.lane == 0) batch.status[first + s.item] = status;
}

#if MANS_GPU_ENCODE
// Warp w of the launch encodes block first + w of the batch (U elements)
// with its own scratch slice, as the team of block_encode.hpp. A kernel
// per element type: a lane's stack is then one encoder's, not the largest
// of four.
template <typename U>
__global__ void encode_blocks_warp_per_block(mans_backend_encode_batch batch, std::uint64_t first,
                                             std::uint64_t count, std::uint8_t* scratch, std::size_t slice) {
    __shared__ std::uint64_t area[kWarpsPerGroup][kTeamSharedWords];
    const WarpSlot s = warp_slot(area);
    if (s.item >= count) return;  // the whole warp
    const std::int32_t status = encode_batch_block_as<U>(batch, first + s.item, scratch + s.item * slice, s.team,
                                                         WarpEncodeLanes{{s.lane, s.team.area}});
    if (s.lane == 0) batch.status[first + s.item] = status;
}

using EncodeKernel = void (*)(mans_backend_encode_batch, std::uint64_t, std::uint64_t, std::uint8_t*, std::size_t);
EncodeKernel encode_kernel_for(unsigned esize) {
    switch (esize) {
        case 1: return encode_blocks_warp_per_block<std::uint8_t>;
        case 2: return encode_blocks_warp_per_block<std::uint16_t>;
        case 4: return encode_blocks_warp_per_block<std::uint32_t>;
        default: return encode_blocks_warp_per_block<std::uint64_t>;
    }
}
#endif  // MANS_GPU_ENCODE

// ---------------------------------------------------------------- host side

void set_text(mans_backend_probe_result* r, const char* what, mans::gpu::Error e) {
    if (r) std::snprintf(r->text, sizeof r->text, "%s: %s", what, mans::gpu::error_string(e));
}

void probe(mans_backend_probe_result* out) {
    std::memset(out, 0, sizeof *out);
    int n = 0;
    const mans::gpu::Error e = mans::gpu::device_count(&n);
    if (e != mans::gpu::kSuccess || n <= 0) {
        // No driver, no device, or a driver too old: all mean "none here".
        out->device_count = 0;
        if (e != mans::gpu::kSuccess)
            set_text(out, MANS_GPU_RUNTIME " device count", e);
        else
            std::snprintf(out->text, sizeof out->text, "no " MANS_GPU_RUNTIME " device");
        return;
    }
    mans::gpu::DeviceProp p{};
    if (const mans::gpu::Error pe = mans::gpu::device_props(&p, 0); pe != mans::gpu::kSuccess) {
        out->device_count = -1;
        set_text(out, MANS_GPU_RUNTIME " device properties", pe);
        return;
    }
    char arch[48];
    if (const char* a = mans::gpu::arch_name(p))
        std::snprintf(arch, sizeof arch, "%.40s", a);
    else
        std::snprintf(arch, sizeof arch, "sm_%d%d", p.major, p.minor);
    // A device this module has no code for is no device for it.
    mans::gpu::FuncAttributes fa{};
    if (const mans::gpu::Error ke = mans::gpu::func_attributes(&fa, rans_decode_warp); ke != mans::gpu::kSuccess) {
        out->device_count = 0;
        std::snprintf(out->text, sizeof out->text, "%.60s, %s: no kernel image (built for %s): %.40s", p.name, arch,
                      MANS_GPU_TARGETS, mans::gpu::error_string(ke));
        return;
    }
    out->device_count = n;
    std::snprintf(out->text, sizeof out->text, "%.60s, %s, %.0f GiB%s", p.name, arch,
                  static_cast<double>(p.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0), n > 1 ? " (device 0)" : "");
}

// Device buffers freed on every path.
template <int N = 6>
struct DeviceBuffers {
    void* p[N] = {};
    ~DeviceBuffers() {
        for (void* q : p)
            if (q) (void)mans::gpu::free(q);
    }
};

int rans_decode_lanes(const mans_backend_rans_stream* s, mans_backend_probe_result* err) {
    if (!s || s->lanes < 1 || s->lanes > kMaxLanes || s->prob_bits < kMinProbBits || s->prob_bits > kMaxProbBits ||
        s->contexts < 1 || s->contexts > kMaxContexts) {
        if (err) std::snprintf(err->text, sizeof err->text, "invalid stream arguments");
        return -1;
    }
    const LaneLayout lay = LaneLayout::make(static_cast<std::size_t>(s->tokens), s->lanes);
    const std::size_t table_bytes = (static_cast<std::size_t>(s->contexts) << s->prob_bits) * 4;
    const std::size_t word_bytes = (static_cast<std::size_t>(s->nwords) + kWordPadding) * 2;
    const std::size_t out_bytes = lay.slots() ? lay.slots() : 1;
    DeviceBuffers<5> b;  // table, states, words, out, status
    const std::size_t sizes[5] = {table_bytes, kMaxLanes * 4, word_bytes, out_bytes, sizeof(int)};
    using mans::gpu::kSuccess;
    mans::gpu::Error e = mans::gpu::set_device(0);
    for (int i = 0; i < 5 && e == kSuccess; ++i) e = mans::gpu::malloc(&b.p[i], sizes[i]);
    if (e == kSuccess) e = mans::gpu::memcpy(b.p[0], s->table, table_bytes, mans::gpu::kHostToDevice);
    if (e == kSuccess) e = mans::gpu::memcpy(b.p[1], s->states, kMaxLanes * 4, mans::gpu::kHostToDevice);
    if (e == kSuccess) e = mans::gpu::memcpy(b.p[2], s->words, word_bytes, mans::gpu::kHostToDevice);
    if (e != kSuccess) {
        set_text(err, "device buffers", e);
        return -1;
    }
    rans_decode_warp<<<1, kWarp>>>(static_cast<const std::uint32_t*>(b.p[0]), s->contexts, s->prob_bits, lay,
                                   static_cast<const std::uint32_t*>(b.p[1]), static_cast<const std::uint16_t*>(b.p[2]),
                                   s->nwords, static_cast<std::uint8_t*>(b.p[3]), static_cast<int*>(b.p[4]));
    e = mans::gpu::last_error();
    if (e == kSuccess) e = mans::gpu::device_sync();
    int status = 0;
    if (e == kSuccess) e = mans::gpu::memcpy(&status, b.p[4], sizeof status, mans::gpu::kDeviceToHost);
    if (e == kSuccess && lay.slots()) e = mans::gpu::memcpy(s->out, b.p[3], lay.slots(), mans::gpu::kDeviceToHost);
    if (e != kSuccess) {
        set_text(err, "rans_decode_warp", e);
        return -1;
    }
    return status;
}

// Threads per thread block for launches of a thread per item, and the most
// blocks (warps) one launch of a host-memory call codes.
constexpr std::uint64_t kMaxBlocksInFlight = 16384;
constexpr unsigned kThreadsPerGroup = 64;

unsigned groups_for(std::uint64_t threads) {
    return static_cast<unsigned>((threads + kThreadsPerGroup - 1) / kThreadsPerGroup);
}
// Thread blocks for `warps` warps (one MANS block each).
unsigned warp_groups_for(std::uint64_t warps) {
    return static_cast<unsigned>((warps + kWarpsPerGroup - 1) / kWarpsPerGroup);
}

// The stack a kernel needs: its reported local size, at least `floor`.
template <typename Kernel>
std::size_t stack_for(Kernel* kernel, std::size_t floor) {
    mans::gpu::FuncAttributes fa{};
    if (mans::gpu::func_attributes(&fa, kernel) != mans::gpu::kSuccess) return floor;
    const std::size_t need = static_cast<std::size_t>(fa.localSizeBytes);
    return need > floor ? need : floor;
}
// Floors with a margin over ptxas's frames (sm_90, ABI 9); the driver
// reserves the limit for every resident thread, so it is not set higher.
constexpr std::size_t kDecodeStackBytes = 2 << 10;   // ptxas: 512-736 bytes
constexpr std::size_t kEncodeStackBytes = 4 << 10;   // ptxas: 1,600-1,888 bytes

// ------------------------------------------------ host-memory calls (ABI 8)
//
// The core codes a stream in host memory in windows of kHostWindowBytes of
// raw data, one encode_blocks or decode_blocks call each, then calls
// end_host_call on the same thread. What the windows share stays with the
// calling thread until then (HostCall): the device buffers, allocated for
// the first window and reused by the next, and two streams. The stack
// limit is raised once and left raised (gpu_runtime.hpp: setting it may
// wait for the device). Before ABI 8 every window of 256 MiB allocated and
// freed its buffers and set and put back the stack limit, each of which
// waits for the device, and copied in, decoded and copied out one after
// the other.
//
// Within a window the blocks go in waves on the two streams in turn: a
// wave's input is copied in and its kernel queued, then the previous wave's
// output is copied out, which the host waits for while the GPU runs the
// wave just queued; the next wave's input copy overlaps it too.

constexpr std::uint64_t kHostWindowBytes = std::uint64_t{512} << 20;
constexpr unsigned kHostStreams = 2;
// A wave has at least kMinWaveBlocks blocks (a warp each), so that the two
// streams' waves fill a GPU together (mapping/host_waves.hpp).
constexpr std::uint64_t kMinWaveBlocks = 1024;

// A device buffer that grows and is never shrunk during a host call.
struct DeviceBuffer {
    void* p = nullptr;
    std::size_t bytes = 0;
};
mans::gpu::Error reserve(DeviceBuffer& b, std::size_t bytes) {
    if (b.p && bytes <= b.bytes) return mans::gpu::kSuccess;
    if (b.p) (void)mans::gpu::free(b.p);
    b = {};
    const mans::gpu::Error e = mans::gpu::malloc(&b.p, bytes ? bytes : 1);
    if (e == mans::gpu::kSuccess)
        b.bytes = bytes;
    else
        b.p = nullptr;
    return e;
}
void release(DeviceBuffer& b) {
    if (b.p) (void)mans::gpu::free(b.p);
    b = {};
}

// What one thread keeps from one window of a stream to the next. Trivially
// destructible on purpose: nothing runs at thread exit (end_host_call is
// the only way out, and the core always calls it).
struct HostCall {
    bool open = false;
    int caller_device = -1;  // put back by end_host_call
    mans::gpu::Stream streams[kHostStreams] = {};
    // in: payloads (decode) or raw elements (encode); out: decoded elements
    // or payload slots; the per-block arrays; scratch slices per stream.
    DeviceBuffer in, out, offsets, sizes, status, scratch[kHostStreams];

    std::size_t held_bytes() const {
        std::size_t n = in.bytes + out.bytes + offsets.bytes + sizes.bytes + status.bytes;
        for (const DeviceBuffer& s : scratch) n += s.bytes;
        return n;
    }
};
thread_local HostCall t_host_call;

// Opens this thread's host call at its first window: device 0, the
// streams. Once opened, end_host_call undoes what succeeded.
mans::gpu::Error begin_window(HostCall& c) {
    mans::gpu::Error e = mans::gpu::kSuccess;
    if (!c.open) {
        if (mans::gpu::get_device(&c.caller_device) != mans::gpu::kSuccess) c.caller_device = -1;
        c.open = true;
        e = mans::gpu::set_device(0);
    }
    for (mans::gpu::Stream& s : c.streams)
        if (e == mans::gpu::kSuccess && !s) e = mans::gpu::stream_create(&s);
    // An error an earlier call on this thread left (ours, a failed
    // allocation, or the application's, unchecked) would otherwise fail
    // this window's first launch check: dropped. A sticky one comes back
    // from the window's next runtime call.
    (void)mans::gpu::last_error();
    return e;
}

// Waits for both streams (a failed window may leave work queued).
void drain(HostCall& c) {
    for (mans::gpu::Stream s : c.streams)
        if (s) (void)mans::gpu::stream_sync(s);
}

void end_host_call() {
    HostCall& c = t_host_call;
    if (!c.open) return;
    drain(c);
    for (DeviceBuffer* b : {&c.in, &c.out, &c.offsets, &c.sizes, &c.status, &c.scratch[0], &c.scratch[1]}) release(*b);
    for (mans::gpu::Stream s : c.streams)
        if (s) (void)mans::gpu::stream_destroy(s);
    if (c.caller_device >= 0) (void)mans::gpu::set_device(c.caller_device);
    c = HostCall{};
}

// Blocks in flight per stream for `blocks` blocks of `slice` scratch bytes
// each, beside `other` bytes of the window's other buffers: the scratch of
// both streams takes at most half of the memory that is free or already
// the call's (`held`).
std::uint64_t blocks_in_flight(std::uint64_t blocks, std::size_t slice, std::size_t other, std::size_t held) {
    std::size_t free_bytes = 0, total = 0;
    if (mans::gpu::mem_info(&free_bytes, &total) != mans::gpu::kSuccess) free_bytes = std::size_t{4} << 30;
    const std::size_t usable = free_bytes + held;
    const std::size_t budget = usable > other ? (usable - other) / 2 / kHostStreams : 0;
    std::uint64_t n = blocks < kMaxBlocksInFlight ? blocks : kMaxBlocksInFlight;
    if (n * slice > budget) n = budget / slice;
    return n ? n : 1;
}

// A window's start: the host call opened (begin_window), the stack limit
// raised for `kernel`, the blocks per wave (*wave) for `blocks` blocks of
// `slice` scratch bytes, and the window's buffers and both streams'
// scratch for a wave reserved.
struct BufferNeed {
    DeviceBuffer* buffer;
    std::size_t bytes;
};
template <typename Kernel>
mans::gpu::Error open_window(HostCall& c, Kernel* kernel, std::size_t stack_floor, std::uint64_t blocks,
                             std::size_t slice, std::initializer_list<BufferNeed> needs, std::uint64_t* wave) {
    mans::gpu::Error e = begin_window(c);
    if (e == mans::gpu::kSuccess) e = mans::gpu::raise_stack_limit(stack_for(kernel, stack_floor));
    std::size_t other = 0;
    for (const BufferNeed& n : needs) other += n.bytes;
    *wave = host_wave_blocks(blocks, blocks_in_flight(blocks, slice, other, c.held_bytes()), kMinWaveBlocks);
    for (const BufferNeed& n : needs)
        if (e == mans::gpu::kSuccess) e = reserve(*n.buffer, n.bytes);
    for (DeviceBuffer& s : c.scratch)
        if (e == mans::gpu::kSuccess) e = reserve(s, static_cast<std::size_t>(*wave) * slice);
    return e;
}

// One queued copy on stream s (the Copy of mapping/host_waves.hpp); its
// error in *e.
struct StreamCopy {
    mans::gpu::Stream s;
    mans::gpu::Error* e;
    bool operator()(void* to, const void* from, std::size_t bytes, bool to_device) const {
        *e = mans::gpu::memcpy_async(to, from, bytes, to_device ? mans::gpu::kHostToDevice : mans::gpu::kDeviceToHost, s);
        return *e == mans::gpu::kSuccess;
    }
};

// One window's waves of `wave` blocks, wave k on stream k % 2: copy_in(w,
// copy), launch(w, stream, scratch), then the previous wave's copy_out(w,
// copy) and a wait for its stream. Stops at the first error, with both
// streams drained: no copy touches the caller's memory after this returns.
template <typename CopyIn, typename Launch, typename CopyOut>
mans::gpu::Error run_waves(HostCall& c, std::uint64_t blocks, std::uint64_t wave, const CopyIn& copy_in,
                           const Launch& launch, const CopyOut& copy_out) {
    mans::gpu::Error e = mans::gpu::kSuccess;
    const auto finish = [&](const Wave& w, unsigned k) {
        if (copy_out(w, StreamCopy{c.streams[k], &e}))
            e = mans::gpu::stream_sync(c.streams[k]);  // also for HIP, whose copies to pageable memory may return early
    };
    Wave prev{0, 0};
    unsigned k = 0;
    for (std::uint64_t first = 0; first < blocks && e == mans::gpu::kSuccess; first += wave, k ^= 1u) {
        const Wave w{first, blocks - first < wave ? blocks - first : wave};
        if (!copy_in(w, StreamCopy{c.streams[k], &e})) break;
        launch(w, c.streams[k], static_cast<std::uint8_t*>(c.scratch[k].p));
        e = mans::gpu::last_error();
        if (e == mans::gpu::kSuccess && prev.count) finish(prev, k ^ 1u);
        prev = w;
    }
    if (e == mans::gpu::kSuccess && prev.count) finish(prev, k ^ 1u);
    if (e != mans::gpu::kSuccess) drain(c);
    return e;
}

int fail_window(mans_backend_probe_result* err, const char* what, mans::gpu::Error e) {
    set_text(err, what, e);
    (void)mans::gpu::last_error();  // not left to the caller's next check
    return -1;
}

int decode_blocks(const mans_backend_block_batch* h, mans_backend_probe_result* err) {
    using mans::gpu::kSuccess;
    const unsigned esize = h ? elem_bytes(static_cast<mans::DType>(h->dtype)) : 0;
    if (!h || esize == 0 || h->blocks == 0 || h->block_elems == 0 || h->last_elems > h->block_elems ||
        !block_batch_offsets_valid(*h)) {
        if (err) std::snprintf(err->text, sizeof err->text, "invalid block batch");
        return -1;
    }
    const std::size_t slice = align16(block_scratch_bytes(static_cast<std::size_t>(h->block_elems), esize));
    const std::size_t in_bytes = static_cast<std::size_t>(h->payload_bytes) + 16;
    const std::size_t offsets_bytes = static_cast<std::size_t>(h->blocks + 1) * 8;
    const std::size_t dst_bytes = static_cast<std::size_t>(wave_elems(*h, Wave{0, h->blocks}) * esize);
    const std::size_t status_bytes = static_cast<std::size_t>(h->blocks) * 4;
    HostCall& c = t_host_call;
    std::uint64_t wave = 0;
    mans::gpu::Error e = open_window(c, decode_blocks_warp_per_block, kDecodeStackBytes, h->blocks, slice,
                                     {{&c.in, in_bytes}, {&c.offsets, offsets_bytes}, {&c.out, dst_bytes},
                                      {&c.status, status_bytes}},
                                     &wave);
    // Every wave reads the offsets: copied first, on one stream, and waited for.
    if (e == kSuccess)
        e = mans::gpu::memcpy_async(c.offsets.p, h->offsets, offsets_bytes, mans::gpu::kHostToDevice, c.streams[0]);
    if (e == kSuccess) e = mans::gpu::stream_sync(c.streams[0]);
    if (e != kSuccess) return fail_window(err, "decode_blocks buffers", e);
    mans_backend_block_batch d = *h;
    d.payloads = static_cast<const std::uint8_t*>(c.in.p);
    d.offsets = static_cast<const std::uint64_t*>(c.offsets.p);
    d.dst = static_cast<std::uint8_t*>(c.out.p);
    d.status = static_cast<std::int32_t*>(c.status.p);
    e = run_waves(
        c, h->blocks, wave,
        [&](const Wave& w, const StreamCopy& copy) { return decode_wave_in(*h, d, w, copy); },
        [&](const Wave& w, mans::gpu::Stream s, std::uint8_t* scratch) {
            decode_blocks_warp_per_block<<<warp_groups_for(w.count), kWarpsPerGroup * kWarp, 0, s>>>(
                d, w.first, w.count, scratch, slice);
        },
        [&](const Wave& w, const StreamCopy& copy) { return decode_wave_out(*h, d, esize, w, copy); });
    return e == kSuccess ? 0 : fail_window(err, "decode_blocks_warp_per_block", e);
}

#if MANS_GPU_ENCODE
int encode_blocks(const mans_backend_encode_batch* h, mans_backend_probe_result* err) {
    using mans::gpu::kSuccess;
    const unsigned esize = h ? elem_bytes(static_cast<mans::DType>(h->dtype)) : 0;
    if (!h || esize == 0 || h->blocks == 0 || h->block_elems == 0 || h->last_elems > h->block_elems ||
        h->slot_bytes < h->block_elems * esize + 1) {
        if (err) std::snprintf(err->text, sizeof err->text, "invalid encode batch");
        return -1;
    }
    const std::size_t slice = align16(encode_slice_layout(batch_slice_elems(*h), esize).total);
    const std::size_t src_bytes = static_cast<std::size_t>(wave_elems(*h, Wave{0, h->blocks}) * esize);
    const std::size_t slot_total = static_cast<std::size_t>(h->blocks * h->slot_bytes);
    const std::size_t sizes_bytes = static_cast<std::size_t>(h->blocks) * 8;
    const std::size_t status_bytes = static_cast<std::size_t>(h->blocks) * 4;
    const EncodeKernel kernel = encode_kernel_for(esize);
    HostCall& c = t_host_call;
    std::uint64_t wave = 0;
    mans::gpu::Error e = open_window(
        c, kernel, kEncodeStackBytes, h->blocks, slice,
        {{&c.in, src_bytes}, {&c.out, slot_total}, {&c.sizes, sizes_bytes}, {&c.status, status_bytes}}, &wave);
    if (e != kSuccess) return fail_window(err, "encode_blocks buffers", e);
    mans_backend_encode_batch d = *h;
    d.src = static_cast<const std::uint8_t*>(c.in.p);
    d.slots = static_cast<std::uint8_t*>(c.out.p);
    d.payload_bytes = static_cast<std::uint64_t*>(c.sizes.p);
    d.status = static_cast<std::int32_t*>(c.status.p);
    e = run_waves(
        c, h->blocks, wave,
        [&](const Wave& w, const StreamCopy& copy) { return encode_wave_in(*h, d, esize, w, copy); },
        [&](const Wave& w, mans::gpu::Stream s, std::uint8_t* scratch) {
            kernel<<<warp_groups_for(w.count), kWarpsPerGroup * kWarp, 0, s>>>(d, w.first, w.count, scratch, slice);
        },
        [&](const Wave& w, const StreamCopy& copy) { return encode_wave_out(*h, d, w, copy); });
    return e == kSuccess ? 0 : fail_window(err, "encode_blocks_warp_per_block", e);
}
#endif  // MANS_GPU_ENCODE

// ------------------------------------------------ device-memory API (chunks)
//
// The steps of mapping/chunk_batch.hpp as kernels on the caller's stream and
// current device: nothing here waits, allocates or copies. Each kernel
// reads the batch (device arrays) and the layout the core computed too.
// Decompression in every module; compression where the encoder is built
// (MANS_GPU_ENCODE; the API opens a module without it for decompression).

// This thread's index in a launch of one thread per item (chunk, tile, block).
__device__ std::uint64_t global_thread() { return static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }

__global__ void chunk_parse(mans_backend_chunk_batch a, ChunkDecodeLayout l) {
    const std::uint64_t c = global_thread();
    if (c < a.chunks) parse_chunk(a, l, c);
}
// The scan that lists the blocks to decode (chunk_batch.hpp steps 1b-1e).
__global__ void chunk_sum_list_tiles(mans_backend_chunk_batch a, ChunkDecodeLayout l) {
    const std::uint64_t t = global_thread();
    if (t < l.list_tiles) sum_list_tile(a, l, t);
}
__global__ void chunk_scan_list_tiles(mans_backend_chunk_batch a, ChunkDecodeLayout l) {
    if (blockIdx.x == 0 && threadIdx.x == 0) scan_list_tiles(a, l);
}
__global__ void chunk_first_blocks(mans_backend_chunk_batch a, ChunkDecodeLayout l) {
    const std::uint64_t c = global_thread();
    if (c < a.chunks) first_chunk_block(a, l, c);
}
__global__ void chunk_list_blocks(mans_backend_chunk_batch a, ChunkDecodeLayout l) {
    const std::uint64_t g = global_thread();
    if (g < l.total_blocks) list_chunk_block(a, l, g);
}
// wave_blocks warps, warp w decoding listed blocks w, w + wave_blocks, ...
// (the count is on the device) with its scratch slice, as
// decode_blocks_warp_per_block decodes one.
__global__ void chunk_decode_blocks(mans_backend_chunk_batch a, ChunkDecodeLayout l) {
    __shared__ std::uint64_t area[kWarpsPerGroup][kTeamSharedWords];
    const WarpSlot s = warp_slot(area);
    if (s.item < l.wave_blocks) decode_chunk_blocks_strided(a, l, s.item, s.team, WarpLanes{s.lane});
}
__global__ void chunk_finish_decode(mans_backend_chunk_batch a, ChunkDecodeLayout l) {
    const std::uint64_t c = global_thread();
    if (c < a.chunks) finish_chunk_decode(a, l, c);
}

// An error an earlier call on this thread left (the application's,
// unchecked) would fail a batch's launch checks after its first kernel
// was queued: dropped before the first launch, as begin_window does for
// host calls. A sticky error comes back from the next runtime call.
void drop_stale_error() { (void)mans::gpu::last_error(); }

// Blocks in flight for a kernel whose warp w codes blocks w, w + wave, ...
// (decode_chunk_blocks_strided, encode_chunk_blocks_strided): at most the
// warps the device holds at once. Warps beyond those would start their
// whole lists only when resident ones had finished theirs. 8,192 blocks
// (1 GiB of u16) where 1,584 warps fit (12 per SM of the decode kernel, by
// its 130 registers, on an H200's 132): 1,024 warps decode 8 blocks each
// one after the other, 2,048 warps 4 + 4 (two rounds of warps), 1,536 or
// 1,584 warps at most 6. Unmeasured (no GPU here); the temp's unused slices stay
// unused. Without an answer from the runtime the wave stays as the temp
// allows.
template <typename Kernel>
std::uint64_t cap_at_resident_warps(Kernel* kernel, std::uint64_t wave) {
    int dev = 0, groups = 0, units = 0;
    if (mans::gpu::get_device(&dev) != mans::gpu::kSuccess ||
        mans::gpu::resident_groups(&groups, kernel, static_cast<int>(kWarpsPerGroup * kWarp)) != mans::gpu::kSuccess ||
        mans::gpu::multiprocessors(&units, dev) != mans::gpu::kSuccess || groups <= 0 || units <= 0) {
        drop_stale_error();  // not left for the launch checks to find
        return wave;
    }
    const std::uint64_t resident = static_cast<std::uint64_t>(groups) * static_cast<std::uint64_t>(units) * kWarpsPerGroup;
    return wave < resident ? wave : resident;
}

// Launches of at most 2^31 - 1 groups (the grid's x limit) for `items`
// threads, or warps with kWarpsPerGroup.
bool grid_fits(std::uint64_t items, std::uint64_t per_group = kThreadsPerGroup) {
    return (items + per_group - 1) / per_group <= 0x7fffffffu;
}

int chunk_fail(mans_backend_probe_result* err, const char* what, mans::gpu::Error e) {
    set_text(err, what, e);
    drop_stale_error();  // not left for the caller's next check
    return -1;
}

int chunk_decode(const mans_backend_chunk_batch* a, mans_backend_probe_result* err) {
    if (a && a->struct_size >= sizeof(mans_backend_chunk_batch) && a->chunks == 0) return 0;  // no launch of 0 groups
    const std::uint64_t temp_wave = a && a->struct_size >= sizeof(mans_backend_chunk_batch) ? chunk_decode_wave(*a) : 0;
    const std::uint64_t wave = temp_wave ? cap_at_resident_warps(chunk_decode_blocks, temp_wave) : 0;
    if (wave == 0) {
        if (err) std::snprintf(err->text, sizeof err->text, "invalid chunk batch or temp too small");
        return -1;
    }
    const ChunkDecodeLayout l = chunk_decode_layout(a->chunks, a->out_capacity, a->max_block_bytes, wave);
    if (!grid_fits(a->chunks) || !grid_fits(l.total_blocks) || !grid_fits(wave, kWarpsPerGroup)) {
        if (err) std::snprintf(err->text, sizeof err->text, "chunk batch too large for one grid");
        return -1;
    }
    const auto stream = static_cast<mans::gpu::Stream>(a->stream);
    drop_stale_error();
    mans::gpu::Error e = mans::gpu::raise_stack_limit(stack_for(chunk_decode_blocks, kDecodeStackBytes));
    if (e == mans::gpu::kSuccess) {
        chunk_parse<<<groups_for(a->chunks), kThreadsPerGroup, 0, stream>>>(*a, l);
        e = mans::gpu::last_error();
    }
    // Each launch is checked before the next is queued: a later step would
    // read what a failed one did not write.
    if (e == mans::gpu::kSuccess) {
        chunk_sum_list_tiles<<<groups_for(l.list_tiles), kThreadsPerGroup, 0, stream>>>(*a, l);
        e = mans::gpu::last_error();
    }
    if (e == mans::gpu::kSuccess) {
        chunk_scan_list_tiles<<<1, 1, 0, stream>>>(*a, l);
        e = mans::gpu::last_error();
    }
    if (e == mans::gpu::kSuccess) {
        chunk_first_blocks<<<groups_for(a->chunks), kThreadsPerGroup, 0, stream>>>(*a, l);
        e = mans::gpu::last_error();
    }
    if (e == mans::gpu::kSuccess) {
        chunk_list_blocks<<<groups_for(l.total_blocks), kThreadsPerGroup, 0, stream>>>(*a, l);
        e = mans::gpu::last_error();
    }
    if (e == mans::gpu::kSuccess) {
        chunk_decode_blocks<<<warp_groups_for(wave), kWarpsPerGroup * kWarp, 0, stream>>>(*a, l);
        e = mans::gpu::last_error();
    }
    if (e == mans::gpu::kSuccess) {
        chunk_finish_decode<<<groups_for(a->chunks), kThreadsPerGroup, 0, stream>>>(*a, l);
        e = mans::gpu::last_error();
    }
    return e == mans::gpu::kSuccess ? 0 : chunk_fail(err, "chunk_decode", e);
}
#if MANS_GPU_ENCODE

// wave_blocks warps, warp w encoding blocks w, w + wave_blocks, ... with
// its scratch slice, as encode_blocks_warp_per_block encodes one.
template <typename U>
__global__ void chunk_encode_blocks(mans_backend_chunk_batch a, ChunkEncodeLayout l) {
    __shared__ std::uint64_t area[kWarpsPerGroup][kTeamSharedWords];
    const WarpSlot s = warp_slot(area);
    if (s.item < l.wave_blocks)
        encode_chunk_blocks_strided<U>(a, l, s.item, s.team, WarpEncodeLanes{{s.lane, s.team.area}});
}
__global__ void chunk_finish_encode(mans_backend_chunk_batch a, ChunkEncodeLayout l) {
    const std::uint64_t c = global_thread();
    if (c < a.chunks) finish_chunk_encode(a, l, c);
}
__global__ void chunk_place_blocks(mans_backend_chunk_batch a, ChunkEncodeLayout l) {
    const std::uint64_t g = global_thread();
    if (g < l.total_blocks) place_chunk_block(a, l, g);
}
using ChunkEncodeKernel = void (*)(mans_backend_chunk_batch, ChunkEncodeLayout);
ChunkEncodeKernel chunk_encode_kernel_for(unsigned esize) {
    switch (esize) {
        case 1: return chunk_encode_blocks<std::uint8_t>;
        case 2: return chunk_encode_blocks<std::uint16_t>;
        case 4: return chunk_encode_blocks<std::uint32_t>;
        default: return chunk_encode_blocks<std::uint64_t>;
    }
}

int chunk_encode(const mans_backend_chunk_batch* a, mans_backend_probe_result* err) {
    if (a && a->struct_size >= sizeof(mans_backend_chunk_batch) && a->chunks == 0) return 0;  // no launch of 0 groups
    const unsigned esize = a ? elem_bytes(static_cast<mans::DType>(a->dtype)) : 0;
    const std::uint64_t temp_wave = esize && a->block_elems ? chunk_encode_wave(esize, *a) : 0;
    const std::uint64_t wave = temp_wave ? cap_at_resident_warps(chunk_encode_kernel_for(esize), temp_wave) : 0;
    const ChunkEncodeLayout l = chunk_encode_layout(esize, a ? a->block_elems : 0, a ? a->chunks : 0,
                                                    a ? a->max_in_bytes : 0, wave);
    if (!a || a->struct_size < sizeof(mans_backend_chunk_batch) || esize == 0 || a->block_elems == 0 ||
        (l.total_blocks && wave == 0) || !grid_fits(a->chunks) || !grid_fits(l.total_blocks) ||
        !grid_fits(wave, kWarpsPerGroup)) {
        if (err) std::snprintf(err->text, sizeof err->text, "invalid chunk batch or temp too small");
        return -1;
    }
    const auto stream = static_cast<mans::gpu::Stream>(a->stream);
    const ChunkEncodeKernel kernel = chunk_encode_kernel_for(esize);
    drop_stale_error();
    mans::gpu::Error e = mans::gpu::raise_stack_limit(stack_for(kernel, kEncodeStackBytes));
    if (e == mans::gpu::kSuccess && l.total_blocks) {
        kernel<<<warp_groups_for(wave), kWarpsPerGroup * kWarp, 0, stream>>>(*a, l);
        e = mans::gpu::last_error();
    }
    if (e == mans::gpu::kSuccess) {
        chunk_finish_encode<<<groups_for(a->chunks), kThreadsPerGroup, 0, stream>>>(*a, l);
        e = mans::gpu::last_error();
    }
    if (e == mans::gpu::kSuccess && l.total_blocks) {
        chunk_place_blocks<<<groups_for(l.total_blocks), kThreadsPerGroup, 0, stream>>>(*a, l);
        e = mans::gpu::last_error();
    }
    return e == mans::gpu::kSuccess ? 0 : chunk_fail(err, "chunk_encode", e);
}

// PRISM compression of one field (prism/device_job.hpp): the field copied
// to the device, device_compress's steps over DeviceExec with this
// module's chunk encoder for the rANS candidates, the parts to the core.
template <typename T>
int prism_compress_as(const mans_backend_prism_job& j, mans_backend_probe_result* err) {
    mans::gpu::DeviceExec ex(chunk_encode);
    const std::uint64_t n = j.bytes / sizeof(T);
    const T* x = static_cast<const T*>(j.data);
    if (!j.data_on_device) {
        T* copy = ex.alloc<T>(n);
        ex.to_device(copy, j.data, static_cast<std::size_t>(n * sizeof(T)));
        x = copy;
    }
    const int rc = ex.status() == mans::Errc::ok ? mans::detail::prism::run_prism_job<T>(ex, j, x) : static_cast<int>(ex.status());
    if ((rc == MANS_ERR_BACKEND_UNAVAILABLE || rc == MANS_ERR_OUT_OF_MEMORY) && err)
        std::snprintf(err->text, sizeof err->text, "prism_compress: %s", ex.error_text());
    return rc;
}

int prism_compress(const mans_backend_prism_job* j, mans_backend_probe_result* err) {
    if (!j || j->struct_size < sizeof(mans_backend_prism_job) ||
        (j->float_type != static_cast<int>(mans::prism::FloatType::f32) &&
         j->float_type != static_cast<int>(mans::prism::FloatType::f64)))
        return MANS_ERR_INVALID_ARGUMENT;
    try {
        return j->float_type == static_cast<int>(mans::prism::FloatType::f32) ? prism_compress_as<float>(*j, err)
                                                                              : prism_compress_as<double>(*j, err);
    } catch (const std::bad_alloc&) {
        return MANS_ERR_OUT_OF_MEMORY;
    } catch (...) {
        return MANS_ERR_INTERNAL;
    }
}

#endif  // MANS_GPU_ENCODE

#if MANS_GPU_PRISM_DECODE
// PRISM reconstruction of one retrieval (prism/device_job.hpp): the planes
// copied to the device, device_reconstruct's steps over DeviceExec with
// this module's chunk decoder for the rANS streams, the values back.
template <typename T>
int prism_decompress_as(const mans_backend_prism_read_job& j, mans_backend_probe_result* err) {
    mans::gpu::DeviceExec ex(nullptr, chunk_decode);  // retrieval encodes nothing
    const int rc = ex.status() == mans::Errc::ok ? mans::detail::prism::run_prism_read_job<T>(ex, j)
                                                 : static_cast<int>(ex.status());
    if ((rc == MANS_ERR_BACKEND_UNAVAILABLE || rc == MANS_ERR_OUT_OF_MEMORY) && err)
        std::snprintf(err->text, sizeof err->text, "prism_decompress: %s", ex.error_text());
    return rc;
}

int prism_decompress(const mans_backend_prism_read_job* j, mans_backend_probe_result* err) {
    if (!j || j->struct_size < sizeof(mans_backend_prism_read_job) || !j->header || j->header_bytes < 8)
        return MANS_ERR_INVALID_ARGUMENT;
    try {
        // The element size from the header (parsed again by the job).
        mans::detail::prism::Header h;
        if (mans::detail::prism::parse_header(j->header, static_cast<std::size_t>(j->header_bytes), j->archive_bytes,
                                              &h) != mans::Errc::ok)
            return MANS_ERR_INVALID_ARGUMENT;
        return h.type == mans::prism::FloatType::f32 ? prism_decompress_as<float>(*j, err)
                                                     : prism_decompress_as<double>(*j, err);
    } catch (const std::bad_alloc&) {
        return MANS_ERR_OUT_OF_MEMORY;
    } catch (...) {
        return MANS_ERR_INTERNAL;
    }
}

#endif  // MANS_GPU_PRISM_DECODE

mans_backend_module make_module() {
    mans_backend_module m{};
    m.abi_version = MANS_BACKEND_ABI_VERSION;
    m.struct_size = sizeof(mans_backend_module);
    m.name = MANS_GPU_NAME;
    m.build_info = MANS_GPU_RUNTIME ", targets " MANS_GPU_TARGETS;
    m.caps = MANS_BACKEND_CAP_MANS_DECOMPRESS | MANS_BACKEND_CAP_RANS_DECODE_TEST;
    m.probe = probe;
    m.chunk_decode = chunk_decode;
#if MANS_GPU_ENCODE
    m.caps |= MANS_BACKEND_CAP_MANS_COMPRESS | MANS_BACKEND_CAP_DEVICE_CHUNKS;
    m.encode_blocks = encode_blocks;
    m.chunk_encode = chunk_encode;
    m.caps |= MANS_BACKEND_CAP_PRISM_COMPRESS;
    m.prism_compress = prism_compress;
#else
    m.caps |= MANS_BACKEND_CAP_DEVICE_CHUNK_DECODE;
#endif
#if MANS_GPU_PRISM_DECODE
    m.caps |= MANS_BACKEND_CAP_PRISM_DECOMPRESS;
    m.prism_decompress = prism_decompress;
#endif
    m.decode_blocks = decode_blocks;
    m.end_host_call = end_host_call;
    m.host_window_bytes = kHostWindowBytes;
    m.rans_decode_lanes = rans_decode_lanes;
    return m;
}

const mans_backend_module kModule = make_module();

}  // namespace

extern "C" __attribute__((visibility("default"))) const mans_backend_module* mans_backend_module_entry(
    std::uint32_t host_abi_version) {
    (void)host_abi_version;  // the loader compares kModule.abi_version itself
    return &kModule;
}
