// encoder.cpp - PRISM compression: mask, level-wise closed-loop
// interpolation and quantization (on the sweep, sweep.hpp), bitplanes
// (level_codes.hpp), segments, archive.
//
// Memory besides the input: two bits per point (mask, outliers), the
// sweep's doubles (N / 2^rank and a ring of rows), the coded segments, and
// the archive they are copied into at the end.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

#include "backend.hpp"
#include "core/bitmap_hd.hpp"
#include "core/byte_io.hpp"
#include "core/frame.hpp"
#include "core/status.hpp"
#include "device_module.hpp"
#include "mans/prism.hpp"
#include "prism/archive.hpp"
#include "prism/base.hpp"
#include "prism/cpu_kernels.hpp"
#include "prism/device_job.hpp"
#include "prism/encode_plan.hpp"
#include "prism/error_stats_hd.hpp"
#include "prism/level_codes.hpp"
#include "prism/mask_hd.hpp"
#include "prism/selection_hd.hpp"
#include "prism/sweep.hpp"
#include "prism/traverse.hpp"

namespace mans::detail::prism {
namespace {

template <typename T>
T load_value(const std::uint8_t* src, std::uint64_t i) {
    return load_le<T>(src + i * sizeof(T));
}

// Ranges of kMaskRangePoints points (whole mask bytes) that threads
// reduce; partial results are merged in range order (mask_hd.hpp).
constexpr std::uint64_t kMaskRangePoints = std::uint64_t{1} << 16;

// fn(first, last) -> Partial for every range of the n points, in parallel;
// the partials merged in range order.
template <typename Partial, typename F>
Partial reduce_ranges(std::uint64_t n, int threads, F&& fn) {
    const std::uint64_t ranges = (n + kMaskRangePoints - 1) / kMaskRangePoints;
    std::vector<Partial> part(static_cast<std::size_t>(ranges));
#pragma omp parallel for num_threads(threads) schedule(static) if (ranges > 1)
    for (std::int64_t r = 0; r < static_cast<std::int64_t>(ranges); ++r) {
        const std::uint64_t first = static_cast<std::uint64_t>(r) * kMaskRangePoints;
        part[static_cast<std::size_t>(r)] = fn(first, std::min(n, first + kMaskRangePoints));
    }
    Partial all;
    for (const Partial& p : part) all.merge(p);
    return all;
}

struct Selection {
    Scheme scheme = Scheme::seq_forward;
    KindMode mode = KindMode::all_cubic;
    std::vector<std::uint8_t> block_bits;  // per_block: bit = cubic
};

inline bool bit(const std::vector<std::uint8_t>& bits, std::uint64_t i) {
    return !bits.empty() && (bits[static_cast<std::size_t>(i >> 3)] >> (i & 7) & 1);
}

// The encoder is the sweep's Ops (sweep.hpp): it quantizes each point as
// the sweep predicts it, hands the codes to a LevelEncoder, and gathers the
// error statistics as rows become final.
template <typename T>
class Encoder {
public:
    Encoder(const std::uint8_t* src, const mans::prism::CompressConfig& cfg, int threads)
        : src_(src), cfg_(cfg), threads_(threads) {
        g_ = Grid::make(cfg.rank, cfg.dims);
        blocks_ = BlockGrid::make(g_);
    }

    Errc run(std::vector<std::uint8_t>* archive);

    // ---- sweep ops
    double anchor() const { return masked(0) ? 0.0 : x(0); }
    LevelForm begin_level(unsigned l);
    StepJobs begin_step(unsigned, const std::vector<CodeRange>& r) { return codes_->prepare(r); }
    void job(std::size_t j) { codes_->job(j); }
    double visit(unsigned l, std::uint64_t idx, std::uint64_t code, double pred);
    void visit_run(unsigned l, std::uint64_t first, std::uint64_t di, std::uint64_t code, std::uint64_t m,
                   const double* pred, double* work);
    Errc end_step(unsigned, const std::vector<CodeRange>& r) {
        codes_->commit(r);
        return Errc::ok;
    }
    Errc end_level(unsigned l);
    void rows_done(std::uint64_t r0, std::uint64_t r1, const RowRing& ring);

private:
    double x(std::uint64_t i) const { return static_cast<double>(load_value<T>(src_, i)); }
    bool masked(std::uint64_t i) const { return bit(mask_, i); }
    bool outlier(std::uint64_t i) const { return bit(outliers_, i); }
    Errc build_mask();
    Selection select(unsigned level, double eb);
    void finish_stats();
    BaseData make_base() const;

