// prism.hpp - PRISM: progressive, error-bounded lossy compression of
// float32/float64 grids (1D-4D), and retrieval that reads only what it needs.
//
//   std::vector<std::uint8_t> archive;
//   mans::prism::CompressConfig cfg;            // f32, dims slowest first
//   cfg.rank = 3; cfg.dims[0] = 17; cfg.dims[1] = 96; cfg.dims[2] = 192;
//   cfg.mode = mans::prism::ErrorMode::relative; cfg.error_bound = 1e-6;
//   mans::prism::compress(data, bytes, cfg, &archive);
//
//   mans::prism::Reader r;
//   mans::prism::Reader::open(mans::prism::memory_source(archive.data(), archive.size()), &r);
//   mans::prism::Retrieval x;
//   r.retrieve(mans::prism::Target::abs(1e-3), &x);   // reads header, base and a few planes
//   r.refine(&x, mans::prism::Target::abs(1e-5));      // reads only the additional planes
//
// Every call returns an Errc (pinned numbers, see mans.h); nothing throws,
// aborts or prints. docs/FORMAT.md section 4 is normative.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mans/mans.hpp"

namespace mans::detail::prism {
struct ReaderAccess;
}

namespace mans::prism {

// Stored in the archive (the numbers continue mans_dtype).
enum class FloatType : std::uint8_t { f32 = 8, f64 = 9 };
std::size_t float_size(FloatType t) noexcept;  // 4, 8; 0 for other values
const char* float_name(FloatType t) noexcept;  // "f32", "f64"; nullptr otherwise

enum class ErrorMode : std::uint8_t {
    absolute = 1,  // |x - x'| <= bound
    relative = 2,  // |x - x'| <= bound * (max - min), over finite non-fill values
};

// How quantization codes are cut into bitplanes (recorded in the archive).
enum class PlaneCoding : std::uint8_t {
    negabinary = 1,      // base -2 digits: truncation is an exact additive slice
    sign_magnitude = 2,  // one sign plane, then magnitude bits
};

struct CompressConfig {
    FloatType type = FloatType::f32;
    std::uint32_t rank = 1;                    // 1..4
    std::uint64_t dims[4] = {0, 0, 0, 0};      // slowest to fastest (C order)
    ErrorMode mode = ErrorMode::absolute;
    double error_bound = 0;                    // > 0, finite
    PlaneCoding planes = PlaneCoding::negabinary;
    int threads = 0;                           // 0 = all OpenMP threads; never changes the bytes
    // Where it runs (never changes the bytes): automatic takes a GPU module
    // for fields of 16 MiB or more when one passes its self-test, cpu never,
    // cuda/hip or backend_unavailable (mans::backend_report says why).
    mans::Backend backend = mans::Backend::automatic;
    // Values kept bit-exactly and left out of the value range and of the
    // predictions (fill values, land masks). NaN and +-Inf are always kept.
    std::vector<double> fill_values;
    // Also treat as fill a value that occurs often and lies >= 1e6 times
    // further from zero than every other value (e.g. -1e10, 9.97e36).
    bool detect_fill = true;
    // Level-wise bounds (QoZ / cuSZ-Hi style): the level j steps above the
    // finest is quantized with bound / min(level_alpha^j, level_beta). The
    // default 1 gives every level the full bound: alpha 1.5 or 2 measured
    // 1-20 % lower ratios on every real field here (docs/PERFORMANCE.md).
    double level_alpha = 1.0;  // >= 1
    double level_beta = 4.0;   // >= 1
};

// Compresses `bytes` bytes (dims product x element size) into *archive
// (replaced). Non-finite values and fill values are restored exactly.
Errc compress(const void* data, std::size_t bytes, const CompressConfig& cfg,
              std::vector<std::uint8_t>* archive) noexcept;

// True when the bytes start like a PRISM archive (magic and codec id);
// a cheap dispatch test, not a validation.
bool is_archive(const void* data, std::size_t size) noexcept;

// Random-access byte source of an archive. read_at must fill exactly n bytes
// or fail; it is called with the ranges a retrieval needs only.
class Source {
public:
    virtual ~Source() = default;
    virtual std::uint64_t size() const noexcept = 0;
    virtual Errc read_at(std::uint64_t offset, void* dst, std::size_t n) noexcept = 0;
};
// The archive in memory (not copied: keep it alive while the reader is).
std::unique_ptr<Source> memory_source(const void* data, std::size_t size);
// A file opened for reading; *status receives io on failure (and nullptr is returned).
std::unique_ptr<Source> file_source(const std::string& path, Errc* status);
// For object stores: read_at(offset, dst, n) -> true when n bytes were written.
using ReadAt = std::function<bool(std::uint64_t offset, void* dst, std::size_t n)>;
std::unique_ptr<Source> callback_source(std::uint64_t size, ReadAt read_at);

// What a retrieval must achieve.
struct Target {
    enum class Kind : std::uint8_t { absolute, relative, psnr, bytes, full };
    Kind kind = Kind::full;
    double value = 0;
    static Target abs(double bound) { return {Kind::absolute, bound}; }
    static Target rel(double bound) { return {Kind::relative, bound}; }  // x value range
    static Target psnr(double db) { return {Kind::psnr, db}; }           // estimated, see docs
    static Target bytes(std::uint64_t budget) { return {Kind::bytes, static_cast<double>(budget)}; }
    static Target full() { return {Kind::full, 0}; }
};

struct ArchiveInfo {
    FloatType type = FloatType::f32;
    std::uint32_t rank = 0;
    std::uint64_t dims[4] = {0, 0, 0, 0};
    std::uint64_t count = 0;
    ErrorMode mode = ErrorMode::absolute;
    double requested_bound = 0;  // as given at compression (relative or absolute)
    double abs_bound = 0;        // absolute L-inf bound of a full retrieval
    double value_min = 0, value_max = 0;  // finite non-fill values (0, 0 when none)
    PlaneCoding planes = PlaneCoding::negabinary;
    std::uint32_t levels = 0;
    std::uint64_t archive_bytes = 0;
    std::uint64_t header_bytes = 0;  // preamble + header + checksum: read by open()
    std::uint64_t base_bytes = 0;    // anchors, masks, outliers: read by the first retrieval
    std::uint64_t masked_count = 0;  // non-finite and fill values
    std::uint64_t outlier_count = 0; // values stored exactly because prediction failed
    double full_max_error = 0;       // measured max |x - x'| of a full retrieval
    std::vector<double> fill_values;
};

// A retrieval plan: planes kept per level (coarse to fine) and its guarantees.
struct Plan {
    std::vector<std::uint32_t> planes;   // per level, cumulative (never below what was read)
    std::uint64_t bytes_to_read = 0;     // this step, including header/base when not read yet
    double max_abs_error_bound = 0;      // rigorous L-inf bound of the result
    double psnr_estimate = 0;            // model estimate (dB); +inf for an exact result
    bool complete = false;               // every plane
};

struct RetrievalStats {
    std::uint64_t bytes_read = 0;        // cumulative for this result (header included)
    std::uint64_t bytes_read_step = 0;   // by the last retrieve/refine call
    double max_abs_error_bound = 0;      // rigorous bound of the current result
    double psnr_estimate = 0;
    std::uint32_t steps = 0;             // 1 after retrieve, +1 per refine
    bool complete = false;
    std::vector<std::uint32_t> planes;   // per level, as in Plan
    const char* backend = "cpu";         // where the values were last reconstructed: "cpu", "cuda", "hip"
};

// A reconstruction and the state needed to refine it.
class Retrieval {
public:
    Retrieval();
    ~Retrieval();
    Retrieval(Retrieval&&) noexcept;
    Retrieval& operator=(Retrieval&&) noexcept;

