// device_job.hpp - a PRISM compression and a PRISM reconstruction across
// the module ABI (mans_backend_prism_job, mans_backend_prism_read_job,
// backend_module.hpp), both sides of each:
//
//   core   job_for(cfg, ...)        the job from a checked CompressConfig
//          finish_job_archive(...)  the module's archive without base +
//                                   the base's data -> the archive
//          retrieve_on_module(...)  a Reader's planes -> its values
//   module config_of(job)           the CompressConfig back
//          run_prism_job(ex, job, x) device_compress_parts over an
//                                   executor, then job.finish
//          run_prism_read_job(ex, job)
//                                   device_reconstruct over an executor
//
// The split is where the module's code ends: the base's lossless stage is
// the core's MANS coder, which a module does not link (it links only
// encode_plan.cpp, archive.cpp and frame.cpp of the core's sources).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend_module.hpp"
#include "prism/archive.hpp"
#include "prism/base.hpp"
#include "prism/device_decoder.hpp"  // run_prism_read_job (templates: the core instantiates none)
#include "prism/device_encoder.hpp"  // run_prism_job
#include "prism/encode_plan.hpp"

namespace mans::detail::prism {

inline mans_backend_prism_job job_for(const mans::prism::CompressConfig& cfg, const void* data, std::uint64_t bytes) {
    mans_backend_prism_job j{};
    j.struct_size = sizeof j;
    j.float_type = static_cast<int>(cfg.type);
    j.rank = cfg.rank;
    for (unsigned a = 0; a < 4; ++a) j.dims[a] = cfg.dims[a];
    j.error_mode = static_cast<int>(cfg.mode);
    j.error_bound = cfg.error_bound;
    j.plane_coding = static_cast<int>(cfg.planes);
    j.fill_values = cfg.fill_values.data();
    j.fill_count = cfg.fill_values.size();
    j.detect_fill = cfg.detect_fill ? 1 : 0;
    j.level_alpha = cfg.level_alpha;
    j.level_beta = cfg.level_beta;
    j.data = data;
    j.bytes = bytes;
    return j;
}

inline mans::prism::CompressConfig config_of(const mans_backend_prism_job& j) {
    mans::prism::CompressConfig cfg;
    cfg.type = static_cast<mans::prism::FloatType>(j.float_type);
    cfg.rank = j.rank;
    for (unsigned a = 0; a < 4; ++a) cfg.dims[a] = j.dims[a];
    cfg.mode = static_cast<mans::prism::ErrorMode>(j.error_mode);
    cfg.error_bound = j.error_bound;
    cfg.planes = static_cast<mans::prism::PlaneCoding>(j.plane_coding);
    cfg.fill_values.assign(j.fill_values, j.fill_values + j.fill_count);
    cfg.detect_fill = j.detect_fill != 0;
    cfg.level_alpha = j.level_alpha;
    cfg.level_beta = j.level_beta;
    cfg.threads = 1;
    cfg.backend = mans::Backend::cpu;  // what the module runs is its own
    return cfg;
}

// The C view of a base (pointers into b; kind_ptrs and kind_bytes hold the
// per-level arrays).
inline mans_backend_prism_base base_view(const BaseData& b, std::vector<const std::uint8_t*>* kind_ptrs,
                                         std::vector<std::uint64_t>* kind_bytes) {
    kind_ptrs->clear();
    kind_bytes->clear();
    for (const auto& k : b.kind_bits) {
        kind_ptrs->push_back(k.data());
        kind_bytes->push_back(k.size());
    }
    mans_backend_prism_base v{};
    v.levels = static_cast<std::uint32_t>(b.kind_bits.size());
    v.kind_bits = kind_ptrs->data();
    v.kind_bytes = kind_bytes->data();
    v.mask_bits = b.mask_bits.data();
    v.mask_bytes = b.mask_bits.size();
    v.masked_values = b.masked_values.data();
    v.masked_bytes = b.masked_values.size();
    v.outlier_index = b.outlier_index.data();
    v.outliers = b.outlier_index.size();
    v.outlier_values = b.outlier_values.data();
    v.outlier_bytes = b.outlier_values.size();
    v.anchor = b.anchor_value.data();
    v.anchor_bytes = b.anchor_value.size();
    return v;
}

template <typename U>
std::vector<U> copy_of(const U* p, std::uint64_t n) {
    return n ? std::vector<U>(p, p + n) : std::vector<U>();
}

inline BaseData base_of(const mans_backend_prism_base& v) {
    BaseData b;
    for (std::uint32_t l = 0; l < v.levels; ++l) b.kind_bits.push_back(copy_of(v.kind_bits[l], v.kind_bytes[l]));
    b.mask_bits = copy_of(v.mask_bits, v.mask_bytes);
    b.masked_values = copy_of(v.masked_values, v.masked_bytes);
    b.outlier_index = copy_of(v.outlier_index, v.outliers);
    b.outlier_values = copy_of(v.outlier_values, v.outlier_bytes);
    b.anchor_value = copy_of(v.anchor, v.anchor_bytes);
    return b;
}

// The archive from a module's archive without base (p, n) and the base's
// data for the field of cfg: header re-read (the reader's checks) and
// compared with cfg, base encoded, checked against the header
// (decode_base) and spliced in. internal when the module's parts do not
// add up.
Errc finish_job_archive(const std::uint8_t* p, std::uint64_t n, const mans_backend_prism_base& base,
                        const mans::prism::CompressConfig& cfg, std::vector<std::uint8_t>* archive);

// Checks a field's size and configuration as mans::prism::compress does
// (encoder.cpp): ok, or the error compress returns.
Errc validate_config(std::size_t bytes, const mans::prism::CompressConfig& cfg);

// The core's side of a module's prism_compress (module_compress.cpp):
// the archive of a checked field and config, byte-identical to the CPU's
// when the module is right; backend_unavailable when it failed at run
// time, out_of_memory, or internal when its parts do not add up.
// data_on_device: data is device memory of m's device (the device-memory
// API), else host memory.
Errc compress_on_module(const mans_backend_module& m, const void* data, std::size_t bytes,
                        const mans::prism::CompressConfig& cfg, std::vector<std::uint8_t>* archive,
                        bool data_on_device = false);

// The module's side: the field x (ex's memory) compressed as job j says,
// the parts handed to j.finish. Returns a mans_status. Besides
// device_encoder.hpp's Exec, ex has finish(): waits for the launches and
// returns the first run-time error (ok on the host).
template <typename T, typename Exec>
int run_prism_job(Exec& ex, const mans_backend_prism_job& j, const T* x) {
    const mans::prism::CompressConfig cfg = config_of(j);
    Header h;
    BaseData base;
    std::vector<std::vector<std::uint8_t>> levels;
    Errc e = device_compress_parts(ex, x, cfg, &h, &base, &levels);
    // A run-time error on the device leaves the parts unfinished: the
    // executor's first error, after waiting for every launch.
    const Errc ran = ex.finish();
    if (e == Errc::ok || ran != Errc::ok) e = ran;
    std::vector<std::uint8_t> without_base;
    if (e == Errc::ok) e = write_archive(&h, {}, &levels, &without_base);
    if (e != Errc::ok) return static_cast<int>(e);
    std::vector<const std::uint8_t*> kind_ptrs;
    std::vector<std::uint64_t> kind_bytes;
    const mans_backend_prism_base v = base_view(base, &kind_ptrs, &kind_bytes);
    return j.finish(j.ctx, without_base.data(), without_base.size(), &v);
}

// ---------------------------------------------------------------- reading

// The core's side of a module's prism_decompress (module_compress.cpp):
// the values of a retrieval from the archive's stored header, its decoded
// base and planes[l][b] (the stored bytes of plane b of level l, for the
// planes read, checksums verified) into out (grid count values of h.type).
// corrupt_block for planes the CPU refuses; backend_unavailable,
// out_of_memory as the module reports them; internal for anything else.
Errc retrieve_on_module(const mans_backend_module& m, const std::vector<std::uint8_t>& header_bytes, const Header& h,
                        const BaseData& base, const std::vector<std::vector<const std::uint8_t*>>& planes, void* out,
                        bool out_on_device = false);

// The device-memory API's retrieval (reader.cpp): r.retrieve (fresh) or
// r.refine(x) for `target`, with the values reconstructed on module m into
// d_out, memory of m's device of count x element size bytes. *x keeps the
// planes read and the stats, no values. No fallback to the CPU.
Errc retrieve_to_device(mans::prism::Reader& r, const mans_backend_module& m, const mans::prism::Target& target,
                        mans::prism::Retrieval* x, bool fresh, void* d_out);

// The values of `archive` for `target` as a Reader retrieves them, with
// the reconstruction on module m, or on the CPU when m is null (reader.cpp;
// for the self-test, which must not go through the module's selection).
Errc retrieve_with(const mans_backend_module* m, const std::uint8_t* archive, std::size_t bytes,
                   const mans::prism::Target& target, std::vector<std::uint8_t>* values);

// The module's side: the job's values reconstructed on ex (device memory
// for the planes and the values, copied from and to the job's host
// memory). Returns a mans_status; invalid_argument for a job whose parts do
// not fit its header.
template <typename T, typename Exec>
int run_prism_read_job(Exec& ex, const mans_backend_prism_read_job& j) {
    Header h;
    if (!j.header || parse_header(j.header, static_cast<std::size_t>(j.header_bytes), j.archive_bytes, &h) != Errc::ok)
        return static_cast<int>(Errc::invalid_argument);
    if (h.esize() != sizeof(T) || j.levels != h.levels || j.base.levels != h.levels ||
        (h.levels && (!j.kept || !j.level_planes || !j.level_bytes)) || (!j.out && j.out_bytes) ||
        j.out_bytes != h.grid.count * sizeof(T))
        return static_cast<int>(Errc::invalid_argument);
    std::vector<std::uint32_t> kept(h.levels);
    for (unsigned l = 0; l < h.levels; ++l) kept[l] = j.kept[l];
    std::vector<const std::uint8_t*> levels(h.levels, nullptr);
    for (unsigned l = 0; l < h.levels; ++l) {
        if (kept[l] > h.level[l].planes || j.level_bytes[l] != h.plane_range_bytes(l, 0, kept[l]))
            return static_cast<int>(Errc::invalid_argument);
        if (!kept[l]) continue;
        std::uint8_t* d = ex.template alloc<std::uint8_t>(j.level_bytes[l]);
        ex.to_device(d, j.level_planes[l], static_cast<std::size_t>(j.level_bytes[l]));
        levels[l] = d;
    }
    const BaseData base = base_of(j.base);
    // The device-memory API's values are written where the caller wants them.
    T* out = j.out_on_device ? static_cast<T*>(j.out) : ex.template alloc<T>(h.grid.count);
    Errc e = device_reconstruct<T>(ex, h, base, levels, kept, out);
    const Errc ran = ex.finish();
    if (e == Errc::ok || ran != Errc::ok) e = ran;
    if (e == Errc::ok && !j.out_on_device) ex.to_host(j.out, out, static_cast<std::size_t>(j.out_bytes));
    if (e == Errc::ok) e = ex.finish();
    return static_cast<int>(e);
}

}  // namespace mans::detail::prism
