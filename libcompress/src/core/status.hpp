// status.hpp - internal error propagation helpers over the pinned Errc.
#pragma once

#include "mans/mans.hpp"

namespace mans::detail {

// Return `errc` from the enclosing function when `cond` holds.
#define MANS_RETURN_IF(cond, errc) \
    do {                           \
        if (cond) return (errc);   \
    } while (0)

// Forward a non-ok Errc from `expr`.
#define MANS_TRY(expr)                                  \
    do {                                                \
        const ::mans::Errc mans_try_e_ = (expr);        \
        if (mans_try_e_ != ::mans::Errc::ok) return mans_try_e_; \
    } while (0)

}  // namespace mans::detail
