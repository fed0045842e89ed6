// module_compress.cpp - PRISM compression on a GPU module (the core's side
// of mans_backend_prism_job, prism/device_job.hpp) and the self-test that
// a module passes before it is trusted with it.
#include <cmath>
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

}  // namespace mans::detail::prism
