// device_api.cpp - the device-memory API (mans/mans_device.h) over a GPU
// module's chunk entries (backend_module.hpp). The core checks what it can
// on the host (arguments, temp size) and the module does the rest on its
// stream with the shared steps of mapping/chunk_batch.hpp. No exception
// crosses this file.
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "backend_module.hpp"
#include "core/module_loader.hpp"  // gpu_module_device
#include "device_module.hpp"
#include "mans/mans.hpp"
#include "mans/mans_device.h"
#include "mapping/chunk_batch.hpp"
#include "prism/c_params.hpp"
#include "prism/device_job.hpp"

static_assert(sizeof(size_t) == sizeof(std::uint64_t), "device arrays of size_t are passed as they are");
static_assert(sizeof(mans_status) == sizeof(std::int32_t), "device status arrays are int32");

struct mans_device {
    const mans_backend_module* module = nullptr;
    bool compresses = false;  // false: the module decompresses only
    std::string description;
};

namespace {

using mans::detail::ChunkDecodeLayout;
using mans::detail::ChunkEncodeLayout;

constexpr std::uint64_t kDefaultBlockBytes = mans::kDefaultBlockBytes;

using mans::detail::prism::valid_backend;

bool aligned(const void* p, std::uintptr_t to) { return reinterpret_cast<std::uintptr_t>(p) % to == 0; }

// Element size of a dtype, 0 when it is not one.
unsigned esize_of(mans_dtype t) {
    if (t < MANS_DTYPE_U8 || t > MANS_DTYPE_I64) return 0;
    return mans::detail::elem_bytes(static_cast<mans::DType>(t));
}

// Element size and elements per block of a compression (block_bytes 0:
// the default), or the error for a bad dtype or block size.
mans_status compress_shape(mans_dtype dtype, size_t block_bytes, unsigned* esize, std::uint64_t* block_elems) {
    *esize = esize_of(dtype);
    if (!*esize) return MANS_ERR_UNSUPPORTED_DTYPE;
    const std::uint64_t bytes = block_bytes ? block_bytes : kDefaultBlockBytes;
    if (bytes < mans::kMinBlockBytes || bytes > mans::kMaxBlockBytes) return MANS_ERR_INVALID_ARGUMENT;
    *block_elems = bytes / *esize;
    return MANS_OK;
}

// The largest block a decompression's temp is sized for (0: the default
// block size); 0 when out of range.
std::uint64_t decode_block_bytes(size_t max_block_bytes) {
    const std::uint64_t block = max_block_bytes ? max_block_bytes : kDefaultBlockBytes;
    return block <= mans::kMaxBlockBytes ? block : 0;
}

// Hands the batch to the module; a batch it could not queue (a runtime
// error: out of device memory, a failed launch) is the backend failing.
mans_status queue(mans_backend_chunks_fn fn, const mans_backend_chunk_batch& b) {
    mans_backend_probe_result err{};
    return fn(&b, &err) == 0 ? MANS_OK : MANS_ERR_BACKEND_UNAVAILABLE;
}

// The fields both directions share (the arrays of one batch) into *out,
// after checking them: no null array (nor a null temp of non-zero size), a
// 16-byte aligned temp (the kernels read it as 8-byte words and structs;
// cudaMalloc/hipMalloc give 256), naturally aligned arrays, and out_bytes
// that is not in_bytes.
mans_status make_batch(size_t num_chunks, const void* const* in_ptrs, const size_t* in_bytes, void* const* out_ptrs,
                       size_t out_capacity, size_t* out_bytes, mans_status* statuses, void* temp, size_t temp_bytes,
                       void* stream, mans_backend_chunk_batch* out) {
    if (!in_ptrs || !in_bytes || !out_ptrs || !out_bytes || !statuses || (!temp && temp_bytes) ||
        !aligned(in_ptrs, 8) || !aligned(in_bytes, 8) || !aligned(out_ptrs, 8) || !aligned(out_bytes, 8) ||
        !aligned(statuses, 4) || !aligned(temp, 16) ||
        static_cast<const void*>(in_bytes) == static_cast<const void*>(out_bytes))
        return MANS_ERR_INVALID_ARGUMENT;
    mans_backend_chunk_batch& b = *out;
    b = mans_backend_chunk_batch{};
    b.struct_size = sizeof(mans_backend_chunk_batch);
    b.chunks = num_chunks;
    b.out_capacity = out_capacity;
    b.in_ptrs = in_ptrs;
    b.in_bytes = in_bytes;
    b.out_ptrs = out_ptrs;
    b.out_bytes = out_bytes;
    b.statuses = reinterpret_cast<std::int32_t*>(statuses);
    b.temp = static_cast<std::uint8_t*>(temp);
    b.temp_bytes = temp_bytes;
    b.stream = stream;
    return MANS_OK;
}

}  // namespace

