// module_loader.cpp - see module_loader.hpp.
#include "core/module_loader.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace mans::detail {

namespace {

std::string upper(const std::string& s) {
    std::string u = s;
    for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return u;
}

std::string parent_dir(const std::string& path) {
    const std::size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

bool file_exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// Reads a field of the module table only when the module's struct has it.
template <typename T>
T field_or_null(const mans_backend_module* m, T mans_backend_module::*field, std::size_t end_offset) {
    return m->struct_size >= end_offset ? m->*field : T{};
}

}  // namespace

std::uint64_t op_capability(BackendOp op) {
    switch (op) {
        case BackendOp::mans_compress: return MANS_BACKEND_CAP_MANS_COMPRESS;
        case BackendOp::mans_decompress: return MANS_BACKEND_CAP_MANS_DECOMPRESS;
        case BackendOp::prism_compress: return MANS_BACKEND_CAP_PRISM_COMPRESS;
        case BackendOp::prism_decompress: return MANS_BACKEND_CAP_PRISM_DECOMPRESS;
    }
    return 0;
}

const char* op_label(BackendOp op) {
    switch (op) {
        case BackendOp::mans_compress: return "MANS compress";
        case BackendOp::mans_decompress: return "MANS decompress";
        case BackendOp::prism_compress: return "PRISM compress";
        case BackendOp::prism_decompress: return "PRISM decompress";
    }
    return "?";
}

bool ModuleState::has_op(BackendOp op) const {
    if (!module || !(module->caps & op_capability(op))) return false;
    // A flag without its function pointer counts as not implemented.
    const std::size_t after_compress = offsetof(mans_backend_module, encode_blocks) + sizeof(void*);
    const std::size_t after_decompress = offsetof(mans_backend_module, decode_blocks) + sizeof(void*);
    switch (op) {
        case BackendOp::mans_compress:
            return field_or_null(module, &mans_backend_module::encode_blocks, after_compress) != nullptr;
        case BackendOp::mans_decompress:
            return field_or_null(module, &mans_backend_module::decode_blocks, after_decompress) != nullptr;
        case BackendOp::prism_compress:
            return field_or_null(module, &mans_backend_module::prism_compress,
                                 offsetof(mans_backend_module, prism_compress) + sizeof(void*)) != nullptr;
        case BackendOp::prism_decompress:
            return field_or_null(module, &mans_backend_module::prism_decompress,
                                 offsetof(mans_backend_module, prism_decompress) + sizeof(void*)) != nullptr;
    }
    return false;
}

namespace {
constexpr std::size_t kAfterChunks = offsetof(mans_backend_module, chunk_decode) + sizeof(void*);
}

bool module_has_device_chunks(const mans_backend_module* m) {
    return m && (m->caps & MANS_BACKEND_CAP_DEVICE_CHUNKS) &&
           field_or_null(m, &mans_backend_module::chunk_encode, kAfterChunks) != nullptr &&
           field_or_null(m, &mans_backend_module::chunk_decode, kAfterChunks) != nullptr;
}

bool module_has_device_chunk_decode(const mans_backend_module* m) {
    return m && (m->caps & (MANS_BACKEND_CAP_DEVICE_CHUNKS | MANS_BACKEND_CAP_DEVICE_CHUNK_DECODE)) &&
           field_or_null(m, &mans_backend_module::chunk_decode, kAfterChunks) != nullptr;
}

void (*module_end_host_call(const mans_backend_module* m))(void) {
    return m ? field_or_null(m, &mans_backend_module::end_host_call,
                             offsetof(mans_backend_module, end_host_call) + sizeof(void*))
             : nullptr;
}

std::uint64_t module_host_window_bytes(const mans_backend_module* m) {
    return m ? field_or_null(m, &mans_backend_module::host_window_bytes,
                             offsetof(mans_backend_module, host_window_bytes) + sizeof(std::uint64_t))
             : 0;
}

std::string module_file_name(const std::string& name) { return "libmans_backend_" + name + ".so"; }

std::vector<std::string> split_search_path(const char* list) {
    std::vector<std::string> dirs;
    if (!list) return dirs;
    const char* p = list;
    while (true) {
        const char* colon = std::strchr(p, ':');
        const std::size_t len = colon ? static_cast<std::size_t>(colon - p) : std::strlen(p);
        if (len) dirs.emplace_back(p, len);
        if (!colon) break;
        p = colon + 1;
    }
    return dirs;
}

std::vector<std::string> backend_search_dirs() {
    std::vector<std::string> dirs = split_search_path(std::getenv("MANS_BACKEND_PATH"));
    auto add = [&dirs](const std::string& d) {
        if (d.empty()) return;
        for (const std::string& x : dirs)
            if (x == d) return;
        dirs.push_back(d);
    };
    // The file this function was linked into: libmans.so, or the executable
    // or plugin that holds the static libmans.
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&backend_search_dirs), &info) && info.dli_fname &&
        std::strchr(info.dli_fname, '/'))
        add(parent_dir(info.dli_fname));
    char exe[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        add(parent_dir(parent_dir(exe)) + "/lib");
    }
#ifdef MANS_INSTALL_FULL_LIBDIR
    add(MANS_INSTALL_FULL_LIBDIR);
#endif
    return dirs;
}

std::vector<std::string> module_driver_nodes(const std::string& name) {
    if (name == "hip") return {"/dev/kfd", "/dev/dxg"};
    return {};
}

