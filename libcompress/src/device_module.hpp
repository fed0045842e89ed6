// device_module.hpp - which GPU module runs an operation: for PRISM
// (select_module) and for the device-memory API (device_api.cpp). Chosen in api.cpp, with the same rules as the host API:
// the module loads, finds a device, passes the self-test for compression and
// decompression, and also implements the chunk entries; or, failing that,
// passes the decompression self-test and implements chunk_decode (the
// device then decompresses only).
#pragma once

#include <string>

#include <cstdint>

#include "backend_module.hpp"
#include "core/module_loader.hpp"
#include "mans/mans.hpp"

namespace mans::detail {

// Where `op` on raw_bytes of input runs (api.cpp's rules, for the codecs
// outside api.cpp): *gpu the module, or null for the CPU; or
// backend_unavailable for a GPU that was asked for and cannot.
Errc select_module(mans::Backend requested, BackendOp op, std::uint64_t raw_bytes, const mans_backend_module** gpu);

namespace prism {
// "" when module m compresses the PRISM self-test fields exactly as the
// CPU, else what failed (prism/encoder.cpp).
std::string prism_self_test(const mans_backend_module& m);
// "" when module m reconstructs full and coarse retrievals of the
// self-test fields exactly as the CPU, else what failed
// (prism/module_compress.cpp).
std::string prism_read_self_test(const mans_backend_module& m);
}  // namespace prism

// The module for `requested` (automatic: CUDA, then HIP, each preferring
// both directions; cpu: none), with *compresses saying whether it serves
// compression too, or null with the reason in *why ("cuda: ...; hip: ...").
const mans_backend_module* device_chunk_module(mans::Backend requested, std::string* why, bool* compresses);

}  // namespace mans::detail
