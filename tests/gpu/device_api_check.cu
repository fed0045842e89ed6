// device_api_check.cu - the device-memory API (mans/mans_device.h) on a
// real CUDA device: chunks in device memory are compressed and decompressed
// on a stream, and every stream must equal the CPU's mans_compress stream
// and decode to the input, and 48 damaged streams in one batch must get
// the CPU's statuses; PRISM fields of 1^3, 17^3 and 64^3 f32 in device
// memory get mans_prism_compress's archive, and retrieved into device
// memory (coarse, refined, full) give mans_prism_retrieve's values. With
// --bench, also times 1 GiB of u16 (detector-like data, 4 MiB chunks)
// device to device, and a 512^3 f32 PRISM field from device memory to its
// host archive and its full retrieval from that archive to device memory.
//
// Without a CUDA device it prints "SKIP: ..." and exits 77, which ctest
// (`device_api_gpu`) reports as skipped; scripts/device-check.sh runs it on
// a GPU.
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "mans/mans.h"
#include "mans/mans_device.h"
#include "mans/prism.h"

namespace {

using Bytes = std::vector<std::uint8_t>;

int failures = 0;
#define CHECK(cond, ...)                              \
    do {                                              \
        if (!(cond)) {                                \
            std::printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            std::printf(__VA_ARGS__);                 \
            std::printf("\n");                        \
            ++failures;                               \
        }                                             \
    } while (0)

bool cuda_ok(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    std::printf("FAIL %s: %s\n", what, cudaGetErrorString(e));
    ++failures;
    return false;
}

// Deterministic data: a slow wave plus noise, and runs, in the dtype's width.
Bytes make_data(std::size_t esize, std::size_t n, std::uint32_t seed) {
    Bytes b(n * esize);
    std::uint32_t x = seed * 2654435761u + 1;
    for (std::size_t i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        std::uint64_t v = 1500 + (i / 97) % 300 + ((x >> 24) & 15);
        if ((i / 4096) % 3 == 2) v = x;  // a random stretch
        std::memcpy(&b[i * esize], &v, esize);
    }
    return b;
}

Bytes cpu_compress(const Bytes& raw, mans_dtype dt) {
    mans_cctx* c = mans_cctx_create();
    mans_cctx_set_param(c, MANS_PARAM_DTYPE, dt);
    mans_cctx_set_param(c, MANS_PARAM_BACKEND, MANS_BACKEND_CPU);
    Bytes out(mans_compress_bound(raw.size()));
    size_t n = 0;
    const mans_status st = mans_compress(c, out.data(), out.size(), raw.data(), raw.size(), &n);
    mans_cctx_free(c);
    CHECK(st == MANS_OK, "cpu compress: %s", mans_status_name(st));
    out.resize(n);
    return out;
}

// Device copies of a list of host buffers, with the device array of their
// pointers and sizes.
struct DeviceChunks {
    std::vector<void*> ptrs;
    std::vector<size_t> bytes;
    void** d_ptrs = nullptr;
    size_t* d_bytes = nullptr;
    DeviceChunks(const std::vector<Bytes>& host, size_t capacity) {
        for (const Bytes& h : host) {
            void* p = nullptr;
            cuda_ok(cudaMalloc(&p, capacity ? capacity : 1), "cudaMalloc chunk");
            if (!h.empty()) cuda_ok(cudaMemcpy(p, h.data(), h.size(), cudaMemcpyHostToDevice), "copy in");
            ptrs.push_back(p);
            bytes.push_back(h.size());
        }
        cuda_ok(cudaMalloc(reinterpret_cast<void**>(&d_ptrs), ptrs.size() * sizeof(void*)), "cudaMalloc ptrs");
        cuda_ok(cudaMalloc(reinterpret_cast<void**>(&d_bytes), bytes.size() * sizeof(size_t)), "cudaMalloc sizes");
        cuda_ok(cudaMemcpy(d_ptrs, ptrs.data(), ptrs.size() * sizeof(void*), cudaMemcpyHostToDevice), "ptrs");
        cuda_ok(cudaMemcpy(d_bytes, bytes.data(), bytes.size() * sizeof(size_t), cudaMemcpyHostToDevice), "sizes");
    }
    ~DeviceChunks() {
        for (void* p : ptrs) cudaFree(p);
        cudaFree(d_ptrs);
        cudaFree(d_bytes);
    }
    Bytes fetch(size_t c, size_t n) const {
        Bytes h(n);
        if (n) cuda_ok(cudaMemcpy(h.data(), ptrs[c], n, cudaMemcpyDeviceToHost), "copy out");
        return h;
    }
};

struct DeviceResults {
    size_t* d_sizes = nullptr;
    mans_status* d_status = nullptr;
    explicit DeviceResults(size_t n) {
        cuda_ok(cudaMalloc(reinterpret_cast<void**>(&d_sizes), n * sizeof(size_t)), "cudaMalloc out sizes");
        cuda_ok(cudaMalloc(reinterpret_cast<void**>(&d_status), n * sizeof(mans_status)), "cudaMalloc statuses");
    }
    ~DeviceResults() {
        cudaFree(d_sizes);
        cudaFree(d_status);
    }
    void fetch(size_t n, std::vector<size_t>* sizes, std::vector<mans_status>* st) const {
        sizes->resize(n);
        st->resize(n);
        cuda_ok(cudaMemcpy(sizes->data(), d_sizes, n * sizeof(size_t), cudaMemcpyDeviceToHost), "sizes out");
        cuda_ok(cudaMemcpy(st->data(), d_status, n * sizeof(mans_status), cudaMemcpyDeviceToHost), "statuses out");
    }
};

// Compresses and decompresses `chunks` on the device; returns the seconds
// of each direction (events on the stream) in *t_comp / *t_decomp.
void round_trip(mans_device* dev, mans_dtype dt, const std::vector<Bytes>& chunks, bool compare_cpu, double* t_comp,
                double* t_decomp) {
    size_t max_bytes = 0;
    for (const Bytes& c : chunks) max_bytes = c.size() > max_bytes ? c.size() : max_bytes;
    const size_t cap = mans_device_compress_max_output_bytes(max_bytes);
    const size_t n = chunks.size();
    cudaStream_t stream;
    cuda_ok(cudaStreamCreate(&stream), "stream");
    cudaEvent_t e0, e1, e2;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventCreate(&e2);
    DeviceChunks in(chunks, max_bytes);
    DeviceChunks comp(std::vector<Bytes>(n), cap);
    DeviceChunks back(std::vector<Bytes>(n), max_bytes);
    DeviceResults rc(n), rd(n);
    size_t temp_c = 0, temp_d = 0;
    CHECK(mans_device_compress_temp_bytes(dev, dt, 0, n, max_bytes, &temp_c) == MANS_OK, "temp query");
    CHECK(mans_device_decompress_temp_bytes(dev, n, max_bytes, 0, &temp_d) == MANS_OK, "temp query");
    void* temp = nullptr;
    if (!cuda_ok(cudaMalloc(&temp, temp_c > temp_d ? temp_c : temp_d), "cudaMalloc temp")) return;
    cudaEventRecord(e0, stream);
    mans_status st = mans_device_compress_async(dev, dt, 0, in.d_ptrs, in.d_bytes, max_bytes, n, temp, temp_c,
                                                comp.d_ptrs, cap, rc.d_sizes, rc.d_status, stream);
    CHECK(st == MANS_OK, "compress_async: %s", mans_status_name(st));
    cudaEventRecord(e1, stream);
    // The compressed sizes stay on the device: the decoder reads them there.
    st = mans_device_decompress_async(dev, comp.d_ptrs, rc.d_sizes, n, 0, temp, temp_d, back.d_ptrs, max_bytes,
                                      rd.d_sizes, rd.d_status, stream);
    CHECK(st == MANS_OK, "decompress_async: %s", mans_status_name(st));
    cudaEventRecord(e2, stream);
    cuda_ok(cudaStreamSynchronize(stream), "stream sync");
    float ms1 = 0, ms2 = 0;
    cudaEventElapsedTime(&ms1, e0, e1);
    cudaEventElapsedTime(&ms2, e1, e2);
    *t_comp = ms1 / 1e3;
    *t_decomp = ms2 / 1e3;
    std::vector<size_t> csize, dsize;
    std::vector<mans_status> cst, dst;
    rc.fetch(n, &csize, &cst);
    rd.fetch(n, &dsize, &dst);
    for (size_t c = 0; c < n; ++c) {
        CHECK(cst[c] == MANS_OK, "chunk %zu compress status %s", c, mans_status_name(cst[c]));
        CHECK(dst[c] == MANS_OK, "chunk %zu decompress status %s", c, mans_status_name(dst[c]));
        if (cst[c] != MANS_OK || dst[c] != MANS_OK) continue;
        if (compare_cpu) {
            const Bytes cpu = cpu_compress(chunks[c], dt);
            CHECK(csize[c] == cpu.size() && comp.fetch(c, csize[c]) == cpu, "chunk %zu: stream differs from the CPU's",
                  c);
        }
        CHECK(dsize[c] == chunks[c].size() && back.fetch(c, dsize[c]) == chunks[c], "chunk %zu: decode differs", c);
    }
    cudaFree(temp);
    cudaStreamDestroy(stream);
}

mans_status cpu_decompress_status(const Bytes& stream, size_t cap) {
    mans_dctx* d = mans_dctx_create();
    mans_dctx_set_param(d, MANS_PARAM_BACKEND, MANS_BACKEND_CPU);
    Bytes out(cap ? cap : 1);
    size_t n = 0;
    const mans_status st = mans_decompress(d, out.data(), cap, stream.data(), stream.size(), &n);
    mans_dctx_free(d);
    return st;
}

// Damaged copies of a CPU stream (bytes flipped, cut short, one byte
// added), decoded in one batch: each chunk must get the CPU's status.
void damaged_streams(mans_device* dev) {
    const Bytes raw = make_data(2, 50000, 77);
    const Bytes good = cpu_compress(raw, MANS_DTYPE_U16);
    std::vector<Bytes> streams;
    std::vector<mans_status> expect;
    std::uint32_t x = 12345;
    for (int i = 0; i < 48; ++i) {
        Bytes s = good;
        x = x * 1664525u + 1013904223u;
        if (i % 4 == 0) s.resize(x % s.size());
        else if (i % 4 == 1) s.push_back(0);
        else s[x % s.size()] ^= static_cast<std::uint8_t>(1u << (i % 8));
        expect.push_back(cpu_decompress_status(s, raw.size()));
        streams.push_back(s);
    }
    size_t max_in = 0;
    for (const Bytes& s : streams) max_in = s.size() > max_in ? s.size() : max_in;
    const size_t n = streams.size();
    DeviceChunks in(streams, max_in);
    DeviceChunks back(std::vector<Bytes>(n), raw.size());
    DeviceResults r(n);
    size_t temp_bytes = 0;
    CHECK(mans_device_decompress_temp_bytes(dev, n, raw.size(), 0, &temp_bytes) == MANS_OK, "temp query");
    void* temp = nullptr;
    if (!cuda_ok(cudaMalloc(&temp, temp_bytes), "cudaMalloc temp")) return;
    const mans_status st = mans_device_decompress_async(dev, in.d_ptrs, in.d_bytes, n, 0, temp, temp_bytes,
                                                        back.d_ptrs, raw.size(), r.d_sizes, r.d_status, nullptr);
    CHECK(st == MANS_OK, "decompress_async: %s", mans_status_name(st));
    cuda_ok(cudaDeviceSynchronize(), "sync");
    std::vector<size_t> sizes;
    std::vector<mans_status> got;
    r.fetch(n, &sizes, &got);
    int damaged = 0;
    for (size_t c = 0; c < n; ++c) {
        damaged += expect[c] != MANS_OK;
        CHECK(got[c] == expect[c], "damaged stream %zu: device %s, CPU %s", c, mans_status_name(got[c]),
              mans_status_name(expect[c]));
        if (got[c] == MANS_OK && expect[c] == MANS_OK)
            CHECK(back.fetch(c, sizes[c]) == raw, "damaged stream %zu decoded OK but differs", c);
    }
    std::printf("damaged streams: %zu in one batch (%d refused by the CPU), statuses compared\n", n, damaged);
    cudaFree(temp);
}

// The values of `archive` for a target as mans_prism_retrieve gives them
// on the host; empty on failure.
Bytes host_values(const void* archive, size_t size, mans_prism_target kind, double value) {
    mans_prism_reader* r = nullptr;
    Bytes v;
    if (mans_prism_open_memory(archive, size, &r) != MANS_OK) return v;
    mans_prism_result* res = nullptr;
    if (mans_prism_retrieve(r, kind, value, 0, &res) == MANS_OK) {
        const auto* d = static_cast<const std::uint8_t*>(mans_prism_result_data(res));
        v.assign(d, d + mans_prism_result_size(res));
    }
    mans_prism_result_free(res);
    mans_prism_close(r);
    return v;
}

// PRISM retrieval into device memory (mans_device_prism_retrieve, then
// mans_device_prism_refine): a coarse target (rel 1e-2) and the full one
// must give mans_prism_retrieve's values byte for byte; *secs: the full
// retrieval's wall time (host archive to device values, synchronous).
void prism_device_retrieval(mans_device* dev, const void* archive, size_t size, size_t value_bytes, double* secs) {
    const Bytes coarse = host_values(archive, size, MANS_PRISM_TARGET_REL, 1e-2);
    const Bytes full = host_values(archive, size, MANS_PRISM_TARGET_FULL, 0);
    CHECK(coarse.size() == value_bytes && full.size() == value_bytes, "host PRISM retrieval");
    void* d_out = nullptr;
    if (!cuda_ok(cudaMalloc(&d_out, value_bytes ? value_bytes : 1), "cudaMalloc values")) return;
    Bytes got(value_bytes);
    auto fetch = [&]() {
        got.assign(value_bytes, 0xA5);
        return cuda_ok(cudaMemcpy(got.data(), d_out, value_bytes, cudaMemcpyDeviceToHost), "copy values back");
    };
    mans_prism_reader* r = nullptr;
    CHECK(mans_prism_open_memory(archive, size, &r) == MANS_OK, "open the archive");
    mans_prism_result* x = nullptr;
    mans_status st = mans_device_prism_retrieve(dev, r, MANS_PRISM_TARGET_REL, 1e-2, d_out, value_bytes, &x);
    CHECK(st == MANS_OK, "mans_device_prism_retrieve rel 1e-2: %s", mans_status_name(st));
    if (st == MANS_OK && fetch()) CHECK(got == coarse, "device retrieval rel 1e-2: not mans_prism_retrieve's values");
    if (st == MANS_OK) {
        st = mans_device_prism_refine(dev, r, x, MANS_PRISM_TARGET_FULL, 0, d_out, value_bytes);
        CHECK(st == MANS_OK, "mans_device_prism_refine full: %s", mans_status_name(st));
        if (st == MANS_OK && fetch()) CHECK(got == full, "device refine to full: not mans_prism_retrieve's values");
    }
    mans_prism_result_free(x);
    mans_prism_close(r);
    // The full retrieval alone, timed, from a fresh reader.
    CHECK(mans_prism_open_memory(archive, size, &r) == MANS_OK, "open the archive");
    x = nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    st = mans_device_prism_retrieve(dev, r, MANS_PRISM_TARGET_FULL, 0, d_out, value_bytes, &x);
    *secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(st == MANS_OK, "mans_device_prism_retrieve full: %s", mans_status_name(st));
    if (st == MANS_OK && fetch()) CHECK(got == full, "device retrieval full: not mans_prism_retrieve's values");
    mans_prism_result_free(x);
    mans_prism_close(r);
    cudaFree(d_out);
}

// PRISM: an n^3 f32 field (smooth, with a block of fill values) in device
// memory through mans_device_prism_compress: the archive must be
// mans_prism_compress's on the CPU; *secs: the device call's wall time
// (device to host archive: the call is synchronous). Then the CPU's archive
// is retrieved into device memory (prism_device_retrieval; *retrieve_secs).
void prism_field(mans_device* dev, std::size_t n, double* secs, double* retrieve_secs) {
    const std::size_t count = n * n * n;
    std::vector<float> field(count);
    std::uint32_t s = 7;
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t x = i % n, y = i / n % n, z = i / (n * n);
        s = s * 1664525u + 1013904223u;
        field[i] = static_cast<float>(std::sin(x / 40.0) * std::cos(y / 55.0) + 0.5 * std::sin(z / 30.0) +
                                      1e-4 * (s >> 16) / 65536.0);
        if (x < n / 8 && y < n / 8) field[i] = -1e10f;  // land: detected as fill
    }
    mans_prism_params p;
    mans_prism_params_init(&p);
    p.rank = 3;
    p.dims[0] = p.dims[1] = p.dims[2] = n;
    p.mode = MANS_PRISM_REL;
    p.error_bound = 1e-3;
    void* cpu = nullptr;
    size_t cpu_size = 0;
    CHECK(mans_prism_compress(field.data(), count * 4, &p, &cpu, &cpu_size) == MANS_OK, "CPU PRISM compress");
    void* d_field = nullptr;
    if (!cuda_ok(cudaMalloc(&d_field, count * 4), "cudaMalloc field") ||
        !cuda_ok(cudaMemcpy(d_field, field.data(), count * 4, cudaMemcpyHostToDevice), "copy field")) {
        mans_prism_free(cpu);
        return;
    }
    void* gpu = nullptr;
    size_t gpu_size = 0;
    const auto t0 = std::chrono::steady_clock::now();
    const mans_status st = mans_device_prism_compress(dev, d_field, count * 4, &p, &gpu, &gpu_size);
    *secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(st == MANS_OK, "mans_device_prism_compress %zu^3: %s", n, mans_status_name(st));
    CHECK(st != MANS_OK || (gpu_size == cpu_size && std::memcmp(gpu, cpu, cpu_size) == 0),
          "PRISM %zu^3: the device's archive (%zu bytes) differs from the CPU's (%zu bytes)", n, gpu_size, cpu_size);
    mans_prism_free(gpu);
    cudaFree(d_field);
    if (cpu) prism_device_retrieval(dev, cpu, cpu_size, count * 4, retrieve_secs);
    mans_prism_free(cpu);
}

}  // namespace

