// test_backend_modules.cpp - the GPU module loader and backend selection,
// without a GPU: missing modules, files that are no library, stand-in
// modules (tests/backend_fixture) and $MANS_BACKEND_PATH. Whatever the
// modules say, the bytes written never change.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "core/module_loader.hpp"
#include "mans/mans.h"
#include "mans/mans.hpp"

using mans::detail::BackendOp;
using mans::detail::load_backend_module;
using mans::detail::module_unusable_reason;
using mans::detail::probe_module;

namespace {

std::string fixture(const char* variant) { return std::string(MANS_FIXTURE_DIR) + "/" + variant; }

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool contains(const std::string& s, const std::string& p) { return s.find(p) != std::string::npos; }

// A fresh temporary folder, removed with its files at scope exit.
struct TempDir {
    std::string path;
    std::vector<std::string> files;
    TempDir() {
        char tmpl[] = "/tmp/mans_modules_XXXXXX";
        const char* p = ::mkdtemp(tmpl);
        REQUIRE(p != nullptr);
        path = p;
    }
    std::string write(const std::string& name, const std::string& content) {
        const std::string f = path + "/" + name;
        std::ofstream(f, std::ios::binary) << content;
        files.push_back(f);
        return f;
    }
    ~TempDir() {
        for (const auto& f : files) std::remove(f.c_str());
        ::rmdir(path.c_str());
    }
};

}  // namespace

TEST_CASE("MANS_BACKEND_PATH is split on colons, empty entries skipped", "[backend]") {
    CHECK(mans::detail::split_search_path(nullptr).empty());
    CHECK(mans::detail::split_search_path("").empty());
    CHECK(mans::detail::split_search_path("::").empty());
    const auto d = mans::detail::split_search_path("/a::/b/c:");
    REQUIRE(d.size() == 2);
    CHECK(d[0] == "/a");
    CHECK(d[1] == "/b/c");
}

TEST_CASE("search folders: MANS_BACKEND_PATH first, then the binary's folders", "[backend]") {
    const char* old = std::getenv("MANS_BACKEND_PATH");
    const std::string saved = old ? old : "";
    ::setenv("MANS_BACKEND_PATH", "/first:/second", 1);
    const auto dirs = mans::detail::backend_search_dirs();
    if (old) ::setenv("MANS_BACKEND_PATH", saved.c_str(), 1); else ::unsetenv("MANS_BACKEND_PATH");
    REQUIRE(dirs.size() >= 3);
    CHECK(dirs[0] == "/first");
    CHECK(dirs[1] == "/second");
    // The test executable (static libmans) lives in <build>/tests: its own
    // folder and <build>/lib, where the GPU modules are built, follow.
    bool has_lib = false;
    for (const auto& d : dirs) has_lib |= d.size() >= 4 && d.compare(d.size() - 4, 4, "/lib") == 0;
    CHECK(has_lib);
}

TEST_CASE("a missing module is a reason, not an error", "[backend]") {
    auto m = load_backend_module("cuda", {"/nonexistent/mans", "/also/not/here"});
    CHECK(m.module == nullptr);
    CHECK(m.path.empty());
    CHECK(m.load_error == "cuda: libmans_backend_cuda.so not found");
    CHECK(module_unusable_reason(m, BackendOp::mans_compress) == m.load_error);
    auto h = load_backend_module("hip", {});
    CHECK(h.load_error == "hip: libmans_backend_hip.so not found");
}

TEST_CASE("a module behind a missing driver node is found but not opened", "[backend]") {
    CHECK(mans::detail::module_driver_nodes("hip") == std::vector<std::string>{"/dev/kfd", "/dev/dxg"});
    CHECK(mans::detail::module_driver_nodes("cuda").empty());
    auto m = load_backend_module("cuda", {fixture("no_device")}, {"/nonexistent/dev/node"});
    CHECK(m.module == nullptr);
    CHECK(contains(m.path, "/no_device/"));
    CHECK(m.load_error == "cuda: no CUDA driver (/nonexistent/dev/node not found); libmans_backend_cuda.so not opened");
    CHECK(module_unusable_reason(m, BackendOp::mans_decompress) == m.load_error);
    auto two = load_backend_module("cuda", {fixture("no_device")}, {"/nonexistent/a", "/nonexistent/b"});
    CHECK(two.load_error ==
          "cuda: no CUDA driver (none of /nonexistent/a, /nonexistent/b found); libmans_backend_cuda.so not opened");
    // Any one node that exists lets it open.
    const std::string dir = fixture("no_device");
    auto n = load_backend_module("cuda", {dir}, {"/nonexistent/a", dir});
    INFO(n.load_error);
    CHECK(n.module != nullptr);
}

