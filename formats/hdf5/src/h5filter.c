/*
 * h5filter.c - the HDF5 side of the mans filter: the H5Z class and its
 * can_apply / set_local / filter callbacks, HDF5 error reporting, and the
 * link-in API of mans/h5filter.h. The chunk coding itself is chunk_codec.c.
 *
 * HDF5 rules kept here: callbacks never exit, abort or throw; on failure
 * they push an HDF5 error and return a negative value (can_apply,
 * set_local) or 0 (filter). set_local only looks at the type, the chunk
 * shape and the fill value, never at data, so every MPI rank persists the
 * same cd_values.
 */
#include "h5filter_class.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_codec.h"
#include "mans/prism.h"
#include "mans/version.h"

/* ---- errors ------------------------------------------------------------- */

static hid_t error_class = -1, error_major = -1, error_minor = -1;

/* Our own error class, so that H5Eprint2 names "mans"; HDF5's pipeline
 * error codes if registering fails. HDF5 serialises filter callbacks, and
 * the link-in API is documented as not for concurrent first use. */
static void push_error(const char* func, const char* fmt, ...) {
    if (error_class < 0) {
        const hid_t cls = H5Eregister_class("mans", "mans HDF5 filter", MANS_VERSION_STRING);
        if (cls >= 0) {
            error_major = H5Ecreate_msg(cls, H5E_MAJOR, "mans filter");
            error_minor = H5Ecreate_msg(cls, H5E_MINOR, "cannot filter");
            error_class = cls;
        }
    }
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (error_class >= 0 && error_major >= 0 && error_minor >= 0)
        H5Epush2(H5E_DEFAULT, __FILE__, func, __LINE__, error_class, error_major, error_minor, "%s", text);
    else
        H5Epush2(H5E_DEFAULT, __FILE__, func, __LINE__, H5E_ERR_CLS, H5E_PLINE, H5E_CANTFILTER, "%s", text);
}

/* ---- dataset facts -> config -------------------------------------------- */

/* Reads element type and chunk shape into c (codec, dtype, size, flags,
 * rank, dims) for the given mode. 1 = usable, 0 = not applicable (why set),
 * -1 = HDF5 call failed. */
static int describe_dataset(hid_t dcpl, hid_t type, uint32_t mode, mans_h5_config* c, const char** why) {
    memset(c, 0, sizeof *c);
    const H5T_class_t cls = H5Tget_class(type);
    const size_t size = H5Tget_size(type);
    const H5T_order_t order = H5Tget_order(type);
    if (cls == H5T_NO_CLASS || size == 0) return -1;
    if (size > 1 && order != H5T_ORDER_LE && order != H5T_ORDER_BE) {
        *why = "the mans filter needs a little- or big-endian element type";
        return 0;
    }
    c->element_size = (uint32_t)size;
    if (size > 1 && order == H5T_ORDER_BE) c->flags |= MANS_H5_FLAG_BYTESWAP;
    c->mode = mode;
    if (cls == H5T_INTEGER) {
        const int is_signed = H5Tget_sign(type) == H5T_SGN_2;
        c->codec = MANS_H5_CODEC_MANS;
        switch (size) {
            case 1: c->dtype = MANS_DTYPE_U8; break; /* bytes are bytes: i8 too */
            case 2: c->dtype = is_signed ? MANS_DTYPE_I16 : MANS_DTYPE_U16; break;
            case 4: c->dtype = is_signed ? MANS_DTYPE_I32 : MANS_DTYPE_U32; break;
            case 8: c->dtype = is_signed ? MANS_DTYPE_I64 : MANS_DTYPE_U64; break;
            default: *why = "the mans filter takes integers of 1, 2, 4 or 8 bytes"; return 0;
        }
    } else if (cls == H5T_FLOAT) {
        /* Exactly IEEE-754 binary32/64 (field positions alone would let a
         * type with another exponent bias or normalisation through). */
        const int ieee32 = H5Tequal(type, H5T_IEEE_F32LE) > 0 || H5Tequal(type, H5T_IEEE_F32BE) > 0;
        const int ieee64 = H5Tequal(type, H5T_IEEE_F64LE) > 0 || H5Tequal(type, H5T_IEEE_F64BE) > 0;
        if (!ieee32 && !ieee64) {
            *why = "the mans filter takes IEEE-754 float and double";
            return 0;
        }
        if (mode == MANS_H5_LOSSLESS) { /* bit patterns through MANS */
            c->codec = MANS_H5_CODEC_MANS;
            c->dtype = ieee32 ? MANS_DTYPE_U32 : MANS_DTYPE_U64;
        } else {
            c->codec = MANS_H5_CODEC_PRISM;
            c->dtype = ieee32 ? MANS_PRISM_F32 : MANS_PRISM_F64;
        }
    } else {
        *why = "the mans filter takes integer, float and double datasets only";
        return 0;
    }

    hsize_t chunk[H5S_MAX_RANK];
    const int rank = H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk);
    if (rank <= 0) {
        *why = "the mans filter needs a chunked dataset";
        return rank < 0 ? -1 : 0;
    }
    /* Unit dimensions carry no neighbours; beyond four, the slowest ones
     * merge (PRISM interpolates in up to 4D). */
    uint64_t dims[H5S_MAX_RANK];
    int kept = 0;
    for (int i = 0; i < rank; ++i)
        if (chunk[i] > 1) dims[kept++] = chunk[i];
    if (kept == 0) dims[kept++] = 1;
    while (kept > 4) {
        dims[1] *= dims[0];
        memmove(dims, dims + 1, (size_t)(kept - 1) * sizeof dims[0]);
        --kept;
    }
    c->rank = (uint32_t)kept;
    for (int i = 0; i < kept; ++i) c->dims[i] = dims[i];
    if (mans_h5_chunk_bytes(c) == 0) {
        *why = "chunk larger than 4 GiB";
        return 0;
    }
    return 1;
}

