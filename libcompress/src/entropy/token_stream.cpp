// token_stream.cpp - see token_stream.hpp.
#include "entropy/token_stream.hpp"

#include <algorithm>
#include <cstring>

#include "entropy/cost_model.hpp"
#include "entropy/token_stream_decode.hpp"

namespace mans::detail {

namespace {

unsigned symbols_in(const std::uint32_t* hist) {
    unsigned n = 0;
    for (unsigned s = 0; s < 256; ++s) n += hist[s] != 0;
    return n;
}

// Rough table size for a context, used to decide how many contexts pay.
std::uint64_t approx_table_fix16(unsigned nsym) {
    if (nsym == 0) return 2 * 8 * kFixOne;
    const std::uint64_t bytes = 1 + (nsym <= 40 ? nsym : 32) + nsym + nsym / 4;
    return bytes * 8 * kFixOne;
}

// Folds the 8 class histograms into k contexts: classes >= k-1 share the last.
void merge_contexts(const std::uint32_t (*hist8)[256], unsigned k, std::uint32_t (*merged)[256]) {
    std::memset(merged, 0, sizeof(std::uint32_t) * kMaxContexts * 256);
    for (unsigned c = 0; c < kMaxContexts; ++c) {
        const unsigned dst = c < k ? c : k - 1;
        for (unsigned s = 0; s < 256; ++s) merged[dst][s] += hist8[c][s];
    }
}

}  // namespace

std::uint64_t estimate_order0_fix16(const std::uint32_t* hist) {
    return entropy_cost_fix16(hist, 256) + approx_table_fix16(symbols_in(hist));
}

std::uint64_t estimate_context_cost_fix16(const std::uint32_t (*hist8)[256], unsigned* contexts) {
    std::uint64_t best_cost = ~0ull;
    std::uint32_t merged[kMaxContexts][256];
    for (unsigned k = 1; k <= kMaxContexts; k *= 2) {
        merge_contexts(hist8, k, merged);
        std::uint64_t cost = 0;
        for (unsigned c = 0; c < k; ++c) cost += estimate_order0_fix16(merged[c]);
        if (cost < best_cost) {
            best_cost = cost;
            if (contexts) *contexts = k;
        }
    }
    return best_cost;
}

bool encode_token_stream(const std::uint8_t* tokens, const LaneLayout& lay,
                         const RansKernels& kernels, TokenStreamScratch& sc,
                         std::vector<std::uint8_t>& out) {
    // Histogram by class of the previous token in the same lane.
    std::uint8_t class8[256];
    for (unsigned s = 0; s < 256; ++s) class8[s] = static_cast<std::uint8_t>(token_class8(s));
    std::uint32_t hist8[kMaxContexts][256] = {};
    for (std::size_t t = 0; t < lay.seg; ++t) {
        const unsigned active = lay.active_at(t);
        const std::uint8_t* row = tokens + t * lay.lanes;
        if (t == 0) {
            for (unsigned j = 0; j < active; ++j) ++hist8[0][row[j]];
        } else {
            const std::uint8_t* prev = row - lay.lanes;
            for (unsigned j = 0; j < active; ++j) ++hist8[class8[prev[j]]][row[j]];
        }
    }

    // Contexts: the count whose entropy plus table cost is smallest.
    unsigned best_k = 1;
    std::uint64_t best_cost = estimate_context_cost_fix16(hist8, &best_k);
    std::uint32_t merged[kMaxContexts][256];
    merge_contexts(hist8, best_k, merged);
    // An empty context still gets a valid table so that any decoded stream
    // stays memory-safe; it is never used by a valid stream.
    for (unsigned c = 0; c < best_k; ++c)
        if (symbols_in(merged[c]) == 0) merged[c][0] = 1;

    // Precision: 12 bits, or fewer when the smaller tables pay for it.
    unsigned min_bits = kMinProbBits;
    for (unsigned c = 0; c < best_k; ++c)
        while ((1u << min_bits) < symbols_in(merged[c])) ++min_bits;
    FreqTable tables[kMaxContexts];
    unsigned best_bits = kMaxProbBits;
    best_cost = ~0ull;
    const unsigned candidates[] = {std::max(min_bits, 10u), kMaxProbBits};
    for (unsigned bits : candidates) {
        std::uint64_t cost = 0;
        for (unsigned c = 0; c < best_k; ++c) {
            FreqTable t;
            normalize_freqs(merged[c], bits, &t);
            cost += coded_cost_fix16(merged[c], t, bits) + freq_table_bytes(t) * 8 * kFixOne;
        }
        if (cost < best_cost) best_cost = cost, best_bits = bits;
    }
    for (unsigned c = 0; c < best_k; ++c) normalize_freqs(merged[c], best_bits, &tables[c]);

    sc.enc.resize(kMaxContexts * 256);
    for (unsigned c = 0; c < best_k; ++c) build_enc_table(tables[c], best_bits, &sc.enc[c * 256]);
    std::uint8_t ctx_of[256];
    for (unsigned s = 0; s < 256; ++s) ctx_of[s] = static_cast<std::uint8_t>(context_of(s, best_k));

    sc.words.resize(lay.n + kWordPadding);
    RansEncodeArgs args;
    args.tokens = tokens;
    args.table = sc.enc.data();
    args.ctx_of = ctx_of;
    args.contexts = best_k;
    args.layout = lay;
    args.words_end = sc.words.data() + sc.words.size();
    kernels.encode(args);
    if (!args.ok) return false;
    const std::size_t nwords = static_cast<std::size_t>(args.words_end - args.words_first);

    // Serialise: flags, precision, tables, word count, states, words.
    unsigned lanes_log2 = 0;
    while ((1u << lanes_log2) < lay.lanes) ++lanes_log2;
    unsigned k_log2 = 0;
    while ((1u << k_log2) < best_k) ++k_log2;
    std::uint8_t head[2 + kMaxContexts * (1 + 32 + 512) + 4 + 4 * kMaxLanes];
    ByteWriter w(head, sizeof head);
    w.write<std::uint8_t>(static_cast<std::uint8_t>(lanes_log2 | (k_log2 << 3)));
    w.write<std::uint8_t>(static_cast<std::uint8_t>(best_bits));
    for (unsigned c = 0; c < best_k; ++c) write_freq_table(w, tables[c]);
    w.write<std::uint32_t>(static_cast<std::uint32_t>(nwords));
    for (unsigned j = 0; j < lay.lanes; ++j) w.write<std::uint32_t>(args.states[j]);
    if (!w.ok()) return false;
    const std::size_t old = out.size();
    out.resize(old + w.size() + 2 * nwords);
    std::memcpy(out.data() + old, head, w.size());
    std::memcpy(out.data() + old + w.size(), args.words_first, 2 * nwords);
    return true;
}

bool decode_token_stream(ByteReader& r, std::size_t n, const RansKernels& kernels,
                         TokenStreamScratch& sc, std::vector<std::uint8_t>& out,
                         LaneLayout* layout) {
    sc.dec.resize(static_cast<std::size_t>(kMaxContexts) << kMaxProbBits);
    sc.words.resize(n + kWordPadding);
    out.resize(token_buffer_entries(n));
    const TokenDecodeBuffers b{sc.dec.data(), sc.words.data(), out.data()};
    return decode_token_stream_into(
        r, n, [&](const RansDecodeArgs& a) { return kernels.decode(a); }, b, layout);
}

}  // namespace mans::detail
