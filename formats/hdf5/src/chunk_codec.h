/*
 * chunk_codec.h - one HDF5 chunk to one mans stream and back, driven by the
 * cd_values that set_local persisted (docs/FORMAT.md section 5).
 *
 * Nothing here calls HDF5, so the unit tests and the fuzz target run the
 * whole filter logic, hostile cd_values included, without a file.
 */
#ifndef MANS_H5_CHUNK_CODEC_H
#define MANS_H5_CHUNK_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "mans/h5_params.h"
#include "mans/mans.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Word 0 of the persisted cd_values: this tag | stream format version << 8
 * | layout version. The tag keeps it apart from a user form (word 0 = 1). */
#define MANS_H5_CD_TAG 0x4D480000u
#define MANS_H5_CD_TAG_MASK 0xFFFF0000u
#define MANS_H5_CD_LAYOUT 1u
#define MANS_H5_CD_NVALUES 15u

enum mans_h5_codec { MANS_H5_CODEC_MANS = 1, MANS_H5_CODEC_PRISM = 2 };
enum mans_h5_flag {
    MANS_H5_FLAG_BYTESWAP = 1u, /* the dataset type is big-endian           */
    MANS_H5_FLAG_FILL = 2u      /* `fill` holds the dataset's fill value    */
};
#define MANS_H5_KNOWN_FLAGS 3u

typedef struct mans_h5_config {
    uint32_t codec;        /* mans_h5_codec                                  */
    uint32_t dtype;        /* mans_dtype (MANS) or mans_prism_type (PRISM)   */
    uint32_t element_size; /* bytes per dataset element                      */
    uint32_t flags;        /* mans_h5_flag bits                              */
    uint32_t rank;         /* 1..4, unit dimensions dropped                  */
    uint64_t dims[4];      /* chunk shape, slowest first                     */
    uint32_t mode;         /* mans_h5_mode                                   */
    double bound;          /* PRISM error bound                              */
    double fill;           /* with MANS_H5_FLAG_FILL                         */
} mans_h5_config;

/* What a PRISM chunk is decoded to: everything, or a coarser target. */
typedef struct mans_h5_read_target {
    int kind;     /* mans_prism_target (MANS_PRISM_TARGET_FULL = everything) */
    double value;
} mans_h5_read_target;

/* Reads a user form (or an already persisted form, whose user part is kept:
 * h5repack re-applies a filter it copies) into mode and bound.
 * 0 on success, else nonzero with *why set. */
int mans_h5_parse_user_values(size_t n, const unsigned int* cd, uint32_t* mode, double* bound, const char** why);

/* Persisted form <-> config. decode validates every word. */
void mans_h5_encode_config(const mans_h5_config* c, unsigned int cd[MANS_H5_CD_NVALUES]);
int mans_h5_decode_config(size_t n, const unsigned int* cd, mans_h5_config* c, const char** why);

/* Raw bytes of one chunk; 0 when the shape is invalid or overflows. */
uint64_t mans_h5_chunk_bytes(const mans_h5_config* c);

/* The raw-chunk rule (FORMAT.md 5.3): a stored chunk of exactly the raw
 * chunk size holds the chunk as it is; a coded chunk is always shorter. */
int mans_h5_is_raw_chunk(const mans_h5_config* c, size_t stored_bytes);

/* Parses "full", "abs:E", "rel:E", "psnr:DB" or "bytes:N" (the
 * MANS_H5_READ_TARGET setting). 0 on success. */
int mans_h5_parse_read_target(const char* text, mans_h5_read_target* t);

/* Encodes one chunk of n bytes (n must equal mans_h5_chunk_bytes). On
 * MANS_OK, *out is a malloc'd buffer of *out_size bytes: a mans stream
 * strictly smaller than n, or a copy of the raw chunk (exactly n bytes) when
 * coding would not shrink it. msg receives a reason on failure. */
mans_status mans_h5_encode_chunk(const mans_h5_config* c, const void* src, size_t n, void** out, size_t* out_size,
                                 char* msg, size_t msg_cap);

/* Decodes one stored chunk of n bytes into a malloc'd buffer of exactly
 * mans_h5_chunk_bytes(c) bytes. A chunk of exactly that size is raw; any
 * other is a stream, validated against the config and its checksums. */
mans_status mans_h5_decode_chunk(const mans_h5_config* c, const mans_h5_read_target* target, const void* src,
                                 size_t n, void** out, size_t* out_size, char* msg, size_t msg_cap);

#ifdef __cplusplus
}
#endif

#endif /* MANS_H5_CHUNK_CODEC_H */
