// mans.hpp - C++ API of the mans compression library (stable).
//
// zstd-style: the caller owns every buffer, sizes are queried first
// (compress_bound), and every call returns a Result that carries either a
// size or a pinned error code. Nothing here throws, aborts or prints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "mans/mans.h"

namespace mans {

// Mirrors mans_status one to one (same numbers; see mans.h for the table).
enum class Errc : int {
    ok = MANS_OK,
    invalid_argument = MANS_ERR_INVALID_ARGUMENT,
    unsupported_dtype = MANS_ERR_UNSUPPORTED_DTYPE,
    dst_too_small = MANS_ERR_DST_TOO_SMALL,
    size_not_multiple = MANS_ERR_SIZE_NOT_MULTIPLE,
    backend_unavailable = MANS_ERR_BACKEND_UNAVAILABLE,
    target_unreachable = MANS_ERR_TARGET_UNREACHABLE,
    bad_magic = MANS_ERR_BAD_MAGIC,
    unsupported_version = MANS_ERR_UNSUPPORTED_VERSION,
    truncated = MANS_ERR_TRUNCATED,
    corrupt_header = MANS_ERR_CORRUPT_HEADER,
    header_checksum = MANS_ERR_HEADER_CHECKSUM,
    corrupt_block = MANS_ERR_CORRUPT_BLOCK,
    content_checksum = MANS_ERR_CONTENT_CHECKSUM,
    trailing_bytes = MANS_ERR_TRAILING_BYTES,
    out_of_memory = MANS_ERR_OUT_OF_MEMORY,
    io = MANS_ERR_IO,
    internal = MANS_ERR_INTERNAL,
};

inline const char* errc_name(Errc e) { return mans_status_name(static_cast<mans_status>(e)); }
inline const char* errc_message(Errc e) { return mans_status_message(static_cast<mans_status>(e)); }

enum class DType : std::uint8_t {
    u8 = MANS_DTYPE_U8,
    u16 = MANS_DTYPE_U16,
    u32 = MANS_DTYPE_U32,
    u64 = MANS_DTYPE_U64,
    i16 = MANS_DTYPE_I16,
    i32 = MANS_DTYPE_I32,
    i64 = MANS_DTYPE_I64,
};

// Bytes per element; 0 for a value that is not a DType.
std::size_t dtype_size(DType t) noexcept;
// "u16", "i32", ...; nullptr for a value that is not a DType.
const char* dtype_name(DType t) noexcept;
// Parses "u16", "uint16", "i32", "int32", ...; false when unknown.
bool parse_dtype(const char* text, DType* out) noexcept;

enum class Backend : std::uint8_t {
    automatic = MANS_BACKEND_AUTO,
    cpu = MANS_BACKEND_CPU,
    cuda = MANS_BACKEND_CUDA,  // run-time module; backend_report() says why it is unavailable
    hip = MANS_BACKEND_HIP,
};

enum class Operation : std::uint8_t {
    compress = MANS_OP_COMPRESS,
    decompress = MANS_OP_DECOMPRESS,
    prism_compress = MANS_OP_PRISM_COMPRESS,
    prism_decompress = MANS_OP_PRISM_DECOMPRESS,
};

// ok when `b` can run `op` here, backend_unavailable when it is known but
// cannot (module missing or unloadable, no device, no kernel for op),
// invalid_argument for a value that is no Backend or Operation.
// `automatic` is always ok (the CPU is its fallback) and loads no module:
// the GPU modules are opened when an input is large enough to try them.
Errc backend_status(Backend b, Operation op) noexcept;
// The same for Operation::compress.
Errc backend_status(Backend b) noexcept;

// One line: what `b` resolves to for `op` and why GPU backends are not used,
// e.g. "cpu (avx2); cuda: libmans_backend_cuda.so not found; hip: ...".
// See mans_backend_report() in mans.h. Never nullptr; valid for the process.
const char* backend_report(Backend b, Operation op, bool force_scalar = false) noexcept;

// What `b` resolves to here, e.g. "cpu (avx2)"; never nullptr.
const char* backend_description(Backend b, bool force_scalar) noexcept;

// A size or an error. `if (r)` is true on success.
struct Result {
    Errc code = Errc::ok;
    std::size_t size = 0;
    explicit operator bool() const noexcept { return code == Errc::ok; }
    static Result fail(Errc e) noexcept { return {e, 0}; }
};

struct CompressConfig {
    DType dtype = DType::u16;
    std::size_t block_bytes = 0;  // raw bytes per block: 0 = default (128 KiB), else 4 KiB..64 MiB
    int threads = 0;              // 0 = all OpenMP threads (never more than blocks); never changes the bytes
    Backend backend = Backend::automatic;
    bool force_scalar = false;    // disable SIMD kernels; never changes the bytes
    std::uint32_t rank = 0;       // optional shape recorded in the stream (0 = none)
    std::uint64_t dims[4] = {0, 0, 0, 0};
};

struct DecompressConfig {
    int threads = 0;
    Backend backend = Backend::automatic;
    bool force_scalar = false;
};

using FrameInfo = mans_frame_info;

inline constexpr std::size_t kDefaultBlockBytes = 131072;
inline constexpr std::size_t kMinBlockBytes = 4096;       // smallest CompressConfig::block_bytes
inline constexpr std::size_t kMaxBlockBytes = 64u << 20;  // largest CompressConfig::block_bytes
inline constexpr int kMaxThreads = 4096;                  // larger `threads` values are invalid

// Largest stream compress() can produce for src_bytes of input; 0 when that
// size does not fit in a size_t.
std::size_t compress_bound(std::size_t src_bytes) noexcept;

// Buffers: src and dst may have any alignment. Elements are little-endian
// (the layout of every supported host).

// One-shot calls (allocate scratch internally). Result.size = bytes written.
Result compress(void* dst, std::size_t dst_cap, const void* src, std::size_t src_bytes,
                const CompressConfig& cfg) noexcept;
Result decompress(void* dst, std::size_t dst_cap, const void* src, std::size_t src_bytes,
                  const DecompressConfig& cfg = {}) noexcept;

// Validates header, index and header checksum; fills *info.
Errc get_frame_info(const void* src, std::size_t src_bytes, FrameInfo* info) noexcept;

// Reusable contexts keep their scratch buffers between calls, which matters for
// many small inputs (HDF5 chunks). Not thread-safe: one context per thread.
class CompressContext {
public:
    CompressContext();
    ~CompressContext();
    CompressContext(CompressContext&&) noexcept;
    CompressContext& operator=(CompressContext&&) noexcept;
    CompressContext(const CompressContext&) = delete;
    CompressContext& operator=(const CompressContext&) = delete;

    Result compress(void* dst, std::size_t dst_cap, const void* src, std::size_t src_bytes,
                    const CompressConfig& cfg) noexcept;

    struct Impl;
private:
    std::unique_ptr<Impl> impl_;
};

class DecompressContext {
public:
    DecompressContext();
    ~DecompressContext();
    DecompressContext(DecompressContext&&) noexcept;
    DecompressContext& operator=(DecompressContext&&) noexcept;
    DecompressContext(const DecompressContext&) = delete;
    DecompressContext& operator=(const DecompressContext&) = delete;

    Result decompress(void* dst, std::size_t dst_cap, const void* src, std::size_t src_bytes,
                      const DecompressConfig& cfg = {}) noexcept;

    struct Impl;
private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace mans
