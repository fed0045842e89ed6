// block_codec.cpp - see block_codec.hpp.
#include "mapping/block_codec.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/bit_io.hpp"
#include "core/byte_io.hpp"
#include "entropy/cost_model.hpp"
#include "mapping/token_map.hpp"

namespace mans::detail {

namespace {

// Mode selection looks at a sample: the whole block when it is small, else
// evenly spaced runs of consecutive elements (runs keep the delta predictor
// meaningful).
constexpr std::size_t kSampleRun = 256;
constexpr std::size_t kSampleRuns = 32;

// Reference of the hybrid-token mapping (docs/FORMAT.md 2.1). center_repeat
// adds one token meaning "same value as the previous element of the lane",
// which turns runs of outliers (fill values, land masks) into cheap tokens.
enum class Predictor : std::uint8_t { center = 0, lane_previous = 1, center_repeat = 2 };

struct Stats {
    std::uint64_t min = 0, max = 0;
};

// Sample histograms of the hybrid-token source values v.
struct ValueHist {
    std::uint32_t small[256] = {};   // v < 256
    std::uint32_t big[64][16] = {};  // v >= 256: [bit position e][top 4 mantissa bits]
    std::uint64_t vmax = 0;

    void add(std::uint64_t v) {
        vmax = v > vmax ? v : vmax;
        if (v < 256) {
            ++small[v];
        } else {
            const unsigned e = bit_length64(v) - 1;
            ++big[e][(v >> (e - 4)) & 15];
        }
    }
};

// Estimated bits (16.16) of coding the sampled values with split p.
std::uint64_t hybrid_cost_fix16(const ValueHist& h, HybridSplit p, unsigned B, std::uint32_t repeats) {
    std::uint32_t tok[256] = {};
    if (repeats) tok[hybrid_token_count(p, B)] = repeats;
    std::uint64_t raw_bits = 0;
    const unsigned small_end = h.vmax < 255 ? static_cast<unsigned>(h.vmax) + 1 : 256;
    for (unsigned v = 0; v < small_end; ++v) {
        if (!h.small[v]) continue;
        unsigned nraw = 0;
        tok[hybrid_token(v, p, &nraw)] += h.small[v];
        raw_bits += static_cast<std::uint64_t>(h.small[v]) * nraw;
    }
    const unsigned e_end = bit_length64(h.vmax) < B ? bit_length64(h.vmax) : B;
    for (unsigned e = 8; e < e_end; ++e) {
        for (unsigned top = 0; top < 16; ++top) {
            const std::uint32_t c = h.big[e][top];
            if (!c) continue;
            const unsigned t = (1u << p.s) + ((e - p.s) << p.m) + (top >> (4 - p.m));
            tok[t] += c;
            raw_bits += static_cast<std::uint64_t>(c) * (e - p.m);
        }
    }
    return estimate_order0_fix16(tok) + raw_bits * kFixOne;
}

struct HybridChoice {
    HybridSplit split{0, 0};
    std::uint64_t cost = ~0ull;
};

// `repeats` > 0 asks for a split that leaves room for the repeat token.
HybridChoice best_split(const ValueHist& h, unsigned B, std::uint32_t repeats = 0) {
    HybridChoice best;
    for (unsigned s = 0; s <= 8; ++s) {
        // Once every value is a direct token, m and larger s change nothing
        // (the first valid such split is the one kept, as in a full search).
        const bool all_direct = h.vmax < (1ull << s);
        for (unsigned m = 0; m <= 4 && m <= s; ++m) {
            const HybridSplit p{s, m};
            if (!hybrid_split_valid(p, B, repeats != 0)) continue;
            const std::uint64_t c = hybrid_cost_fix16(h, p, B, repeats);
            if (c < best.cost) best = {p, c};
            if (all_direct) return best;
        }
    }
    return best;
}

template <typename U>
struct Elem {
    static constexpr unsigned B = 8 * sizeof(U);
    static constexpr std::uint64_t mask = B == 64 ? ~0ull : ((1ull << B) - 1);
};

// Biased (order-preserving unsigned) value of element i.
template <typename U>
// Element buffers come from the caller as void* with no alignment promise,
// so elements are read and written through memcpy (a plain move on x86).
inline std::uint64_t load_biased(const std::uint8_t* p, std::size_t i, std::uint64_t flip) {
    return static_cast<std::uint64_t>(load_le<U>(p + i * sizeof(U))) ^ flip;
}
template <typename U>
inline void store_elem(std::uint8_t* p, std::size_t i, std::uint64_t v) {
    store_le<U>(p + i * sizeof(U), static_cast<U>(v));
}

// Walks a block in element order, lane by lane: fn(slot, element index),
// where slot is the element's position in the coder's interleaved order.
template <typename Fn>
inline void for_each_element(const LaneLayout& lay, Fn&& fn) {
    for (unsigned j = 0; j < lay.lanes; ++j) {
        const std::size_t len = lay.lane_len(j), first = j * lay.seg;
        for (std::size_t t = 0; t < len; ++t) fn(t * lay.lanes + j, first + t);
    }
}

// A raw-bit section must be consumed exactly: no over-read, no spare byte.
bool bits_exact(const BitReader& br, std::uint32_t len) {
    return !br.overrun() && (br.bits_consumed() + 7) / 8 == len;
}

// Hot loop of the hybrid-token mapping, kept free of member accesses so that
// the byte stores cannot force reloads (char stores alias everything).
template <typename U, Predictor kPred>
void tokenize_hybrid(const std::uint8_t* x, const LaneLayout& lay, std::uint64_t flip, std::uint64_t center,
                     HybridSplit split, std::uint8_t* tokens, std::vector<std::uint8_t>* bits) {
    using E = Elem<U>;
    BitWriter bw(bits, lay.n * E::B);
    const unsigned repeat_tok = hybrid_token_count(split, E::B);
    // Element order: lane by lane, each lane's segment front to back. Tokens
    // go to their interleaved slots; raw bits follow element order.
    for (unsigned j = 0; j < lay.lanes; ++j) {
        const std::size_t len = lay.lane_len(j);
        const std::uint8_t* src = x + j * lay.seg * sizeof(U);
        std::uint8_t* dst = tokens + j;
        std::uint64_t prev = center;  // a lane's first element refers to the center
        for (std::size_t t = 0; t < len; ++t) {
            const std::uint64_t u = load_biased<U>(src, t, flip);
            const std::uint64_t v =
                zigzag((u - (kPred == Predictor::lane_previous ? prev : center)) & E::mask, E::B);
            unsigned nraw = 0;
            unsigned tok = hybrid_token(v, split, &nraw);
            if (kPred == Predictor::center_repeat && u == prev && nraw) tok = repeat_tok, nraw = 0;
            prev = u;
            dst[t * lay.lanes] = static_cast<std::uint8_t>(tok);
            if (E::B > 32)
                bw.put_wide(v, nraw);
            else
                bw.put(v, nraw);
        }
    }
    bw.flush();
}

// Inverse of tokenize_hybrid.
template <typename U, Predictor kPred>
bool reconstruct_hybrid(const std::uint8_t* tokens, const LaneLayout& lay, std::uint64_t flip,
                        std::uint64_t center, HybridSplit split, const std::uint8_t* bits,
                        std::uint32_t len, std::uint8_t* y) {
    using E = Elem<U>;
    // Per-token base value and raw-bit count; invalid tokens flagged.
    struct TokenInfo {
        std::uint64_t base;
        std::uint32_t nraw;
        std::uint32_t ok;
    };
    TokenInfo info[256] = {};
    for (unsigned t = 0; t < 256; ++t) {
        unsigned nr = 0;
        info[t].ok = hybrid_untoken(t, split, E::B, &info[t].base, &nr);
        info[t].nraw = nr;
    }
    const unsigned repeat_tok = hybrid_token_count(split, E::B);
    if (kPred == Predictor::center_repeat) info[repeat_tok] = {0, 0, 1};
    BitReader br(bits, len);
    std::uint32_t all_ok = 1;
    for (unsigned j = 0; j < lay.lanes; ++j) {
        const std::size_t lane_len = lay.lane_len(j);
        const std::uint8_t* src = tokens + j;
        std::uint8_t* dst = y + j * lay.seg * sizeof(U);
        std::uint64_t prev = center;  // a lane's first element refers to the center
        for (std::size_t t = 0; t < lane_len; ++t) {
            const unsigned tk = src[t * lay.lanes];
            const TokenInfo ti = info[tk];
            all_ok &= ti.ok;
            const std::uint64_t v = ti.base | (E::B > 32 ? br.get_wide(ti.nraw) : br.get(ti.nraw));
            std::uint64_t u =
                ((kPred == Predictor::lane_previous ? prev : center) + unzigzag(v, E::B)) & E::mask;
            if (kPred == Predictor::center_repeat) u = tk == repeat_tok ? prev : u;
            prev = u;
            store_elem<U>(dst, t, u ^ flip);
        }
    }
    return all_ok && bits_exact(br, len);
}

template <typename U>
class BlockEncoder {
public:
    using E = Elem<U>;
    // `nested`: codes the index array of a dictionary block, which may not
    // itself use a dictionary.
    BlockEncoder(const std::uint8_t* src, std::size_t n, std::uint64_t flip, const RansKernels& k,
                 BlockScratch& sc, std::vector<std::uint8_t>& out, bool nested = false)
        : x_(src), n_(n), flip_(flip), kernels_(k), sc_(sc), out_(out),
          lay_(LaneLayout::make(n, lanes_for(n))), nested_(nested) {}

