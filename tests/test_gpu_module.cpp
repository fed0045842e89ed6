// test_gpu_module.cpp - the real GPU modules (backends/gpu) as this machine
// has them. Everywhere: a built CUDA module loads without a GPU or driver
// and claims exactly MANS compression and decompression (encode_blocks,
// decode_blocks) and the device-memory API (chunk_encode, chunk_decode).
// With a device: its warp rANS decoder (the MANS_HD lane step of the CPU
// decoder, ballot-ordered words) gives the CPU decoder's tokens on
// CPU-encoded streams. Without one the device part says
// so and is skipped.
#include <sys/stat.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "backend.hpp"
#include "core/byte_io.hpp"
#include "core/module_loader.hpp"
#include "entropy/token_stream.hpp"

using namespace mans::detail;

namespace {

bool exists(const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0;
}

// decode_token_stream() hands its RansDecodeArgs to this "kernel", which
// forwards them to the module under test.
const mans_backend_module* g_module = nullptr;
std::string g_runtime_error;

bool module_decode(const RansDecodeArgs& a) {
    mans_backend_rans_stream s{};
    s.table = a.table;
    s.contexts = a.contexts;
    s.prob_bits = a.prob_bits;
    s.tokens = a.layout.n;
    s.lanes = a.layout.lanes;
    for (unsigned j = 0; j < kMaxLanes; ++j) s.states[j] = a.states[j];
    s.words = a.words;
    s.nwords = a.nwords;
    s.out = a.out;
    mans_backend_probe_result err{};
    const int r = g_module->rans_decode_lanes(&s, &err);
    if (r < 0) g_runtime_error = err.text;
    return r == 1;
}

// The module of `name` from the build's lib folder; null (with a message)
// when it is not built or does not load.
ModuleState* built_module(const char* name, ModuleState& m) {
    const std::string dir = MANS_GPU_MODULE_DIR;
    if (!exists(dir + "/" + module_file_name(name))) {
        WARN(name << ": module not built in " << dir << ": skipped");
        return nullptr;
    }
    m = load_backend_module(name, {dir});
    if (!m.module) {
        WARN(name << ": module does not load here (" << m.load_error << "): skipped");
        return nullptr;
    }
    return &m;
}

// The same, probed; null (with a message) also when it finds no device.
ModuleState* device_module(const char* name, ModuleState& m) {
    if (!built_module(name, m)) return nullptr;
    probe_module(m);
    if (m.devices <= 0) {
        WARN(name << ": no device (" << m.device << "): device checks skipped");
        return nullptr;
    }
    return &m;
}

}  // namespace

TEST_CASE("a built CUDA module loads on any machine and claims MANS coding, the device API and PRISM compression", "[gpu]") {
    const std::string path = std::string(MANS_GPU_MODULE_DIR) + "/" + module_file_name("cuda");
    if (!exists(path)) {
        WARN("cuda: module not built: skipped");
        return;
    }
    // The CUDA runtime is linked statically and opens the driver itself, so
    // the module loads without libcuda and without a GPU.
    ModuleState m = load_backend_module("cuda", {MANS_GPU_MODULE_DIR});
    INFO(m.load_error);
    REQUIRE(m.module != nullptr);
    CHECK((m.module->caps & 0xffffu) == (MANS_BACKEND_CAP_MANS_COMPRESS | MANS_BACKEND_CAP_MANS_DECOMPRESS |
                                         MANS_BACKEND_CAP_DEVICE_CHUNKS | MANS_BACKEND_CAP_PRISM_COMPRESS |
                                         MANS_BACKEND_CAP_PRISM_DECOMPRESS));
    CHECK(m.module->struct_size == sizeof(mans_backend_module));
    CHECK(m.module->chunk_encode != nullptr);
    CHECK(m.module->chunk_decode != nullptr);
    CHECK(m.has_op(BackendOp::mans_decompress));
    CHECK(m.has_op(BackendOp::mans_compress));
    CHECK(m.has_op(BackendOp::prism_compress));
    CHECK(m.module->prism_compress != nullptr);
    CHECK(m.has_op(BackendOp::prism_decompress));
    CHECK(m.module->prism_decompress != nullptr);
    CHECK((m.module->caps & MANS_BACKEND_CAP_RANS_DECODE_TEST) != 0);
    probe_module(m);
    INFO("probe: " << m.devices << " device(s), " << m.device);
    CHECK(!m.device.empty());
    // Without a device no operation is the module's (with one, its self-test decides).
    if (m.devices == 0) CHECK(!module_unusable_reason(m, BackendOp::prism_decompress).empty());
}