TEST_CASE("the process-wide HIP module is not opened without a ROCm driver node", "[backend]") {
    bool node = false;
    for (const std::string& p : mans::detail::module_driver_nodes("hip")) node = node || ::access(p.c_str(), F_OK) == 0;
    bool built = false;
    for (const std::string& d : mans::detail::backend_search_dirs())
        built = built || ::access((d + "/" + mans::detail::module_file_name("hip")).c_str(), F_OK) == 0;
    if (node || !built) {
        WARN("skipped: " << (node ? "this machine has a ROCm driver node" : "no HIP module built"));
        return;
    }
    const std::string why = mans::detail::gpu_module_reason("hip", BackendOp::mans_decompress);
    INFO(why);
    CHECK(starts_with(why, "hip: no HIP driver (none of /dev/kfd, /dev/dxg found); "));
}

TEST_CASE("a module file that is not a library is reported with the loader's message", "[backend]") {
    TempDir t;
    const std::string f = t.write("libmans_backend_cuda.so", "this is not an ELF file\n");
    auto m = load_backend_module("cuda", {t.path});
    CHECK(m.module == nullptr);
    CHECK(m.path == f);
    INFO(m.load_error);
    CHECK(starts_with(m.load_error, "cuda: cannot load "));
    CHECK(m.load_error.find('\n') == std::string::npos);  // one line
}

TEST_CASE("stand-in module without a device", "[backend]") {
    auto m = load_backend_module("cuda", {fixture("no_device")});
    INFO(m.load_error);
    REQUIRE(m.module != nullptr);
    CHECK(m.module->caps == 0);
    CHECK_FALSE(m.has_op(BackendOp::mans_compress));
    CHECK(module_unusable_reason(m, BackendOp::mans_compress) ==
          "cuda: module loaded, no CUDA device (fixture: no device)");
    CHECK(m.probed);
    CHECK(m.devices == 0);
}

TEST_CASE("stand-in module with a device but no kernels", "[backend]") {
    auto m = load_backend_module("cuda", {fixture("device")});
    REQUIRE(m.module != nullptr);
    CHECK(module_unusable_reason(m, BackendOp::mans_compress) == "cuda: Fixture GPU: no MANS compress kernel yet");
    CHECK(module_unusable_reason(m, BackendOp::prism_decompress) ==
          "cuda: Fixture GPU: no PRISM decompress kernel yet");
    CHECK(m.devices == 1);
    CHECK_FALSE(m.usable_for(BackendOp::mans_compress));
}

TEST_CASE("a capability flag without its function counts as not implemented", "[backend]") {
    auto m = load_backend_module("cuda", {fixture("claims_compress")});
    REQUIRE(m.module != nullptr);
    CHECK((m.module->caps & MANS_BACKEND_CAP_MANS_COMPRESS) != 0);
    CHECK_FALSE(m.has_op(BackendOp::mans_compress));
    probe_module(m);
    CHECK_FALSE(m.usable_for(BackendOp::mans_compress));
    CHECK(module_unusable_reason(m, BackendOp::mans_compress) == "cuda: Fixture GPU: no MANS compress kernel yet");
}

TEST_CASE("a module that codes is usable for MANS and PRISM, both directions", "[backend]") {
    auto m = load_backend_module("cuda", {fixture("coder")});
    REQUIRE(m.module != nullptr);
    probe_module(m);
    CHECK(m.usable_for(BackendOp::mans_compress));
    CHECK(m.usable_for(BackendOp::mans_decompress));
    CHECK(m.usable_for(BackendOp::prism_compress));
    CHECK(m.usable_for(BackendOp::prism_decompress));
    CHECK(module_unusable_reason(m, BackendOp::mans_decompress).empty());
    CHECK(module_unusable_reason(m, BackendOp::prism_decompress).empty());
    // The decompress-only stand-in (as the HIP module by default) retrieves
    // PRISM and compresses neither codec.
    auto d = load_backend_module("cuda", {fixture("coder_decode_only")});
    REQUIRE(d.module != nullptr);
    probe_module(d);
    CHECK(d.usable_for(BackendOp::mans_decompress));
    CHECK(d.usable_for(BackendOp::prism_decompress));
    CHECK_FALSE(d.usable_for(BackendOp::mans_compress));
    CHECK_FALSE(d.usable_for(BackendOp::prism_compress));
    CHECK(module_unusable_reason(d, BackendOp::prism_compress) == "cuda: Fixture GPU coder: no PRISM compress kernel yet");
}