    void run(ModeHint hint) {
        const std::size_t start = out_.size();
        stats_ = block_stats();
        if (hint == ModeHint::automatic && stats_.min == stats_.max) hint = ModeHint::constant;
        bool ok = false;
        if (hint != ModeHint::automatic) {
            ok = put_mode(hint);
        } else {
            Candidate ranked[kCandidates];
            rank_modes(ranked);
            ok = put_mode(ranked[0].hint);
            // Data with few distinct values spread over a wide range (holes)
            // may code better as indices into a dictionary; that is decided
            // by coding both.
            if (ok && dictionary_candidate_) {
                const std::size_t first_end = out_.size();
                if (put_mode(ModeHint::dictionary) && out_.size() - first_end < first_end - start)
                    out_.erase(out_.begin() + static_cast<std::ptrdiff_t>(start),
                               out_.begin() + static_cast<std::ptrdiff_t>(first_end));
                else
                    out_.resize(first_end);
            }
        }
        // Never expand: a block that does not shrink is stored.
        if (!ok || out_.size() - start >= 1 + n_ * sizeof(U)) {
            out_.resize(start);
            put_stored();
        }
    }

private:
    struct Candidate {
        ModeHint hint;
        std::uint64_t cost;  // estimated bits on the sample, 16.16
    };
    static constexpr unsigned kCandidates = 5;

