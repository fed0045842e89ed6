// backend_module.hpp - the C ABI between libmans and a GPU backend module.
//
// GPU backends are shared libraries (libmans_backend_cuda.so,
// libmans_backend_hip.so) that libmans opens at run time (core/module_loader),
// so one binary runs on machines with CUDA, with ROCm or with neither. A module
// exports one C function, MANS_BACKEND_ENTRY_SYMBOL, returning a table of
// plain function pointers. The table is C (no C++ types, no exceptions across
// it) because the module is built by nvcc/hipcc, possibly from another
// release of the project.
//
// ABI 2 replaced ABI 1's reserved whole-stream mans_compress and
// mans_decompress by encode_blocks and decode_blocks; ABI 3 gave the
// reserved prism_compress its signature; ABI 4 gave the reserved
// prism_decompress its signature; ABI 5 added out_on_device to its job (a
// module of ABI 4 would have taken device memory for host memory); ABI 6
// sizes an encode batch's scratch slices for its largest block
// (chunk_encode_layout's slice_elems, batch_slice_elems), so the core's
// temp and a module's wave agree only at the same version; ABI 7 shrinks
// the slices (block_encode_out_bound: a mapping that does not fit the
// output loses; raw bits of bytes), which changes that agreement again;
// ABI 8 lets encode_blocks and decode_blocks keep state from one window of
// a stream to the next, until end_host_call (a module of ABI 7 would never
// be told to give it back); ABI 9 drops rans_decode_lanes' context offset
// table (contexts and prob_bits define it) and gives the decoder's
// per-block scratch slices (block_scratch_bytes) the token mode's table;
// ABI 10 sizes those slices by element size, the dictionary in the block's
// type (a slice for 128 KiB blocks of any type: 0.92 MB, was 2.1 MB).
// Compatibility rule: the loader accepts only abi_version ==
// MANS_BACKEND_ABI_VERSION. Any change to a signature or to the meaning of a
// field bumps the version; appending a field only raises struct_size (the
// loader reads fields beyond the module's struct_size as absent).
//
// A module says in `caps` which operations it really implements; a null or
// unflagged operation makes the core fall back to the CPU (automatic) or
// report MANS_ERR_BACKEND_UNAVAILABLE (forced). This header is included by
// the core and by the modules, never the other way round.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MANS_BACKEND_ABI_VERSION 10u
#define MANS_BACKEND_ENTRY_SYMBOL "mans_backend_module_entry"

/* Capability flags: operations the module implements with output identical
 * to the CPU backend. */
enum {
    MANS_BACKEND_CAP_MANS_COMPRESS = 1u << 0,
    MANS_BACKEND_CAP_MANS_DECOMPRESS = 1u << 1,
    MANS_BACKEND_CAP_PRISM_COMPRESS = 1u << 2,
    MANS_BACKEND_CAP_PRISM_DECOMPRESS = 1u << 3,
    /* chunk_encode and chunk_decode below: whole streams in device memory
     * (the device-memory API, mans/mans_device.h). */
    MANS_BACKEND_CAP_DEVICE_CHUNKS = 1u << 4,
    /* chunk_decode only (a module that decompresses but does not compress,
     * such as the HIP module built without compression): the device-memory
     * API decompresses. */
    MANS_BACKEND_CAP_DEVICE_CHUNK_DECODE = 1u << 5,
    /* Development self-test: rans_decode_lanes below (not a user operation). */
    MANS_BACKEND_CAP_RANS_DECODE_TEST = 1u << 16
};

/* What probe() found. */
typedef struct mans_backend_probe_result {
    int device_count;  /* >= 1: usable devices; 0: none; < 0: runtime error */
    char text[160];    /* NUL-terminated: the device ("NVIDIA H200, sm_90, 139 GiB")
                          or why there is none ("cudaGetDeviceCount: no CUDA-capable device") */
} mans_backend_probe_result;

