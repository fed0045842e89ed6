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

// Scales `counts` (at least one non-zero) to 2^prob_bits. Symbols that occur
// keep q >= 1; the rounding error is settled greedily where it costs the
// fewest bits, so frequent symbols are never robbed to pay for rare ones.
void normalize_freqs(const std::uint32_t* counts, unsigned prob_bits, FreqTable* out);

// Cost in 16.16 fixed-point bits of coding `counts` with table `t`.
std::uint64_t coded_cost_fix16(const std::uint32_t* counts, const FreqTable& t, unsigned prob_bits);

// Compact table storage (docs/FORMAT.md "Frequency table").
void write_freq_table(ByteWriter& w, const FreqTable& t);
bool read_freq_table(ByteReader& r, unsigned prob_bits, FreqTable* t);
std::size_t freq_table_bytes(const FreqTable& t);

void build_enc_table(const FreqTable& t, unsigned prob_bits, EncSym* out256);
void build_dec_table(const FreqTable& t, std::uint32_t* out);

}  // namespace mans::detail