    // Appends the payload of one mapping; false when it cannot code the block.
    bool put_mode(ModeHint hint) {
        const std::size_t start = out_.size();
        bool ok = false;
        switch (hint) {
            case ModeHint::constant: ok = stats_.min == stats_.max && put_constant(); break;
            case ModeHint::token_center: ok = put_token(Predictor::center); break;
            case ModeHint::token_delta: ok = put_token(Predictor::lane_previous); break;
            case ModeHint::token_repeat: ok = put_token(Predictor::center_repeat); break;
            case ModeHint::adm: ok = adm_possible() && put_adm(); break;
            case ModeHint::byte_planes: ok = put_byte_planes(); break;
            case ModeHint::dictionary: ok = !nested_ && put_dictionary(); break;
            default: break;
        }
        if (!ok) out_.resize(start);
        return ok;
    }

    Stats block_stats() const {
        Stats s;
        s.min = E::mask;
        s.max = 0;
        for (std::size_t i = 0; i < n_; ++i) {
            const std::uint64_t u = load_biased<U>(x_, i, flip_);
            s.min = u < s.min ? u : s.min;
            s.max = u > s.max ? u : s.max;
        }
        return s;
    }

    // Indices of sampled elements, in runs.
    template <typename Fn>
    void for_each_sampled(Fn&& fn) const {
        if (n_ <= kSampleRun * kSampleRuns) {
            for (std::size_t i = 0; i < n_; ++i) fn(i);
            return;
        }
        const std::size_t stride = n_ / kSampleRuns;
        for (std::size_t r = 0; r < kSampleRuns; ++r)
            for (std::size_t i = r * stride; i < r * stride + kSampleRun; ++i) fn(i);
    }

    // Median of every 4th sampled element (plenty for a center); also notes
    // whether the sample looks like few distinct values with holes between
    // them, the case a dictionary helps.
    std::uint64_t sample_median() {
        auto& s = sc_.sample;
        s.clear();
        std::size_t k = 0;
        for_each_sampled([&](std::size_t i) {
            if ((k++ & 3) == 0) s.push_back(load_biased<U>(x_, i, flip_));
        });
        std::sort(s.begin(), s.end());
        const std::uint64_t median = s[s.size() / 2];
        // Holes test on the central 98 % (outliers alone do not make holes
        // that a dictionary removes profitably).
        const std::size_t lo = s.size() / 100, hi = s.size() - 1 - s.size() / 100;
        const std::uint64_t span = s[hi] - s[lo] + 1;
        const std::size_t distinct =
            static_cast<std::size_t>(std::unique(s.begin() + static_cast<std::ptrdiff_t>(lo),
                                                 s.begin() + static_cast<std::ptrdiff_t>(hi) + 1) -
                                     (s.begin() + static_cast<std::ptrdiff_t>(lo)));
        dictionary_candidate_ = !nested_ && E::B >= 16 && s.size() >= 64 && 2 * static_cast<std::uint64_t>(distinct) <= span &&
                                distinct * 4 <= s.size();
        return median;
    }

