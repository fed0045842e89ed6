// rans_table.hpp - frequency tables: normalisation, compact storage, and the
// encoder/decoder lookup tables built from them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/byte_io.hpp"
#include "entropy/rans.hpp"

namespace mans::detail {

// Normalised frequencies of one context: q[s] > 0 exactly for the symbols that
// occur, sum q = 1 << prob_bits.
struct FreqTable {
    std::uint32_t q[256];
};

// Symbols stored as a list when there are few of them, else as a bitmap.
inline constexpr unsigned kListMaxSymbols = 40;

// Scales `counts` (at least one non-zero) to 2^prob_bits. Symbols that occur
// keep q >= 1; the rounding error is settled greedily where it costs the
// fewest bits, so frequent symbols are never robbed to pay for rare ones.
void normalize_freqs(const std::uint32_t* counts, unsigned prob_bits, FreqTable* out);

// Cost in 16.16 fixed-point bits of coding `counts` with table `t`.
std::uint64_t coded_cost_fix16(const std::uint32_t* counts, const FreqTable& t, unsigned prob_bits);

// Compact table storage (docs/FORMAT.md "Frequency table").
void write_freq_table(ByteWriter& w, const FreqTable& t);
std::size_t freq_table_bytes(const FreqTable& t);

void build_enc_table(const FreqTable& t, unsigned prob_bits, EncSym* out256);

// Decoder side, shared with the GPU decoder (MANS_HD). read_freq_table
// checks every field: symbol list or bitmap, each frequency, and the sum.
MANS_HD bool read_freq_table(ByteReader& r, unsigned prob_bits, FreqTable* t) {
    const std::uint32_t M = 1u << prob_bits;
    std::uint8_t nsym_m1 = 0;
    if (!r.read(&nsym_m1)) return false;
    const unsigned nsym = nsym_m1 + 1u;
    if (nsym > M) return false;
    bool present[256] = {};
    if (nsym <= kListMaxSymbols) {
        int prev = -1;
        for (unsigned i = 0; i < nsym; ++i) {
            std::uint8_t gap = 0;
            if (!r.read(&gap)) return false;
            const int s = prev + 1 + gap;
            if (s > 255) return false;
            present[s] = true;
            prev = s;
        }
    } else {
        const std::uint8_t* bitmap = nullptr;
        if (!r.take(32, &bitmap)) return false;
        unsigned count = 0;
        for (unsigned s = 0; s < 256; ++s) {
            present[s] = (bitmap[s >> 3] >> (s & 7)) & 1;
            count += present[s];
        }
        if (count != nsym) return false;
    }
    unsigned last = 0;
    for (unsigned s = 0; s < 256; ++s)
        if (present[s]) last = s;
    std::uint64_t sum = 0;
    for (unsigned s = 0; s < 256; ++s) {
        t->q[s] = 0;
        if (!present[s] || s == last) continue;
        std::uint32_t qm1 = 0;
        if (!r.read_varint(&qm1, 2) || qm1 >= M) return false;
        t->q[s] = qm1 + 1;
        sum += t->q[s];
    }
    if (sum >= M) return false;
    t->q[last] = static_cast<std::uint32_t>(M - sum);
    return true;
}

MANS_HD void build_dec_table(const FreqTable& t, std::uint32_t* out) {
    std::uint32_t slot = 0;
    for (unsigned s = 0; s < 256; ++s)
        for (std::uint32_t b = 0; b < t.q[s]; ++b) out[slot++] = dec_entry(s, t.q[s], b);
}

}  // namespace mans::detail