// Built with MANS_HIP_COMPRESS (the default) it compresses and decompresses
// both codecs; without, it decompresses only: MANS streams (host and device
// memory) and PRISM archives.
TEST_CASE("the HIP module decompresses both codecs, also through the device-memory API; compression as built",
          "[gpu]") {
    ModuleState m;
    if (!built_module("hip", m)) return;
    const bool compresses = (m.module->caps & MANS_BACKEND_CAP_MANS_COMPRESS) != 0;
    INFO("compression built: " << compresses);
    CHECK(compresses == (MANS_TEST_HIP_COMPRESS != 0));  // the CMake option
    if (compresses) {
        CHECK((m.module->caps & 0xffffu) == (MANS_BACKEND_CAP_MANS_COMPRESS | MANS_BACKEND_CAP_MANS_DECOMPRESS |
                                             MANS_BACKEND_CAP_DEVICE_CHUNKS | MANS_BACKEND_CAP_PRISM_COMPRESS |
                                             MANS_BACKEND_CAP_PRISM_DECOMPRESS));
    } else {
        CHECK((m.module->caps & 0xffffu) == (MANS_BACKEND_CAP_MANS_DECOMPRESS | MANS_BACKEND_CAP_DEVICE_CHUNK_DECODE |
                                             MANS_BACKEND_CAP_PRISM_DECOMPRESS));
    }
    CHECK(m.module->chunk_decode != nullptr);
    CHECK((m.module->chunk_encode != nullptr) == compresses);
    CHECK((m.module->encode_blocks != nullptr) == compresses);
    CHECK(module_has_device_chunk_decode(m.module));
    CHECK(module_has_device_chunks(m.module) == compresses);
    CHECK(m.has_op(BackendOp::mans_decompress));
    CHECK(m.has_op(BackendOp::mans_compress) == compresses);
    CHECK(m.has_op(BackendOp::prism_compress) == compresses);
    CHECK(m.has_op(BackendOp::prism_decompress));
    CHECK(m.module->prism_decompress != nullptr);
    CHECK((m.module->prism_compress != nullptr) == compresses);
}

TEST_CASE("GPU warp rANS decoder equals the CPU decoder", "[gpu]") {
    for (const char* name : {"cuda", "hip"}) {
        ModuleState state;
        ModuleState* m = device_module(name, state);
        if (!m) continue;
        REQUIRE(m->module->rans_decode_lanes != nullptr);
        WARN(name << ": testing on " << m->device);
        g_module = m->module;
        const RansKernels& cpu = cpu_backend().kernels(true);
        const RansKernels gpu{"gpu-test", "module warp decoder", cpu.encode, module_decode, nullptr, nullptr};
        std::mt19937_64 rng(7);
        TokenStreamScratch sc;
        int streams = 0;
        for (std::size_t n : {1u, 31u, 32u, 33u, 1000u, 4096u, 65537u}) {
            for (unsigned lanes : {1u, 8u, 32u}) {
                for (int shape = 0; shape < 3; ++shape) {
                    const LaneLayout lay = LaneLayout::make(n, lanes);
                    std::vector<std::uint8_t> tokens(lay.slots(), 0);
                    for (std::size_t t = 0; t < lay.seg; ++t)
                        for (unsigned j = 0; j < lay.active_at(t); ++j) {
                            const std::uint64_t r = rng();
                            tokens[t * lanes + j] = shape == 0   ? static_cast<std::uint8_t>(r)
                                                    : shape == 1 ? static_cast<std::uint8_t>(__builtin_ctzll(r | (1ull << 40)))
                                                                 : static_cast<std::uint8_t>((t / 17 + j) & 0x3f);
                        }
                    std::vector<std::uint8_t> enc;
                    REQUIRE(encode_token_stream(tokens.data(), lay, cpu, sc, enc));
                    INFO(name << " n=" << n << " lanes=" << lanes << " shape=" << shape);
                    std::vector<std::uint8_t> out_cpu, out_gpu;
                    LaneLayout l1{}, l2{};
                    ByteReader r1(enc.data(), enc.size()), r2(enc.data(), enc.size());
                    REQUIRE(decode_token_stream(r1, n, cpu, sc, out_cpu, &l1));
                    g_runtime_error.clear();
                    const bool ok = decode_token_stream(r2, n, gpu, sc, out_gpu, &l2);
                    INFO("runtime error: " << g_runtime_error);
                    REQUIRE(g_runtime_error.empty());
                    REQUIRE(ok);
                    CHECK(out_gpu == out_cpu);
                    // A damaged word: both decoders must agree that it fails
                    // (or, rarely, both decode the same tokens).
                    if (enc.size() > 8) {
                        std::vector<std::uint8_t> bad = enc;
                        bad[bad.size() - 3] ^= 0x5a;
                        ByteReader b1(bad.data(), bad.size()), b2(bad.data(), bad.size());
                        std::vector<std::uint8_t> o1, o2;
                        const bool c1 = decode_token_stream(b1, n, cpu, sc, o1, &l1);
                        const bool c2 = decode_token_stream(b2, n, gpu, sc, o2, &l2);
                        CHECK(c1 == c2);
                        if (c1 && c2) CHECK(o1 == o2);
                    }
                    ++streams;
                }
            }
        }
        CHECK(streams == 63);
    }
}