/* The filter must come first in the pipeline: a filter before it changes
 * the bytes (shuffle, nbit, scale-offset: PRISM would code them as values)
 * or the size (deflate, fletcher32) of what it is handed. It must also be
 * there only once. 0 if so, else why is set. */
static int check_pipeline(hid_t dcpl, const char** why) {
    const int n = H5Pget_nfilters(dcpl);
    if (n < 0) return -1;
    int seen = 0;
    for (int i = 0; i < n; ++i) {
        unsigned int flags = 0, cd[1];
        size_t ncd = 0;
        char name[8];
        const H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, NULL);
        if (id < 0) return -1;
        if (id != MANS_H5_FILTER_ID) continue;
        if (i != 0) {
            *why = "the mans filter must be the first filter of the pipeline (before shuffle, deflate, fletcher32, ...)";
            return 1;
        }
        if (++seen > 1) {
            *why = "the mans filter is in the pipeline twice";
            return 1;
        }
    }
    return 0;
}

/* Mode and bound of the filter as set on dcpl (user or persisted form). */
static int read_user_values(hid_t dcpl, const char* func, unsigned int* filter_flags, uint32_t* mode,
                            double* bound) {
    unsigned int cd[64];
    size_t n = sizeof cd / sizeof cd[0]; /* in: room; out: how many the filter has */
    if (H5Pget_filter_by_id2(dcpl, MANS_H5_FILTER_ID, filter_flags, &n, cd, 0, NULL, NULL) < 0) {
        push_error(func, "the mans filter is not in this dataset's pipeline");
        return -1;
    }
    if (n > sizeof cd / sizeof cd[0]) {
        push_error(func, "too many cd_values (%zu) for the mans filter", n);
        return -1;
    }
    const char* why = NULL;
    if (mans_h5_parse_user_values(n, cd, mode, bound, &why) != 0) {
        push_error(func, "%s", why);
        return -1;
    }
    return 0;
}

/* Whether the filter can take this dataset: 1 yes, 0 no (why set), -1 an
 * HDF5 call failed. Fills c for set_local. */
static int usable_for(hid_t dcpl, hid_t type, const char* func, unsigned int* filter_flags, mans_h5_config* c,
                      const char** why) {
    uint32_t mode = 0;
    double bound = 0;
    if (read_user_values(dcpl, func, filter_flags, &mode, &bound) < 0) return -1;
    const int pipeline = check_pipeline(dcpl, why);
    if (pipeline != 0) return pipeline < 0 ? -1 : 0;
    const int usable = describe_dataset(dcpl, type, mode, c, why);
    c->bound = bound;
    return usable;
}

