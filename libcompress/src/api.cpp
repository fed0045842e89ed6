// api.cpp - the C++ API: framing blocks, running them on a backend, checksums.
#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#include "backend.hpp"
#include "core/frame.hpp"
#include "core/module_loader.hpp"
#include "device_module.hpp"
#include "mans/mans.hpp"
#include "mapping/block_codec.hpp"

namespace mans {

using detail::BlockScratch;
using detail::FrameHeader;
using detail::IndexEntry;

namespace {

const char* gpu_name(Backend b) { return b == Backend::cuda ? "cuda" : "hip"; }

// Where one operation runs: the CPU backend, or a GPU module.
struct Placement {
    const detail::Backend* cpu = nullptr;
    const mans_backend_module* gpu = nullptr;
};

// Blocks of every dtype that a module must code exactly as the CPU before it
// is trusted with an operation: a constant block, a smooth one, one of few
// distinct values with holes, a random one and a short last block, so that
// most mappings run. Deterministic (an LCG).
std::vector<std::uint8_t> self_test_blocks(DType t, std::size_t block_elems, std::uint64_t* count) {
    const std::size_t es = dtype_size(t);
    *count = 4 * block_elems + 1000;
    std::vector<std::uint8_t> raw(static_cast<std::size_t>(*count) * es);
    std::uint64_t x = 0x9e3779b97f4a7c15ull;
    for (std::size_t i = 0; i < *count; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const std::size_t kind = i / block_elems;
        const std::uint64_t r = x >> 33;
        std::uint64_t v = kind == 0   ? 77
                          : kind == 1 ? 1000 + i / 8 + (r & 3)
                          : kind == 2 ? (r % 5) * 1000
                          : kind == 3 ? x
                                      : 40000 + (r & 255);
        for (std::size_t b = 0; b < es; ++b) raw[i * es + b] = static_cast<std::uint8_t>(v >> (8 * b));
    }
    return raw;
}

Errc decode_on_module(const mans_backend_module& m, const detail::ParsedFrame& f, const std::uint8_t* in,
                      std::uint8_t* dst, int threads);
Result compress_on_module(const mans_backend_module& m, const FrameHeader& h, const std::uint8_t* src,
                          std::uint8_t* dst, std::size_t dst_cap, int threads, std::vector<IndexEntry>& index);

// "" when module m codes the self-test blocks of every dtype exactly as the
// CPU (op: MANS compress or decompress), else what failed. It goes through
// the same module paths as the API (compress_on_module, decode_on_module,
// checksums included) against the CPU's stream. It catches a module that is
// wrong on every input (miscompiled, or built for another device); the
// CPU's checksums catch the rest.
std::string run_self_test(const mans_backend_module& m, detail::BackendOp op) {
    if (op == detail::BackendOp::prism_compress) return detail::prism::prism_self_test(m);
    if (op == detail::BackendOp::prism_decompress) return detail::prism::prism_read_self_test(m);
    for (DType t : {DType::u8, DType::u16, DType::u32, DType::u64, DType::i16, DType::i32, DType::i64}) {
        const std::size_t es = dtype_size(t), block_elems = detail::kMinBlockBytes / es;
        std::uint64_t count = 0;
        const std::vector<std::uint8_t> raw = self_test_blocks(t, block_elems, &count);
        CompressConfig cfg;
        cfg.dtype = t;
        cfg.block_bytes = detail::kMinBlockBytes;
        cfg.backend = Backend::cpu;
        cfg.threads = 1;
        std::vector<std::uint8_t> cpu(compress_bound(raw.size()));
        const Result rc = compress(cpu.data(), cpu.size(), raw.data(), raw.size(), cfg);
        if (!rc) return std::string("the CPU could not code the self-test blocks");
        cpu.resize(rc.size);
        const std::string what = std::string(detail::op_label(op)) + " of " + dtype_name(t) + " blocks";
        if (op == detail::BackendOp::mans_compress) {
            FrameHeader h;
            h.dtype = t;
            h.count = count;
            h.block_elems = static_cast<std::uint32_t>(block_elems);
            std::vector<IndexEntry> index(h.block_count());
            std::vector<std::uint8_t> gpu(cpu.size() + 1);
            const Result r = compress_on_module(m, h, raw.data(), gpu.data(), gpu.size(), 1, index);
            if (!r) return what + " failed (" + errc_name(r.code) + ")";
            if (r.size != cpu.size() || std::memcmp(gpu.data(), cpu.data(), cpu.size()) != 0)
                return what + " differ from the CPU's";
        } else {
            detail::ParsedFrame f;
            if (detail::parse_frame(cpu.data(), cpu.size(), &f) != Errc::ok) return std::string("self-test stream unreadable");
            std::vector<std::uint8_t> back(raw.size());
            const Errc e = decode_on_module(m, f, cpu.data(), back.data(), 1);
            if (e != Errc::ok) return what + " failed (" + errc_name(e) + ")";
            if (back != raw) return what + " differ from the input";
        }
    }
    return {};
}

// run_self_test once per module and operation for the process. A self-test
// runs the codecs, which may ask for a placement again on the same thread
// (hence the recursive lock): the same module and operation then reads as
// not usable until its test is done.
const std::string& self_test_result(const mans_backend_module& m, detail::BackendOp op) {
    static std::recursive_mutex lock;
    static std::map<std::pair<const void*, int>, std::string> results;  // nodes never move
    std::lock_guard<std::recursive_mutex> g(lock);
    const auto key = std::make_pair(static_cast<const void*>(&m), static_cast<int>(op));
    auto it = results.find(key);
    if (it == results.end()) {
        it = results.emplace(key, "self-test in progress").first;
        it->second = run_self_test(m, op);
    }
    return it->second;
}

// The module of `name` when it can run op and passes the self-test.
const mans_backend_module* usable_module(const char* name, detail::BackendOp op) {
    const mans_backend_module* m = detail::gpu_module_for(name, op);
    return m && self_test_result(*m, op).empty() ? m : nullptr;
}

// Why module `name` does not run op ("" when it does): the loader's reason,
// or the failed self-test.
std::string module_reason(const char* name, detail::BackendOp op) {
    std::string why = detail::gpu_module_reason(name, op);
    if (!why.empty()) return why;
    const mans_backend_module* m = detail::gpu_module_for(name, op);
    if (!m) return std::string(name) + ": unavailable";
    const std::string& failed = self_test_result(*m, op);
    return failed.empty() ? std::string() : std::string(name) + ": " + detail::gpu_module_device(name) + ": self-test failed: " + failed;
}

// `automatic` sends inputs (raw bytes) of at least this size to a GPU: a
// GPU call costs copies, allocations and a synchronisation, and one thread
// per block needs many blocks to pay for them.
constexpr std::uint64_t kAutoGpuMinBytes = std::uint64_t{16} << 20;

// The placement of `op` for `requested` on raw_bytes of data. A GPU module is
// taken only when it loads, finds a device, implements op, this libmans
// dispatches op (module_loader.hpp) and it passes the self-test;
// `automatic` tries CUDA, then HIP, for inputs of kAutoGpuMinBytes or more,
// else the CPU.
Errc select_backend(Backend requested, detail::BackendOp op, std::uint64_t raw_bytes, Placement* out) {
    *out = Placement{};
    switch (requested) {
        case Backend::automatic:
            if (raw_bytes >= kAutoGpuMinBytes)
                for (Backend g : {Backend::cuda, Backend::hip})
                    if ((out->gpu = usable_module(gpu_name(g), op))) return Errc::ok;
            out->cpu = &detail::cpu_backend();
            return Errc::ok;
        case Backend::cpu: out->cpu = &detail::cpu_backend(); return Errc::ok;
        case Backend::cuda:
        case Backend::hip:
            out->gpu = usable_module(gpu_name(requested), op);
            return out->gpu ? Errc::ok : Errc::backend_unavailable;
    }
    return Errc::invalid_argument;
}

bool valid_operation(Operation op) {
    return op == Operation::compress || op == Operation::decompress || op == Operation::prism_compress ||
           op == Operation::prism_decompress;
}

detail::BackendOp to_backend_op(Operation op) {
    switch (op) {
        case Operation::compress: return detail::BackendOp::mans_compress;
        case Operation::decompress: return detail::BackendOp::mans_decompress;
        case Operation::prism_compress: return detail::BackendOp::prism_compress;
        case Operation::prism_decompress: return detail::BackendOp::prism_decompress;
    }
    return detail::BackendOp::mans_compress;
}

std::string make_report(Backend b, Operation op, bool force_scalar) {
    const detail::BackendOp bop = to_backend_op(op);
    const std::string cpu = detail::cpu_backend().kernels(force_scalar).description;
    // "cuda (NVIDIA H200, sm_90, 139 GiB)" for a module that runs op.
    const auto gpu_line = [](Backend g) {
        return std::string(gpu_name(g)) + " (" + detail::gpu_module_device(gpu_name(g)) + ")";
    };
    switch (b) {
        case Backend::cpu: return cpu;
        case Backend::automatic: {
            // GPUs are tried in this order; each one that is not taken says why.
            std::string reasons;
            for (Backend g : {Backend::cuda, Backend::hip}) {
                const std::string why = module_reason(gpu_name(g), bop);
                if (why.empty()) return gpu_line(g) + " from 16 MiB, else " + cpu + reasons;
                reasons += "; " + why;
            }
            return cpu + reasons;
        }
        case Backend::cuda:
        case Backend::hip: {
            const std::string why = module_reason(gpu_name(b), bop);
            return why.empty() ? gpu_line(b) : why;
        }
    }
    return "unknown backend";
}

// One stream coded in host memory by a module: its windows (one
// encode_blocks / decode_blocks call each) and the end_host_call after
// them, on every path, which lets the module keep device buffers, a stream
// and a raised stack limit from one window to the next and no longer.
class ModuleHostCall {
public:
    explicit ModuleHostCall(const mans_backend_module& m)
        : end_(detail::module_end_host_call(&m)), window_bytes_(detail::module_host_window_bytes(&m)) {
        if (window_bytes_ == 0) window_bytes_ = kDefaultWindowBytes;
    }
    ~ModuleHostCall() {
        if (end_) end_();
    }
    ModuleHostCall(const ModuleHostCall&) = delete;
    ModuleHostCall& operator=(const ModuleHostCall&) = delete;