    const std::uint8_t* src_;
    const mans::prism::CompressConfig& cfg_;
    int threads_;
    Grid g_;
    BlockGrid blocks_;
    Header h_;
    double cast_slack_ = 0;
    std::vector<T> fills_;
    std::vector<std::uint8_t> mask_;      // bit per point: non-finite or fill (empty when none)
    std::vector<std::uint8_t> outliers_;  // bit per point: stored exactly
    std::vector<Selection> sels_;
    std::unique_ptr<LevelEncoder> codes_;  // of the level being swept
    std::vector<std::vector<std::uint8_t>> seg_bytes_;
    // Error statistics per kErrorStatPoints points, summed in point order
    // (error_stats_hd.hpp).
    std::vector<ErrorStats> stats_;
};

template <typename T>
Errc Encoder<T>::build_mask() {
    const std::uint64_t n = g_.count;
    const MaskKernels<T>& k = cpu_backend().prism_kernels().template mask<T>();
    const int threads = std::max(1, threads_);
    fills_ = choose_fill_values<T>(
        cfg_, n,
        [&] {
            return reduce_ranges<ValueRange>(
                n, threads, [&](std::uint64_t first, std::uint64_t last) { return k.finite_range(src_, first, last); });
        },
        [&](double cand) {
            return reduce_ranges<FillEvidence>(n, threads, [&](std::uint64_t first, std::uint64_t last) {
                return k.fill_evidence(src_, first, last, cand);
            });
        });
    mask_.assign(static_cast<std::size_t>((n + 7) / 8), 0);
    const MaskPartial m = reduce_ranges<MaskPartial>(n, threads, [&](std::uint64_t first, std::uint64_t last) {
        return k.mask_range(src_, n, fills_.data(), static_cast<unsigned>(fills_.size()), first / 8, (last + 7) / 8,
                            mask_.data());
    });
    if (m.masked == 0) std::vector<std::uint8_t>().swap(mask_);
    return set_value_range(&h_, cfg_, m, std::vector<double>(fills_.begin(), fills_.end()), &cast_slack_);
}

// Open-loop choice of scheme and stencil kinds from the original values
// (selection_hd.hpp): the summed |x - prediction| in units of eb, per
// block, in integers (so the sums do not depend on the thread count).
template <typename T>
Selection Encoder<T>::select(unsigned level, double eb) {
    const std::uint64_t u = level_unit(h_.levels, level);
    const std::uint64_t nb = blocks_.count;
    const unsigned schemes = g_.rank == 1 ? 1 : kSchemeCount;
    const int nthreads = std::max(1, threads_);
    // err[thread][scheme][kind][block]
    std::vector<std::uint64_t> err(static_cast<std::size_t>(nthreads) * schemes * 2 * nb, 0);
    const std::uint64_t level_points = h_.level[level].codes;
    const std::uint64_t stride = selection_tile_stride(level_points);
    const double inv = eb > 0 ? 1.0 / eb : 1.0;
    const UnalignedValues<T> data{src_};

    const std::uint8_t* mask = mask_.empty() ? nullptr : mask_.data();
    for (unsigned s = 0; s < schemes; ++s) {
        for (const Pass& p : level_passes(g_, u, static_cast<Scheme>(s))) {
            for_each_pass_run(
                g_, p, nthreads,
                [&](const Box& b, std::uint64_t, const std::uint64_t* c, std::uint64_t idx, std::uint64_t m) {
                    const int t = omp_get_thread_num();
                    std::uint64_t* row = err.data() + (static_cast<std::size_t>(t) * schemes + s) * 2 * nb;
                    if (!mask) {  // by runs, without the mask tests
                        add_selection_run_costs(data, g_, b, blocks_, c, idx, m, u, inv, row, row + nb);
                        return;
                    }
                    for_run_points(g_, b, 0, c, idx, m, [&](std::uint64_t, const std::uint64_t* cp, std::uint64_t ip) {
                        std::uint64_t lin = 0, cub = 0;
                        if (!selection_point_costs(data, mask, g_, b, cp, ip, u, inv, &lin, &cub)) return;
                        const std::uint64_t blk = blocks_.block_of(cp);
                        row[blk] += lin;
                        row[nb + blk] += cub;
                    });
                },
                stride);
        }
    }
    // Reduce over threads, then pick the scheme and the kinds.
    std::vector<std::uint64_t> tot(static_cast<std::size_t>(schemes) * 2 * nb, 0);
    for (int t = 0; t < nthreads; ++t)
        for (std::size_t i = 0; i < tot.size(); ++i) tot[i] += err[static_cast<std::size_t>(t) * tot.size() + i];
    Selection best;
    best.block_bits.assign(static_cast<std::size_t>((nb + 7) / 8), 0);
    const SelectionChoice choice = choose_selection(tot.data(), nb, schemes, best.block_bits.data());
    best.scheme = choice.scheme;
    best.mode = choice.mode;
    if (best.mode != KindMode::per_block) std::vector<std::uint8_t>().swap(best.block_bits);
    return best;
}

template <typename T>
LevelForm Encoder<T>::begin_level(unsigned l) {
    plan_level(&h_, cfg_, l, cast_slack_);
    LevelMeta& m = h_.level[l];
    sels_[l] = select(l, m.eb);
    m.scheme = sels_[l].scheme;
    m.kinds = sels_[l].mode;
    codes_ = std::make_unique<LevelEncoder>(m.codes, h_.chunk_codes, h_.coding, static_cast<unsigned>(threads_));
    return LevelForm{m.scheme, m.kinds, &sels_[l].block_bits};
}

// Closed-loop quantization: the prediction uses reconstructed values, and a
// point whose reconstruction would miss its bound (or whose code would
// exceed kMaxCode) is stored exactly instead.
template <typename T>
double Encoder<T>::visit(unsigned l, std::uint64_t idx, std::uint64_t code, double pred) {
    const LevelMeta& m = h_.level[l];
    const bool is_masked = masked(idx);
    const EncodedPoint p = encode_point<T>(is_masked ? 0.0 : x(idx), is_masked, pred, m.step, m.eb, h_.abs_bound);
    codes_->code(code) = p.code;  // masked and outlier points too: every code is written once
    if (p.outlier)
        __atomic_fetch_or(&outliers_[static_cast<std::size_t>(idx >> 3)], static_cast<std::uint8_t>(1u << (idx & 7)),
                          __ATOMIC_RELAXED);
    return p.work;
}

// visit for the m <= kSweepRunPoints points first + i * di (codes code + i;
// work values to work[i * di]): their quantization by the CPU backend's
// kernel (AVX2 where the CPU has it: the same results), then the masked
// points' and the codes' and outliers' bookkeeping as in visit.
template <typename T>
void Encoder<T>::visit_run(unsigned l, std::uint64_t first, std::uint64_t di, std::uint64_t code, std::uint64_t m,
                           const double* pred, double* work) {
    const LevelMeta& lm = h_.level[l];
    double xs[kSweepRunPoints];
    std::int32_t q[kSweepRunPoints];
    std::uint8_t out[kSweepRunPoints];
    double w[kSweepRunPoints];
    for (std::uint64_t i = 0; i < m; ++i) xs[i] = x(first + i * di);  // masked points' are replaced below
    cpu_backend().prism_kernels().quantize.template of<T>()(xs, pred, m, lm.step, lm.eb, h_.abs_bound, q, out, w);
    for (std::uint64_t i = 0; i < m; ++i) {
        const std::uint64_t idx = first + i * di;
        if (masked(idx)) {
            const EncodedPoint p = encode_point<T>(0.0, true, pred[i], lm.step, lm.eb, h_.abs_bound);
            q[i] = p.code;
            out[i] = p.outlier;
            w[i] = p.work;
        }
        work[i * di] = w[i];
        codes_->code(code + i) = q[i];  // masked and outlier points too: every code is written once
        if (out[i])
            __atomic_fetch_or(&outliers_[static_cast<std::size_t>(idx >> 3)],
                              static_cast<std::uint8_t>(1u << (idx & 7)), __ATOMIC_RELAXED);
    }
}

template <typename T>
Errc Encoder<T>::end_level(unsigned l) {
    const Errc e = codes_->finish(&h_.level[l], &h_.segments, &seg_bytes_, &h_.plane_checksum, threads_);
    codes_.reset();
    return e;
}

// Error statistics of the full reconstruction over the final rows.
template <typename T>
void Encoder<T>::rows_done(std::uint64_t r0, std::uint64_t r1, const RowRing& ring) {
    const std::uint64_t R = ring.R, lo = r0 * R, hi = r1 * R;
    if (hi <= lo) return;
    const std::int64_t c0 = static_cast<std::int64_t>(lo / kErrorStatPoints);
    const std::int64_t c1 = static_cast<std::int64_t>((hi - 1) / kErrorStatPoints);
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::int64_t ch = c0; ch <= c1; ++ch) {
        ErrorStats& s = stats_[static_cast<std::size_t>(ch)];
        const std::uint64_t first = std::max(lo, static_cast<std::uint64_t>(ch) * kErrorStatPoints);
        const std::uint64_t last = std::min(hi, static_cast<std::uint64_t>(ch + 1) * kErrorStatPoints);
        std::uint64_t row = first / R, at = first - row * R;
        const double* w = ring.row(row);
        for (std::uint64_t i = first; i < last; ++i) {
            const double v = w[at];
            if (++at == R) at = 0, w = ring.row(++row);
            const bool exact = i == 0 || masked(i) || outlier(i);
            add_point_error<T>(&s, v, exact ? 0.0 : x(i), exact);
        }
    }
}

template <typename T>
void Encoder<T>::finish_stats() {
    ErrorStats all;
    for (const ErrorStats& s : stats_) merge_error_stats(&all, s);
    finish_error_stats(&h_, all);
}

template <typename T>
BaseData Encoder<T>::make_base() const {
    BaseData b;
    const std::uint64_t n = g_.count;
    b.kind_bits.resize(h_.levels);
    for (unsigned l = 0; l < h_.levels; ++l)
        if (sels_[l].mode == KindMode::per_block) b.kind_bits[l] = sels_[l].block_bits;
    // Values of the points set in a bitmap, in point order.
    const auto values_of = [&](const std::vector<std::uint8_t>& bits, std::vector<std::uint8_t>* values) {
        values->resize(static_cast<std::size_t>(bitmap_count(bits.data(), 0, bits.size())) * sizeof(T));
        std::uint8_t* out = values->data();
        for (std::size_t byte = 0; byte < bits.size(); ++byte)
            for (unsigned v = bits[byte]; v; v &= v - 1, out += sizeof(T))
                std::memcpy(out, src_ + (byte * 8 + ctz32(v)) * sizeof(T), sizeof(T));
    };
    if (h_.masked_count) {
        b.mask_bits = mask_;
        values_of(mask_, &b.masked_values);
    }
    // The outliers' positions as a GPU lists them (core/bitmap_hd.hpp).
    b.outlier_index.resize(static_cast<std::size_t>(bitmap_count(outliers_.data(), 0, outliers_.size())));
    bitmap_list(outliers_.data(), 0, outliers_.size(), 0, b.outlier_index.data());
    values_of(outliers_, &b.outlier_values);
    if (n && !masked(0)) b.anchor_value.assign(src_, src_ + sizeof(T));
    return b;
}

template <typename T>
Errc Encoder<T>::run(std::vector<std::uint8_t>* archive) {
    start_header(&h_, g_, cfg_);
    MANS_RETURN_IF_ERROR(build_mask());
    outliers_.assign(static_cast<std::size_t>((g_.count + 7) / 8), 0);
    stats_.assign(static_cast<std::size_t>((g_.count + kErrorStatPoints - 1) / kErrorStatPoints), ErrorStats{});
    sels_.resize(h_.levels);
    MANS_RETURN_IF_ERROR(Sweep<Encoder>(g_, h_.levels, threads_, *this).run());
    finish_stats();
    for (std::uint8_t v : outliers_) h_.outlier_count += static_cast<unsigned>(__builtin_popcount(v));

    const std::vector<std::uint8_t> base = encode_base(make_base(), sizeof(T));
    std::vector<std::uint8_t>().swap(mask_);
    std::vector<std::uint8_t>().swap(outliers_);
    return write_archive(&h_, base, &seg_bytes_, archive);
}

}  // namespace

