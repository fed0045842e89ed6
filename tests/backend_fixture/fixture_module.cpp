// fixture_module.cpp - stand-in GPU backend modules for the loader tests.
//
// Built several times (tests/CMakeLists.txt), each as libmans_backend_cuda.so
// in its own folder, with one FIXTURE_* macro choosing how it misbehaves.
// It needs no GPU runtime: it only fills the module table.
#include <cstdio>

#include "backend_module.hpp"

namespace {

#if defined(FIXTURE_DEVICE) || defined(FIXTURE_CLAIMS_COMPRESS)
constexpr int kDevices = 1;
constexpr const char* kText = "Fixture GPU";
#else
constexpr int kDevices = 0;
constexpr const char* kText = "fixture: no device";
#endif

void probe(mans_backend_probe_result* out) {
    out->device_count = kDevices;
    std::snprintf(out->text, sizeof out->text, "%s", kText);
}

#ifdef FIXTURE_CLAIMS_COMPRESS
int fake_compress(void*, size_t, const void*, size_t, int, size_t, size_t* out_size) {
    *out_size = 0;
    return 40;  // MANS_ERR_INTERNAL: must never be called by this libmans
}
#endif

mans_backend_module make_module() {
    mans_backend_module m{};
#ifdef FIXTURE_WRONG_ABI
    m.abi_version = 999;
#else
    m.abi_version = MANS_BACKEND_ABI_VERSION;
#endif
    m.struct_size = sizeof(mans_backend_module);
#ifdef FIXTURE_WRONG_NAME
    m.name = "hip";
#else
    m.name = "cuda";
#endif
    m.build_info = "test fixture";
    m.probe = probe;
#ifdef FIXTURE_CLAIMS_COMPRESS
    m.caps = MANS_BACKEND_CAP_MANS_COMPRESS;
    m.mans_compress = fake_compress;
#endif
    return m;
}

const mans_backend_module kModule = make_module();

}  // namespace

#ifndef FIXTURE_NO_ENTRY
extern "C" __attribute__((visibility("default"))) const mans_backend_module* mans_backend_module_entry(uint32_t) {
    return &kModule;
}
#else
extern "C" __attribute__((visibility("default"))) const mans_backend_module* some_other_function(uint32_t) {
    return &kModule;
}
#endif
