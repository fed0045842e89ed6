/*
 * mans_device.h - the device-memory API: batches of whole MANS streams in GPU
 * memory, in the style of nvcomp's batched API.
 *
 * Each chunk is one complete stream, byte for byte the stream mans_compress
 * writes for the same bytes, dtype and block size (without dims), so any
 * backend decodes it. Data pointers and the arrays of pointers, sizes and
 * statuses are device memory of the opened backend (CUDA or HIP). The work
 * is queued on the caller's stream (a cudaStream_t or hipStream_t passed as
 * void*; NULL is the default stream) and the calls return without waiting:
 * out_bytes[] and statuses[] hold the results once the stream has run.
 * Many chunks (e.g. HDF5 chunks) go to the device in one call.
 *
 * Like mans.h: no function aborts, exits, prints or throws. A call's return
 * value says whether the batch was queued (arguments, temp size, backend);
 * each chunk's own result is its entry of statuses[]:
 *   compression:   MANS_OK; MANS_ERR_SIZE_NOT_MULTIPLE; MANS_ERR_INVALID_ARGUMENT
 *                  (in_bytes[c] > max_chunk_bytes, or a null pointer);
 *                  MANS_ERR_DST_TOO_SMALL (out_bytes[c] = the size needed);
 *   decompression: the status mans_decompress gives for that stream
 *                  (MANS_ERR_DST_TOO_SMALL: out_bytes[c] = the raw size), or
 *                  MANS_ERR_INVALID_ARGUMENT for a stream whose blocks are
 *                  larger than max_block_bytes (or more numerous than the
 *                  temp was sized for: only crafted streams).
 * Checksums are computed and verified on the device.
 *
 * Memory: temp must be 16-byte aligned (cudaMalloc/hipMalloc memory is),
 * the arrays naturally aligned, and out_bytes must not be in_bytes (nor
 * overlap any input). A chunk's out_bytes[c] is meaningful only with its
 * status: on MANS_ERR_DST_TOO_SMALL it is the size needed, larger than the
 * buffer, so pass compressed sizes on to decompression only for chunks
 * that succeeded. The first call may wait for work queued on the device:
 * it raises the CUDA per-thread stack limit to what the kernels need
 * (2 KiB to decompress, 4 KiB to compress) once, and leaves it there.
 */
#ifndef MANS_MANS_DEVICE_H
#define MANS_MANS_DEVICE_H

#include <stddef.h>

#include "mans/mans.h"
#include "mans/prism.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mans_device mans_device;

/* Opens a GPU backend for this API: MANS_BACKEND_AUTO takes CUDA, then HIP;
 * MANS_BACKEND_CUDA / MANS_BACKEND_HIP force one. MANS_ERR_BACKEND_UNAVAILABLE
 * when none can serve (mans_device_unavailable_reason says why). The module
 * must find a device and pass the same self-test as for mans_compress and
 * mans_decompress; a module that decompresses only (the HIP module built
 * with -DMANS_HIP_COMPRESS=OFF) opens for decompression: mans_device_compresses() is 0, and the
 * compression calls return MANS_ERR_BACKEND_UNAVAILABLE. */
mans_status mans_device_open(mans_backend backend, mans_device** out);
void mans_device_close(mans_device* dev);
/* "cuda (NVIDIA H200, sm_90, 139 GiB)", with ", decompression only" when
 * it does not compress; never NULL. */
const char* mans_device_description(const mans_device* dev);
/* 1 when the device compresses and decompresses, 0 when it decompresses only. */
int mans_device_compresses(const mans_device* dev);
/* Why mans_device_open(backend) fails ("" when it would not); never NULL,
 * valid until the next call from the same thread. */
const char* mans_device_unavailable_reason(mans_backend backend);

/* The most one compressed chunk of max_chunk_bytes raw bytes can take
 * (mans_compress_bound): the capacity out_ptrs[c] needs. */
size_t mans_device_compress_max_output_bytes(size_t max_chunk_bytes);

/* Temp needed to compress num_chunks chunks of at most max_chunk_bytes each
 * of dtype, in blocks of block_bytes raw bytes (0: the default, 128 KiB).
 * More temp lets more blocks be coded at once; each block in flight needs a
 * scratch slice sized for min(block_bytes, max_chunk_bytes), so give the
 * real largest chunk: small chunks need less temp per block. */
