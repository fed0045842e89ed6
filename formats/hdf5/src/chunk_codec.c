/* chunk_codec.c - see chunk_codec.h. Uses only the public C APIs of mans
 * (mans/mans.h, mans/prism.h). */
#include "chunk_codec.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mans/prism.h"

static void set_msg(char* msg, size_t cap, const char* fmt, ...) {
    if (!msg || cap == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
}

/* ---- cd_values ---------------------------------------------------------- */

static int valid_mode(uint32_t mode) { return mode <= MANS_H5_REL; }

static int valid_bound(uint32_t mode, double bound) {
    return mode == MANS_H5_LOSSLESS || (isfinite(bound) && bound > 0);
}

int mans_h5_parse_user_values(size_t n, const unsigned int* cd, uint32_t* mode, double* bound, const char** why) {
    *mode = MANS_H5_LOSSLESS;
    *bound = 0;
    if (n == 0) return 0;
    if ((cd[0] & MANS_H5_CD_TAG_MASK) == MANS_H5_CD_TAG) { /* persisted: keep its user part */
        mans_h5_config c;
        if (mans_h5_decode_config(n, cd, &c, why) != 0) return 1;
        *mode = c.mode;
        *bound = c.bound;
        return 0;
    }
    if (cd[0] != MANS_H5_USER_LAYOUT) {
        *why = "cd_values[0] must be 1 (the user layout version); see `mans h5-args`";
        return 1;
    }
    if (n == 1) return 0;
    *mode = cd[1];
    if (!valid_mode(*mode)) {
        *why = "cd_values[1] (mode) must be 0 (lossless), 1 (absolute bound) or 2 (relative bound)";
        return 1;
    }
    if (*mode == MANS_H5_LOSSLESS) {
        if (n != 2) {
            *why = "lossless mode takes 2 cd_values: 1, 0";
            return 1;
        }
        return 0;
    }
    if (n != MANS_H5_USER_NVALUES) {
        *why = "a bound takes 4 cd_values: 1, mode, bound low word, bound high word";
        return 1;
    }
    *bound = mans_h5_unpack_double(cd[2], cd[3]);
    if (!valid_bound(*mode, *bound)) {
        *why = "the error bound (cd_values[2..3]) must be a finite double > 0";
        return 1;
    }
    return 0;
}

void mans_h5_encode_config(const mans_h5_config* c, unsigned int cd[MANS_H5_CD_NVALUES]) {
    memset(cd, 0, MANS_H5_CD_NVALUES * sizeof cd[0]);
    cd[0] = MANS_H5_CD_TAG | (mans_format_version() & 0xffu) << 8 | MANS_H5_CD_LAYOUT;
    cd[1] = c->codec;
    cd[2] = c->dtype;
    cd[3] = c->element_size;
    cd[4] = c->flags;
    cd[5] = c->rank;
    for (uint32_t i = 0; i < c->rank && i < 4; ++i) cd[6 + i] = (unsigned int)c->dims[i];
    cd[10] = c->mode;
    mans_h5_pack_double(c->bound, &cd[11], &cd[12]);
    mans_h5_pack_double(c->fill, &cd[13], &cd[14]);
}

static uint32_t dtype_size(uint32_t codec, uint32_t dtype) {
    if (codec == MANS_H5_CODEC_MANS) {
        switch (dtype) {
            case MANS_DTYPE_U8: return 1;
            case MANS_DTYPE_U16: case MANS_DTYPE_I16: return 2;
            case MANS_DTYPE_U32: case MANS_DTYPE_I32: return 4;
            case MANS_DTYPE_U64: case MANS_DTYPE_I64: return 8;
            default: return 0;
        }
    }
    if (codec == MANS_H5_CODEC_PRISM) {
        if (dtype == MANS_PRISM_F32) return 4;
        if (dtype == MANS_PRISM_F64) return 8;
    }
    return 0;
}

int mans_h5_decode_config(size_t n, const unsigned int* cd, mans_h5_config* c, const char** why) {
    memset(c, 0, sizeof *c);
    if (n < 1 || (cd[0] & MANS_H5_CD_TAG_MASK) != MANS_H5_CD_TAG) {
        *why = "cd_values were not set by the mans filter's set_local";
        return 1;
    }
    if ((cd[0] & 0xffu) != MANS_H5_CD_LAYOUT) {
        *why = "cd_values layout is newer than this mans filter: upgrade mans";
        return 1;
    }
    if (n < MANS_H5_CD_NVALUES) { /* later layouts may only append words */
        *why = "too few cd_values for layout 1";
        return 1;
    }
    c->codec = cd[1];
    c->dtype = cd[2];
    c->element_size = cd[3];
    c->flags = cd[4];
    c->rank = cd[5];
    c->mode = cd[10];
    c->bound = mans_h5_unpack_double(cd[11], cd[12]);
    c->fill = mans_h5_unpack_double(cd[13], cd[14]);
    const uint32_t size = dtype_size(c->codec, c->dtype);
    if (size == 0) {
        *why = "cd_values name an unknown codec or element type";
        return 1;
    }
    /* MANS codes i8 datasets as u8 and floats as their bit patterns, so only
     * the byte size has to agree. */
    if (c->element_size != size) {
        *why = "cd_values element size does not match the element type";
        return 1;
    }
    if ((c->flags & ~MANS_H5_KNOWN_FLAGS) != 0) {
        *why = "cd_values carry unknown flags";
        return 1;
    }
    if (c->rank < 1 || c->rank > 4) {
        *why = "cd_values rank must be 1..4";
        return 1;
    }
    for (uint32_t i = 0; i < 4; ++i) {
        c->dims[i] = i < c->rank ? cd[6 + i] : 0;
        if (i < c->rank && c->dims[i] == 0) {
            *why = "cd_values give a zero chunk dimension";
            return 1;
        }
        if (i >= c->rank && cd[6 + i] != 0) {
            *why = "cd_values give a dimension beyond the rank";
            return 1;
        }
    }
    if (!valid_mode(c->mode) || !valid_bound(c->mode, c->bound) ||
        (c->codec == MANS_H5_CODEC_PRISM && c->mode == MANS_H5_LOSSLESS)) {
        *why = "cd_values give an invalid mode or error bound";
        return 1;
    }
    if (mans_h5_chunk_bytes(c) == 0) {
        *why = "cd_values give a chunk larger than HDF5's 4 GiB limit";
        return 1;
    }
    return 0;
}

uint64_t mans_h5_chunk_bytes(const mans_h5_config* c) {
    if (c->rank < 1 || c->rank > 4) return 0;
    uint64_t bytes = c->element_size;
    for (uint32_t i = 0; i < c->rank; ++i) {
        if (c->dims[i] == 0 || c->dims[i] > UINT32_MAX) return 0;
        bytes *= c->dims[i]; /* at most 2^32 * 8 before the check below: no wrap */
        if (bytes > UINT32_MAX) return 0;
    }
    return bytes;
}

int mans_h5_is_raw_chunk(const mans_h5_config* c, size_t stored_bytes) {
    const uint64_t raw = mans_h5_chunk_bytes(c);
    return raw != 0 && (uint64_t)stored_bytes == raw;
}

int mans_h5_parse_read_target(const char* text, mans_h5_read_target* t) {
    t->kind = MANS_PRISM_TARGET_FULL;
    t->value = 0;
    if (!text || !*text || strcmp(text, "full") == 0) return 0;
    static const struct { const char* name; int kind; } kinds[] = {
        {"abs:", MANS_PRISM_TARGET_ABS},
        {"rel:", MANS_PRISM_TARGET_REL},
        {"psnr:", MANS_PRISM_TARGET_PSNR},
        {"bytes:", MANS_PRISM_TARGET_BYTES},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        const size_t len = strlen(kinds[i].name);
        if (strncmp(text, kinds[i].name, len) != 0) continue;
        char* end = NULL;
        const double v = strtod(text + len, &end);
        if (end == text + len || *end != '\0' || !isfinite(v) || !(v > 0)) return 1;
        t->kind = kinds[i].kind;
        t->value = v;
        return 0;
    }
    return 1;
}

/* ---- chunks ------------------------------------------------------------- */

static void byteswap(void* data, size_t n, uint32_t size) {
    unsigned char* p = (unsigned char*)data;
    for (size_t off = 0; off + size <= n; off += size) {
        for (uint32_t i = 0; i < size / 2; ++i) {
            const unsigned char t = p[off + i];
            p[off + i] = p[off + size - 1 - i];
            p[off + size - 1 - i] = t;
        }
    }
}

static mans_status copy_out(const void* src, size_t n, void** out, size_t* out_size) {
    void* buf = malloc(n ? n : 1);
    if (!buf) return MANS_ERR_OUT_OF_MEMORY;
    memcpy(buf, src, n);
    *out = buf;
    *out_size = n;
    return MANS_OK;
}

static mans_status encode_mans(const mans_h5_config* c, const void* src, size_t n, void** out, size_t* out_size) {
    const size_t cap = mans_compress_bound(n);
    if (cap == 0) return MANS_ERR_INVALID_ARGUMENT;
    void* stream = malloc(cap);
    mans_cctx* cctx = mans_cctx_create();
    mans_status s = (stream && cctx) ? MANS_OK : MANS_ERR_OUT_OF_MEMORY;
    if (s == MANS_OK) s = mans_cctx_set_param(cctx, MANS_PARAM_DTYPE, (int64_t)c->dtype);
    if (s == MANS_OK) s = mans_cctx_set_dims(cctx, c->rank, c->dims);
    size_t size = 0;
    if (s == MANS_OK) s = mans_compress(cctx, stream, cap, src, n, &size);
    mans_cctx_free(cctx);
    if (s != MANS_OK) {
        free(stream);
        return s;
    }
    *out = stream;
    *out_size = size;
    return MANS_OK;
}

static mans_status encode_prism(const mans_h5_config* c, const void* src, size_t n, void** out, size_t* out_size) {
    mans_prism_params p;
    mans_prism_params_init(&p);
    p.type = (mans_prism_type)c->dtype;
    p.rank = c->rank;
    for (uint32_t i = 0; i < c->rank; ++i) p.dims[i] = c->dims[i];
    p.mode = c->mode == MANS_H5_REL ? MANS_PRISM_REL : MANS_PRISM_ABS;
    p.error_bound = c->bound;
    /* Edge chunks arrive padded with the fill value, or with zeros when the
     * fill time is NEVER: keep both exactly and out of a relative bound's
     * value range, which is then the range of the chunk's real data. */
    double fills[2];
    size_t nfill = 0;
    /* Only a fill the element type can hold (NaN and Inf are kept anyway). */
    const double max = c->dtype == MANS_PRISM_F32 ? FLT_MAX : DBL_MAX;
    if ((c->flags & MANS_H5_FLAG_FILL) && isfinite(c->fill) && fabs(c->fill) <= max) fills[nfill++] = c->fill;
    const double zero = 0.0; /* +0.0 by bits: a -0.0 fill is another value */
    if (c->mode == MANS_H5_REL && !(nfill == 1 && memcmp(&fills[0], &zero, sizeof zero) == 0))
        fills[nfill++] = zero;
    p.fill_values = nfill ? fills : NULL;
    p.fill_count = nfill;
    return mans_prism_compress(src, n, &p, out, out_size);
}

mans_status mans_h5_encode_chunk(const mans_h5_config* c, const void* src, size_t n, void** out, size_t* out_size,
                                 char* msg, size_t msg_cap) {
    *out = NULL;
    *out_size = 0;
    if ((uint64_t)n != mans_h5_chunk_bytes(c)) {
        set_msg(msg, msg_cap, "chunk of %zu bytes, but the dataset's chunk shape gives %llu", n,
                (unsigned long long)mans_h5_chunk_bytes(c));
        return MANS_ERR_INVALID_ARGUMENT;
    }
    const void* le = src;
    void* swapped = NULL;
    if (c->flags & MANS_H5_FLAG_BYTESWAP) { /* the codecs read little-endian elements */
        size_t copied = 0;
        if (copy_out(src, n, &swapped, &copied) != MANS_OK) return MANS_ERR_OUT_OF_MEMORY;
        byteswap(swapped, n, c->element_size);
        le = swapped;
    }
    void* coded = NULL;
    size_t coded_size = 0;
    mans_status s = c->codec == MANS_H5_CODEC_PRISM ? encode_prism(c, le, n, &coded, &coded_size)
                                                    : encode_mans(c, le, n, &coded, &coded_size);
    free(swapped);
    if (s == MANS_ERR_OUT_OF_MEMORY) {
        set_msg(msg, msg_cap, "compressing a chunk failed: %s (%s)", mans_status_message(s), mans_status_name(s));
        return s;
    }
    /* Any other codec failure (values PRISM cannot quantize, e.g. near
     * DBL_MAX) keeps the data as it is: a raw chunk is always valid. */
    if (s != MANS_OK) coded = NULL, coded_size = n;
    if (coded_size < n) { /* malloc'd by either codec: the caller frees with free() */
        *out = coded;
        *out_size = coded_size;
        return MANS_OK;
    }
    /* Coding would not shrink it: store the chunk as it is (size n marks it). */
    if (c->codec == MANS_H5_CODEC_PRISM) mans_prism_free(coded);
    else free(coded);
    s = copy_out(src, n, out, out_size);
    if (s != MANS_OK) set_msg(msg, msg_cap, "out of memory");
    return s;
}

static mans_status decode_mans(const mans_h5_config* c, const void* src, size_t n, void* dst, size_t raw,
                               char* msg, size_t msg_cap) {
    mans_frame_info info;
    mans_status s = mans_get_frame_info(src, n, &info);
    if (s != MANS_OK) return s;
    if (info.dtype != (mans_dtype)c->dtype || info.raw_bytes != raw || info.compressed_bytes != n) {
        set_msg(msg, msg_cap, "chunk stream (%llu raw bytes, dtype %d) does not match the dataset's chunk "
                "(%zu bytes, dtype %u)", (unsigned long long)info.raw_bytes, (int)info.dtype, raw, c->dtype);
        return MANS_ERR_CORRUPT_HEADER;
    }
    mans_dctx* d = mans_dctx_create();
    if (!d) return MANS_ERR_OUT_OF_MEMORY;
    size_t size = 0;
    s = mans_decompress(d, dst, raw, src, n, &size);
    mans_dctx_free(d);
    if (s == MANS_OK && size != raw) s = MANS_ERR_CORRUPT_HEADER;
    return s;
}

static mans_status decode_prism(const mans_h5_config* c, const mans_h5_read_target* target, const void* src,
                                size_t n, void* dst, size_t raw, char* msg, size_t msg_cap) {
    mans_prism_reader* r = NULL;
    mans_status s = mans_prism_open_memory(src, n, &r);
    if (s != MANS_OK) return s;
    mans_prism_info info;
    s = mans_prism_get_info(r, &info);
    if (s == MANS_OK && (info.type != (mans_prism_type)c->dtype || info.count * c->element_size != raw ||
                         info.archive_bytes != n)) {
        set_msg(msg, msg_cap, "chunk archive (%llu values) does not match the dataset's chunk (%zu bytes)",
                (unsigned long long)info.count, raw);
        s = MANS_ERR_CORRUPT_HEADER;
    }
    mans_prism_result* x = NULL;
    if (s == MANS_OK) {
        const int kind = target ? target->kind : MANS_PRISM_TARGET_FULL;
        s = mans_prism_retrieve(r, (mans_prism_target)kind, target ? target->value : 0, 0, &x);
        /* A bound finer than the archive gets everything the archive has; a
         * byte budget below the chunk's smallest retrieval gets that one. */
        if (s == MANS_ERR_TARGET_UNREACHABLE && kind != MANS_PRISM_TARGET_BYTES)
            s = mans_prism_retrieve(r, MANS_PRISM_TARGET_FULL, 0, 0, &x);
        else if (s == MANS_ERR_TARGET_UNREACHABLE)
            s = mans_prism_retrieve(r, MANS_PRISM_TARGET_BYTES, (double)(info.header_bytes + info.base_bytes), 0, &x);
    }
    if (s == MANS_OK) {
        if (mans_prism_result_size(x) == raw) memcpy(dst, mans_prism_result_data(x), raw);
        else s = MANS_ERR_CORRUPT_HEADER;
    }
    mans_prism_result_free(x);
    mans_prism_close(r);
    return s;
}

mans_status mans_h5_decode_chunk(const mans_h5_config* c, const mans_h5_read_target* target, const void* src,
                                 size_t n, void** out, size_t* out_size, char* msg, size_t msg_cap) {
    *out = NULL;
    *out_size = 0;
    const uint64_t raw64 = mans_h5_chunk_bytes(c);
    if (raw64 == 0) {
        set_msg(msg, msg_cap, "invalid chunk shape in cd_values");
        return MANS_ERR_INVALID_ARGUMENT;
    }
    const size_t raw = (size_t)raw64;
    if (mans_h5_is_raw_chunk(c, n)) return copy_out(src, n, out, out_size); /* stored as it was */
    if (n < 6 || memcmp(src, "MANS", 4) != 0) {
        set_msg(msg, msg_cap, "chunk of %zu bytes is neither raw (%zu bytes) nor a mans stream", n, raw);
        return n < 6 ? MANS_ERR_TRUNCATED : MANS_ERR_BAD_MAGIC;
    }
    void* dst = malloc(raw);
    if (!dst) {
        set_msg(msg, msg_cap, "out of memory for a %zu-byte chunk", raw);
        return MANS_ERR_OUT_OF_MEMORY;
    }
    if (msg && msg_cap) msg[0] = '\0';
    /* The chunk is the truth: byte 5 of the stream names its codec. */
    const unsigned char codec = ((const unsigned char*)src)[5];
    mans_status s;
    if (codec != c->codec) {
        set_msg(msg, msg_cap, "chunk codec %u differs from the dataset's codec %u", codec, c->codec);
        s = MANS_ERR_CORRUPT_HEADER;
    } else if (codec == MANS_H5_CODEC_PRISM) {
        s = decode_prism(c, target, src, n, dst, raw, msg, msg_cap);
    } else {
        s = decode_mans(c, src, n, dst, raw, msg, msg_cap);
    }
    if (s != MANS_OK) {
        if (msg && msg_cap && !msg[0])
            set_msg(msg, msg_cap, "decoding a chunk failed: %s (%s)", mans_status_message(s), mans_status_name(s));
        free(dst);
        return s;
    }
    if (c->flags & MANS_H5_FLAG_BYTESWAP) byteswap(dst, raw, c->element_size);
    *out = dst;
    *out_size = raw;
    return MANS_OK;
}
