// device_module.hpp - which GPU module serves the device-memory API
// (device_api.cpp). Chosen in api.cpp, with the same rules as the host API:
// the module loads, finds a device, passes the self-test for compression and
// decompression, and also implements the chunk entries; or, failing that,
// passes the decompression self-test and implements chunk_decode (the
// device then decompresses only).
#pragma once

#include <string>

#include "backend_module.hpp"
#include "mans/mans.hpp"

namespace mans::detail {

// The module for `requested` (automatic: CUDA, then HIP, each preferring
// both directions; cpu: none), with *compresses saying whether it serves
// compression too, or null with the reason in *why ("cuda: ...; hip: ...").
const mans_backend_module* device_chunk_module(Backend requested, std::string* why, bool* compresses);

}  // namespace mans::detail