    // Blocks per window for blocks of block_bytes: at least one.
    std::uint64_t window_blocks(std::uint64_t block_bytes) const {
        return std::max<std::uint64_t>(1, window_bytes_ / block_bytes);
    }

private:
    // Big enough to fill a GPU, small enough that a stream larger than
    // the device's memory still codes there.
    static constexpr std::uint64_t kDefaultWindowBytes = std::uint64_t{256} << 20;
    void (*end_)(void);
    std::uint64_t window_bytes_;
};

// Decodes a parsed frame's blocks with a GPU module (decode_blocks), then
// checks each block's status and content checksum (on the CPU). The error is
// that of the lowest failing block, as on the CPU path; backend_unavailable
// means that the module failed at run time.
Errc decode_on_module(const mans_backend_module& m, const detail::ParsedFrame& f, const std::uint8_t* in,
                      std::uint8_t* dst, int threads) {
    const FrameHeader& h = f.header;
    const std::uint64_t nblocks = h.block_count();
    const std::size_t esize = dtype_size(h.dtype);
    // Windows of raw bytes, as for compression: a stream larger than the
    // device's memory still decodes there.
    const ModuleHostCall call(m);
    const std::uint64_t window = call.window_blocks(std::uint64_t{h.block_elems} * esize);
    std::vector<std::uint64_t> offsets;
    std::vector<std::int32_t> status;
    std::vector<Errc> errors;
    for (std::uint64_t first = 0; first < nblocks; first += window) {
        const std::size_t count = static_cast<std::size_t>(std::min(window, nblocks - first));
        const std::uint64_t base = f.offsets[first];
        offsets.resize(count + 1);
        for (std::size_t i = 0; i < count; ++i) offsets[i] = f.offsets[first + i] - base;
        offsets[count] = offsets[count - 1] + f.index[first + count - 1].payload_bytes;
        status.assign(count, MANS_ERR_INTERNAL);
        mans_backend_block_batch batch{};
        batch.dtype = static_cast<int>(h.dtype);
        batch.blocks = count;
        batch.block_elems = h.block_elems;
        batch.last_elems = h.block_len(first + count - 1);
        batch.payloads = in + base;
        batch.payload_bytes = offsets[count];
        batch.offsets = offsets.data();
        batch.dst = dst + h.block_first(first) * esize;
        batch.status = status.data();
        mans_backend_probe_result err{};
        if (m.decode_blocks(&batch, &err) < 0) return Errc::backend_unavailable;
        errors.assign(count, Errc::ok);
        detail::cpu_backend().for_each_block(count, threads, [&](std::size_t i, int) {
            const std::uint64_t b = first + i;
            const std::size_t n = static_cast<std::size_t>(h.block_len(b));
            // A block decoder fails only with corrupt_block; anything else
            // from a module is its own fault.
            Errc e = status[i] == MANS_OK                  ? Errc::ok
                     : status[i] == MANS_ERR_CORRUPT_BLOCK ? Errc::corrupt_block
                                                           : Errc::internal;
            if (e == Errc::ok &&
                detail::checksum32(dst + h.block_first(b) * esize, n * esize) != f.index[b].content_checksum)
                e = Errc::content_checksum;
            errors[i] = e;
        });
        // Windows go in order, so the first error found is the lowest block's.
        for (Errc e : errors)
            if (e != Errc::ok) return e;
    }
    return Errc::ok;
}

// Compresses the blocks of header h with a GPU module (encode_blocks),
// window by window, into dst: payloads after the prefix, index entries with
// the CPU's content checksums, then the prefix. backend_unavailable: the
// module failed at run time; internal: it did not code a block.
Result compress_on_module(const mans_backend_module& m, const FrameHeader& h, const std::uint8_t* src,
                          std::uint8_t* dst, std::size_t dst_cap, int threads, std::vector<IndexEntry>& index) {
    const std::uint64_t nblocks = h.block_count();
    const std::size_t esize = dtype_size(h.dtype);
    std::size_t pos = h.prefix_bytes();
    if (pos > dst_cap) return Result::fail(Errc::dst_too_small);
    // A payload never exceeds its raw bytes + 1 (stored mode).
    const std::uint64_t slot_bytes = std::uint64_t{h.block_elems} * esize + 1;
    const ModuleHostCall call(m);
    const std::uint64_t window = call.window_blocks(slot_bytes);
    const std::size_t cap = static_cast<std::size_t>(std::min(window, nblocks));
    // Not zeroed: the module writes every slot it reports (a window is
    // hundreds of MiB, and zeroing it would cost a pass over that memory).
    const std::unique_ptr<std::uint8_t[]> slots(new std::uint8_t[cap * static_cast<std::size_t>(slot_bytes)]);
    std::vector<std::uint64_t> sizes(cap);
    std::vector<std::int32_t> status(cap);
    for (std::uint64_t first = 0; first < nblocks; first += window) {
        const std::size_t count = static_cast<std::size_t>(std::min(window, nblocks - first));
        mans_backend_encode_batch batch{};
        batch.dtype = static_cast<int>(h.dtype);
        batch.blocks = count;
        batch.block_elems = h.block_elems;
        batch.last_elems = h.block_len(first + count - 1);
        batch.src = src + h.block_first(first) * esize;
        batch.slots = slots.get();
        batch.slot_bytes = slot_bytes;
        batch.payload_bytes = sizes.data();
        batch.status = status.data();
        std::fill(status.begin(), status.end(), MANS_ERR_INTERNAL);
        mans_backend_probe_result err{};
        if (m.encode_blocks(&batch, &err) < 0) return Result::fail(Errc::backend_unavailable);
        for (std::size_t i = 0; i < count; ++i)
            if (status[i] != MANS_OK || sizes[i] > slot_bytes) return Result::fail(Errc::internal);
        detail::cpu_backend().for_each_block(count, threads, [&](std::size_t i, int) {
            const std::uint64_t b = first + i;
            const std::size_t n = static_cast<std::size_t>(h.block_len(b));
            index[b] = {static_cast<std::uint32_t>(sizes[i]), detail::checksum32(src + h.block_first(b) * esize, n * esize)};
        });
        for (std::size_t i = 0; i < count; ++i) {
            if (sizes[i] > dst_cap - pos) return Result::fail(Errc::dst_too_small);
            std::memcpy(dst + pos, slots.get() + i * slot_bytes, static_cast<std::size_t>(sizes[i]));
            pos += static_cast<std::size_t>(sizes[i]);
        }
    }
    detail::write_frame_prefix(h, index.data(), dst);
    return {Errc::ok, pos};
}

std::size_t default_block_elems(std::size_t block_bytes, std::size_t esize) {
    std::size_t bytes = block_bytes ? block_bytes : kDefaultBlockBytes;
    return bytes / esize;
}

}  // namespace

namespace detail {

Errc select_module(mans::Backend requested, BackendOp op, std::uint64_t raw_bytes, const mans_backend_module** gpu) {
    Placement pl;
    const Errc e = select_backend(requested, op, raw_bytes, &pl);
    *gpu = pl.gpu;
    return e;
}

const mans_backend_module* device_chunk_module(mans::Backend requested, std::string* why, bool* compresses) {
    why->clear();
    *compresses = false;
    if (requested == mans::Backend::cpu) {
        *why = "the device-memory API needs a GPU backend (cuda or hip)";
        return nullptr;
    }
    for (mans::Backend g : {mans::Backend::cuda, mans::Backend::hip}) {
        if (requested != mans::Backend::automatic && requested != g) continue;
        const char* name = gpu_name(g);
        // Both directions when it can, else decompression only.
        const std::string no_compress = module_reason(name, BackendOp::mans_compress);
        const std::string reason_decode = module_reason(name, BackendOp::mans_decompress);
        const mans_backend_module* m = usable_module(name, BackendOp::mans_compress);
        if (no_compress.empty() && reason_decode.empty() && m && module_has_device_chunks(m)) {
            *compresses = true;
            return m;
        }
        const mans_backend_module* d = usable_module(name, BackendOp::mans_decompress);
        if (reason_decode.empty() && d && module_has_device_chunk_decode(d)) return d;
        if (!why->empty()) *why += "; ";
        *why += reason_decode.empty() ? std::string(name) + ": module has no device-memory entries" : reason_decode;
    }
    return nullptr;
}

}  // namespace detail

Errc backend_status(Backend b, Operation op) noexcept {
    try {
        if (!valid_operation(op)) return Errc::invalid_argument;
        // Without this, asking would open the GPU modules (and their
        // runtimes: ~14 ms for HIP's) in every call, also for inputs that
        // automatic keeps on the CPU.
        if (b == Backend::automatic) return Errc::ok;
        Placement pl;
        return select_backend(b, to_backend_op(op), ~std::uint64_t{0}, &pl);
    } catch (...) {
        return Errc::internal;
    }
}

Errc backend_status(Backend b) noexcept { return backend_status(b, Operation::compress); }

const char* backend_description(Backend b, bool force_scalar) noexcept {
    Placement pl;
    if (backend_status(b) != Errc::ok) return "unavailable";
    if (select_backend(b, detail::BackendOp::mans_compress, ~std::uint64_t{0}, &pl) != Errc::ok) return "unavailable";
    return pl.cpu ? pl.cpu->kernels(force_scalar).description : pl.gpu->name;
}

const char* backend_report(Backend b, Operation op, bool force_scalar) noexcept {
    try {
        if (!valid_operation(op)) return "invalid operation";
        if (b != Backend::automatic && b != Backend::cpu && b != Backend::cuda && b != Backend::hip)
            return "unknown backend";
        // Module state is fixed for the process, so each line is built once
        // and the pointer stays valid (std::map nodes never move).
        static std::mutex lock;
        static std::map<std::tuple<int, int, bool>, std::string> lines;
        const auto key = std::make_tuple(static_cast<int>(b), static_cast<int>(op), force_scalar);
        std::lock_guard<std::mutex> g(lock);
        auto it = lines.find(key);
        if (it == lines.end()) it = lines.emplace(key, make_report(b, op, force_scalar)).first;
        return it->second.c_str();
    } catch (...) {
        return "backend report unavailable (out of memory)";
    }
}

std::size_t compress_bound(std::size_t src_bytes) noexcept { return detail::stream_bound(src_bytes); }

struct CompressContext::Impl {
    std::vector<BlockScratch> scratch;               // one per worker
    std::vector<std::vector<std::uint8_t>> payloads;  // one per block of a window
    std::vector<IndexEntry> index;
};

CompressContext::CompressContext() : impl_(new (std::nothrow) Impl) {}
CompressContext::~CompressContext() = default;
CompressContext::CompressContext(CompressContext&&) noexcept = default;
CompressContext& CompressContext::operator=(CompressContext&&) noexcept = default;

Result CompressContext::compress(void* dst, std::size_t dst_cap, const void* src,
                                 std::size_t src_bytes, const CompressConfig& cfg) noexcept {
    try {
        if (!impl_) return Result::fail(Errc::out_of_memory);
        const std::size_t esize = dtype_size(cfg.dtype);
        if (esize == 0) return Result::fail(Errc::unsupported_dtype);
        if ((!src && src_bytes) || (!dst && dst_cap)) return Result::fail(Errc::invalid_argument);
        if (src_bytes % esize) return Result::fail(Errc::size_not_multiple);
        if (cfg.threads < 0 || cfg.threads > kMaxThreads || cfg.rank > 4)
            return Result::fail(Errc::invalid_argument);
        if (cfg.block_bytes && (cfg.block_bytes < detail::kMinBlockBytes ||
                                cfg.block_bytes > detail::kMaxBlockBytes))
            return Result::fail(Errc::invalid_argument);
        Placement pl;
        if (Errc e = select_backend(cfg.backend, detail::BackendOp::mans_compress, src_bytes, &pl); e != Errc::ok)
            return Result::fail(e);

        FrameHeader h;
        h.dtype = cfg.dtype;
        h.count = src_bytes / esize;
        h.block_elems = static_cast<std::uint32_t>(default_block_elems(cfg.block_bytes, esize));
        h.rank = cfg.rank;
        std::uint64_t product = 1;
        for (std::uint32_t d = 0; d < cfg.rank; ++d) {
            h.dims[d] = cfg.dims[d];
            if (cfg.dims[d] != 0 && product > ~std::uint64_t{0} / cfg.dims[d])
                return Result::fail(Errc::invalid_argument);  // the decoder would reject it
            product *= cfg.dims[d];
        }
        if (cfg.rank && product != h.count) return Result::fail(Errc::invalid_argument);

        const std::uint64_t nblocks = h.block_count();
        Impl& im = *impl_;
        im.index.resize(nblocks);
        if (pl.gpu) {
            const Result r = compress_on_module(*pl.gpu, h, static_cast<const std::uint8_t*>(src),
                                                static_cast<std::uint8_t*>(dst), dst_cap, cfg.threads, im.index);
            // As for decompression, `automatic` leaves any module failure
            // to the CPU (which writes the same bytes); a full dst is the
            // caller's and stays an error.
            if (r || r.code == Errc::dst_too_small || cfg.backend != Backend::automatic) return r;
        }
        const detail::Backend* be = &detail::cpu_backend();
        const int workers = be->max_workers(cfg.threads);
        if (im.scratch.size() < static_cast<std::size_t>(workers)) im.scratch.resize(workers);
        const detail::RansKernels& kernels = be->kernels(cfg.force_scalar);
        const auto* bytes = static_cast<const std::uint8_t*>(src);
        auto* out = static_cast<std::uint8_t*>(dst);
        std::size_t pos = h.prefix_bytes();  // payloads follow the prefix, in block order
        if (pos > dst_cap) return Result::fail(Errc::dst_too_small);

        // Windows of blocks: coded in parallel, then copied to dst, so that
        // only one window of payloads is held besides the caller's buffers.
        // About 32 MiB of input per window, and a few blocks per worker.
        const std::uint64_t block_bytes = std::uint64_t{h.block_elems} * esize;
        const std::uint64_t window =
            std::max<std::uint64_t>(4 * static_cast<std::uint64_t>(workers), (std::uint64_t{32} << 20) / block_bytes);
        im.payloads.resize(static_cast<std::size_t>(std::min(window, nblocks)));
        for (std::uint64_t first = 0; first < nblocks; first += window) {
            const std::size_t count = static_cast<std::size_t>(std::min(window, nblocks - first));
            be->for_each_block(count, cfg.threads, [&](std::size_t i, int worker) {
                const std::uint64_t b = first + i;
                const std::size_t n = static_cast<std::size_t>(h.block_len(b));
                const std::uint8_t* raw = bytes + h.block_first(b) * esize;
                auto& payload = im.payloads[i];
                payload.clear();
                detail::encode_block(h.dtype, raw, n, kernels, im.scratch[worker], payload);
                im.index[b] = {static_cast<std::uint32_t>(payload.size()), detail::checksum32(raw, n * esize)};
            });
            for (std::size_t i = 0; i < count; ++i) {
                const auto& p = im.payloads[i];
                if (p.size() > dst_cap - pos) return Result::fail(Errc::dst_too_small);
                std::memcpy(out + pos, p.data(), p.size());
                pos += p.size();
            }
        }
        detail::write_frame_prefix(h, im.index.data(), out);
        return {Errc::ok, pos};
    } catch (const std::bad_alloc&) {
        return Result::fail(Errc::out_of_memory);
    } catch (...) {
        return Result::fail(Errc::internal);
    }
}

struct DecompressContext::Impl {
    std::vector<BlockScratch> scratch;
    detail::ParsedFrame frame;
};

DecompressContext::DecompressContext() : impl_(new (std::nothrow) Impl) {}
DecompressContext::~DecompressContext() = default;
DecompressContext::DecompressContext(DecompressContext&&) noexcept = default;
DecompressContext& DecompressContext::operator=(DecompressContext&&) noexcept = default;

Result DecompressContext::decompress(void* dst, std::size_t dst_cap, const void* src,
                                     std::size_t src_bytes, const DecompressConfig& cfg) noexcept {
    try {
        if (!impl_) return Result::fail(Errc::out_of_memory);
        if ((!src && src_bytes) || (!dst && dst_cap) || cfg.threads < 0 || cfg.threads > kMaxThreads)
            return Result::fail(Errc::invalid_argument);
        Placement pl;
        // The raw size is known after parsing; a forced backend is checked
        // first (automatic is placed below, by size, without loading
        // modules for small streams).
        if (cfg.backend != Backend::automatic)
            if (Errc e = select_backend(cfg.backend, detail::BackendOp::mans_decompress, ~std::uint64_t{0}, &pl);
                e != Errc::ok)
                return Result::fail(e);
        Impl& im = *impl_;
        const auto* in = static_cast<const std::uint8_t*>(src);
        if (Errc e = detail::parse_frame(in, src_bytes, &im.frame); e != Errc::ok) return Result::fail(e);
        const FrameHeader& h = im.frame.header;
        const std::size_t esize = dtype_size(h.dtype);
        const std::uint64_t raw_bytes = h.count * esize;
        if (raw_bytes > dst_cap) return Result::fail(Errc::dst_too_small);
        if (cfg.backend == Backend::automatic) select_backend(cfg.backend, detail::BackendOp::mans_decompress, raw_bytes, &pl);
        if (pl.gpu) {
            const Errc e = decode_on_module(*pl.gpu, im.frame, in, static_cast<std::uint8_t*>(dst), cfg.threads);
            if (e == Errc::ok) return {Errc::ok, static_cast<std::size_t>(raw_bytes)};
            // Under `automatic` the CPU has the last word on any failure: a
            // GPU that fails at run time, and a corrupt stream alike (the
            // CPU then reports the same error, or the data if the module
            // was wrong). A forced GPU reports its own result.
            if (cfg.backend != Backend::automatic) return Result::fail(e);
        }
        const detail::Backend* be = &detail::cpu_backend();

        const int workers = be->max_workers(cfg.threads);
        if (im.scratch.size() < static_cast<std::size_t>(workers)) im.scratch.resize(workers);
        const detail::RansKernels& kernels = be->kernels(cfg.force_scalar);
        auto* out = static_cast<std::uint8_t*>(dst);
        const std::uint64_t nblocks = h.block_count();
        // Report the error of the lowest failing block, whatever the schedule.
        std::vector<Errc> errors(nblocks, Errc::ok);
        be->for_each_block(nblocks, cfg.threads, [&](std::size_t b, int worker) {
            const std::size_t n = static_cast<std::size_t>(h.block_len(b));
            std::uint8_t* raw = out + h.block_first(b) * esize;
            const auto& entry = im.frame.index[b];
            Errc e = detail::decode_block(h.dtype, in + im.frame.offsets[b], entry.payload_bytes, n, raw,
                                          kernels, im.scratch[worker]);
            if (e == Errc::ok && detail::checksum32(raw, n * esize) != entry.content_checksum)
                e = Errc::content_checksum;
            errors[b] = e;
        });
        for (Errc e : errors)
            if (e != Errc::ok) return Result::fail(e);
        return {Errc::ok, static_cast<std::size_t>(raw_bytes)};
    } catch (const std::bad_alloc&) {
        return Result::fail(Errc::out_of_memory);
    } catch (...) {
        return Result::fail(Errc::internal);
    }
}

Result compress(void* dst, std::size_t dst_cap, const void* src, std::size_t src_bytes,
                const CompressConfig& cfg) noexcept {
    CompressContext ctx;
    return ctx.compress(dst, dst_cap, src, src_bytes, cfg);
}

Result decompress(void* dst, std::size_t dst_cap, const void* src, std::size_t src_bytes,
                  const DecompressConfig& cfg) noexcept {
    DecompressContext ctx;
    return ctx.decompress(dst, dst_cap, src, src_bytes, cfg);
}

Errc get_frame_info(const void* src, std::size_t src_bytes, FrameInfo* info) noexcept {
    try {
        if (!info || (!src && src_bytes)) return Errc::invalid_argument;
        detail::ParsedFrame f;
        const Errc e = detail::parse_frame(static_cast<const std::uint8_t*>(src), src_bytes, &f);
        if (e != Errc::ok) return e;
        const FrameHeader& h = f.header;
        *info = FrameInfo{};
        info->format_version = h.version;
        info->codec = h.codec;
        info->dtype = static_cast<mans_dtype>(h.dtype);
        info->element_count = h.count;
        info->raw_bytes = h.count * dtype_size(h.dtype);
        info->rank = h.rank;
        for (int d = 0; d < 4; ++d) info->dims[d] = h.dims[d];
        info->block_bytes = static_cast<std::uint64_t>(h.block_elems) * dtype_size(h.dtype);
        info->block_count = h.block_count();
        info->compressed_bytes = f.total_bytes;
        return Errc::ok;
    } catch (const std::bad_alloc&) {
        return Errc::out_of_memory;
    } catch (...) {
        return Errc::internal;
    }
}

}  // namespace mans