mans_status mans_device_compress_temp_bytes(const mans_device* dev, mans_dtype dtype, size_t block_bytes,
                                            size_t num_chunks, size_t max_chunk_bytes, size_t* temp_bytes);

/* Compresses chunk c (in_ptrs[c], in_bytes[c] bytes) into out_ptrs[c]
 * (out_capacity bytes each), writing out_bytes[c] and statuses[c]. */
mans_status mans_device_compress_async(mans_device* dev, mans_dtype dtype, size_t block_bytes,
                                       const void* const* in_ptrs, const size_t* in_bytes, size_t max_chunk_bytes,
                                       size_t num_chunks, void* temp, size_t temp_bytes, void* const* out_ptrs,
                                       size_t out_capacity, size_t* out_bytes, mans_status* statuses, void* stream);

/* Temp needed to decompress num_chunks streams of at most max_out_bytes raw
 * bytes each, written with blocks of at most max_block_bytes raw bytes
 * (0: the default block size, 128 KiB). */
mans_status mans_device_decompress_temp_bytes(const mans_device* dev, size_t num_chunks, size_t max_out_bytes,
                                              size_t max_block_bytes, size_t* temp_bytes);

/* Decompresses stream c (in_ptrs[c], in_bytes[c] bytes) into out_ptrs[c]
 * (out_capacity bytes each), writing out_bytes[c] and statuses[c]. */
mans_status mans_device_decompress_async(mans_device* dev, const void* const* in_ptrs, const size_t* in_bytes,
                                         size_t num_chunks, size_t max_block_bytes, void* temp, size_t temp_bytes,
                                         void* const* out_ptrs, size_t out_capacity, size_t* out_bytes,
                                         mans_status* statuses, void* stream);

/* PRISM compression of one field in device memory (d_src: src_size bytes,
 * the dims product x element size, on the opened backend's device):
 * the archive that mans_prism_compress writes for the same field and
 * parameters, byte for byte, in host memory the library allocates
 * (release it with mans_prism_free); p->backend is not read (the opened
 * device runs it). Synchronous: the encoder's steps
 * alternate between the device and the host (the base's lossless stage
 * and the archive are made on the host), on the default stream. Returns
 * mans_prism_compress's errors for the parameters, and
 * MANS_ERR_BACKEND_UNAVAILABLE when the backend does not compress PRISM
 * here (no kernel, or it failed the PRISM self-test) or failed at run
 * time. */
mans_status mans_device_prism_compress(mans_device* dev, const void* d_src, size_t src_size,
                                       const mans_prism_params* p, void** archive, size_t* archive_size);

/* PRISM retrieval into device memory: reads what mans_prism_retrieve reads
 * for the target (through the reader r, from any source) and reconstructs
 * the same values, byte for byte, on the opened backend's device into d_dst
 * (dst_capacity bytes of its memory, aligned to the element size; the
 * values take count x element size bytes, mans_prism_get_info). *out
 * holds the planes read and the stats but no host values
 * (mans_prism_result_size is 0): pass it to mans_device_prism_refine, which
 * reads only the planes a finer target adds and reconstructs into device
 * memory again, or to mans_prism_refine for host values. Synchronous, on
 * the default stream. Errors: mans_prism_retrieve's;
 * MANS_ERR_DST_TOO_SMALL for a short dst_capacity; MANS_ERR_INVALID_ARGUMENT
 * for a misaligned d_dst; MANS_ERR_BACKEND_UNAVAILABLE when the backend does
 * not reconstruct PRISM here (no kernel, or it failed the PRISM retrieval
 * self-test) or failed at run time. On error *out is NULL (refine: x is
 * unchanged) and d_dst's contents are unspecified. */
mans_status mans_device_prism_retrieve(mans_device* dev, mans_prism_reader* r, mans_prism_target kind,
                                       double value, void* d_dst, size_t dst_capacity, mans_prism_result** out);
/* Refines x (a result of r, made by either API) to the target, values into
 * d_dst as above. x then holds no host values. */
mans_status mans_device_prism_refine(mans_device* dev, mans_prism_reader* r, mans_prism_result* x,
                                     mans_prism_target kind, double value, void* d_dst, size_t dst_capacity);

#ifdef __cplusplus
}
#endif

#endif /* MANS_MANS_DEVICE_H */