/* One token stream for rans_decode_lanes: the fields of the core's
 * RansDecodeArgs (entropy/rans.hpp), host pointers. */
typedef struct mans_backend_rans_stream {
    const uint32_t* table;    /* contexts << prob_bits entries */
    uint32_t contexts;        /* 1, 2, 4 or 8 */
    uint32_t prob_bits;
    uint64_t tokens;          /* n */
    uint32_t lanes;           /* 1..32 */
    uint32_t states[32];
    const uint16_t* words;    /* nwords (+ 64 padding) */
    uint64_t nwords;
    uint8_t* out;             /* interleaved, seg * lanes bytes */
} mans_backend_rans_stream;

/* Blocks of raw elements to encode, for encode_blocks (ABI 2). Host memory.
 * Each payload is written to its own slot; the core assembles the frame and
 * computes the content checksums. */
typedef struct mans_backend_encode_batch {
    int dtype;                /* mans_dtype */
    uint64_t blocks;          /* >= 1 */
    uint64_t block_elems;     /* elements of every block but the last */
    uint64_t last_elems;      /* elements of the last block (1..block_elems) */
    const uint8_t* src;       /* the elements of all blocks, back to back */
    uint8_t* slots;           /* blocks slots of slot_bytes each, written */
    uint64_t slot_bytes;      /* >= 1 + block_elems * element size (a payload never exceeds that) */
    uint64_t* payload_bytes;  /* blocks entries, written: the payload size in each slot */
    int32_t* status;          /* blocks entries, written: MANS_OK, or why the block was not coded */
} mans_backend_encode_batch;

/* Encodes every block of the batch exactly as the CPU backend does. Returns
 * as decode_blocks does. */
typedef int (*mans_backend_encode_blocks_fn)(const mans_backend_encode_batch* batch,
                                             mans_backend_probe_result* err);

/* The blocks of one MANS stream, for decode_blocks (ABI 2). The core has
 * parsed and checked the frame (header, index, header checksum, sizes), so
 * every offset and count here is consistent; each payload is still
 * untrusted. Host memory. The core verifies the content checksums itself. */
typedef struct mans_backend_block_batch {
    int dtype;                /* mans_dtype */
    uint64_t blocks;          /* >= 1 */
    uint64_t block_elems;     /* elements of every block but the last */
    uint64_t last_elems;      /* elements of the last block (1..block_elems) */
    const uint8_t* payloads;  /* all payloads, back to back */
    uint64_t payload_bytes;
    const uint64_t* offsets;  /* blocks + 1 rising entries from 0 to at most payload_bytes: block b is payloads[offsets[b] .. offsets[b+1]) */
    uint8_t* dst;             /* the decoded elements of all blocks, back to back */
    int32_t* status;          /* blocks entries, written: the mans_status of each block */
} mans_backend_block_batch;

/* Decodes every block of the batch, byte-identical to the CPU. Returns 0
 * when all blocks ran (their results in status[]), < 0 on a runtime error
 * (out of device memory, launch failure: text in *err, may be null), in
 * which case dst and status are undefined and the core reports the error. */
typedef int (*mans_backend_decode_blocks_fn)(const mans_backend_block_batch* batch,
                                             mans_backend_probe_result* err);

/* Whole MANS streams in device memory, many at once (chunk_encode,
 * chunk_decode; the arguments of mans_device_compress_async and
 * mans_device_decompress_async, mans/mans_device.h). Every pointer is a
 * device pointer, the arrays have `chunks` entries; the module runs on
 * `stream` and does not wait for it. Temp is laid out by
 * chunk_encode_layout / chunk_decode_layout (mapping/chunk_batch.hpp), which
 * the core and the module share. */