extern "C" {

mans_status mans_device_open(mans_backend backend, mans_device** out) {
    if (!out || !valid_backend(backend)) return MANS_ERR_INVALID_ARGUMENT;
    *out = nullptr;
    try {
        std::string why;
        bool compresses = false;
        const mans_backend_module* m =
            mans::detail::device_chunk_module(static_cast<mans::Backend>(backend), &why, &compresses);
        if (!m) return MANS_ERR_BACKEND_UNAVAILABLE;
        auto* dev = new mans_device;
        dev->module = m;
        dev->compresses = compresses;
        // The loader probed the module already and keeps its device text.
        dev->description = std::string(m->name) + " (" + mans::detail::gpu_module_device(m->name) + ")" +
                           (compresses ? "" : ", decompression only");
        *out = dev;
        return MANS_OK;
    } catch (const std::bad_alloc&) {
        return MANS_ERR_OUT_OF_MEMORY;
    } catch (...) {
        return MANS_ERR_INTERNAL;
    }
}

void mans_device_close(mans_device* dev) { delete dev; }

const char* mans_device_description(const mans_device* dev) {
    return dev ? dev->description.c_str() : "no device";
}

int mans_device_compresses(const mans_device* dev) { return dev && dev->compresses ? 1 : 0; }

const char* mans_device_unavailable_reason(mans_backend backend) {
    thread_local std::string why;
    if (!valid_backend(backend)) return "unknown backend";
    try {
        bool compresses = false;
        mans::detail::device_chunk_module(static_cast<mans::Backend>(backend), &why, &compresses);
        return why.c_str();
    } catch (...) {
        return "out of memory";
    }
}

size_t mans_device_compress_max_output_bytes(size_t max_chunk_bytes) { return mans::compress_bound(max_chunk_bytes); }

mans_status mans_device_compress_temp_bytes(const mans_device* dev, mans_dtype dtype, size_t block_bytes,
                                            size_t num_chunks, size_t max_chunk_bytes, size_t* temp_bytes) {
    if (!dev || !temp_bytes) return MANS_ERR_INVALID_ARGUMENT;
    if (!dev->compresses) return MANS_ERR_BACKEND_UNAVAILABLE;
    unsigned esize = 0;
    std::uint64_t block_elems = 0;
    if (const mans_status st = compress_shape(dtype, block_bytes, &esize, &block_elems); st != MANS_OK) return st;
    const ChunkEncodeLayout l =
        mans::detail::chunk_encode_layout(esize, block_elems, num_chunks, max_chunk_bytes,
                                         mans::detail::kChunkEncodeWaveBlocks);
    if (l.total == 0 && num_chunks && max_chunk_bytes) return MANS_ERR_INVALID_ARGUMENT;
    *temp_bytes = l.total;
    return MANS_OK;
}

mans_status mans_device_compress_async(mans_device* dev, mans_dtype dtype, size_t block_bytes,
                                       const void* const* in_ptrs, const size_t* in_bytes, size_t max_chunk_bytes,
                                       size_t num_chunks, void* temp, size_t temp_bytes, void* const* out_ptrs,
                                       size_t out_capacity, size_t* out_bytes, mans_status* statuses, void* stream) {
    if (!dev) return MANS_ERR_INVALID_ARGUMENT;
    if (!dev->compresses) return MANS_ERR_BACKEND_UNAVAILABLE;
    unsigned esize = 0;
    std::uint64_t block_elems = 0;
    if (const mans_status st = compress_shape(dtype, block_bytes, &esize, &block_elems); st != MANS_OK) return st;
    if (num_chunks == 0) return MANS_OK;
    mans_backend_chunk_batch b;
    if (const mans_status st = make_batch(num_chunks, in_ptrs, in_bytes, out_ptrs, out_capacity, out_bytes, statuses,
                                          temp, temp_bytes, stream, &b);
        st != MANS_OK)
        return st;
    b.dtype = dtype;
    b.block_elems = block_elems;
    b.max_in_bytes = max_chunk_bytes;
    // Temp for at least one block in flight, when there are blocks.
    const ChunkEncodeLayout fixed = mans::detail::chunk_encode_layout(esize, block_elems, num_chunks, max_chunk_bytes, 0);
    if (fixed.total == 0 && max_chunk_bytes) return MANS_ERR_INVALID_ARGUMENT;
    if (fixed.total_blocks && mans::detail::chunk_encode_wave(esize, b) == 0) return MANS_ERR_INVALID_ARGUMENT;
    return queue(dev->module->chunk_encode, b);
}

mans_status mans_device_decompress_temp_bytes(const mans_device* dev, size_t num_chunks, size_t max_out_bytes,
                                              size_t max_block_bytes, size_t* temp_bytes) {
    const std::uint64_t block = decode_block_bytes(max_block_bytes);
    if (!dev || !temp_bytes || !block) return MANS_ERR_INVALID_ARGUMENT;
    const ChunkDecodeLayout l = mans::detail::chunk_decode_layout(
        num_chunks, max_out_bytes, block, mans::detail::chunk_decode_default_wave(num_chunks, max_out_bytes, block));
    if (l.total == 0 && num_chunks) return MANS_ERR_INVALID_ARGUMENT;
    *temp_bytes = l.total;
    return MANS_OK;
}

mans_status mans_device_decompress_async(mans_device* dev, const void* const* in_ptrs, const size_t* in_bytes,
                                         size_t num_chunks, size_t max_block_bytes, void* temp, size_t temp_bytes,
                                         void* const* out_ptrs, size_t out_capacity, size_t* out_bytes,
                                         mans_status* statuses, void* stream) {
    const std::uint64_t block = decode_block_bytes(max_block_bytes);
    if (!dev || !block) return MANS_ERR_INVALID_ARGUMENT;
    if (num_chunks == 0) return MANS_OK;
    mans_backend_chunk_batch b;
    if (const mans_status st = make_batch(num_chunks, in_ptrs, in_bytes, out_ptrs, out_capacity, out_bytes, statuses,
                                          temp, temp_bytes, stream, &b);
        st != MANS_OK)
        return st;
    b.max_block_bytes = block;
    // (A null temp has size 0: never room for one block.)
    if (mans::detail::chunk_decode_wave(b) == 0) return MANS_ERR_INVALID_ARGUMENT;
    return queue(dev->module->chunk_decode, b);
}

}  // extern "C"

