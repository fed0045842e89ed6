// byte_io.hpp - little-endian loads/stores and a bounds-checked reader.
//
// Every length read from a stream goes through ByteReader, which refuses to
// move past the end of its span: the decoders never index memory with an
// unchecked value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/hd.hpp"

namespace mans::detail {

// The format is little-endian; the supported hosts (x86-64, aarch64, GPUs) are
// too, so these are plain unaligned copies.
template <typename T>
MANS_HD T load_le(const std::uint8_t* p) {
    T v;
    hd_memcpy(&v, p, sizeof(T));
    return v;
}
template <typename T>
MANS_HD void store_le(std::uint8_t* p, T v) {
    hd_memcpy(p, &v, sizeof(T));
}

// Unsigned LEB128: 7 bits per byte, low bits first, high bit = more follows.
inline constexpr unsigned kMaxVarintBytes = 10;
MANS_HD unsigned encode_varint(std::uint64_t v, std::uint8_t* out) {
    unsigned n = 0;
    while (v >= 0x80) {
        out[n++] = static_cast<std::uint8_t>(v | 0x80);
        v >>= 7;
    }
    out[n++] = static_cast<std::uint8_t>(v);
    return n;
}

// Shared by the CPU and the GPU decoders (MANS_HD).
class ByteReader {
public:
    MANS_HD ByteReader(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}

    MANS_HD std::size_t remaining() const { return static_cast<std::size_t>(end_ - p_); }
    MANS_HD const std::uint8_t* pos() const { return p_; }

    template <typename T>
    MANS_HD bool read(T* out) {
        if (remaining() < sizeof(T)) return false;
        *out = load_le<T>(p_);
        p_ += sizeof(T);
        return true;
    }
    // Reads an unsigned LEB128 value of at most `max_bytes` (1..4) bytes,
    // so that it always fits in 28 bits.
    MANS_HD bool read_varint(std::uint32_t* out, int max_bytes) {
        std::uint32_t v = 0;
        for (int i = 0; i < max_bytes && i < 4; ++i) {
            if (p_ == end_) return false;
            const std::uint8_t b = *p_++;
            v |= static_cast<std::uint32_t>(b & 0x7f) << (7 * i);
            if (!(b & 0x80)) {
                *out = v;
                return true;
            }
        }
        return false;
    }
    // Unsigned LEB128 of up to 64 bits (at most 10 bytes, no overflow).
    MANS_HD bool read_varint64(std::uint64_t* out) {
        std::uint64_t v = 0;
        for (int i = 0; i < 10; ++i) {
            if (p_ == end_) return false;
            const std::uint8_t b = *p_++;
            if (i == 9 && b > 1) return false;  // bits beyond 64
            v |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
            if (!(b & 0x80)) {
                *out = v;
                return true;
            }
        }
        return false;
    }
    MANS_HD bool take(std::size_t n, const std::uint8_t** out) {
        if (remaining() < n) return false;
        *out = p_;
        p_ += n;
        return true;
    }

private:
    const std::uint8_t* p_;
    const std::uint8_t* end_;
};

// Appends to a caller-sized buffer; `ok()` turns false instead of overflowing.
// Shared by the CPU and the GPU encoders (MANS_HD).
class ByteWriter {
public:
    MANS_HD ByteWriter(std::uint8_t* data, std::size_t cap) : begin_(data), p_(data), end_(data + cap) {}

    MANS_HD std::size_t size() const { return static_cast<std::size_t>(p_ - begin_); }
    MANS_HD std::size_t remaining() const { return ok_ ? static_cast<std::size_t>(end_ - p_) : 0; }
    MANS_HD bool ok() const { return ok_; }
    MANS_HD std::uint8_t* pos() { return p_; }

    template <typename T>
    MANS_HD void write(T v) {
        if (!reserve(sizeof(T))) return;
        store_le<T>(p_, v);
        p_ += sizeof(T);
    }
    MANS_HD void write_varint(std::uint64_t v) {
        std::uint8_t buf[kMaxVarintBytes];
        write_bytes(buf, encode_varint(v, buf));
    }
    MANS_HD void write_bytes(const void* src, std::size_t n) {
        if (!reserve(n)) return;
        if (n) hd_memcpy(p_, src, n);
        p_ += n;
    }
    // Marks n bytes as written (after the caller filled them through pos()).
    MANS_HD void advance(std::size_t n) {
        if (reserve(n)) p_ += n;
    }

private:
    MANS_HD bool reserve(std::size_t n) {
        if (!ok_ || static_cast<std::size_t>(end_ - p_) < n) {
            ok_ = false;
            return false;
        }
        return true;
    }
    std::uint8_t* begin_;
    std::uint8_t* p_;
    std::uint8_t* end_;
    bool ok_ = true;
};

}  // namespace mans::detail