    std::uint64_t mean_center() const {
        // Only used for B <= 32 and at most 2^26 elements: the sum fits.
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < n_; ++i) sum += load_biased<U>(x_, i, flip_);
        return sum / n_;
    }

    bool adm_possible() const {
        if (E::B != 16 && E::B != 32) return false;
        const std::uint64_t limit = static_cast<std::uint64_t>(kAdmStep) * kAdmMaxK;
        const std::uint64_t c = mean_center();
        return stats_.max - c <= limit && c - stats_.min <= limit;
    }

    // Estimates every mapping on the sample; fills `out` best first and
    // returns how many it kept (the best two after the context-aware
    // re-estimate). Also fixes the center and the token splits.
    unsigned rank_modes(Candidate* out) {
        center_ = sample_median();
        ValueHist hc, hd, hr;
        std::uint32_t repeats = 0;
        std::uint32_t planes[8][256] = {};
        std::uint32_t adm_codes[256] = {};
        std::uint64_t adm_bits = 0;
        const bool adm_ok = adm_possible();
        const std::uint64_t adm_c = adm_ok ? mean_center() : 0;
        const unsigned nplanes = plane_count();
        std::uint32_t sampled = 0;
        for_each_sampled([&](std::size_t i) {
            ++sampled;
            const std::uint64_t u = load_biased<U>(x_, i, flip_);
            const std::uint64_t vc = zigzag((u - center_) & E::mask, E::B);
            hc.add(vc);
            const std::uint64_t prev = i ? load_biased<U>(x_, i - 1, flip_) : center_;
            hd.add(zigzag((u - prev) & E::mask, E::B));
            // Repeats of values that would need raw bits (>= 256 needs them
            // under every split).
            if (u == prev && vc >= 256)
                ++repeats;
            else
                hr.add(vc);
            const std::uint64_t w = u - stats_.min;
            for (unsigned b = 0; b < nplanes; ++b) ++planes[b][(w >> (8 * b)) & 0xff];
            if (adm_ok) {
                unsigned k = 0;
                ++adm_codes[adm_code(u, adm_c, &k)];
                adm_bits += k;
            }
        });
        split_center_ = best_split(hc, E::B);
        split_delta_ = best_split(hd, E::B);
        split_repeat_ = repeats ? best_split(hr, E::B, repeats) : HybridChoice{};
        unsigned count = 0;
        out[count++] = {ModeHint::token_center, split_center_.cost};
        out[count++] = {ModeHint::token_delta, split_delta_.cost};
        // The repeat token only pays (and is only worth a trial) with enough repeats.
        if (repeats >= sampled / 64 && repeats) out[count++] = {ModeHint::token_repeat, split_repeat_.cost};
        std::uint64_t plane_cost = 0;
        for (unsigned b = 0; b < nplanes; ++b) plane_cost += estimate_order0_fix16(planes[b]);
        out[count++] = {ModeHint::byte_planes, plane_cost};
        if (adm_ok) out[count++] = {ModeHint::adm, estimate_order0_fix16(adm_codes) + adm_bits * kFixOne};
        // Ties break on the hint so that the order is fully determined.
        const auto by_cost = [](const Candidate& a, const Candidate& b) {
            return a.cost != b.cost ? a.cost < b.cost : a.hint < b.hint;
        };
        std::sort(out, out + count, by_cost);
        // Order-0 estimates miss what the context model gains: re-estimate
        // the closest candidates with contexts before deciding.
        const unsigned refine = count < 2 ? count : 2;
        for (unsigned c = 0; c < refine; ++c) out[c].cost = refined_cost(out[c].hint);
        std::sort(out, out + refine, by_cost);
        return refine;
    }

    // Context-aware estimate on the sample of a token stream whose token and
    // raw-bit count for element i come from tok_of(i, prev_u, &nraw). Sample
    // runs restart the context like lane starts do.
    template <typename TokenOf>
    std::uint64_t sample_stream_cost(TokenOf&& tok_of) const {
        std::uint32_t hist8[kMaxContexts][256] = {};
        std::uint64_t raw_bits = 0;
        std::size_t last = ~std::size_t{0};
        unsigned prev_tok = 0;
        for_each_sampled([&](std::size_t i) {
            const bool run_start = i != last + 1;
            last = i;
            const std::uint64_t prev_u = i ? load_biased<U>(x_, i - 1, flip_) : center_;
            unsigned nraw = 0;
            const unsigned tok = tok_of(i, prev_u, &nraw);
            ++hist8[run_start ? 0 : token_class8(prev_tok)][tok];
            raw_bits += nraw;
            prev_tok = tok;
        });
        return estimate_context_cost_fix16(hist8, nullptr) + raw_bits * kFixOne;
    }

