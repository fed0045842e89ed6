// point_math.hpp - PRISM's arithmetic on one point, as MANS_HD code: the
// closed-loop quantizer of the encoder, the reconstruction of the reader,
// and the rounding to the element type. The CPU's encoder.cpp and
// reader.cpp run these, and a GPU kernel runs the same functions, so both
// round every value identically (no FMA contraction: PRISM sources are
// built with -ffp-contract=off, the CUDA module with -fmad=false).
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>

#include "core/hd.hpp"
#include "prism/codes.hpp"  // kMaxCode

namespace mans::detail::prism {

// A reconstruction rounded to the element type. Values beyond its range
// are clamped to the largest finite value (never further from a finite
// original, and no undefined float conversion).
template <typename T>
MANS_HD T to_element(double v) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "float or double");
    const double hi = sizeof(T) == 4 ? static_cast<double>(FLT_MAX) : DBL_MAX;
    return static_cast<T>(v > hi ? hi : v < -hi ? -hi : v);
}

// The value the reader rebuilds from a prediction and a code.
MANS_HD double reconstruct_point(double pred, double step, double q) { return pred + step * q; }

struct QuantizedPoint {
    bool ok;             // false: the point must be stored exactly (an outlier)
    std::int32_t code;   // 0 unless ok
    double recon;        // what the reader will rebuild (when ok)
};

// Closed-loop quantization of value xv against its prediction: the nearest
// multiple of step (2 * eb), kept only when the code fits kMaxCode, the
// reconstruction is within eb, and, rounded to T, within the user's bound.
template <typename T>
MANS_HD QuantizedPoint quantize_point(double xv, double pred, double step, double eb, double abs_bound) {
    double qd = 0;
    if (step > 0) qd = ::floor((xv - pred) / step + 0.5);
    const double recon = reconstruct_point(pred, step, qd);
    const bool ok = ::fabs(qd) <= kMaxCode && ::fabs(xv - recon) <= eb &&
                    ::fabs(xv - static_cast<double>(to_element<T>(recon))) <= abs_bound;
    return {ok, ok ? static_cast<std::int32_t>(qd) : 0, recon};
}

// What the encoder does with a point: its code (0 for masked points and
// outliers), whether it is an outlier (stored exactly), and its work value,
// which later predictions read (masked: the prediction itself; outlier: the
// value; else the reconstruction).
struct EncodedPoint {
    std::int32_t code;
    bool outlier;
    double work;
};
template <typename T>
MANS_HD EncodedPoint encode_point(double xv, bool masked, double pred, double step, double eb, double abs_bound) {
    if (masked) return {0, false, pred};
    const QuantizedPoint p = quantize_point<T>(xv, pred, step, eb, abs_bound);
    if (!p.ok) return {0, true, xv};
    return {p.code, false, p.recon};
}

// What the reader rebuilds at a point from the code q it has read so far
// (any prefix of its planes): an outlier's stored value, the prediction at
// a masked point (the output takes the stored value; later predictions
// read this, as in the encoder), else the reconstruction.
MANS_HD double decode_point(bool outlier, double stored, bool masked, double pred, double step, double q) {
    if (outlier) return stored;
    if (masked) return pred;
    return reconstruct_point(pred, step, q);
}

}  // namespace mans::detail::prism
