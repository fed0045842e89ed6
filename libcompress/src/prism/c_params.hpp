// c_params.hpp - mans_prism_params (prism.h) as a CompressConfig, for the
// C entries that compress: mans_prism_compress (prism/c_api.cpp) and
// mans_device_prism_compress (device_api.cpp).
#pragma once

#include "mans/prism.h"
#include "mans/prism.hpp"

namespace mans::detail::prism {

// p has been checked for null (and fill_values for null with a count).
mans::prism::CompressConfig config_from_params(const mans_prism_params& p);

}  // namespace mans::detail::prism