    std::uint64_t refined_cost(ModeHint hint) const {
        switch (hint) {
            case ModeHint::token_center:
            case ModeHint::token_delta:
            case ModeHint::token_repeat: {
                const HybridChoice& ch = hint == ModeHint::token_center  ? split_center_
                                         : hint == ModeHint::token_delta ? split_delta_
                                                                         : split_repeat_;
                const unsigned repeat_tok = hybrid_token_count(ch.split, E::B);
                return sample_stream_cost([&](std::size_t i, std::uint64_t prev_u, unsigned* nraw) {
                    const std::uint64_t u = load_biased<U>(x_, i, flip_);
                    const std::uint64_t ref = hint == ModeHint::token_delta ? prev_u : center_;
                    unsigned tok = hybrid_token(zigzag((u - ref) & E::mask, E::B), ch.split, nraw);
                    if (hint == ModeHint::token_repeat && u == prev_u && *nraw) tok = repeat_tok, *nraw = 0;
                    return tok;
                });
            }
            case ModeHint::byte_planes: {
                std::uint64_t cost = 0;
                for (unsigned b = 0; b < plane_count(); ++b)
                    cost += sample_stream_cost([&](std::size_t i, std::uint64_t, unsigned* nraw) {
                        *nraw = 0;
                        return static_cast<unsigned>(((load_biased<U>(x_, i, flip_) - stats_.min) >> (8 * b)) & 0xff);
                    });
                return cost;
            }
            case ModeHint::adm: {
                const std::uint64_t c = mean_center();
                return sample_stream_cost([&](std::size_t i, std::uint64_t, unsigned* nraw) {
                    return adm_code(load_biased<U>(x_, i, flip_), c, nraw);  // k signal bits
                });
            }
            default:
                return ~0ull;
        }
    }

    unsigned plane_count() const {
        const std::uint64_t range = stats_.max - stats_.min;
        unsigned p = 0;
        while (p < sizeof(U) && (range >> (8 * p))) ++p;
        return p;
    }

    void put_le(std::uint64_t v, unsigned bytes) {
        for (unsigned b = 0; b < bytes; ++b) out_.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
    }
    void put_value(std::uint64_t v) { put_le(v, sizeof(U)); }

    void put_stored() {
        out_.push_back(static_cast<std::uint8_t>(BlockMode::stored));
        const std::size_t old = out_.size();
        out_.resize(old + n_ * sizeof(U));
        std::memcpy(out_.data() + old, x_, n_ * sizeof(U));
    }

    bool put_constant() {
        out_.push_back(static_cast<std::uint8_t>(BlockMode::constant));
        put_value(stats_.min);
        return true;
    }

    bool put_tokens_and_bits() {
        if (!encode_token_stream(sc_.tokens.data(), lay_, kernels_, sc_.stream, out_)) return false;
        put_le(sc_.bits.size(), 4);
        out_.insert(out_.end(), sc_.bits.begin(), sc_.bits.end());
        return true;
    }

    bool put_token(Predictor pred) {
        if (split_center_.cost == ~0ull) {  // forced mode: the splits are still needed
            Candidate unused[kCandidates];
            rank_modes(unused);
        }
        if (pred == Predictor::center_repeat && split_repeat_.cost == ~0ull)
            split_repeat_ = best_split(ValueHist{}, E::B, 1);  // no repeats seen: any valid split
        const HybridSplit split = pred == Predictor::center          ? split_center_.split
                                  : pred == Predictor::lane_previous ? split_delta_.split
                                                                     : split_repeat_.split;
        out_.push_back(static_cast<std::uint8_t>(BlockMode::token));
        out_.push_back(static_cast<std::uint8_t>(pred));
        put_value(center_);
        out_.push_back(static_cast<std::uint8_t>(split.s));
        out_.push_back(static_cast<std::uint8_t>(split.m));
        sc_.tokens.resize(lay_.slots());
        switch (pred) {
            case Predictor::center:
                tokenize_hybrid<U, Predictor::center>(x_, lay_, flip_, center_, split, sc_.tokens.data(), &sc_.bits);
                break;
            case Predictor::lane_previous:
                tokenize_hybrid<U, Predictor::lane_previous>(x_, lay_, flip_, center_, split, sc_.tokens.data(),
                                                             &sc_.bits);
                break;
            case Predictor::center_repeat:
                tokenize_hybrid<U, Predictor::center_repeat>(x_, lay_, flip_, center_, split, sc_.tokens.data(),
                                                             &sc_.bits);
                break;
        }
        return put_tokens_and_bits();
    }