TEST_CASE("modules with a wrong ABI version, name or entry point are refused", "[backend]") {
    auto abi = load_backend_module("cuda", {fixture("wrong_abi")});
    CHECK(abi.module == nullptr);
    CHECK(contains(abi.load_error, "has backend ABI 999, this libmans needs " + std::to_string(MANS_BACKEND_ABI_VERSION)));
    CHECK(module_unusable_reason(abi, BackendOp::mans_compress) == abi.load_error);

    auto name = load_backend_module("cuda", {fixture("wrong_name")});
    CHECK(name.module == nullptr);
    CHECK(contains(name.load_error, "is a module for 'hip'"));

    auto entry = load_backend_module("cuda", {fixture("no_entry")});
    CHECK(entry.module == nullptr);
    CHECK(contains(entry.load_error, "not a mans backend module"));
}

TEST_CASE("the first module found is used, even when a later one would be better", "[backend]") {
    auto m = load_backend_module("cuda", {"/nonexistent", fixture("wrong_abi"), fixture("device")});
    CHECK(m.module == nullptr);
    CHECK(contains(m.path, "/wrong_abi/"));
    auto n = load_backend_module("cuda", {fixture("device"), fixture("no_device")});
    REQUIRE(n.module != nullptr);
    CHECK(contains(n.path, "/device/"));
}

// These run with the real modules of the build: on a machine without a GPU
// every forced GPU backend is unavailable; with one, each operation that a
// module implements and passed its self-test for runs there
// (scripts/device-check.sh).
bool gpu_runs(mans::Backend g, mans::Operation op) { return mans::backend_status(g, op) == mans::Errc::ok; }

TEST_CASE("forced GPU backends run or say why not; automatic names its choice", "[backend][api]") {
    using mans::Backend;
    using mans::Operation;
    const Operation ops[] = {Operation::compress, Operation::decompress, Operation::prism_compress,
                             Operation::prism_decompress};
    for (Backend g : {Backend::cuda, Backend::hip}) {
        const std::string name = g == Backend::cuda ? "cuda" : "hip";
        for (Operation op : ops) {
            const std::string line = mans::backend_report(g, op);
            INFO(line);
            CHECK(line.find('\n') == std::string::npos);
            if (gpu_runs(g, op)) {
                CHECK(starts_with(line, name + " ("));
            } else {
                CHECK(mans::backend_status(g, op) == mans::Errc::backend_unavailable);
                CHECK(starts_with(line, name + ": "));
            }
        }
        if (!gpu_runs(g, Operation::compress)) {
            CHECK(mans::backend_status(g) == mans::Errc::backend_unavailable);
            CHECK(std::string(mans::backend_description(g, false)) == "unavailable");
        }
    }
    const std::string cpu = mans::backend_description(Backend::cpu, false);
    CHECK(mans::backend_status(Backend::automatic, Operation::compress) == mans::Errc::ok);
    CHECK(std::string(mans::backend_report(Backend::cpu, Operation::compress)) == cpu);
    // Automatic: the first GPU that runs the operation (CUDA, then HIP)
    // from 16 MiB, else the CPU with each GPU's reason.
    for (Operation op : ops) {
        const std::string line = mans::backend_report(Backend::automatic, op);
        INFO(line);
        if (gpu_runs(Backend::cuda, op)) {
            CHECK(starts_with(line, "cuda ("));
            CHECK(contains(line, " from 16 MiB, else " + cpu));
        } else if (gpu_runs(Backend::hip, op)) {
            CHECK(starts_with(line, "hip ("));
            CHECK(contains(line, " from 16 MiB, else " + cpu + "; cuda: "));
        } else {
            CHECK(starts_with(line, cpu + "; cuda: "));
            CHECK(contains(line, "; hip: "));
        }
    }
    // Stable pointers: the same line each time.
    CHECK(mans::backend_report(Backend::automatic, Operation::compress) ==
          mans::backend_report(Backend::automatic, Operation::compress));
}

