// fixture_module.cpp - stand-in GPU backend modules for the loader and
// dispatch tests.
//
// Built several times (tests/CMakeLists.txt), each as libmans_backend_cuda.so
// in its own folder, with one FIXTURE_* macro choosing how it misbehaves.
// It needs no GPU runtime. FIXTURE_DECODER implements decode_blocks on the
// host with the GPU kernel's per-block body (mapping/block_batch.hpp), so
// the core's dispatch path, the module ABI and the kernel's decoder are
// tested here; FIXTURE_DECODER_FAILS fails at "run time" like a GPU out of
// memory.
#include <cstdio>
#include <vector>

#include "backend_module.hpp"
#if defined(FIXTURE_DECODER) || defined(FIXTURE_DECODER_FAILS)
#include "mapping/block_batch.hpp"
#endif

namespace {

#if defined(FIXTURE_DECODER) || defined(FIXTURE_DECODER_FAILS)
constexpr int kDevices = 1;
constexpr const char* kText = "Fixture GPU decoder";
#elif defined(FIXTURE_DEVICE) || defined(FIXTURE_CLAIMS_COMPRESS)
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

#ifdef FIXTURE_DECODER
// One "thread" per block, each with its own scratch slice, as the kernel.
int decode_blocks(const mans_backend_block_batch* batch, mans_backend_probe_result*) {
    const std::size_t slice = mans::detail::block_scratch_bytes(batch->block_elems);
    std::vector<unsigned char> scratch(slice + 16);
    auto* aligned = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(scratch.data()) + 15) & ~std::uintptr_t{15});
    for (std::uint64_t b = 0; b < batch->blocks; ++b) batch->status[b] = mans::detail::decode_batch_block(*batch, b, aligned);
    return 0;
}
#endif
#ifdef FIXTURE_DECODER_FAILS
int decode_blocks(const mans_backend_block_batch*, mans_backend_probe_result* err) {
    if (err) std::snprintf(err->text, sizeof err->text, "fixture: out of device memory");
    return -1;
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
#if defined(FIXTURE_DECODER) || defined(FIXTURE_DECODER_FAILS)
    m.caps = MANS_BACKEND_CAP_MANS_DECOMPRESS;
    m.decode_blocks = decode_blocks;
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