int main(int argc, char** argv) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("SKIP: no CUDA device (device_api_check needs one)\n");
        return 77;  // ctest's SKIP_RETURN_CODE
    }
    mans_device* dev = nullptr;
    if (mans_device_open(MANS_BACKEND_CUDA, &dev) != MANS_OK) {
        std::printf("FAIL: mans_device_open(cuda): %s\n", mans_device_unavailable_reason(MANS_BACKEND_CUDA));
        return 1;
    }
    std::printf("device: %s\n", mans_device_description(dev));
    const struct {
        mans_dtype dt;
        size_t esize;
    } types[] = {{MANS_DTYPE_U8, 1}, {MANS_DTYPE_U16, 2}, {MANS_DTYPE_U32, 4}, {MANS_DTYPE_U64, 8},
                 {MANS_DTYPE_I16, 2}, {MANS_DTYPE_I32, 4}, {MANS_DTYPE_I64, 8}};
    for (const auto& t : types) {
        std::vector<Bytes> chunks;
        std::uint32_t seed = 1;
        for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{4097}, size_t{300001}}) chunks.push_back(make_data(t.esize, n, seed++));
        double tc = 0, td = 0;
        const int before = failures;
        round_trip(dev, t.dt, chunks, true, &tc, &td);
        std::printf("%s %zu-byte elements, 5 chunks (0 to 300,001 elements): %s\n", failures == before ? "ok  " : "FAIL",
                    t.esize, failures == before ? "CPU's streams, decoded" : "see above");
    }
    {
        const int before = failures;
        damaged_streams(dev);
        std::printf("%s damaged streams: the CPU's statuses\n", failures == before ? "ok  " : "FAIL");
    }
    for (std::size_t n : {std::size_t{1}, std::size_t{17}, std::size_t{64}}) {
        const int before = failures;
        double secs = 0, rsecs = 0;
        prism_field(dev, n, &secs, &rsecs);
        std::printf("%s PRISM f32 %zu^3 from device memory and back: %s\n", failures == before ? "ok  " : "FAIL", n,
                    failures == before ? "the CPU's archive; its values, coarse, refined and full" : "see above");
    }
    if (argc > 1 && std::strcmp(argv[1], "--bench") == 0) {
        const int before = failures;
        double secs = 0, rsecs = 0;
        prism_field(dev, 512, &secs, &rsecs);
        const double gb = 512.0 * 512 * 512 * 4 / 1e9;
        std::printf("bench PRISM f32 512^3 (512 MiB, rel 1e-3), device memory to a host archive: %.3f s (%.2f GB/s)%s\n",
                    secs, gb / secs, failures == before ? ", the CPU's archive" : " [with failures above]");
        std::printf("bench PRISM f32 512^3 full retrieval, host archive to device memory: %.3f s (%.2f GB/s)%s\n",
                    rsecs, gb / rsecs, failures == before ? ", mans_prism_retrieve's values" : " [with failures above]");
    }
    if (argc > 1 && std::strcmp(argv[1], "--bench") == 0) {
        const size_t chunk_bytes = size_t{4} << 20, chunks = 256;  // 1 GiB of u16
        std::vector<Bytes> data;
        for (size_t c = 0; c < chunks; ++c) data.push_back(make_data(2, chunk_bytes / 2, static_cast<std::uint32_t>(c)));
        double tc = 0, td = 0;
        const int before = failures;
        round_trip(dev, MANS_DTYPE_U16, data, false, &tc, &td);
        const double gb = static_cast<double>(chunk_bytes * chunks) / 1e9;
        std::printf("bench u16 1 GiB in 256 chunks of 4 MiB, device to device: compress %.3f s (%.2f GB/s), "
                    "decompress %.3f s (%.2f GB/s)%s\n",
                    tc, gb / tc, td, gb / td, failures == before ? "" : " [with failures above]");
    }
    mans_device_close(dev);
    std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
