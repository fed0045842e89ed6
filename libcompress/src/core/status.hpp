// status.hpp - internal error propagation helper over the pinned Errc.
#pragma once

#include <new>

#include "mans/mans.hpp"

// Return `errc` from the enclosing function when `cond` holds.
#define MANS_RETURN_IF(cond, errc) \
    do {                           \
        if (cond) return (errc);   \
    } while (0)

// Return the error of `expr` (an Errc) from the enclosing function.
#define MANS_RETURN_IF_ERROR(expr)                         \
    do {                                                   \
        const ::mans::Errc mans_status_ = (expr);          \
        if (mans_status_ != ::mans::Errc::ok) return mans_status_; \
    } while (0)

namespace mans::detail {

// Runs fn (which returns an Errc) and turns any exception into a code, so
// that none crosses a public entry point.
template <typename F>
Errc errc_guard(F&& fn) noexcept {
    try {
        return fn();
    } catch (const std::bad_alloc&) {
        return Errc::out_of_memory;
    } catch (...) {
        return Errc::internal;
    }
}

}  // namespace mans::detail
