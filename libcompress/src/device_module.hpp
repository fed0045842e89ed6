// device_module.hpp - which GPU module serves the device-memory API
// (device_api.cpp). Chosen in api.cpp, with the same rules as the host API:
// the module loads, finds a device, passes the self-test for compression and
// decompression, and also implements the chunk entries.
#pragma once

#include <string>

#include "backend_module.hpp"
#include "mans/mans.hpp"

namespace mans::detail {

// The module for `requested` (automatic: CUDA, then HIP; cpu: none), or
// null with the reason in *why ("cuda: ...; hip: ...").
const mans_backend_module* device_chunk_module(Backend requested, std::string* why);

}  // namespace mans::detail