    bool put_adm() {
        const std::uint64_t c = mean_center();
        out_.push_back(static_cast<std::uint8_t>(BlockMode::adm));
        put_value(c);
        sc_.tokens.resize(lay_.slots());
        BitWriter bw(&sc_.bits, n_ * kAdmMaxK);
        for_each_element(lay_, [&](std::size_t slot, std::size_t i) {
            unsigned k = 0;
            sc_.tokens[slot] = static_cast<std::uint8_t>(adm_code(load_biased<U>(x_, i, flip_), c, &k));
            bw.put(1ull << (k - 1), k);  // k-1 zeros, then a one
        });
        bw.flush();
        return put_tokens_and_bits();
    }

    bool put_byte_planes() {
        const unsigned nplanes = plane_count();
        if (nplanes == 0) return false;  // a constant block has no planes: stored/constant instead
        out_.push_back(static_cast<std::uint8_t>(BlockMode::byte_planes));
        put_value(stats_.min);
        out_.push_back(static_cast<std::uint8_t>(nplanes));
        sc_.tokens.resize(lay_.slots());
        for (unsigned b = 0; b < nplanes; ++b) {
            for_each_element(lay_, [&](std::size_t slot, std::size_t i) {
                const std::uint64_t w = load_biased<U>(x_, i, flip_) - stats_.min;
                sc_.tokens[slot] = static_cast<std::uint8_t>(w >> (8 * b));
            });
            if (!encode_token_stream(sc_.tokens.data(), lay_, kernels_, sc_.stream, out_)) return false;
        }
        return true;
    }

    void put_varint(std::uint64_t v) {
        std::uint8_t buf[kMaxVarintBytes];
        out_.insert(out_.end(), buf, buf + encode_varint(v, buf));
    }

    // Mode 5: sorted distinct values (gap-coded), then the element indices
    // as a nested u32 block coded by the same mappings.
    bool put_dictionary() {
        if (E::B < 16) return false;  // a u32 index per byte value never pays
        auto& dict = sc_.dict;
        auto& index = sc_.index;
        index.resize(n_);
        if (E::B <= 16) {
            // Counting: a map over the whole 16-bit value space.
            std::vector<std::uint32_t>& map = sc_.value_map;
            map.assign(std::size_t{1} << E::B, 0);
            for (std::size_t i = 0; i < n_; ++i) map[load_biased<U>(x_, i, flip_)] = 1;
            dict.clear();
            for (std::uint32_t v = 0; v < map.size(); ++v)
                if (map[v]) map[v] = static_cast<std::uint32_t>(dict.size()), dict.push_back(v);
            if (dict.size() * 2 > n_) return false;
            for (std::size_t i = 0; i < n_; ++i) index[i] = map[load_biased<U>(x_, i, flip_)];
        } else {
            dict.resize(n_);
            for (std::size_t i = 0; i < n_; ++i) dict[i] = load_biased<U>(x_, i, flip_);
            std::sort(dict.begin(), dict.end());
            dict.erase(std::unique(dict.begin(), dict.end()), dict.end());
            if (dict.size() * 2 > n_) return false;
            for (std::size_t i = 0; i < n_; ++i)
                index[i] = static_cast<std::uint32_t>(
                    std::lower_bound(dict.begin(), dict.end(), load_biased<U>(x_, i, flip_)) - dict.begin());
        }
        out_.push_back(static_cast<std::uint8_t>(BlockMode::dictionary));
        put_varint(dict.size() - 1);
        put_value(dict[0]);
        for (std::size_t d = 1; d < dict.size(); ++d) put_varint(dict[d] - dict[d - 1] - 1);
        BlockEncoder<std::uint32_t> nested(reinterpret_cast<const std::uint8_t*>(index.data()), n_, 0, kernels_,
                                           sc_, out_, true);
        nested.run(ModeHint::automatic);
        return true;
    }

    const std::uint8_t* x_;
    std::size_t n_;
    std::uint64_t flip_;
    const RansKernels& kernels_;
    BlockScratch& sc_;
    std::vector<std::uint8_t>& out_;
    LaneLayout lay_;
    bool nested_ = false;
    bool dictionary_candidate_ = false;
    Stats stats_;
    std::uint64_t center_ = 0;
    HybridChoice split_center_, split_delta_, split_repeat_;
};

template <typename U>
class BlockDecoder {
public:
    using E = Elem<U>;
    BlockDecoder(ByteReader r, std::size_t n, std::uint8_t* dst, std::uint64_t flip, const RansKernels& k,
                 BlockScratch& sc, bool nested = false)
        : r_(r), n_(n), y_(dst), flip_(flip), kernels_(k), sc_(sc), nested_(nested) {}