static htri_t can_apply(hid_t dcpl, hid_t type, hid_t space) {
    (void)space;
    if (dcpl < 0 || type < 0) return 0; /* group heaps and the like */
    unsigned int filter_flags = 0;
    mans_h5_config c;
    const char* why = NULL;
    const int usable = usable_for(dcpl, type, "can_apply", &filter_flags, &c, &why);
    /* An optional filter that cannot apply is skipped by HDF5: no error. */
    if (usable == 0 && !(filter_flags & H5Z_FLAG_OPTIONAL)) push_error("can_apply", "%s", why);
    return usable > 0 ? 1 : usable;
}

static herr_t set_local(hid_t dcpl, hid_t type, hid_t space) {
    (void)space;
    unsigned int filter_flags = 0;
    mans_h5_config c;
    const char* why = NULL;
    const int usable = usable_for(dcpl, type, "set_local", &filter_flags, &c, &why);
    if (usable < 0) return -1;
    if (usable == 0) {
        /* HDF5 calls set_local for an optional filter that can_apply refused;
         * it stays unconfigured and every chunk is then stored without it. */
        if (filter_flags & H5Z_FLAG_OPTIONAL) return 0;
        push_error("set_local", "%s", why);
        return -1;
    }
    if (c.codec == MANS_H5_CODEC_PRISM) {
        H5D_fill_value_t fill_status;
        if (H5Pfill_value_defined(dcpl, &fill_status) < 0) return -1;
        if (fill_status == H5D_FILL_VALUE_USER_DEFINED) {
            if (H5Pget_fill_value(dcpl, H5T_NATIVE_DOUBLE, &c.fill) < 0) return -1;
            /* NaN and Inf are kept exactly anyway; PRISM takes finite fills. */
            if (isfinite(c.fill)) c.flags |= MANS_H5_FLAG_FILL;
            else c.fill = 0;
        }
    }
    unsigned int cd[MANS_H5_CD_NVALUES];
    mans_h5_encode_config(&c, cd);
    if (H5Pmodify_filter(dcpl, MANS_H5_FILTER_ID, filter_flags, MANS_H5_CD_NVALUES, cd) < 0) {
        push_error("set_local", "could not store the mans filter's cd_values");
        return -1;
    }
    return 0;
}

/* ---- progressive read target -------------------------------------------- */

static pthread_mutex_t target_lock = PTHREAD_MUTEX_INITIALIZER;
static int target_set_by_api = 0;
static mans_h5_read_target api_target = {MANS_PRISM_TARGET_FULL, 0};

static int current_read_target(mans_h5_read_target* t) {
    pthread_mutex_lock(&target_lock);
    const int by_api = target_set_by_api;
    *t = api_target;
    pthread_mutex_unlock(&target_lock);
    if (by_api) return 0;
    const char* env = getenv("MANS_H5_READ_TARGET");
    if (mans_h5_parse_read_target(env, t) != 0) {
        push_error("filter", "MANS_H5_READ_TARGET=\"%s\" is not full, abs:E, rel:E, psnr:DB or bytes:N", env);
        return -1;
    }
    return 0;
}

herr_t mans_h5_set_read_target(const char* text) {
    mans_h5_read_target t;
    if (mans_h5_parse_read_target(text, &t) != 0) {
        push_error("mans_h5_set_read_target", "\"%s\" is not full, abs:E, rel:E, psnr:DB or bytes:N",
                   text ? text : "");
        return -1;
    }
    pthread_mutex_lock(&target_lock);
    api_target = t;
    target_set_by_api = 1;
    pthread_mutex_unlock(&target_lock);
    return 0;
}

/* ---- the filter --------------------------------------------------------- */