namespace {

// The opened module, if it runs op for PRISM here (the same rules and
// self-test as the C++ API's), else null.
const mans_backend_module* prism_module(const mans_device* dev, mans::detail::BackendOp op) {
    const mans_backend_module* m = nullptr;
    const mans::Backend named = std::string(dev->module->name) == "hip" ? mans::Backend::hip : mans::Backend::cuda;
    if (mans::detail::select_module(named, op, ~std::uint64_t{0}, &m) != mans::Errc::ok || m != dev->module)
        return nullptr;
    return m;
}

// mans_device_prism_retrieve (x null: a new result at *out) and
// mans_device_prism_refine (x).
mans_status device_retrieve(mans_device* dev, mans_prism_reader* r, mans_prism_result* x, mans_prism_target kind,
                            double value, void* d_dst, size_t dst_capacity, mans_prism_result** out) {
    namespace dp = mans::detail::prism;
    mans::prism::Target t;
    if (!dev || !r || !d_dst || !dp::to_target(kind, value, &t)) return MANS_ERR_INVALID_ARGUMENT;
    const mans::prism::ArchiveInfo& info = r->reader.info();
    const std::uint64_t esize = info.type == mans::prism::FloatType::f64 ? 8 : 4;
    if (!aligned(d_dst, esize)) return MANS_ERR_INVALID_ARGUMENT;
    if (info.count > dst_capacity / esize) return MANS_ERR_DST_TOO_SMALL;
    try {
        const mans_backend_module* m = prism_module(dev, mans::detail::BackendOp::prism_decompress);
        if (!m) return MANS_ERR_BACKEND_UNAVAILABLE;
        if (x) return static_cast<mans_status>(dp::retrieve_to_device(r->reader, *m, t, &x->retrieval, false, d_dst));
        auto fresh = std::make_unique<mans_prism_result>();
        const mans::Errc e = dp::retrieve_to_device(r->reader, *m, t, &fresh->retrieval, true, d_dst);
        if (e != mans::Errc::ok) return static_cast<mans_status>(e);
        *out = fresh.release();
        return MANS_OK;
    } catch (const std::bad_alloc&) {
        return MANS_ERR_OUT_OF_MEMORY;
    } catch (...) {
        return MANS_ERR_INTERNAL;
    }
}

}  // namespace