    Errc run() {
        std::uint8_t mode = 0;
        if (!r_.read(&mode)) return Errc::corrupt_block;
        bool ok = false;
        switch (static_cast<BlockMode>(mode)) {
            case BlockMode::stored: ok = get_stored(); break;
            case BlockMode::constant: ok = get_constant(); break;
            case BlockMode::token: ok = get_token(); break;
            case BlockMode::adm: ok = get_adm(); break;
            case BlockMode::byte_planes: ok = get_byte_planes(); break;
            case BlockMode::dictionary: ok = !nested_ && get_dictionary(); break;
            default: return Errc::corrupt_block;
        }
        // A payload must be consumed exactly.
        if (!ok || r_.remaining() != 0) return Errc::corrupt_block;
        return Errc::ok;
    }

private:
    bool get_value(std::uint64_t* v) {
        const std::uint8_t* p = nullptr;
        if (!r_.take(sizeof(U), &p)) return false;
        std::uint64_t x = 0;
        for (unsigned b = 0; b < sizeof(U); ++b) x |= static_cast<std::uint64_t>(p[b]) << (8 * b);
        *v = x;
        return true;
    }

    bool get_stored() {
        const std::uint8_t* p = nullptr;
        if (!r_.take(n_ * sizeof(U), &p)) return false;
        std::memcpy(y_, p, n_ * sizeof(U));
        return true;
    }

    bool get_constant() {
        std::uint64_t v = 0;
        if (!get_value(&v)) return false;
        for (std::size_t i = 0; i < n_; ++i) store_elem<U>(y_, i, v ^ flip_);
        return true;
    }

    bool get_tokens(LaneLayout* lay) {
        return decode_token_stream(r_, n_, kernels_, sc_.stream, sc_.tokens, lay);
    }

    // Raw-bit section: u32 length, then exactly that many bytes.
    bool get_bits(const std::uint8_t** p, std::uint32_t* len) {
        return r_.read(len) && r_.take(*len, p);
    }

    bool get_token() {
        std::uint8_t pred = 0, s = 0, m = 0;
        std::uint64_t c = 0;
        if (!r_.read(&pred) || !get_value(&c) || !r_.read(&s) || !r_.read(&m)) return false;
        const HybridSplit split{s, m};
        if (pred > 2 || !hybrid_split_valid(split, E::B, pred == 2)) return false;
        LaneLayout lay;
        if (!get_tokens(&lay)) return false;
        const std::uint8_t* bits = nullptr;
        std::uint32_t len = 0;
        if (!get_bits(&bits, &len)) return false;

        const std::uint8_t* tok = sc_.tokens.data();
        switch (static_cast<Predictor>(pred)) {
            case Predictor::center:
                return reconstruct_hybrid<U, Predictor::center>(tok, lay, flip_, c, split, bits, len, y_);
            case Predictor::lane_previous:
                return reconstruct_hybrid<U, Predictor::lane_previous>(tok, lay, flip_, c, split, bits, len, y_);
            case Predictor::center_repeat:
                return reconstruct_hybrid<U, Predictor::center_repeat>(tok, lay, flip_, c, split, bits, len, y_);
        }
        return false;
    }

    bool get_adm() {
        if (E::B != 16 && E::B != 32) return false;
        std::uint64_t c = 0;
        if (!get_value(&c)) return false;
        LaneLayout lay;
        if (!get_tokens(&lay)) return false;
        const std::uint8_t* bits = nullptr;
        std::uint32_t len = 0;
        if (!get_bits(&bits, &len)) return false;
        BitReader br(bits, len);
        bool bad = false;
        const std::uint8_t* tok = sc_.tokens.data();
        for_each_element(lay, [&](std::size_t slot, std::size_t i) {
            const std::uint32_t w = br.peek32();
            if (w == 0) {  // no terminating one within kAdmMaxK bits
                bad = true;
                br.get(32);
                return;
            }
            const unsigned k = static_cast<unsigned>(__builtin_ctz(w)) + 1;
            br.get(k);
            std::uint64_t u = 0;
            bad |= !adm_value(tok[slot], k, c, E::mask, &u);
            store_elem<U>(y_, i, u ^ flip_);
        });
        return !bad && bits_exact(br, len);
    }

