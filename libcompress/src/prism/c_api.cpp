// c_api.cpp - the C API of PRISM (mans/prism.h) over the C++ one.
#include <cstdlib>
#include <cstring>
#include <new>

#include "mans/prism.h"
#include "mans/prism.hpp"
#include "prism/c_params.hpp"

namespace {

mans_status status(mans::Errc e) { return static_cast<mans_status>(e); }

}  // namespace

namespace mans::detail::prism {

bool to_target(mans_prism_target kind, double value, mans::prism::Target* t) {
    using mans::prism::Target;
    switch (kind) {
        case MANS_PRISM_TARGET_ABS: *t = Target::abs(value); return true;
        case MANS_PRISM_TARGET_REL: *t = Target::rel(value); return true;
        case MANS_PRISM_TARGET_PSNR: *t = Target::psnr(value); return true;
        case MANS_PRISM_TARGET_BYTES:
            if (!(value >= 0)) return false;
            *t = Target{Target::Kind::bytes, value};
            return true;
        case MANS_PRISM_TARGET_FULL: *t = Target::full(); return true;
    }
    return false;
}

}  // namespace mans::detail::prism

namespace {

using mans::detail::prism::to_target;

mans_status open_with(std::unique_ptr<mans::prism::Source> src, mans_prism_reader** out) {
    if (!out) return MANS_ERR_INVALID_ARGUMENT;
    *out = nullptr;
    auto* r = new (std::nothrow) mans_prism_reader;
    if (!r) return MANS_ERR_OUT_OF_MEMORY;
    const mans::Errc e = mans::prism::Reader::open(std::move(src), &r->reader);
    if (e != mans::Errc::ok) {
        delete r;
        return status(e);
    }
    *out = r;
    return MANS_OK;
}

}  // namespace

namespace mans::detail::prism {

mans::prism::CompressConfig config_from_params(const mans_prism_params& p) {
    mans::prism::CompressConfig cfg;
    cfg.type = static_cast<mans::prism::FloatType>(c_enum_byte(c_enum_value(p.type)));
    cfg.rank = p.rank;
    for (int a = 0; a < 4; ++a) cfg.dims[a] = p.dims[a];
    cfg.mode = static_cast<mans::prism::ErrorMode>(c_enum_byte(c_enum_value(p.mode)));
    cfg.error_bound = p.error_bound;
    cfg.planes = static_cast<mans::prism::PlaneCoding>(c_enum_byte(c_enum_value(p.planes)));
    cfg.threads = p.threads;
    cfg.fill_values.assign(p.fill_values, p.fill_values + p.fill_count);
    cfg.detect_fill = p.detect_fill != 0;
    cfg.level_alpha = p.level_alpha;
    cfg.level_beta = p.level_beta;
    cfg.backend = static_cast<mans::Backend>(c_enum_value(p.backend));
    return cfg;
}

mans_status hand_out_archive(const std::vector<std::uint8_t>& out, void** archive, size_t* archive_size) {
    void* buf = std::malloc(out.empty() ? 1 : out.size());
    if (!buf) return MANS_ERR_OUT_OF_MEMORY;
    if (!out.empty()) std::memcpy(buf, out.data(), out.size());
    *archive = buf;
    *archive_size = out.size();
    return MANS_OK;
}

}  // namespace mans::detail::prism

