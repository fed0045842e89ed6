// module_compress.cpp - PRISM compression and reconstruction on a GPU
// module (the core's side of mans_backend_prism_job and
// mans_backend_prism_read_job, prism/device_job.hpp) and the self-tests
// that a module passes before it is trusted with either.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "device_module.hpp"
#include "prism/device_job.hpp"

namespace mans::detail::prism {

Errc finish_job_archive(const std::uint8_t* p, std::uint64_t n, const mans_backend_prism_base& base,
                        const mans::prism::CompressConfig& cfg, std::vector<std::uint8_t>* archive) {
    // The module's header is untrusted only as far as a miscompiled module
    // goes: it must pass the reader's parser and declare no base.
    std::uint64_t hlen = 0;
    MANS_RETURN_IF(!p || parse_preamble(p, static_cast<std::size_t>(n), &hlen) != Errc::ok, Errc::internal);
    MANS_RETURN_IF(hlen > n || n - hlen < kPreambleBytes + kChecksumBytes, Errc::internal);
    const std::uint64_t header = kPreambleBytes + hlen + kChecksumBytes;
    Header h;
    MANS_RETURN_IF(parse_header(p, static_cast<std::size_t>(header), n, &h) != Errc::ok || h.base_bytes != 0,
                   Errc::internal);
    // The field it describes is the one asked for, and the base's data
    // fits the header (decode_base's checks of sizes, counts, positions).
    MANS_RETURN_IF(h.type != cfg.type || h.grid.rank != cfg.rank || h.coding != static_cast<Coding>(cfg.planes),
                   Errc::internal);
    for (unsigned a = 0; a < cfg.rank; ++a) MANS_RETURN_IF(h.grid.n[a] != cfg.dims[a], Errc::internal);
    MANS_RETURN_IF(base.levels != h.levels, Errc::internal);
    const std::vector<std::uint8_t> encoded = encode_base(base_of(base), mans::prism::float_size(cfg.type));
    BaseData check;
    MANS_RETURN_IF(decode_base(encoded.data(), encoded.size(), h, &check) != Errc::ok, Errc::internal);
    std::vector<std::vector<std::uint8_t>> segments(1, std::vector<std::uint8_t>(p + header, p + n));
    return write_archive(&h, encoded, &segments, archive);
}

namespace {

struct FinishContext {
    const mans::prism::CompressConfig* cfg;
    std::vector<std::uint8_t>* archive;
    Errc result = Errc::internal;  // stays so when finish is never called
};

int finish_on_core(void* ctx, const std::uint8_t* p, std::uint64_t n, const mans_backend_prism_base* base) {
    auto* c = static_cast<FinishContext*>(ctx);
    c->result = base ? errc_guard([&] { return finish_job_archive(p, n, *base, *c->cfg, c->archive); })
                     : Errc::internal;
    return static_cast<int>(c->result);
}

// Fields that a module must compress exactly as the CPU: every kind of
// value the encoder treats apart (smooth values, NaN, +-Inf, fill values,
// spikes that become outliers), both float types and codings, ranks 1-4,
// tiny and uneven sizes. Deterministic.
struct SelfTestField {
    mans::prism::CompressConfig cfg;
    std::vector<std::uint8_t> raw;
};

template <typename T>
SelfTestField self_test_field(mans::prism::FloatType type, unsigned rank, const std::uint64_t* dims,
                              mans::prism::ErrorMode mode, double bound, mans::prism::PlaneCoding planes,
                              bool specials) {
    SelfTestField f;
    f.cfg.type = type;
    f.cfg.rank = rank;
    std::uint64_t n = 1;
    for (unsigned a = 0; a < rank; ++a) n *= (f.cfg.dims[a] = dims[a]);
    f.cfg.mode = mode;
    f.cfg.error_bound = bound;
    f.cfg.planes = planes;
    f.cfg.threads = 1;
    f.cfg.backend = mans::Backend::cpu;
    if (specials) f.cfg.fill_values = {-999.0};
    std::vector<T> v(static_cast<std::size_t>(n));
    std::uint64_t x = 0x2545F4914F6CDD1Dull;
    for (std::uint64_t i = 0; i < n; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        double s = 10 * std::sin(0.05 * static_cast<double>(i)) + 3 * std::cos(0.011 * static_cast<double>(i)) +
                   static_cast<double>(x >> 40) * 1e-7;
        if (specials) {
            if (i % 97 == 13) s = std::numeric_limits<double>::quiet_NaN();
            if (i % 131 == 7) s = (i & 1 ? 1 : -1) * std::numeric_limits<double>::infinity();
            if (i % 50 < 3) s = -999.0;
            if (i % 211 == 5) s += 500;  // a spike
        }
        v[i] = static_cast<T>(s);
    }
    const auto* b = reinterpret_cast<const std::uint8_t*>(v.data());
    f.raw.assign(b, b + v.size() * sizeof(T));
    return f;
}

std::vector<SelfTestField> self_test_fields() {
    using mans::prism::ErrorMode;
    using mans::prism::FloatType;
    using mans::prism::PlaneCoding;
    const std::uint64_t d3[] = {9, 14, 23}, d2[] = {31, 40}, d1[] = {1000}, d4[] = {3, 4, 5, 6}, tiny[] = {5};
    std::vector<SelfTestField> f;
    f.push_back(self_test_field<float>(FloatType::f32, 3, d3, ErrorMode::relative, 1e-3, PlaneCoding::negabinary, true));
    f.push_back(self_test_field<double>(FloatType::f64, 2, d2, ErrorMode::absolute, 1e-4, PlaneCoding::sign_magnitude, true));
    f.push_back(self_test_field<float>(FloatType::f32, 1, d1, ErrorMode::relative, 1e-2, PlaneCoding::sign_magnitude, false));
    f.push_back(self_test_field<double>(FloatType::f64, 4, d4, ErrorMode::relative, 1e-5, PlaneCoding::negabinary, false));
    f.push_back(self_test_field<float>(FloatType::f32, 1, tiny, ErrorMode::absolute, 0.5, PlaneCoding::negabinary, false));
    return f;
}

}  // namespace

Errc compress_on_module(const mans_backend_module& m, const void* data, std::size_t bytes,
                        const mans::prism::CompressConfig& cfg, std::vector<std::uint8_t>* archive,
                        bool data_on_device) {
    mans_backend_prism_job j = job_for(cfg, data, bytes);
    j.data_on_device = data_on_device ? 1 : 0;
    FinishContext c{&cfg, archive};
    j.ctx = &c;
    j.finish = finish_on_core;
    mans_backend_probe_result err{};
    const int rc = m.prism_compress(&j, &err);
    if (rc == MANS_OK) return c.result;
    // finish's error comes back as it was; the encoder's own (e.g.
    // invalid_argument for a value range that overflows, as on the CPU),
    // a run-time failure or memory pass as they are; anything else is the
    // module's fault.
    if (rc == static_cast<int>(c.result)) return c.result;
    const bool named = std::string(mans_status_name(static_cast<mans_status>(rc))) != "MANS_ERR_UNKNOWN";
    return named ? static_cast<Errc>(rc) : Errc::internal;
}

std::string prism_self_test(const mans_backend_module& m) {
    int k = 0;
    for (const SelfTestField& f : self_test_fields()) {
        ++k;
        const std::string what = "PRISM compress of self-test field " + std::to_string(k) + " (" +
                                 mans::prism::float_name(f.cfg.type) + ", rank " + std::to_string(f.cfg.rank) + ")";
        std::vector<std::uint8_t> cpu, gpu;
        if (mans::prism::compress(f.raw.data(), f.raw.size(), f.cfg, &cpu) != Errc::ok)
            return "the CPU could not compress the self-test fields";
        const Errc e = compress_on_module(m, f.raw.data(), f.raw.size(), f.cfg, &gpu);
        if (e != Errc::ok) return what + " failed (" + errc_name(e) + ")";
        if (gpu != cpu) return what + " differs from the CPU's";
    }
    return {};
}

Errc retrieve_on_module(const mans_backend_module& m, const std::vector<std::uint8_t>& header_bytes, const Header& h,
                        const BaseData& base, const std::vector<std::vector<const std::uint8_t*>>& planes, void* out,
                        bool out_on_device) {
    MANS_RETURN_IF(planes.size() != h.levels, Errc::internal);
    // Each level's planes back to back, as stored (they are consecutive in
    // the archive; a refined retrieval holds them in pieces).
    std::vector<std::vector<std::uint8_t>> levels(h.levels);
    std::vector<const std::uint8_t*> level_ptrs(h.levels);
    std::vector<std::uint64_t> level_bytes(h.levels);
    std::vector<std::uint32_t> kept(h.levels);
    for (unsigned l = 0; l < h.levels; ++l) {
        kept[l] = static_cast<std::uint32_t>(planes[l].size());
        levels[l].resize(static_cast<std::size_t>(h.plane_range_bytes(l, 0, kept[l])));
        std::size_t at = 0;
        for (unsigned b = 0; b < kept[l]; ++b) {
            const std::size_t n = static_cast<std::size_t>(h.plane_range_bytes(l, b, b + 1));
            if (n) std::memcpy(levels[l].data() + at, planes[l][b], n);
            at += n;
        }
        level_ptrs[l] = levels[l].data();
        level_bytes[l] = levels[l].size();
    }
    mans_backend_prism_read_job j{};
    j.struct_size = sizeof j;
    j.header = header_bytes.data();
    j.header_bytes = header_bytes.size();
    j.archive_bytes = h.total_bytes;
    std::vector<const std::uint8_t*> kind_ptrs;
    std::vector<std::uint64_t> kind_bytes;
    j.base = base_view(base, &kind_ptrs, &kind_bytes);
    j.levels = h.levels;
    j.kept = kept.data();
    j.level_planes = level_ptrs.data();
    j.level_bytes = level_bytes.data();
    j.out = out;
    j.out_bytes = h.grid.count * h.esize();
    j.out_on_device = out_on_device ? 1 : 0;
    mans_backend_probe_result err{};
    const int rc = m.prism_decompress(&j, &err);
    switch (static_cast<Errc>(rc)) {
        case Errc::ok:
        case Errc::corrupt_block:
        case Errc::backend_unavailable:
        case Errc::out_of_memory: return static_cast<Errc>(rc);
        default: return Errc::internal;  // a job the core made valid, refused: the module's fault
    }
}

std::string prism_read_self_test(const mans_backend_module& m) {
    int k = 0;
    for (const SelfTestField& f : self_test_fields()) {
        ++k;
        std::vector<std::uint8_t> archive;
        if (mans::prism::compress(f.raw.data(), f.raw.size(), f.cfg, &archive) != Errc::ok)
            return "the CPU could not compress the self-test fields";
        // A full retrieval and one that cuts planes: a bound 100 times the
        // archive's.
        const mans::prism::Target coarse = f.cfg.mode == mans::prism::ErrorMode::relative
                                               ? mans::prism::Target::rel(100 * f.cfg.error_bound)
                                               : mans::prism::Target::abs(100 * f.cfg.error_bound);
        for (const mans::prism::Target& t : {mans::prism::Target::full(), coarse}) {
            const std::string what = std::string("PRISM ") + (t.kind == mans::prism::Target::Kind::full ? "full" : "coarse") +
                                     " retrieval of self-test field " + std::to_string(k) + " (" +
                                     mans::prism::float_name(f.cfg.type) + ", rank " + std::to_string(f.cfg.rank) + ")";
            std::vector<std::uint8_t> cpu, gpu;
            if (retrieve_with(nullptr, archive.data(), archive.size(), t, &cpu) != Errc::ok)
                return "the CPU could not retrieve the self-test fields";
            const Errc e = retrieve_with(&m, archive.data(), archive.size(), t, &gpu);
            if (e != Errc::ok) return what + " failed (" + errc_name(e) + ")";
            if (gpu != cpu) return what + " differs from the CPU's";
        }
    }
    return {};
}

}  // namespace mans::detail::prism