    bool get_byte_planes() {
        std::uint64_t base = 0;
        std::uint8_t nplanes = 0;
        if (!get_value(&base) || !r_.read(&nplanes) || nplanes == 0 || nplanes > sizeof(U))
            return false;
        // Accumulate the planes of w = u - base in place, then rebase.
        std::memset(y_, 0, n_ * sizeof(U));
        unsigned lanes = 0;
        for (unsigned b = 0; b < nplanes; ++b) {
            LaneLayout lay;
            if (!get_tokens(&lay)) return false;
            if (b > 0 && lay.lanes != lanes) return false;  // all planes share one layout
            lanes = lay.lanes;
            const std::uint8_t* tok = sc_.tokens.data();
            for_each_element(lay, [&](std::size_t slot, std::size_t i) {
                store_elem<U>(y_, i, load_le<U>(y_ + i * sizeof(U)) | (static_cast<std::uint64_t>(tok[slot]) << (8 * b)));
            });
        }
        bool bad = false;
        for (std::size_t i = 0; i < n_; ++i) {
            const std::uint64_t w = load_le<U>(y_ + i * sizeof(U));
            bad |= w > E::mask - base;  // the sum would leave the type's range
            store_elem<U>(y_, i, (base + w) ^ flip_);
        }
        return !bad;
    }

    bool get_dictionary() {
        std::uint64_t count_m1 = 0, value = 0;
        if (E::B < 16 || !r_.read_varint64(&count_m1) || count_m1 >= n_ || !get_value(&value)) return false;
        // Every gap takes at least one byte: bound the allocation by the input.
        if (count_m1 > r_.remaining()) return false;
        auto& dict = sc_.dict;
        dict.resize(static_cast<std::size_t>(count_m1) + 1);
        dict[0] = value;
        for (std::size_t d = 1; d < dict.size(); ++d) {
            std::uint64_t gap_m1 = 0;
            if (!r_.read_varint64(&gap_m1) || gap_m1 >= E::mask - value) return false;  // strictly inside range
            value += gap_m1 + 1;
            dict[d] = value;
        }
        // The rest of the payload is the nested u32 block of indices.
        auto& index = sc_.index;
        index.resize(n_);
        const std::uint8_t* rest = nullptr;
        const std::size_t rest_bytes = r_.remaining();
        r_.take(rest_bytes, &rest);
        BlockDecoder<std::uint32_t> nested(ByteReader(rest, rest_bytes), n_,
                                           reinterpret_cast<std::uint8_t*>(index.data()), 0, kernels_, sc_, true);
        if (nested.run() != Errc::ok) return false;
        std::uint32_t bad = 0;
        const std::uint64_t size = dict.size();
        for (std::size_t i = 0; i < n_; ++i) {
            const std::uint32_t k = index[i];
            bad |= k >= size;
            store_elem<U>(y_, i, dict[k < size ? k : 0] ^ flip_);
        }
        return !bad;
    }

    ByteReader r_;
    std::size_t n_;
    std::uint8_t* y_;
    std::uint64_t flip_;
    const RansKernels& kernels_;
    BlockScratch& sc_;
    bool nested_ = false;
};

std::uint64_t sign_flip(DType t) {
    switch (t) {
        case DType::i16: return 1ull << 15;
        case DType::i32: return 1ull << 31;
        case DType::i64: return 1ull << 63;
        default: return 0;
    }
}

template <typename Fn>
void dispatch_width(DType t, Fn&& fn) {
    switch (dtype_size(t)) {
        case 1: fn(std::uint8_t{}); break;
        case 2: fn(std::uint16_t{}); break;
        case 4: fn(std::uint32_t{}); break;
        case 8: fn(std::uint64_t{}); break;
        default: break;
    }
}

}  // namespace

void encode_block(DType dtype, const void* src, std::size_t n, const RansKernels& kernels,
                  BlockScratch& scratch, std::vector<std::uint8_t>& out, ModeHint hint) {
    dispatch_width(dtype, [&](auto zero) {
        using U = decltype(zero);
        BlockEncoder<U> enc(static_cast<const std::uint8_t*>(src), n, sign_flip(dtype), kernels, scratch, out);
        enc.run(hint);
    });
}

Errc decode_block(DType dtype, const std::uint8_t* payload, std::size_t size, std::size_t n,
                  void* dst, const RansKernels& kernels, BlockScratch& scratch) {
    Errc e = Errc::unsupported_dtype;
    dispatch_width(dtype, [&](auto zero) {
        using U = decltype(zero);
        BlockDecoder<U> dec(ByteReader(payload, size), n, static_cast<std::uint8_t*>(dst), sign_flip(dtype),
                            kernels, scratch);
        e = dec.run();
    });
    return e;
}

}  // namespace mans::detail
