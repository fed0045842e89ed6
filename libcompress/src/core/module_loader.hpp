// module_loader.hpp - finds, opens and checks GPU backend modules at run time.
//
// The core depends on no GPU runtime: a module (backend_module.hpp) is opened
// with dlopen when a caller first asks for a GPU or for `automatic`, and
// every way of failing (no file, not a library, wrong ABI, no device, no
// kernel for the operation) becomes a one-line reason instead of an error
// of the program. Nothing here prints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend_module.hpp"

namespace mans::detail {

// The operations a backend may or may not implement.
enum class BackendOp { mans_compress, mans_decompress, prism_compress, prism_decompress };

std::uint64_t op_capability(BackendOp op);

// Operations this libmans hands to a module: MANS compression and
// decompression (api.cpp: encode_blocks, decode_blocks) and PRISM
// compression and reconstruction (prism/encoder.cpp: prism_compress,
// prism/reader.cpp: prism_decompress).
inline constexpr std::uint64_t kDispatchedCaps = MANS_BACKEND_CAP_MANS_COMPRESS | MANS_BACKEND_CAP_MANS_DECOMPRESS |
                                                 MANS_BACKEND_CAP_PRISM_COMPRESS | MANS_BACKEND_CAP_PRISM_DECOMPRESS;
const char* op_label(BackendOp op);  // "MANS compress", ...

// One module as the loader found it. Plain data: tests build these from
// fixture modules.
struct ModuleState {
    std::string name;     // "cuda" or "hip"
    std::string file;     // "libmans_backend_cuda.so"
    std::string path;     // the file that was opened; empty when none was found
    const mans_backend_module* module = nullptr;  // set when loaded with the right ABI
    std::string load_error;  // one line when module is null, e.g. "cuda: ... not found"

    bool probed = false;
    int devices = 0;      // probe result: > 0 usable devices
    std::string device;   // probe text: the device, or why there is none

    bool has_op(BackendOp op) const;  // loaded and implements op (flag and pointer)
    bool usable_for(BackendOp op) const {  // after probe_module()
        return has_op(op) && (kDispatchedCaps & op_capability(op)) && devices > 0;
    }
};

// Whether a loaded module implements the device-memory API's chunk entries
// (flag and both pointers, read only when its struct_size covers them).
bool module_has_device_chunks(const mans_backend_module* m);
// Whether it implements chunk_decode (with or without chunk_encode).
bool module_has_device_chunk_decode(const mans_backend_module* m);

// A module's end_host_call (null when it has none), and the window of raw
// bytes it wants per host-memory call (0: the core's default).
void (*module_end_host_call(const mans_backend_module* m))(void);
std::uint64_t module_host_window_bytes(const mans_backend_module* m);

// "cuda" -> "libmans_backend_cuda.so".
std::string module_file_name(const std::string& name);

// Splits a colon-separated list ($MANS_BACKEND_PATH), skipping empty entries.
std::vector<std::string> split_search_path(const char* list);

// Where modules are looked for, in order: $MANS_BACKEND_PATH, the folder of
// the binary that holds libmans (the shared library, or the executable or
// plugin it is linked into), the executable's ../lib, the installed libdir.
std::vector<std::string> backend_search_dirs();

// The device nodes of which module `name`'s runtime needs one to find a
// device, when opening the module is costly: for hip, whose module starts
// the ROCm runtime when opened (~14 ms), "/dev/kfd" (ROCm's kernel driver)
// or "/dev/dxg" (ROCm on WSL). None for cuda: its runtime is linked
// statically and opens the driver only when probed (the module opens in
// ~0.3 ms).
std::vector<std::string> module_driver_nodes(const std::string& name);

// Opens the first `module_file_name(name)` found in dirs and checks it
// (entry symbol, ABI version, module name). Does not probe for devices.
// When driver_nodes is not empty and none of them exists, the module is
// found but not opened, and load_error says why.
// The handle is never closed: GPU runtimes do not survive being unloaded.
ModuleState load_backend_module(const std::string& name, const std::vector<std::string>& dirs,
                                const std::vector<std::string>& driver_nodes = {});

// Runs the module's probe once (no-op when not loaded or already probed).
void probe_module(ModuleState& m);

// Why m cannot run op, probing as needed; empty when it can. One line,
// starting with the module name, e.g. "cuda: module loaded, no CUDA device".
std::string module_unusable_reason(ModuleState& m, BackendOp op);

// The process-wide modules, loaded on first use from backend_search_dirs()
// (so $MANS_BACKEND_PATH is read once), each behind its
// module_driver_nodes(). Thread-safe.
bool gpu_module_usable(const char* name, BackendOp op);     // probes only when op is implemented
std::string gpu_module_reason(const char* name, BackendOp op);  // "" when usable
// The probed device text ("NVIDIA H200, sm_90, 139 GiB"); empty when none.
std::string gpu_module_device(const char* name);
// The module's table when gpu_module_usable(name, op), else null.
const mans_backend_module* gpu_module_for(const char* name, BackendOp op);

}  // namespace mans::detail