TEST_CASE("C API: forced GPU backends and the report", "[backend][api]") {
    mans_cctx* c = mans_cctx_create();
    mans_dctx* d = mans_dctx_create();
    REQUIRE(c);
    REQUIRE(d);
    using mans::Backend;
    using mans::Operation;
    const auto expect = [](Backend g, Operation op) {
        return gpu_runs(g, op) ? MANS_OK : MANS_ERR_BACKEND_UNAVAILABLE;
    };
    CHECK(mans_cctx_set_param(c, MANS_PARAM_BACKEND, MANS_BACKEND_CUDA) == expect(Backend::cuda, Operation::compress));
    CHECK(mans_cctx_set_param(c, MANS_PARAM_BACKEND, MANS_BACKEND_HIP) == expect(Backend::hip, Operation::compress));
    CHECK(mans_dctx_set_param(d, MANS_PARAM_BACKEND, MANS_BACKEND_CUDA) ==
          expect(Backend::cuda, Operation::decompress));
    CHECK(mans_cctx_set_param(c, MANS_PARAM_BACKEND, MANS_BACKEND_AUTO) == MANS_OK);
    mans_cctx_free(c);
    mans_dctx_free(d);
    // The C report is the C++ one.
    for (auto [c_op, op] : {std::pair{MANS_OP_PRISM_COMPRESS, Operation::prism_compress},
                            std::pair{MANS_OP_PRISM_DECOMPRESS, Operation::prism_decompress}}) {
        const std::string line = mans_backend_report(MANS_BACKEND_CUDA, c_op, 0);
        CHECK(line == mans::backend_report(Backend::cuda, op));
        CHECK(starts_with(line, gpu_runs(Backend::cuda, op) ? "cuda (" : "cuda: "));
    }
    CHECK(std::string(mans_backend_report(MANS_BACKEND_AUTO, static_cast<mans_operation>(99), 0)) ==
          "invalid operation");
    CHECK(std::string(mans_backend_report(static_cast<mans_backend>(77), MANS_OP_COMPRESS, 0)) ==
          "unknown backend");
}

TEST_CASE("auto and cpu write the same bytes", "[backend][api]") {
    std::vector<std::uint16_t> v(200000);
    std::uint32_t x = 12345;
    for (auto& e : v) {
        x = x * 1664525u + 1013904223u;
        e = static_cast<std::uint16_t>(1000 + (x >> 24));
    }
    const std::size_t bytes = v.size() * 2;
    std::vector<std::uint8_t> a(mans::compress_bound(bytes)), b(a.size());
    mans::CompressConfig cfg;
    cfg.backend = mans::Backend::automatic;
    const auto ra = mans::compress(a.data(), a.size(), v.data(), bytes, cfg);
    cfg.backend = mans::Backend::cpu;
    const auto rb = mans::compress(b.data(), b.size(), v.data(), bytes, cfg);
    REQUIRE(ra);
    REQUIRE(rb);
    REQUIRE(ra.size == rb.size);
    CHECK(std::equal(a.begin(), a.begin() + ra.size, b.begin()));
    // A forced GPU writes the same bytes or is unavailable.
    cfg.backend = mans::Backend::cuda;
    const auto rc = mans::compress(b.data(), b.size(), v.data(), bytes, cfg);
    if (gpu_runs(mans::Backend::cuda, mans::Operation::compress)) {
        REQUIRE(rc);
        CHECK((rc.size == ra.size && std::equal(a.begin(), a.begin() + ra.size, b.begin())));
    } else {
        CHECK(rc.code == mans::Errc::backend_unavailable);
    }
    std::vector<std::uint16_t> back(v.size());
    mans::DecompressConfig dc;
    dc.backend = mans::Backend::hip;
    const auto rd = mans::decompress(back.data(), bytes, a.data(), ra.size, dc);
    if (gpu_runs(mans::Backend::hip, mans::Operation::decompress))
        CHECK((rd && back == v));
    else
        CHECK(rd.code == mans::Errc::backend_unavailable);
}
