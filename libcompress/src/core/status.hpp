// status.hpp - internal error propagation helper over the pinned Errc.
#pragma once

#include "mans/mans.hpp"

// Return `errc` from the enclosing function when `cond` holds.
#define MANS_RETURN_IF(cond, errc) \
    do {                           \
        if (cond) return (errc);   \
    } while (0)