static size_t filter(unsigned int flags, size_t cd_nelmts, const unsigned int cd_values[], size_t nbytes,
                     size_t* buf_size, void** buf) {
    mans_h5_config c;
    const char* why = NULL;
    if (mans_h5_decode_config(cd_nelmts, cd_values, &c, &why) != 0) {
        push_error("filter", "%s", why);
        return 0;
    }
    char msg[256] = "";
    void* out = NULL;
    size_t out_size = 0;
    mans_status s;
    mans_h5_read_target target;
    if (current_read_target(&target) < 0) return 0;
    if (flags & H5Z_FLAG_REVERSE) {
        if (mans_h5_is_raw_chunk(&c, nbytes)) return nbytes; /* stored raw: nothing to do */
        s = mans_h5_decode_chunk(&c, &target, *buf, nbytes, &out, &out_size, msg, sizeof msg);
    } else {
        /* With a coarse read target, a chunk HDF5 reads back to update it
         * would be re-encoded from the coarse values: refuse to write. */
        if (target.kind != MANS_PRISM_TARGET_FULL) {
            push_error("filter", "encode: a coarse read target is set (MANS_H5_READ_TARGET or "
                                 "mans_h5_set_read_target); refusing to write data decoded from it");
            return 0;
        }
        s = mans_h5_encode_chunk(&c, *buf, nbytes, &out, &out_size, msg, sizeof msg);
        if (s == MANS_OK && mans_h5_is_raw_chunk(&c, out_size)) { /* stored raw: the buffer already holds it */
            free(out);
            return nbytes;
        }
    }
    if (s != MANS_OK) {
        push_error("filter", "%s %s", flags & H5Z_FLAG_REVERSE ? "decode:" : "encode:", msg);
        return 0;
    }
    /* HDF5 frees filter buffers itself: hand it memory from its allocator. */
    void* h5buf = H5allocate_memory(out_size ? out_size : 1, 0);
    if (!h5buf) {
        free(out);
        push_error("filter", "out of memory for a %zu-byte chunk", out_size);
        return 0;
    }
    memcpy(h5buf, out, out_size);
    free(out);
    H5free_memory(*buf);
    *buf = h5buf;
    *buf_size = out_size;
    return out_size;
}

const H5Z_class2_t mans_h5_filter_class[1] = {{
    H5Z_CLASS_T_VERS,
    (H5Z_filter_t)MANS_H5_FILTER_ID,
    1, /* encoder present */
    1, /* decoder present */
    "mans " MANS_VERSION_STRING " (MANS lossless integers, PRISM error-bounded floats)",
    can_apply,
    set_local,
    filter,
}};

/* ---- link-in API -------------------------------------------------------- */

herr_t mans_h5_register(void) {
    /* Always our own class: H5Zfilter_avail would load a plugin of the same
     * ID from HDF5_PLUGIN_PATH instead (whose read target this process's
     * mans_h5_set_read_target cannot reach). Registering again replaces. */
    if (H5Zregister(mans_h5_filter_class) < 0) {
        push_error("mans_h5_register", "H5Zregister failed for filter %d", MANS_H5_FILTER_ID);
        return -1;
    }
    return 0;
}

static herr_t set_filter(hid_t dcpl, mans_h5_mode mode, double bound) {
    if (mans_h5_register() < 0) return -1;
    unsigned int cd[MANS_H5_USER_NVALUES];
    const unsigned int n = mans_h5_user_cd_values(mode, bound, cd);
    uint32_t parsed_mode;
    double parsed_bound;
    const char* why = NULL;
    if (mans_h5_parse_user_values(n, cd, &parsed_mode, &parsed_bound, &why) != 0) {
        push_error("mans_h5_set_error_bound", "%s", why);
        return -1;
    }
    /* A second call changes the settings rather than adding the filter twice. */
    unsigned int old_flags = 0, old_cd[1];
    size_t old_n = 0;
    herr_t present = -1;
    H5E_BEGIN_TRY { /* absent is the usual case, not an error to report */
        present = H5Pget_filter_by_id2(dcpl, MANS_H5_FILTER_ID, &old_flags, &old_n, old_cd, 0, NULL, NULL);
    } H5E_END_TRY;
    if (present >= 0) {
        if (H5Pmodify_filter(dcpl, MANS_H5_FILTER_ID, H5Z_FLAG_MANDATORY, n, cd) >= 0) return 0;
        push_error("mans_h5_set_error_bound", "H5Pmodify_filter failed");
        return -1;
    }
    if (H5Pset_filter(dcpl, MANS_H5_FILTER_ID, H5Z_FLAG_MANDATORY, n, cd) < 0) {
        push_error("mans_h5_set_error_bound", "H5Pset_filter failed (is dcpl a dataset creation list?)");
        return -1;
    }
    return 0;
}

herr_t mans_h5_set_lossless(hid_t dcpl) { return set_filter(dcpl, MANS_H5_LOSSLESS, 0); }

herr_t mans_h5_set_error_bound(hid_t dcpl, mans_h5_mode mode, double bound) {
    if (mode != MANS_H5_ABS && mode != MANS_H5_REL) {
        push_error("mans_h5_set_error_bound", "mode must be MANS_H5_ABS or MANS_H5_REL");
        return -1;
    }
    return set_filter(dcpl, mode, bound);
}
