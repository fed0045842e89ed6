/*
 * mans.h - C API of the mans compression library (stable).
 *
 * Opaque context handles, caller-owned buffers, one argument order
 * (dst, dst_capacity, src, src_size, ...) everywhere. No function of this API
 * aborts, exits, prints or lets a C++ exception escape: every failure is a
 * mans_status value (see the pinned table below).
 *
 * Thread safety: contexts are not thread-safe; use one context per thread.
 * Functions without a context are thread-safe.
 */
#ifndef MANS_MANS_H
#define MANS_MANS_H

#include <stddef.h>
#include <stdint.h>

#include "mans/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. The numbers are pinned: never renumber, only append.
 * 0 ok; 10s caller errors; 20s corrupt or unsupported input; 30s resources;
 * 40s internal. mans_status_name() gives the identifier as text. */
typedef enum mans_status {
    MANS_OK = 0,
    MANS_ERR_INVALID_ARGUMENT = 10,   /* null pointer, bad parameter value      */
    MANS_ERR_UNSUPPORTED_DTYPE = 11,  /* dtype unknown or not valid for codec   */
    MANS_ERR_DST_TOO_SMALL = 12,      /* dst_capacity below what is needed      */
    MANS_ERR_SIZE_NOT_MULTIPLE = 13,  /* src_size not a multiple of dtype size  */
    MANS_ERR_BACKEND_UNAVAILABLE = 14,/* requested backend absent on this host  */
    MANS_ERR_TARGET_UNREACHABLE = 15, /* PRISM: bound tighter than the archive's */
    MANS_ERR_BAD_MAGIC = 20,          /* not a mans stream                      */
    MANS_ERR_UNSUPPORTED_VERSION = 21,/* format version newer than this library */
    MANS_ERR_TRUNCATED = 22,          /* stream ends before a field it declares */
    MANS_ERR_CORRUPT_HEADER = 23,     /* header or index field out of range     */
    MANS_ERR_HEADER_CHECKSUM = 24,    /* header/index checksum mismatch         */
    MANS_ERR_CORRUPT_BLOCK = 25,      /* block payload inconsistent             */
    MANS_ERR_CONTENT_CHECKSUM = 26,   /* decoded block differs from original    */
    MANS_ERR_TRAILING_BYTES = 27,     /* bytes after the declared end of stream */
    MANS_ERR_OUT_OF_MEMORY = 30,
    MANS_ERR_IO = 31,                 /* a read from a PRISM source failed      */
    MANS_ERR_INTERNAL = 40
} mans_status;

/* Element types. Pinned numbers (they are stored in the stream). */
typedef enum mans_dtype {
    MANS_DTYPE_U8 = 1,
    MANS_DTYPE_U16 = 2,
    MANS_DTYPE_U32 = 3,
    MANS_DTYPE_U64 = 4,
    MANS_DTYPE_I16 = 5,
    MANS_DTYPE_I32 = 6,
    MANS_DTYPE_I64 = 7
} mans_dtype;

typedef enum mans_backend {
    MANS_BACKEND_AUTO = 0,
    MANS_BACKEND_CPU = 1,
    MANS_BACKEND_CUDA = 2,  /* module libmans_backend_cuda.so, loaded at run time */
    MANS_BACKEND_HIP = 3    /* module libmans_backend_hip.so, loaded at run time  */
} mans_backend;

/* Operations a backend may implement (for mans_backend_report). */
typedef enum mans_operation {
    MANS_OP_COMPRESS = 1,
    MANS_OP_DECOMPRESS = 2,
    MANS_OP_PRISM_COMPRESS = 3,
    MANS_OP_PRISM_DECOMPRESS = 4
} mans_operation;

typedef enum mans_param {
    MANS_PARAM_DTYPE = 1,        /* mans_dtype; required for compression              */
    MANS_PARAM_THREADS = 2,      /* 0 = all OpenMP threads, at most 4096; output never depends on it */
    MANS_PARAM_BLOCK_BYTES = 3,  /* raw bytes per block: 0 = default (131072), else 4096..64 MiB */
    MANS_PARAM_BACKEND = 4,      /* mans_backend                                       */
    MANS_PARAM_FORCE_SCALAR = 5  /* 1 = never use SIMD kernels (output is identical)   */
} mans_param;