typedef struct mans_backend_chunk_batch {
    uint32_t struct_size;          /* sizeof(mans_backend_chunk_batch) of the core; a module refuses a smaller one */
    int dtype;                     /* encode: mans_dtype; decode: unused (each stream says) */
    uint64_t block_elems;          /* encode: elements per block */
    uint64_t max_block_bytes;      /* decode: temp is sized for blocks up to this */
    uint64_t chunks;
    uint64_t max_in_bytes;         /* encode: no in_bytes[c] above it */
    uint64_t out_capacity;         /* bytes at each out_ptrs[c] */
    const void* const* in_ptrs;
    const size_t* in_bytes;
    void* const* out_ptrs;
    size_t* out_bytes;             /* written: stream or raw size (needed size on MANS_ERR_DST_TOO_SMALL) */
    int32_t* statuses;             /* written: the mans_status of each chunk */
    uint8_t* temp;
    uint64_t temp_bytes;
    void* stream;                  /* cudaStream_t / hipStream_t; null: the default stream */
} mans_backend_chunk_batch;

/* Queues the batch on its stream. Returns 0 when queued, < 0 when it could
 * not be (text in *err, may be null); the per-chunk results are in
 * statuses[] once the stream has run. */
typedef int (*mans_backend_chunks_fn)(const mans_backend_chunk_batch* batch, mans_backend_probe_result* err);

/* PRISM compression of one field in host memory (prism_compress, ABI 3).
 * The fields of mans::prism::CompressConfig, which the core has checked;
 * the module runs prism/device_encoder.hpp and hands back the archive
 * without its base (written with base_bytes 0) and the base's data, which
 * the core encodes (its lossless stage is the core's MANS coder) and
 * splices in. The base's data and the archive are host memory, valid
 * during finish() only. */
typedef struct mans_backend_prism_base {
    uint32_t levels;
    const uint8_t* const* kind_bits;  /* levels entries: a level's block kinds (may be empty) */
    const uint64_t* kind_bytes;
    const uint8_t* mask_bits;
    uint64_t mask_bytes;
    const uint8_t* masked_values;     /* element bytes, in point order */
    uint64_t masked_bytes;
    const uint64_t* outlier_index;    /* increasing */
    uint64_t outliers;
    const uint8_t* outlier_values;    /* element bytes */
    uint64_t outlier_bytes;
    const uint8_t* anchor;            /* element bytes; 0 bytes when masked or no data */
    uint64_t anchor_bytes;
} mans_backend_prism_base;

typedef struct mans_backend_prism_job {
    uint32_t struct_size;   /* sizeof(mans_backend_prism_job) of the core; a module refuses a smaller one */
    int float_type;         /* mans::prism::FloatType: 8 f32, 9 f64 */
    uint32_t rank;
    uint64_t dims[4];
    int error_mode;         /* mans::prism::ErrorMode */
    double error_bound;
    int plane_coding;       /* mans::prism::PlaneCoding */
    const double* fill_values;
    uint64_t fill_count;
    int detect_fill;
    double level_alpha, level_beta;
    const void* data;       /* the field: host memory, or device memory when data_on_device */
    uint64_t bytes;
    int data_on_device;     /* 1: data is on the module's device (the device-memory API) */
    void* ctx;              /* the core's, for finish */
    /* Returns a mans_status, which prism_compress returns. */
    int (*finish)(void* ctx, const uint8_t* archive_without_base, uint64_t bytes, const mans_backend_prism_base* base);
} mans_backend_prism_job;

/* Returns MANS_OK or finish's status, another mans_status from the
 * encoder, or MANS_ERR_BACKEND_UNAVAILABLE on a runtime error (text in
 * *err, may be null). */
typedef int (*mans_backend_prism_compress_fn)(const mans_backend_prism_job* job, mans_backend_probe_result* err);

/* PRISM reconstruction of one retrieval (prism_decompress, ABI 4): the
 * values a mans::prism::Reader returns for the planes it read. The core
 * has read the archive's header, checked every plane's checksum and
 * decoded the base (its lossless stage is the core's MANS coder); the
 * module parses the header again, decodes the planes and reconstructs
 * (prism/device_decoder.hpp). Everything is host memory but out when
 * out_on_device (the device-memory API: the values stay on the device). */
