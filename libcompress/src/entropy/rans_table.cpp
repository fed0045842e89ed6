// rans_table.cpp - see rans_table.hpp.
#include "entropy/rans_table.hpp"

#include <queue>
#include <utility>

#include "entropy/cost_model.hpp"

namespace mans::detail {

namespace {
// Bits saved (16.16) by moving symbol s from q to q+1; lost by q to q-1.
std::uint64_t gain_up(std::uint64_t c, std::uint32_t q) {
    return c * (log2_small_fix16(q + 1) - log2_small_fix16(q));
}
std::uint64_t loss_down(std::uint64_t c, std::uint32_t q) {
    return c * (log2_small_fix16(q) - log2_small_fix16(q - 1));
}
}  // namespace

void normalize_freqs(const std::uint32_t* counts, unsigned prob_bits, FreqTable* out) {
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
    // Ties break on the symbol value so that the result is fully determined.
    using Item = std::pair<std::uint64_t, unsigned>;
    if (diff > 0) {
        std::priority_queue<Item> heap;  // largest gain first
        for (unsigned s = 0; s < 256; ++s)
            if (counts[s]) heap.push({gain_up(counts[s], out->q[s]), 255 - s});
        while (diff > 0) {
            const unsigned s = 255 - heap.top().second;
            heap.pop();
            ++out->q[s];
            --diff;
            heap.push({gain_up(counts[s], out->q[s]), 255 - s});
        }
    } else if (diff < 0) {
        std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;  // smallest loss
        for (unsigned s = 0; s < 256; ++s)
            if (out->q[s] > 1) heap.push({loss_down(counts[s], out->q[s]), s});
        while (diff < 0 && !heap.empty()) {
            const unsigned s = heap.top().second;
            heap.pop();
            --out->q[s];
            ++diff;
            if (out->q[s] > 1) heap.push({loss_down(counts[s], out->q[s]), s});
        }
    }
}

std::uint64_t coded_cost_fix16(const std::uint32_t* counts, const FreqTable& t, unsigned prob_bits) {
    const std::uint64_t full = static_cast<std::uint64_t>(prob_bits) << 16;
    std::uint64_t cost = 0;
    for (unsigned s = 0; s < 256; ++s)
        if (counts[s]) cost += counts[s] * (full - log2_small_fix16(t.q[s]));
    return cost;
}

void write_freq_table(ByteWriter& w, const FreqTable& t) {
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

std::size_t freq_table_bytes(const FreqTable& t) {
    std::uint8_t scratch[1 + 32 + 256 * 2];
    ByteWriter w(scratch, sizeof scratch);
    write_freq_table(w, t);
    return w.size();
}

void build_enc_table(const FreqTable& t, unsigned prob_bits, EncSym* out) {
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

}  // namespace mans::detail