extern "C" {

mans_status mans_device_prism_retrieve(mans_device* dev, mans_prism_reader* r, mans_prism_target kind,
                                       double value, void* d_dst, size_t dst_capacity, mans_prism_result** out) {
    if (!out) return MANS_ERR_INVALID_ARGUMENT;
    *out = nullptr;
    return device_retrieve(dev, r, nullptr, kind, value, d_dst, dst_capacity, out);
}

mans_status mans_device_prism_refine(mans_device* dev, mans_prism_reader* r, mans_prism_result* x,
                                     mans_prism_target kind, double value, void* d_dst, size_t dst_capacity) {
    if (!x) return MANS_ERR_INVALID_ARGUMENT;
    return device_retrieve(dev, r, x, kind, value, d_dst, dst_capacity, nullptr);
}

mans_status mans_device_prism_compress(mans_device* dev, const void* d_src, size_t src_size,
                                       const mans_prism_params* p, void** archive, size_t* archive_size) {
    if (!dev || !p || !archive || !archive_size || (p->fill_count && !p->fill_values) || (!d_src && src_size))
        return MANS_ERR_INVALID_ARGUMENT;
    *archive = nullptr;
    *archive_size = 0;
    try {
        namespace dp = mans::detail::prism;
        mans::prism::CompressConfig cfg = dp::config_from_params(*p);
        if (const mans::Errc e = dp::validate_config(src_size, cfg); e != mans::Errc::ok)
            return static_cast<mans_status>(e);
        const mans_backend_module* m = prism_module(dev, mans::detail::BackendOp::prism_compress);
        if (!m) return MANS_ERR_BACKEND_UNAVAILABLE;
        std::vector<std::uint8_t> out;
        const mans::Errc e = dp::compress_on_module(*m, d_src, src_size, cfg, &out, true);
        if (e != mans::Errc::ok) return static_cast<mans_status>(e);
        return dp::hand_out_archive(out, archive, archive_size);
    } catch (const std::bad_alloc&) {
        return MANS_ERR_OUT_OF_MEMORY;
    } catch (...) {
        return MANS_ERR_INTERNAL;
    }
}

}  // extern "C"
