// c_params.hpp - mans_prism_params (prism.h) as a CompressConfig, for the
// C entries that compress: mans_prism_compress (prism/c_api.cpp) and
// mans_device_prism_compress (device_api.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mans/prism.h"
#include "mans/prism.hpp"

namespace mans::detail::prism {

// A mans_backend this library knows (the C enum may hold any int).
inline bool valid_backend(mans_backend b) { return b >= MANS_BACKEND_AUTO && b <= MANS_BACKEND_HIP; }

// p has been checked for null (and fill_values for null with a count).
mans::prism::CompressConfig config_from_params(const mans_prism_params& p);

// The archive in a buffer of malloc (released by mans_prism_free) at
// *archive, its size at *archive_size; MANS_ERR_OUT_OF_MEMORY when none.
mans_status hand_out_archive(const std::vector<std::uint8_t>& out, void** archive, size_t* archive_size);

}  // namespace mans::detail::prism
