/* prism.h - C API of PRISM, the progressive error-bounded lossy codec for
 * float32/float64 grids (see mans/prism.hpp for the C++ API and
 * docs/FORMAT.md section 4 for the archive).
 *
 * Every function returns a mans_status (mans.h); none aborts, prints or
 * lets an exception through. Objects are opaque and freed by their own
 * function. */
#ifndef MANS_PRISM_H
#define MANS_PRISM_H

#include <stddef.h>
#include <stdint.h>

#include "mans/mans.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Pinned numbers (the type is stored in archives). */
typedef enum mans_prism_type { MANS_PRISM_F32 = 8, MANS_PRISM_F64 = 9 } mans_prism_type;
typedef enum mans_prism_mode { MANS_PRISM_ABS = 1, MANS_PRISM_REL = 2 } mans_prism_mode;
typedef enum mans_prism_planes { MANS_PRISM_NEGABINARY = 1, MANS_PRISM_SIGN_MAGNITUDE = 2 } mans_prism_planes;
typedef enum mans_prism_target {
    MANS_PRISM_TARGET_ABS = 0,   /* value: absolute L-inf bound */
    MANS_PRISM_TARGET_REL = 1,   /* value: bound x (max - min) */
    MANS_PRISM_TARGET_PSNR = 2,  /* value: dB (model estimate) */
    MANS_PRISM_TARGET_BYTES = 3, /* value: byte budget */
    MANS_PRISM_TARGET_FULL = 4   /* value ignored */
} mans_prism_target;

typedef struct mans_prism_params {
    mans_prism_type type;
    uint32_t rank;        /* 1..4 */
    uint64_t dims[4];     /* slowest to fastest (C order) */
    mans_prism_mode mode;
    double error_bound;
    mans_prism_planes planes;
    int threads;          /* 0 = all; never changes the bytes */
    const double* fill_values; /* kept exactly; may be NULL */
    size_t fill_count;
    int detect_fill;      /* nonzero: also detect one huge fill value */
    double level_alpha;   /* level-wise bounds, see prism.hpp; default 1 */
    double level_beta;    /* default 4 */
    mans_backend backend; /* where it runs, never changes the bytes: AUTO (a GPU
                             module for fields of 16 MiB or more), CPU, CUDA,
                             HIP (MANS_ERR_BACKEND_UNAVAILABLE when absent) */
} mans_prism_params;

/* Defaults: f32, rank 1, absolute mode, negabinary, detect_fill = 1,
 * level_alpha = 1, level_beta = 4, backend AUTO. */
void mans_prism_params_init(mans_prism_params* p);

/* Compresses src (dims product x element size bytes) into a buffer that the
 * library allocates; release it with mans_prism_free. */
mans_status mans_prism_compress(const void* src, size_t src_size, const mans_prism_params* p, void** archive,
                                size_t* archive_size);
void mans_prism_free(void* buffer);

typedef struct mans_prism_reader mans_prism_reader;
typedef struct mans_prism_result mans_prism_result;

/* Readers read the header now and other byte ranges on demand. The memory
 * version does not copy: keep the archive alive while the reader is. */
mans_status mans_prism_open_memory(const void* archive, size_t size, mans_prism_reader** out);
mans_status mans_prism_open_file(const char* path, mans_prism_reader** out);
/* read_at(user, offset, dst, n) returns nonzero when it wrote n bytes. */
mans_status mans_prism_open_callback(uint64_t size, int (*read_at)(void* user, uint64_t offset, void* dst, size_t n),
                                     void* user, mans_prism_reader** out);
void mans_prism_close(mans_prism_reader* r);
/* Where retrieve and refine reconstruct (never changes the values): AUTO
 * (the default: a GPU module for fields of 16 MiB or more, else the CPU),
 * CPU, or CUDA/HIP forced (retrieve and refine then return
 * MANS_ERR_BACKEND_UNAVAILABLE when it is absent). */
mans_status mans_prism_set_backend(mans_prism_reader* r, mans_backend backend);

typedef struct mans_prism_info {
    mans_prism_type type;
    uint32_t rank;
    uint64_t dims[4];
    uint64_t count;
    mans_prism_mode mode;
    double requested_bound;
    double abs_bound;
    double value_min, value_max;
    uint32_t levels;
    uint64_t archive_bytes, header_bytes, base_bytes;
    uint64_t masked_count, outlier_count;
    double full_max_error;
} mans_prism_info;
mans_status mans_prism_get_info(const mans_prism_reader* r, mans_prism_info* out);
/* Total bytes the reader fetched from its source. */
uint64_t mans_prism_bytes_read(const mans_prism_reader* r);

/* One-shot retrieval; MANS_ERR_TARGET_UNREACHABLE for a bound below the
 * archive's. threads 0 = all. */
mans_status mans_prism_retrieve(mans_prism_reader* r, mans_prism_target kind, double value, int threads,
                                mans_prism_result** out);
/* Reads only the planes the result lacks for the new target. On error the
 * result is unchanged. */
mans_status mans_prism_refine(mans_prism_reader* r, mans_prism_result* x, mans_prism_target kind, double value,
                              int threads);

typedef struct mans_prism_stats {
    uint64_t bytes_read;       /* for this result, header included */
    uint64_t bytes_read_step;  /* by the last retrieve/refine */
    double max_abs_error_bound;/* rigorous L-inf bound of the result */
    double psnr_estimate;
    int complete;              /* every plane read */
    const char* backend;       /* where the values were last reconstructed:
                                  "cpu", "cuda" or "hip" (static storage) */
} mans_prism_stats;

const void* mans_prism_result_data(const mans_prism_result* x); /* count values of the archive's type */
size_t mans_prism_result_size(const mans_prism_result* x);      /* bytes */
mans_status mans_prism_result_stats(const mans_prism_result* x, mans_prism_stats* out);
void mans_prism_result_free(mans_prism_result* x);

#ifdef __cplusplus
}
#endif

#endif /* MANS_PRISM_H */
