// rans_table.hpp - frequency tables: normalisation, compact storage, and the
// encoder/decoder lookup tables built from them. All MANS_HD: the CPU and the
// GPU coders share them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/byte_io.hpp"
#include "core/hd.hpp"
#include "entropy/cost_model.hpp"
#include "entropy/rans.hpp"

namespace mans::detail {

// Normalised frequencies of one context: q[s] > 0 exactly for the symbols that
// occur, sum q = 1 << prob_bits.
struct FreqTable {
    std::uint32_t q[256];
};

// Symbols stored as a list when there are few of them, else as a bitmap.
inline constexpr unsigned kListMaxSymbols = 40;

// Encoder side, MANS_HD: the GPU encoder runs it too.

// Bits saved (16.16) by moving symbol s from q to q+1; lost by q to q-1.
MANS_HD std::uint64_t freq_gain_up(std::uint64_t c, std::uint32_t q) {
    return c * (log2_small_fix16(q + 1) - log2_small_fix16(q));
}
MANS_HD std::uint64_t freq_loss_down(std::uint64_t c, std::uint32_t q) {
    return c * (log2_small_fix16(q) - log2_small_fix16(q - 1));
}

// A binary min-heap of at most 256 keys (one per symbol), for
// normalize_freqs. Keys are distinct, so the pop order is that of any
// priority queue over the same keys.
struct SymbolHeap {
    std::uint64_t k[256];
    unsigned n = 0;
    MANS_HD bool empty() const { return n == 0; }
    MANS_HD void push(std::uint64_t key) {
        unsigned i = n++;
        while (i > 0 && key < k[(i - 1) / 2]) {
            k[i] = k[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        k[i] = key;
    }
    MANS_HD std::uint64_t pop() {
        const std::uint64_t top = k[0], last = k[--n];
        unsigned i = 0;
        while (true) {
            unsigned c = 2 * i + 1;
            if (c >= n) break;
            if (c + 1 < n && k[c + 1] < k[c]) ++c;
            if (!(k[c] < last)) break;
            k[i] = k[c];
            i = c;
        }
        k[i] = last;
        return top;
    }
};

// Scales `counts` (at least one non-zero) to 2^prob_bits. Symbols that occur
// keep q >= 1; the rounding error is settled greedily where it costs the
// fewest bits, so frequent symbols are never robbed to pay for rare ones.
// Ties break on the symbol value so that the result is fully determined.
// `heap` is the caller's work space (off the stack: GPU stacks are small).
MANS_HD_CALL void normalize_freqs(const std::uint32_t* counts, unsigned prob_bits, FreqTable* out, SymbolHeap& heap) {
    const std::uint64_t M = 1ull << prob_bits;
    std::uint64_t total = 0;
    for (unsigned s = 0; s < 256; ++s) total += counts[s];
    std::int64_t sum = 0;
    for (unsigned s = 0; s < 256; ++s) {
        std::uint32_t q = 0;
        if (counts[s]) {
            q = static_cast<std::uint32_t>((2 * counts[s] * M + total) / (2 * total));
            if (q == 0) q = 1;
        }
        out->q[s] = q;
        sum += q;
    }
    std::int64_t diff = static_cast<std::int64_t>(M) - sum;
    // Gains and losses stay below 2^56 (counts < 2^32, log steps < 2^17), so
    // a key is cost << 8 | tie-break; the heap pops the smallest key.
    heap.n = 0;
    if (diff > 0) {
        // Largest gain first, then the smaller symbol: keys are complemented.
        const auto key = [&](unsigned s) { return ~((freq_gain_up(counts[s], out->q[s]) << 8) | (255u - s)); };
        for (unsigned s = 0; s < 256; ++s)
            if (counts[s]) heap.push(key(s));
        while (diff > 0) {
            const unsigned s = 255u - static_cast<unsigned>(~heap.pop() & 0xff);
            ++out->q[s];
            --diff;
            heap.push(key(s));
        }
    } else if (diff < 0) {
        // Smallest loss first, then the smaller symbol.
        const auto key = [&](unsigned s) { return (freq_loss_down(counts[s], out->q[s]) << 8) | s; };
        for (unsigned s = 0; s < 256; ++s)
            if (out->q[s] > 1) heap.push(key(s));
        while (diff < 0 && !heap.empty()) {
            const unsigned s = static_cast<unsigned>(heap.pop() & 0xff);
            --out->q[s];
            ++diff;
            if (out->q[s] > 1) heap.push(key(s));
        }
    }
}

// Cost in 16.16 fixed-point bits of coding `counts` with table `t`.
MANS_HD_CALL std::uint64_t coded_cost_fix16(const std::uint32_t* counts, const FreqTable& t, unsigned prob_bits) {
    const std::uint64_t full = static_cast<std::uint64_t>(prob_bits) << 16;
    std::uint64_t cost = 0;
    for (unsigned s = 0; s < 256; ++s)
        if (counts[s]) cost += counts[s] * (full - log2_small_fix16(t.q[s]));
    return cost;
}

// Compact table storage (docs/FORMAT.md "Frequency table").
MANS_HD_CALL void write_freq_table(ByteWriter& w, const FreqTable& t) {
    unsigned nsym = 0, last = 0;
    for (unsigned s = 0; s < 256; ++s)
        if (t.q[s]) ++nsym, last = s;
    w.write<std::uint8_t>(static_cast<std::uint8_t>(nsym - 1));
    if (nsym <= kListMaxSymbols) {
        int prev = -1;
        for (unsigned s = 0; s < 256; ++s) {
            if (!t.q[s]) continue;
            w.write<std::uint8_t>(static_cast<std::uint8_t>(s - prev - 1));
            prev = static_cast<int>(s);
        }
    } else {
        std::uint8_t bitmap[32] = {};
        for (unsigned s = 0; s < 256; ++s)
            if (t.q[s]) bitmap[s >> 3] |= static_cast<std::uint8_t>(1u << (s & 7));
        w.write_bytes(bitmap, sizeof bitmap);
    }
    // The last symbol's frequency is implied by the total.
    for (unsigned s = 0; s < last; ++s)
        if (t.q[s]) w.write_varint(t.q[s] - 1);
}

MANS_HD_CALL std::size_t freq_table_bytes(const FreqTable& t) {
    std::uint8_t scratch[1 + 32 + 256 * 2];
    ByteWriter w(scratch, sizeof scratch);
    write_freq_table(w, t);
    return w.size();
}

MANS_HD_CALL void build_enc_table(const FreqTable& t, unsigned prob_bits, EncSym* out) {
    const std::uint32_t M = 1u << prob_bits;
    std::uint32_t cum = 0;
    for (unsigned s = 0; s < 256; ++s) {
        const std::uint32_t f = t.q[s];
        EncSym& e = out[s];
        if (f == 0) {
            e = EncSym{0, 0, 0, 0};
            continue;
        }
        e.x_max = static_cast<std::uint32_t>((static_cast<std::uint64_t>(f) << (31 - prob_bits)));
        if (f == 1) {
            e.rcp = 0xffffffffu;
            e.bias = cum + M - 1;
            e.cmpl_shift = (M - 1);
        } else {
            unsigned shift = 0;
            while ((1u << shift) < f) ++shift;
            e.rcp = static_cast<std::uint32_t>(((1ull << (shift + 31)) + f - 1) / f);
            e.bias = cum;
            e.cmpl_shift = (M - f) | ((shift - 1) << 16);
        }
        cum += f;
    }
}

// Decoder side, shared with the GPU decoder (MANS_HD). read_freq_table
// checks every field: symbol list or bitmap, each frequency, and the sum.
// The symbols present are first marked in t->q itself (no second 256-entry
// array: on a GPU it would be local memory).
MANS_HD_CALL bool read_freq_table(ByteReader& r, unsigned prob_bits, FreqTable* t) {
    const std::uint32_t M = 1u << prob_bits;
    std::uint8_t nsym_m1 = 0;
    if (!r.read(&nsym_m1)) return false;
    const unsigned nsym = nsym_m1 + 1u;
    if (nsym > M) return false;
    for (unsigned s = 0; s < 256; ++s) t->q[s] = 0;
    unsigned last = 0;  // the largest symbol present
    if (nsym <= kListMaxSymbols) {
        int prev = -1;
        for (unsigned i = 0; i < nsym; ++i) {
            std::uint8_t gap = 0;
            if (!r.read(&gap)) return false;
            const int s = prev + 1 + gap;
            if (s > 255) return false;
            t->q[s] = 1;
            prev = s;
        }
        last = static_cast<unsigned>(prev);
    } else {
        const std::uint8_t* bitmap = nullptr;
        if (!r.take(32, &bitmap)) return false;
        unsigned count = 0;
        for (unsigned s = 0; s < 256; ++s) {
            const unsigned present = (bitmap[s >> 3] >> (s & 7)) & 1;
            t->q[s] = present;
            count += present;
            if (present) last = s;
        }
        if (count != nsym) return false;
    }
    std::uint64_t sum = 0;
    for (unsigned s = 0; s < last; ++s) {
        if (t->q[s] == 0) continue;
        std::uint32_t qm1 = 0;
        if (!r.read_varint(&qm1, 2) || qm1 >= M) return false;
        t->q[s] = qm1 + 1;
        sum += t->q[s];
    }
    if (sum >= M) return false;
    t->q[last] = static_cast<std::uint32_t>(M - sum);
    return true;
}

// Slots [lo, hi) of the decode table of t (a team member's part of it;
// all of it for lo = 0, hi = M).
MANS_HD void build_dec_table(const FreqTable& t, std::uint32_t* out, std::uint32_t lo, std::uint32_t hi) {
    std::uint32_t cum = 0;  // first slot of symbol s
    for (unsigned s = 0; s < 256 && cum < hi; ++s) {
        const std::uint32_t q = t.q[s];
        for (std::uint32_t b = cum < lo ? lo - cum : 0; b < q && cum + b < hi; ++b) out[cum + b] = dec_entry(s, q, b);
        cum += q;
    }
}

}  // namespace mans::detail