    FloatType type() const noexcept;
    std::uint64_t count() const noexcept;
    const void* data() const noexcept;  // count() values of type(), C order
    std::size_t bytes() const noexcept;
    template <typename T>
    const T* as() const noexcept { return static_cast<const T*>(data()); }
    const RetrievalStats& stats() const noexcept;

    struct State;
    State* state() noexcept { return state_.get(); }

private:
    friend class Reader;
    std::unique_ptr<State> state_;
};

class Reader {
public:
    Reader();
    ~Reader();
    Reader(Reader&&) noexcept;
    Reader& operator=(Reader&&) noexcept;

    // Reads and validates the preamble and header (one or two reads).
    // A valid archive of a few hundred bytes may describe a huge constant
    // grid; a retrieval needs the output plus about 8 / 2^rank + 0.25 bytes
    // per value (docs/PERFORMANCE.md), so check info().count before
    // retrieving from an untrusted source.
    static Errc open(std::unique_ptr<Source> source, Reader* out) noexcept;

    const ArchiveInfo& info() const noexcept;
    // Plan for `target` from scratch (from == nullptr) or as a refinement of *from.
    Errc plan(const Target& target, const Retrieval* from, Plan* out) const noexcept;
    // One-shot retrieval. target_unreachable when an error bound is below
    // full_max_error (a tighter archive is needed).
    Errc retrieve(const Target& target, Retrieval* out, int threads = 0) noexcept;
    // Reads only the planes *r lacks for `target` and adds their contribution.
    Errc refine(Retrieval* r, const Target& target, int threads = 0) noexcept;
    // Every byte this reader fetched from its source.
    std::uint64_t bytes_read() const noexcept;
    // Where retrievals reconstruct (default automatic: a GPU module for
    // fields of 16 MiB or more, when one passes its self-test, falling back
    // to the CPU if it fails; a forced GPU that is unavailable makes
    // retrieve and refine return backend_unavailable). The values are the
    // same on every backend. invalid_argument for an unknown backend.
    Errc set_backend(mans::Backend b) noexcept;

    struct Impl;

private:
    friend struct mans::detail::prism::ReaderAccess;  // the library's module self-test
    std::unique_ptr<Impl> impl_;
};

// Quality of a reconstruction against the original, with the field names of
// SZ3 (-a) and zfp (-s). Positions where the original is not finite must hold
// the same bits in both (mismatch_count counts those that do not).
struct Quality {
    double max_abs_error = 0;
    double max_rel_error = 0;  // max_abs_error / value_range
    double psnr = 0;           // 20 log10(range) - 10 log10(mse); +inf when exact
    double nrmse = 0;          // rmse / range
    double rmse = 0;
    double value_range = 0;    // over finite values of the original (fill values excluded)
    std::uint64_t mismatch_count = 0;
};
Errc measure_quality(const void* original, const void* reconstructed, FloatType type,
                     std::uint64_t count, const std::vector<double>& fill_values,
                     Quality* out) noexcept;

}  // namespace mans::prism