ModuleState load_backend_module(const std::string& name, const std::vector<std::string>& dirs,
                                const std::vector<std::string>& driver_nodes) {
    ModuleState m;
    m.name = name;
    m.file = module_file_name(name);
    for (const std::string& d : dirs) {
        const std::string candidate = d + "/" + m.file;
        if (file_exists(candidate)) {
            m.path = candidate;
            break;  // the first one found is used, like a PATH lookup
        }
    }
    if (m.path.empty()) {
        m.load_error = name + ": " + m.file + " not found";
        return m;
    }
    if (!driver_nodes.empty()) {
        std::string tried;
        bool found = false;
        for (const std::string& node : driver_nodes) {
            found = found || file_exists(node);
            tried += (tried.empty() ? "" : ", ") + node;
        }
        if (!found) {
            const std::string what = driver_nodes.size() > 1 ? "none of " + tried + " found" : tried + " not found";
            m.load_error = name + ": no " + upper(name) + " driver (" + what + "); " + m.file + " not opened";
            return m;
        }
    }
    // RTLD_LOCAL: a module's runtime symbols must not leak into the process.
    void* handle = ::dlopen(m.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = ::dlerror();
        m.load_error = name + ": cannot load " + (why ? std::string(why) : m.path);
        return m;
    }
    auto entry = reinterpret_cast<mans_backend_entry_fn>(::dlsym(handle, MANS_BACKEND_ENTRY_SYMBOL));
    if (!entry) {
        m.load_error = name + ": " + m.path + " has no " MANS_BACKEND_ENTRY_SYMBOL " (not a mans backend module)";
        return m;
    }
    const mans_backend_module* mod = entry(MANS_BACKEND_ABI_VERSION);
    if (!mod) {
        m.load_error = name + ": " + m.path + " refused backend ABI " + std::to_string(MANS_BACKEND_ABI_VERSION);
    } else if (mod->abi_version != MANS_BACKEND_ABI_VERSION) {
        m.load_error = name + ": " + m.path + " has backend ABI " + std::to_string(mod->abi_version) +
                       ", this libmans needs " + std::to_string(MANS_BACKEND_ABI_VERSION);
    } else if (mod->struct_size < offsetof(mans_backend_module, probe) + sizeof(void*) || !mod->probe) {
        m.load_error = name + ": " + m.path + " has an incomplete module table";
    } else if (!mod->name || name != mod->name) {
        m.load_error = name + ": " + m.path + " is a module for '" + (mod->name ? mod->name : "?") + "'";
    } else {
        m.module = mod;
    }
    // Deliberately never dlclose()d (see the header), even when rejected.
    return m;
}

void probe_module(ModuleState& m) {
    if (!m.module || m.probed) return;
    mans_backend_probe_result r{};
    m.module->probe(&r);
    r.text[sizeof r.text - 1] = '\0';  // the module's text is untrusted
    m.devices = r.device_count;
    m.device = r.text;
    m.probed = true;
}

std::string module_unusable_reason(ModuleState& m, BackendOp op) {
    if (!m.module) return m.load_error;
    probe_module(m);
    if (m.devices <= 0) {
        std::string r = m.name + ": module loaded, no " + upper(m.name) + " device";
        if (!m.device.empty()) r += " (" + m.device + ")";
        return r;
    }
    if (!m.has_op(op)) return m.name + ": " + m.device + ": no " + op_label(op) + " kernel yet";
    if (!(kDispatchedCaps & op_capability(op)))
        return m.name + ": " + m.device + ": this libmans does not dispatch " + op_label(op) + " to modules yet";
    return {};
}

namespace {

struct SharedModule {
    std::once_flag loaded, probed;
    ModuleState state;
    std::mutex reason_lock;  // probe_module() writes the state
};

SharedModule* shared_module(const char* name) {
    static SharedModule cuda, hip;
    SharedModule* s = std::strcmp(name, "cuda") == 0 ? &cuda : std::strcmp(name, "hip") == 0 ? &hip : nullptr;
    if (s)
        std::call_once(s->loaded, [s, name] {
            s->state = load_backend_module(name, backend_search_dirs(), module_driver_nodes(name));
        });
    return s;
}

void probe_shared(SharedModule* s) {
    std::call_once(s->probed, [s] {
        std::lock_guard<std::mutex> g(s->reason_lock);
        probe_module(s->state);
    });
}

}  // namespace

bool gpu_module_usable(const char* name, BackendOp op) {
    SharedModule* s = shared_module(name);
    // No probe (no GPU runtime start-up) unless the operation could run.
    if (!s || !s->state.has_op(op) || !(kDispatchedCaps & op_capability(op))) return false;
    probe_shared(s);
    return s->state.usable_for(op);
}

std::string gpu_module_device(const char* name) {
    SharedModule* s = shared_module(name);
    if (!s || !s->state.module) return {};
    probe_shared(s);
    std::lock_guard<std::mutex> g(s->reason_lock);
    return s->state.devices > 0 ? s->state.device : std::string();
}

const mans_backend_module* gpu_module_for(const char* name, BackendOp op) {
    if (!gpu_module_usable(name, op)) return nullptr;
    return shared_module(name)->state.module;
}

std::string gpu_module_reason(const char* name, BackendOp op) {
    SharedModule* s = shared_module(name);
    if (!s) return std::string(name) + ": unknown backend";
    probe_shared(s);
    std::lock_guard<std::mutex> g(s->reason_lock);
    return module_unusable_reason(s->state, op);
}

}  // namespace mans::detail