Errc validate_config(std::size_t bytes, const mans::prism::CompressConfig& cfg) {
    if (cfg.type != mans::prism::FloatType::f32 && cfg.type != mans::prism::FloatType::f64)
        return Errc::unsupported_dtype;
    if (cfg.rank < 1 || cfg.rank > kMaxRank) return Errc::invalid_argument;
    if (!(cfg.error_bound > 0) || !std::isfinite(cfg.error_bound)) return Errc::invalid_argument;
    if (cfg.mode != ErrorMode::absolute && cfg.mode != ErrorMode::relative) return Errc::invalid_argument;
    if (cfg.planes != mans::prism::PlaneCoding::negabinary && cfg.planes != mans::prism::PlaneCoding::sign_magnitude)
        return Errc::invalid_argument;
    if (cfg.threads < 0 || cfg.threads > kMaxThreads) return Errc::invalid_argument;
    if (cfg.fill_values.size() > 60) return Errc::invalid_argument;
    if (!(cfg.level_alpha >= 1) || !(cfg.level_beta >= 1) || !std::isfinite(cfg.level_alpha) ||
        !std::isfinite(cfg.level_beta))
        return Errc::invalid_argument;
    for (double f : cfg.fill_values)
        if (std::isnan(f)) return Errc::invalid_argument;
    std::uint64_t count = 1;
    for (unsigned a = 0; a < cfg.rank; ++a) {
        if (cfg.dims[a] != 0 && count > (std::uint64_t{1} << 60) / cfg.dims[a]) return Errc::invalid_argument;
        count *= cfg.dims[a];
    }
    if (count * mans::prism::float_size(cfg.type) != bytes) return Errc::size_not_multiple;
    return Errc::ok;
}

}  // namespace mans::detail::prism