typedef struct mans_frame_info {
    uint32_t format_version;
    uint32_t codec;           /* 1 = MANS lossless */
    mans_dtype dtype;
    uint64_t element_count;
    uint64_t raw_bytes;
    uint32_t rank;            /* 0 = plain 1D array without a recorded shape */
    uint64_t dims[4];         /* slowest to fastest; unused entries are 0    */
    uint64_t block_bytes;
    uint64_t block_count;
    uint64_t compressed_bytes; /* total size of the stream */
} mans_frame_info;

typedef struct mans_cctx mans_cctx;
typedef struct mans_dctx mans_dctx;

/* Name of a status, e.g. "MANS_ERR_TRUNCATED"; never NULL. */
const char* mans_status_name(mans_status status);
/* One-sentence English description of a status; never NULL. */
const char* mans_status_message(mans_status status);

/* Library version as "MAJOR.MINOR.PATCH" and the stream format version it writes. */
const char* mans_version_string(void);
uint32_t mans_format_version(void);

/* What `backend` resolves to on this machine, e.g. "cpu (avx2)" or
 * "cpu (scalar)": the backend and the kernels it runs. Never NULL. */
const char* mans_backend_description(mans_backend backend, int force_scalar);

/* Largest stream that compressing src_size bytes can produce; 0 when that
 * size does not fit in a size_t. Buffers may have any alignment. */
size_t mans_compress_bound(size_t src_size);

/* One line saying which backend runs `operation` when `backend` is asked
 * for, and why each GPU backend is not used, e.g.
 * "cpu (avx2); cuda: libmans_backend_cuda.so not found; hip: module loaded,
 * no HIP device". For a forced GPU backend that is unavailable (setting it
 * gives MANS_ERR_BACKEND_UNAVAILABLE) it is the reason. GPU modules are
 * searched in $MANS_BACKEND_PATH (colon-separated), the folder of the binary
 * holding libmans, the executable's ../lib and the installed libdir, once
 * per process. Never NULL; valid for the life of the process. */
const char* mans_backend_report(mans_backend backend, mans_operation operation, int force_scalar);

/* Contexts: NULL on allocation failure. free(NULL) is a no-op. */
mans_cctx* mans_cctx_create(void);
void mans_cctx_free(mans_cctx* cctx);
mans_status mans_cctx_set_param(mans_cctx* cctx, mans_param param, int64_t value);
/* Optional shape (slowest to fastest, rank 1..4) recorded in the next streams;
 * rank 0 clears it. The product of dims must equal the element count. */
mans_status mans_cctx_set_dims(mans_cctx* cctx, uint32_t rank, const uint64_t* dims);

/* Compresses src (src_size bytes, a multiple of the dtype size) into dst.
 * On MANS_OK, *dst_size receives the stream size. */
mans_status mans_compress(mans_cctx* cctx, void* dst, size_t dst_capacity,
                          const void* src, size_t src_size, size_t* dst_size);

mans_dctx* mans_dctx_create(void);
void mans_dctx_free(mans_dctx* dctx);
mans_status mans_dctx_set_param(mans_dctx* dctx, mans_param param, int64_t value);

/* Decompresses one complete stream. On MANS_OK, *dst_size receives the raw size.
 * Every field is validated; checksums are verified before MANS_OK is returned. */
mans_status mans_decompress(mans_dctx* dctx, void* dst, size_t dst_capacity,
                            const void* src, size_t src_size, size_t* dst_size);

/* Parses and validates the header and index (including the header checksum)
 * without decoding payloads. */
mans_status mans_get_frame_info(const void* src, size_t src_size, mans_frame_info* info);

#ifdef __cplusplus
}
#endif

#endif /* MANS_MANS_H */
