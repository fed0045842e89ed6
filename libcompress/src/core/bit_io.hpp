// bit_io.hpp - LSB-first bit streams for the raw (uncoded) bits of a block.
//
// Bits are packed little-endian: the first bit written is bit 0 of byte 0.
// The reader never touches memory outside its span; reading past the end
// yields zeros and sets `overrun()`, which the block decoder reports as
// corruption.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/byte_io.hpp"

namespace mans::detail {

// Writes into a caller's buffer of at least bit_writer_bytes(max_bits)
// bytes (the flush stores 8 bytes at a time). Shared by the CPU and the GPU
// encoders (MANS_HD).
MANS_HD std::size_t bit_writer_bytes(std::size_t max_bits) { return max_bits / 8 + 16; }

class BitWriter {
public:
    MANS_HD explicit BitWriter(std::uint8_t* buf) : begin_(buf), p_(buf) {}

    // Appends the low `n` bits of `v` (n <= 56 per call).
    MANS_HD void put(std::uint64_t v, unsigned n) {
        acc_ |= (v & low_bits(n)) << fill_;
        fill_ += n;
        // Store 8 bytes, keep the unfinished ones (branch-free flush).
        store_le<std::uint64_t>(p_, acc_);
        const unsigned bytes = fill_ >> 3;
        p_ += bytes;
        acc_ = bytes ? (bytes == 8 ? 0 : acc_ >> (8 * bytes)) : acc_;
        fill_ &= 7;
    }
    // Appends up to 64 bits.
    MANS_HD void put_wide(std::uint64_t v, unsigned n) {
        if (n > 32) {
            put(v & 0xffffffffu, 32);
            put(v >> 32, n - 32);
        } else {
            put(v, n);
        }
    }
    // Writes the last partial byte; returns the bytes written in all.
    MANS_HD std::size_t flush() {
        if (fill_) *p_++ = static_cast<std::uint8_t>(acc_);
        acc_ = 0;
        fill_ = 0;
        return static_cast<std::size_t>(p_ - begin_);
    }

private:
    MANS_HD static std::uint64_t low_bits(unsigned n) { return n == 0 ? 0 : (~0ull >> (64 - n)); }
    std::uint8_t* begin_;
    std::uint8_t* p_;
    std::uint64_t acc_ = 0;
    unsigned fill_ = 0;
};

// Shared by the CPU and the GPU decoders (MANS_HD).
class BitReader {
public:
    MANS_HD BitReader(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) { refill(); }
    // Starts at bit `first` of the stream (a team member's part of it);
    // bits_consumed() still counts from bit 0.
    MANS_HD BitReader(const std::uint8_t* p, std::size_t n, std::uint64_t first) : p_(p), n_(n) {
        pos_ = static_cast<std::size_t>(first / 8);  // past the end, zeros come in
        refill();
        get(static_cast<unsigned>(first % 8));
    }

    // Returns the next `n` bits, n <= 56.
    MANS_HD std::uint64_t get(unsigned n) {
        if (fill_ < n) refill();
        const std::uint64_t v = acc_ & ((1ull << n) - 1);
        acc_ >>= n;
        fill_ -= n;
        return v;
    }
    MANS_HD std::uint64_t get_wide(unsigned n) {
        if (n > 32) {
            const std::uint64_t lo = get(32);
            return lo | (get(n - 32) << 32);
        }
        return get(n);
    }
    // Peeks 32 bits (zeros past the end).
    MANS_HD std::uint32_t peek32() {
        if (fill_ < 32) refill();
        return static_cast<std::uint32_t>(acc_);
    }
    MANS_HD std::uint64_t bits_consumed() const { return 8 * static_cast<std::uint64_t>(pos_) - fill_; }
    MANS_HD bool overrun() const { return bits_consumed() > 8 * static_cast<std::uint64_t>(n_); }

private:
    MANS_HD void refill() {
        if (pos_ + 8 <= n_) {
            // Fast path: OR in 8 bytes. Bits above the new fill level are the
            // following bytes at their final positions, so re-ORing them on
            // the next refill is idempotent.
            acc_ |= load_le<std::uint64_t>(p_ + pos_) << fill_;
            const unsigned take = (63 - fill_) >> 3;
            pos_ += take;
            fill_ += 8 * take;
            return;
        }
        // Top up to >= 56 valid bits; past the end, zeros come in.
        while (fill_ <= 56) {
            const std::uint64_t b = pos_ < n_ ? p_[pos_] : 0;
            ++pos_;
            acc_ |= b << fill_;
            fill_ += 8;
        }
    }
    const std::uint8_t* p_;
    std::size_t n_;
    std::size_t pos_ = 0;
    std::uint64_t acc_ = 0;
    unsigned fill_ = 0;
};

}  // namespace mans::detail