extern "C" {

void mans_prism_params_init(mans_prism_params* p) {
    if (!p) return;
    std::memset(p, 0, sizeof(*p));
    p->type = MANS_PRISM_F32;
    p->rank = 1;
    p->mode = MANS_PRISM_ABS;
    p->planes = MANS_PRISM_NEGABINARY;
    p->detect_fill = 1;
    p->level_alpha = 1.0;
    p->level_beta = 4.0;
}


mans_status mans_prism_compress(const void* src, size_t src_size, const mans_prism_params* p, void** archive,
                                size_t* archive_size) {
    if (!p || !archive || !archive_size || (p->fill_count && !p->fill_values) ||
        !mans::detail::prism::valid_backend(mans::detail::prism::c_enum_value(p->backend)))
        return MANS_ERR_INVALID_ARGUMENT;
    *archive = nullptr;
    *archive_size = 0;
    try {
        const mans::prism::CompressConfig cfg = mans::detail::prism::config_from_params(*p);
        std::vector<std::uint8_t> out;
        const mans::Errc e = mans::prism::compress(src, src_size, cfg, &out);
        if (e != mans::Errc::ok) return status(e);
        return mans::detail::prism::hand_out_archive(out, archive, archive_size);
    } catch (const std::bad_alloc&) {
        return MANS_ERR_OUT_OF_MEMORY;
    } catch (...) {
        return MANS_ERR_INTERNAL;
    }
}

void mans_prism_free(void* buffer) { std::free(buffer); }

mans_status mans_prism_open_memory(const void* archive, size_t size, mans_prism_reader** out) {
    if (!archive && size) return MANS_ERR_INVALID_ARGUMENT;
    try {
        return open_with(mans::prism::memory_source(archive, size), out);
    } catch (...) {
        return MANS_ERR_OUT_OF_MEMORY;
    }
}

mans_status mans_prism_open_file(const char* path, mans_prism_reader** out) {
    if (!path || !out) return MANS_ERR_INVALID_ARGUMENT;
    try {
        mans::Errc e = mans::Errc::ok;
        auto src = mans::prism::file_source(path, &e);
        if (!src) return status(e);
        return open_with(std::move(src), out);
    } catch (...) {
        return MANS_ERR_OUT_OF_MEMORY;
    }
}

mans_status mans_prism_open_callback(uint64_t size, int (*read_at)(void*, uint64_t, void*, size_t), void* user,
                                     mans_prism_reader** out) {
    if (!read_at) return MANS_ERR_INVALID_ARGUMENT;
    try {
        return open_with(mans::prism::callback_source(
                             size, [read_at, user](std::uint64_t off, void* dst, std::size_t n) {
                                 return read_at(user, off, dst, n) != 0;
                             }),
                         out);
    } catch (...) {
        return MANS_ERR_OUT_OF_MEMORY;
    }
}

void mans_prism_close(mans_prism_reader* r) { delete r; }

mans_status mans_prism_get_info(const mans_prism_reader* r, mans_prism_info* out) {
    if (!r || !out) return MANS_ERR_INVALID_ARGUMENT;
    const mans::prism::ArchiveInfo& i = r->reader.info();
    std::memset(out, 0, sizeof(*out));
    out->type = static_cast<mans_prism_type>(i.type);
    out->rank = i.rank;
    for (int a = 0; a < 4; ++a) out->dims[a] = i.dims[a];
    out->count = i.count;
    out->mode = static_cast<mans_prism_mode>(i.mode);
    out->requested_bound = i.requested_bound;
    out->abs_bound = i.abs_bound;
    out->value_min = i.value_min;
    out->value_max = i.value_max;
    out->levels = i.levels;
    out->archive_bytes = i.archive_bytes;
    out->header_bytes = i.header_bytes;
    out->base_bytes = i.base_bytes;
    out->masked_count = i.masked_count;
    out->outlier_count = i.outlier_count;
    out->full_max_error = i.full_max_error;
    return MANS_OK;
}

uint64_t mans_prism_bytes_read(const mans_prism_reader* r) { return r ? r->reader.bytes_read() : 0; }

mans_status mans_prism_retrieve(mans_prism_reader* r, mans_prism_target kind, double value, int threads,
                                mans_prism_result** out) {
    if (!r || !out) return MANS_ERR_INVALID_ARGUMENT;
    *out = nullptr;
    mans::prism::Target t;
    if (!to_target(kind, value, &t)) return MANS_ERR_INVALID_ARGUMENT;
    auto* x = new (std::nothrow) mans_prism_result;
    if (!x) return MANS_ERR_OUT_OF_MEMORY;
    const mans::Errc e = r->reader.retrieve(t, &x->retrieval, threads);
    if (e != mans::Errc::ok) {
        delete x;
        return status(e);
    }
    *out = x;
    return MANS_OK;
}

mans_status mans_prism_set_backend(mans_prism_reader* r, mans_backend backend) {
    if (!r || !mans::detail::prism::valid_backend(backend)) return MANS_ERR_INVALID_ARGUMENT;
    return status(r->reader.set_backend(static_cast<mans::Backend>(backend)));
}

mans_status mans_prism_refine(mans_prism_reader* r, mans_prism_result* x, mans_prism_target kind, double value,
                              int threads) {
    if (!r || !x) return MANS_ERR_INVALID_ARGUMENT;
    mans::prism::Target t;
    if (!to_target(kind, value, &t)) return MANS_ERR_INVALID_ARGUMENT;
    return status(r->reader.refine(&x->retrieval, t, threads));
}

const void* mans_prism_result_data(const mans_prism_result* x) { return x ? x->retrieval.data() : nullptr; }
size_t mans_prism_result_size(const mans_prism_result* x) { return x ? x->retrieval.bytes() : 0; }

mans_status mans_prism_result_stats(const mans_prism_result* x, mans_prism_stats* out) {
    if (!x || !out) return MANS_ERR_INVALID_ARGUMENT;
    const mans::prism::RetrievalStats& s = x->retrieval.stats();
    out->bytes_read = s.bytes_read;
    out->bytes_read_step = s.bytes_read_step;
    out->max_abs_error_bound = s.max_abs_error_bound;
    out->psnr_estimate = s.psnr_estimate;
    out->complete = s.complete ? 1 : 0;
    out->backend = s.backend;
    return MANS_OK;
}

void mans_prism_result_free(mans_prism_result* x) { delete x; }

}  // extern "C"