namespace mans::prism {

std::size_t float_size(FloatType t) noexcept {
    return t == FloatType::f32 ? 4 : t == FloatType::f64 ? 8 : 0;
}
const char* float_name(FloatType t) noexcept {
    return t == FloatType::f32 ? "f32" : t == FloatType::f64 ? "f64" : nullptr;
}

bool is_archive(const void* data, std::size_t size) noexcept {
    const auto* p = static_cast<const std::uint8_t*>(data);
    return data && size >= 6 && std::memcmp(p, detail::kMagic, 4) == 0 && p[5] == detail::prism::kCodecPrism;
}

Errc compress(const void* data, std::size_t bytes, const CompressConfig& cfg,
              std::vector<std::uint8_t>* archive) noexcept {
    using namespace detail::prism;
    if (!archive || (!data && bytes)) return Errc::invalid_argument;
    MANS_RETURN_IF_ERROR(validate_config(bytes, cfg));
    const mans_backend_module* gpu = nullptr;
    MANS_RETURN_IF_ERROR(mans::detail::errc_guard([&] {
        return mans::detail::select_module(cfg.backend, mans::detail::BackendOp::prism_compress, bytes, &gpu);
    }));
    if (gpu) {
        const Errc e = mans::detail::errc_guard([&] { return compress_on_module(*gpu, data, bytes, cfg, archive); });
        // `automatic` leaves a module's failure to the CPU, which writes
        // the same bytes.
        if (e == Errc::ok || cfg.backend != mans::Backend::automatic) return e;
    }
    const int threads = cfg.threads > 0 ? cfg.threads : omp_get_max_threads();
    const auto* src = static_cast<const std::uint8_t*>(data);
    return mans::detail::errc_guard([&] {
        if (cfg.type == FloatType::f32) return Encoder<float>(src, cfg, threads).run(archive);
        return Encoder<double>(src, cfg, threads).run(archive);
    });
}

}  // namespace mans::prism
