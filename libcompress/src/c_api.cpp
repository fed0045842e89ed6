// c_api.cpp - the C API over the C++ API. No exception crosses this file.
#include <new>

#include "mans/mans.h"
#include "mans/mans.hpp"

struct mans_cctx {
    mans::CompressContext ctx;
    mans::CompressConfig cfg;
    bool dtype_set = false;
};

struct mans_dctx {
    mans::DecompressContext ctx;
    mans::DecompressConfig cfg;
};

namespace {
mans_status to_status(mans::Errc e) { return static_cast<mans_status>(e); }

// Settings shared by both context kinds.
template <typename Cfg>
mans_status set_common(Cfg& cfg, mans_param param, int64_t value, mans::Operation op) {
    switch (param) {
        case MANS_PARAM_THREADS:
            if (value < 0 || value > mans::kMaxThreads) return MANS_ERR_INVALID_ARGUMENT;
            cfg.threads = static_cast<int>(value);
            return MANS_OK;
        case MANS_PARAM_BACKEND:
            if (value < MANS_BACKEND_AUTO || value > MANS_BACKEND_HIP) return MANS_ERR_INVALID_ARGUMENT;
            // Report an absent backend now rather than at the next call.
            if (mans::Errc e = mans::backend_status(static_cast<mans::Backend>(value), op); e != mans::Errc::ok)
                return to_status(e);
            cfg.backend = static_cast<mans::Backend>(value);
            return MANS_OK;
        case MANS_PARAM_FORCE_SCALAR:
            cfg.force_scalar = value != 0;
            return MANS_OK;
        default:
            return MANS_ERR_INVALID_ARGUMENT;
    }
}
}  // namespace

extern "C" {

const char* mans_version_string(void) { return MANS_VERSION_STRING; }
uint32_t mans_format_version(void) { return MANS_FORMAT_VERSION; }
size_t mans_compress_bound(size_t src_size) { return mans::compress_bound(src_size); }

const char* mans_backend_description(mans_backend backend, int force_scalar) {
    return mans::backend_description(static_cast<mans::Backend>(backend), force_scalar != 0);
}

const char* mans_backend_report(mans_backend backend, mans_operation operation, int force_scalar) {
    // Range checks before the casts to the 8-bit C++ enums.
    if (backend < MANS_BACKEND_AUTO || backend > MANS_BACKEND_HIP) return "unknown backend";
    if (operation < MANS_OP_COMPRESS || operation > MANS_OP_PRISM_DECOMPRESS) return "invalid operation";
    return mans::backend_report(static_cast<mans::Backend>(backend), static_cast<mans::Operation>(operation),
                                force_scalar != 0);
}

mans_cctx* mans_cctx_create(void) {
    try {
        return new mans_cctx();
    } catch (...) {
        return nullptr;
    }
}
void mans_cctx_free(mans_cctx* cctx) { delete cctx; }

mans_status mans_cctx_set_param(mans_cctx* cctx, mans_param param, int64_t value) {
    if (!cctx) return MANS_ERR_INVALID_ARGUMENT;
    switch (param) {
        case MANS_PARAM_DTYPE:
            if (value < 0 || value > 255 || mans::dtype_size(static_cast<mans::DType>(value)) == 0)
                return MANS_ERR_UNSUPPORTED_DTYPE;
            cctx->cfg.dtype = static_cast<mans::DType>(value);
            cctx->dtype_set = true;
            return MANS_OK;
        case MANS_PARAM_BLOCK_BYTES:
            if (value != 0 && (value < static_cast<int64_t>(mans::kMinBlockBytes) ||
                               value > static_cast<int64_t>(mans::kMaxBlockBytes)))
                return MANS_ERR_INVALID_ARGUMENT;
            cctx->cfg.block_bytes = static_cast<size_t>(value);
            return MANS_OK;
        default:
            return set_common(cctx->cfg, param, value, mans::Operation::compress);
    }
}

mans_status mans_cctx_set_dims(mans_cctx* cctx, uint32_t rank, const uint64_t* dims) {
    if (!cctx || rank > 4 || (rank && !dims)) return MANS_ERR_INVALID_ARGUMENT;
    cctx->cfg.rank = rank;
    for (uint32_t d = 0; d < 4; ++d) cctx->cfg.dims[d] = d < rank ? dims[d] : 0;
    return MANS_OK;
}

mans_status mans_compress(mans_cctx* cctx, void* dst, size_t dst_capacity, const void* src,
                          size_t src_size, size_t* dst_size) {
    if (!cctx || !dst_size) return MANS_ERR_INVALID_ARGUMENT;
    *dst_size = 0;
    if (!cctx->dtype_set) return MANS_ERR_UNSUPPORTED_DTYPE;
    const mans::Result r = cctx->ctx.compress(dst, dst_capacity, src, src_size, cctx->cfg);
    *dst_size = r ? r.size : 0;
    return to_status(r.code);
}

mans_dctx* mans_dctx_create(void) {
    try {
        return new mans_dctx();
    } catch (...) {
        return nullptr;
    }
}
void mans_dctx_free(mans_dctx* dctx) { delete dctx; }

mans_status mans_dctx_set_param(mans_dctx* dctx, mans_param param, int64_t value) {
    if (!dctx) return MANS_ERR_INVALID_ARGUMENT;
    return set_common(dctx->cfg, param, value, mans::Operation::decompress);
}

mans_status mans_decompress(mans_dctx* dctx, void* dst, size_t dst_capacity, const void* src,
                            size_t src_size, size_t* dst_size) {
    if (!dctx || !dst_size) return MANS_ERR_INVALID_ARGUMENT;
    const mans::Result r = dctx->ctx.decompress(dst, dst_capacity, src, src_size, dctx->cfg);
    *dst_size = r ? r.size : 0;
    return to_status(r.code);
}

mans_status mans_get_frame_info(const void* src, size_t src_size, mans_frame_info* info) {
    return to_status(mans::get_frame_info(src, src_size, info));
}

}  // extern "C"