typedef struct mans_backend_prism_read_job {
    uint32_t struct_size;               /* sizeof(mans_backend_prism_read_job) of the core; a module refuses a smaller one */
    const uint8_t* header;              /* preamble + header + checksum, as stored */
    uint64_t header_bytes;
    uint64_t archive_bytes;             /* the whole archive's size (the header's checks use it) */
    mans_backend_prism_base base;       /* the decoded base */
    uint32_t levels;
    const uint32_t* kept;               /* levels entries: planes read of each level */
    const uint8_t* const* level_planes; /* levels entries: planes [0, kept) of the level as stored (from its first plane) */
    const uint64_t* level_bytes;
    void* out;                          /* the values, count * element size bytes */
    uint64_t out_bytes;
    int out_on_device;                  /* 1: out is memory of the module's device, aligned to the element size */
} mans_backend_prism_read_job;

/* Returns MANS_OK with the values in job->out, corrupt_block for planes
 * the CPU's reader refuses, another mans_status for a job it cannot take,
 * or MANS_ERR_BACKEND_UNAVAILABLE on a runtime error (text in *err, may
 * be null). */
typedef int (*mans_backend_prism_decompress_fn)(const mans_backend_prism_read_job* job, mans_backend_probe_result* err);

typedef struct mans_backend_module {
    uint32_t abi_version;   /* MANS_BACKEND_ABI_VERSION the module was built with */
    uint32_t struct_size;   /* sizeof(mans_backend_module) in the module's build */
    const char* name;       /* "cuda" or "hip" */
    const char* build_info; /* e.g. "CUDA 13.0, sm_80 sm_90" */
    uint64_t caps;          /* MANS_BACKEND_CAP_* */

    /* Counts devices; never aborts, also without a driver. */
    void (*probe)(mans_backend_probe_result* out);

    mans_backend_encode_blocks_fn encode_blocks;   /* null unless CAP_MANS_COMPRESS */
    mans_backend_decode_blocks_fn decode_blocks;   /* null unless CAP_MANS_DECOMPRESS */
    mans_backend_prism_compress_fn prism_compress;  /* null unless CAP_PRISM_COMPRESS */
    mans_backend_prism_decompress_fn prism_decompress;  /* null unless CAP_PRISM_DECOMPRESS */

    /* Decodes one token stream on device 0 with one warp (CAP_RANS_DECODE_TEST);
     * returns 1 when the stream ended cleanly, 0 when corrupt, < 0 on a
     * runtime error (text in *err, may be null). */
    int (*rans_decode_lanes)(const mans_backend_rans_stream* s, mans_backend_probe_result* err);

    /* Appended (struct_size tells whether a module has them): null unless
     * CAP_DEVICE_CHUNKS. */
    mans_backend_chunks_fn chunk_encode;
    mans_backend_chunks_fn chunk_decode;

    /* Appended in ABI 8. The core codes a stream in host memory in windows,
     * one encode_blocks or decode_blocks call each, and then calls
     * end_host_call once on the same thread, after a failed window too
     * (and after a stream of no blocks, with no window). A thread codes one
     * stream at a time: its host calls never nest. A module may keep what
     * the windows share (device buffers, streams, a raised stack limit)
     * until then, per calling thread, and must hold nothing of the
     * stream's after it. May be null (nothing kept). */
    void (*end_host_call)(void);
    /* Bytes of raw data per window that the module wants (0: the core's
     * default, about 256 MiB). Each window is at least one block. */
    uint64_t host_window_bytes;
} mans_backend_module;

/* The entry point. host_abi_version lets a module refuse (return null) or
 * adapt; the loader checks the returned abi_version in any case. */
typedef const mans_backend_module* (*mans_backend_entry_fn)(uint32_t host_abi_version);

#ifdef __cplusplus
}
#endif
