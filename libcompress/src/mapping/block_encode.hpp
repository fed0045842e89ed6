// block_encode.hpp - picks a mapping for one block and writes its payload
// (docs/FORMAT.md "Block payload"): stored, constant, hybrid tokens against
// the block center or the previous element (optionally with a repeat
// token), ADM, byte planes, or a dictionary with a nested block of indices.
//
// Written once for the CPU and the GPU (MANS_HD), like block_decode.hpp:
// the CPU's encode_block runs it for every block (block_encoder.cpp), a GPU
// thread for one block (block_batch.hpp), so GPU streams are the CPU's
// bytes by construction. Every decision comes from integer cost estimates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/bit_io.hpp"
#include "core/byte_io.hpp"
#include "core/hd.hpp"
#include "core/hd_algo.hpp"
#include "core/team.hpp"
#include "entropy/cost_model.hpp"
#include "entropy/token_stream_encode.hpp"
#include "mapping/block_decode.hpp"  // BlockMode, Predictor
#include "mapping/elements.hpp"
#include "mapping/hybrid_tokens.hpp"
#include "mapping/lane_tokens.hpp"
#include "mapping/token_map.hpp"

namespace mans::detail {

// Optional override for tests: force one mapping (falls back to stored when it
// cannot represent the block).
enum class ModeHint : std::uint8_t {
    automatic = 0, stored, constant, token_center, token_delta, token_repeat, adm, byte_planes, dictionary
};

// An encoder output that notes whether a grow failed (the token stream
// coder's false does not say why).
template <typename Out>
struct GrowNoted {
    Out& out;
    bool full = false;
    MANS_HD std::uint8_t* grow(std::size_t n) {
        std::uint8_t* p = out.grow(n);
        full = full || !p;
        return p;
    }
};

// Mode selection looks at a sample: the whole block when it is small, else
// evenly spaced runs of consecutive elements (runs keep the delta predictor
// meaningful).
inline constexpr std::size_t kSampleRun = 256;
inline constexpr std::size_t kSampleRuns = 32;

struct Stats {
    std::uint64_t min = 0, max = 0;
    std::uint64_t sum = 0;  // of biased values; only read for B <= 32, where it cannot overflow
};

#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
// Whether an Env offers a SIMD hybrid tokenizer for elements of up to 32
// bits (hybrid_tokenizer(): a RansKernels::tokenize_hybrid, null when the
// CPU has none); only the CPU's does.
template <typename Env, typename = void>
struct HasHybridTokenizer : std::false_type {};
template <typename Env>
struct HasHybridTokenizer<Env, std::void_t<decltype(std::declval<const Env&>().hybrid_tokenizer())>>
    : std::true_type {};

// BlockEncoder::block_stats for one thread on the CPU: the same numbers
// from a loop that the compiler vectorizes (in the element type, partial
// sums of 4,096 elements in 32 bits where they cannot overflow); the
// 64-bit select chain of the shared loop took 9 % of u16 compression.
template <typename U>
Stats host_block_stats(const std::uint8_t* x, std::size_t n, std::uint64_t flip) {
    using Part = std::conditional_t<sizeof(U) <= 2, std::uint32_t, std::uint64_t>;
    constexpr std::size_t kPart = 4096;  // 4,096 * (2^16 - 1) < 2^32
    const U f = static_cast<U>(flip);
    U lo = static_cast<U>(~U{0}), hi = 0;
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < n;) {
        const std::size_t end = n - i < kPart ? n : i + kPart;
        Part part = 0;
        for (; i < end; ++i) {
            const U u = static_cast<U>(load_le<U>(x + i * sizeof(U)) ^ f);
            lo = u < lo ? u : lo;
            hi = u > hi ? u : hi;
            part += u;
        }
        sum += part;
    }
    return {lo, hi, sum};
}
#endif

// Histograms of the mode choice (about 90 KiB, 64 KiB of them the split
// search's per-rank token histograms), kept in the caller's scratch like
// StreamWork: on a GPU they would not fit a thread's stack.
struct RankWork {
    ValueHist center, delta, repeat;  // hybrid-token sources by predictor
    std::uint32_t planes[8][256];     // byte-plane values
    std::uint32_t adm_codes[256];
    std::uint32_t repeats;   // sampled repeats of values that need raw bits
    std::uint32_t adm_bits;  // ADM's raw bits on the sample
    std::uint32_t tok[256];  // best_split's token histogram
    // team_best_splits: a token histogram per rank, the candidates' costs.
    std::uint32_t rank_tok[kMaxTeamSize][256];
    std::uint64_t split_costs[3 * kMaxSplitCandidates];
    // rank_modes' order-0 estimates of the byte planes and then the ADM
    // codes, as sums (sample_order0_sums).
    Order0Sums order0_sums[9];
};
// sample_histograms clears RankWork up to rank_tok only: the histograms
// count from zero, while hybrid_cost_fix16 clears each token histogram it
// uses, every split cost is written before it is read and
// team_order0_sums clears its sums. Clearing all of
// it was 3.6x the bytes, a cost on every block of a small stream.
inline constexpr std::size_t kRankWorkCleared = offsetof(RankWork, rank_tok);

// A mapping candidate of the mode choice, with its estimated cost.
struct ModeCandidate {
    ModeHint hint;
    std::uint64_t cost;  // estimated bits on the sample, 16.16
};
inline constexpr unsigned kModeCandidates = 5;

// What a team's leader decided alone (the mode choice, a dictionary) for
// every member to read back: BlockEncoder::leader_decides.
struct EncodeDecisions {
    std::uint64_t center;
    HybridChoice split_center, split_delta, split_repeat;
    ModeCandidate ranked[kModeCandidates];
    std::uint64_t dict_size;  // distinct values of the last dictionary
    bool dictionary_candidate, failed;
};

// All of one encoder's work space. An encoder and its nested dictionary
// encoder share one: the nested one runs only after the outer one's mode
// choice is over and before any of its streams is coded.
struct EncodeWork {
    RankWork rank;
    StreamWork stream;
    EncodeDecisions decided;
};

// Reads an encoder's internal estimates in the tests (test_hd_algo.cpp).
struct BlockEncoderProbe;

// Env: what the encoder needs from its caller, as CPU vectors that grow
// (block_encoder.cpp) or fixed slices of device memory (block_batch.hpp):
//   out()                 the output: size(), grow(n) (null when full),
//                         truncate(n), erase(begin, end)
//   lanes(RansEncodeArgs&) the rANS lane loop
//   tokens(slots), bits(bytes), sample(n), dict(n), index(n), value_map(n),
//   sorted(n), stream(n)  scratch of at least that many entries (null when
//                         it cannot have them); stream(n).work is work()'s
//   work()                the EncodeWork (never null)
// A null from Env makes run() return false: the block cannot be coded here
// (never on the CPU). Choosing another mapping instead would change bytes.
//
// kNested: codes the index array of a dictionary block, which may not itself
// use a dictionary (a separate instantiation, so no recursion on a GPU).
//
// Team (core/team.hpp): the members that encode the block together, each
// with its own BlockEncoder and Env (the same scratch, its own output
// cursor), all calling run() alike. Every member makes the same calls with
// the same sizes, so cursors and control flow agree. What one member
// decides from the scratch (the mode choice, a dictionary) the leader does
// alone and hands over (leader_decides); tokens and raw bits
// (lane_tokens.hpp), the token streams, byte planes and large copies are
// split; the output's small writes are the leader's.
// On the CPU the team is one thread (SoloTeam) and all of this is plain
// serial code.
template <typename U, typename Env, bool kNested = false, typename Team = SoloTeam>
class BlockEncoder {
    friend struct BlockEncoderProbe;

public:
    using E = Elem<U>;
    MANS_HD BlockEncoder(const std::uint8_t* src, std::size_t n, std::uint64_t flip, Env& env,
                         const Team& team = Team{})
        : x_(src), n_(n), flip_(flip), env_(env), out_(env.out()), lay_(LaneLayout::make(n, lanes_for(n))),
          team_(team) {}

    // Appends the block's payload to env.out(); false when Env failed (its
    // scratch, or an output too short for the stored payload).
    //
    // The smaller payload wins, and a block that does not shrink is stored
    // (1 + n * sizeof(U) bytes, stored_bytes). A mapping whose payload would
    // not fit the output loses, as a longer one would: a fixed output of
    // block_encode_out_bound bytes holds every payload that can win, so
    // the choice is the one made with an output that grows (the CPU's).
    MANS_HD_CALL bool run(ModeHint hint) {
        const std::size_t start = out_.size();
        const std::size_t stored_bytes = 1 + n_ * sizeof(U);
        stats_ = block_stats();
        if (hint == ModeHint::automatic && stats_.min == stats_.max) hint = ModeHint::constant;
        const bool automatic = hint == ModeHint::automatic;
        if (automatic) decide_modes();
        const Coded first = put_mode(automatic ? ranked_[0].hint : hint);
        bool coded = first == Coded::yes;  // a mapping's payload is at [start, out_.size())
        // One that does not shrink the block is dropped now, so that a
        // dictionary trial has the room a winner needs.
        if (coded && out_.size() - start >= stored_bytes) {
            out_.truncate(start);
            coded = false;
        }
        // Data with few distinct values spread over a wide range (holes)
        // may code better as indices into a dictionary; that is decided by
        // coding both.
        if (automatic && first != Coded::no && dictionary_candidate_ && !failed_) {
            const std::size_t first_end = out_.size();
            const std::size_t to_beat = coded ? first_end - start : stored_bytes;
            if (put_mode(ModeHint::dictionary) == Coded::yes && out_.size() - first_end < to_beat) {
                if (coded) erase_output(start, first_end);
                coded = true;
            } else {
                out_.truncate(first_end);
            }
        }
        if (!coded) {
            out_.truncate(start);
            put_stored();
        }
        return !failed_ && !full_;
    }

    // After run() returned false: the output was too short (else Env's
    // scratch failed).
    MANS_HD bool output_full() const { return full_; }

private:
    using Candidate = ModeCandidate;
    static constexpr unsigned kCandidates = kModeCandidates;

    // fn() in the leader alone, in a phase of its own (it may write the
    // scratch and this encoder's decisions); then every member takes the
    // leader's decisions.
    template <typename F>
    MANS_HD void leader_decides(F&& fn) {
        if (team_.size() == 1) return fn();
        EncodeDecisions& d = env_.work()->decided;
        team_.for_ranks([&](unsigned r) {
            if (r != 0) return;
            fn();
            d.center = center_;
            d.split_center = split_center_, d.split_delta = split_delta_, d.split_repeat = split_repeat_;
            for (unsigned c = 0; c < kCandidates; ++c) d.ranked[c] = ranked_[c];
            d.dict_size = dict_size_;
            d.dictionary_candidate = dictionary_candidate_, d.failed = failed_;
        });
        center_ = d.center;
        split_center_ = d.split_center, split_delta_ = d.split_delta, split_repeat_ = d.split_repeat;
        for (unsigned c = 0; c < kCandidates; ++c) ranked_[c] = d.ranked[c];
        dict_size_ = static_cast<std::size_t>(d.dict_size);
        dictionary_candidate_ = d.dictionary_candidate, failed_ = d.failed;
    }

    // Removes output bytes [begin, end): the leader moves the tail, the
    // other members move their cursors alike.
    MANS_HD void erase_output(std::size_t begin, std::size_t end) {
        if (team_.leads())
            out_.erase(begin, end);
        else
            out_.truncate(out_.size() - (end - begin));
    }

    // Appends the payload of one mapping: yes; no when the mapping cannot
    // code the block (or Env failed); too_long when the output could not
    // take it (nothing of it is left in the output in either case).
    enum class Coded : std::uint8_t { no, yes, too_long };
    MANS_HD Coded put_mode(ModeHint hint) {
        const std::size_t start = out_.size();
        bool ok = false;
        switch (hint) {
            case ModeHint::constant: ok = stats_.min == stats_.max && put_constant(); break;
            case ModeHint::token_center: ok = put_token(Predictor::center); break;
            case ModeHint::token_delta: ok = put_token(Predictor::lane_previous); break;
            case ModeHint::token_repeat: ok = put_token(Predictor::center_repeat); break;
            case ModeHint::adm: ok = adm_possible() && put_adm(); break;
            case ModeHint::byte_planes: ok = put_byte_planes(); break;
            case ModeHint::dictionary: ok = !kNested && put_dictionary(); break;
            default: break;
        }
        const Coded result = failed_ ? Coded::no : full_ ? Coded::too_long : ok ? Coded::yes : Coded::no;
        full_ = false;
        if (result != Coded::yes) out_.truncate(start);
        return result;
    }

    // Min, max and sum (mod 2^64) of the block's biased values. In a team
    // rank r takes elements r, r + size, ... (a warp's loads contiguous)
    // and every member combines the ranks' results: the same numbers in
    // any order.
    MANS_HD_CALL Stats block_stats() const {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
        if constexpr (std::is_same_v<Team, SoloTeam>) return host_block_stats<U>(x_, n_, flip_);
#endif
        if (team_.size() == 1) return strided_stats(0, 1);
        std::uint64_t* mins = team_region(team_, kTeamRankFlags);
        std::uint64_t* maxs = team_region(team_, kTeamRankValues);
        std::uint64_t* sums = team_region(team_, kTeamRankSums);
        team_.for_ranks([&](unsigned r) {
            const Stats part = strided_stats(r, team_.size());
            mins[r] = part.min, maxs[r] = part.max, sums[r] = part.sum;
        });
        Stats s;
        s.min = E::mask;
        s.max = 0;
        for (unsigned r = 0; r < team_.size(); ++r) {
            s.min = mins[r] < s.min ? mins[r] : s.min;
            s.max = maxs[r] > s.max ? maxs[r] : s.max;
            s.sum += sums[r];
        }
        return s;
    }
    // Elements first, first + step, ... (none: min = mask, max = sum = 0).
    MANS_HD Stats strided_stats(std::size_t first, std::size_t step) const {
        Stats s;
        s.min = E::mask;
        s.max = 0;
        for (std::size_t i = first; i < n_; i += step) {
            const std::uint64_t u = load_biased<U>(x_, i, flip_);
            s.min = u < s.min ? u : s.min;
            s.max = u > s.max ? u : s.max;
            s.sum += u;
        }
        return s;
    }

    // Sampled elements: how many, and the element index of the k-th (the
    // whole block when it is small, else kSampleRuns runs of kSampleRun
    // consecutive elements, n / kSampleRuns apart).
    MANS_HD std::size_t sample_size() const { return n_ <= kSampleRun * kSampleRuns ? n_ : kSampleRun * kSampleRuns; }
    MANS_HD std::size_t sampled_index(std::size_t k) const {
        if (n_ <= kSampleRun * kSampleRuns) return k;
        return k / kSampleRun * (n_ / kSampleRuns) + k % kSampleRun;
    }

    // Median of every 4th sampled element (plenty for a center); also notes
    // whether the sample looks like few distinct values with holes between
    // them, the case a dictionary helps. A team gathers and sorts the
    // elements together (team_sort_u64) and counts the distinct ones; one
    // thread does it all (sort_u64).
    MANS_HD_CALL void find_center() {
        const std::size_t sampled = sample_size(), size = (sampled + 3) / 4;
        std::uint64_t* s = env_.sample(sampled / 4 + 1);
        if (!s) return leader_decides([&] { fail(), center_ = 0; });
        team_.for_ranks([&](unsigned r) {
            for (std::size_t q = r; q < size; q += team_.size()) s[q] = load_biased<U>(x_, sampled_index(4 * q), flip_);
        });
        if (team_.size() == 1) {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
            // A radix sort where the Env has room for its copy (the CPU's
            // does; the sorted scratch is only a team's dictionary's):
            // either sort gives the same order.
            if (std::uint64_t* tmp = env_.sorted(size)) {
                radix_sort_u64(s, size, tmp, E::B);
            } else {
                sort_u64(s, size);
            }
#else
            sort_u64(s, size);
#endif
        } else
            team_sort_u64(team_, s, size);
        center_ = sorted_sample_median(s, size);
    }
    // Every member reads the sorted sample; the team counts its distinct values.
    MANS_HD std::uint64_t sorted_sample_median(const std::uint64_t* s, std::size_t size) {
        const std::uint64_t median = s[size / 2];
        // Holes test on the central 98 % (outliers alone do not make holes
        // that a dictionary removes profitably).
        const std::size_t lo = size / 100, hi = size - 1 - size / 100;
        const std::uint64_t span = s[hi] - s[lo] + 1;
        const std::uint64_t distinct =
            team_count(team_, hi + 1 - lo, [&](std::uint64_t j) { return j == 0 || s[lo + j] != s[lo + j - 1]; });
        dictionary_candidate_ = !kNested && E::B >= 16 && size >= 64 &&
                                2 * static_cast<std::uint64_t>(distinct) <= span && distinct * 4 <= size;
        return median;
    }

    // ADM's center as published: floor of the block mean (B <= 32 only).
    MANS_HD std::uint64_t mean_center() const { return stats_.sum / n_; }

    MANS_HD bool adm_possible() const {
        if (E::B != 16 && E::B != 32) return false;
        const std::uint64_t limit = static_cast<std::uint64_t>(kAdmStep) * kAdmMaxK;
        const std::uint64_t c = mean_center();
        return stats_.max - c <= limit && c - stats_.min <= limit;
    }

    // The mode choice, in the team's phases: the team sorts the sample and
    // finds the center, builds the sample's histograms, costs the token
    // splits and estimates the byte planes and ADM; the leader ranks the
    // modes.
    MANS_HD_CALL void decide_modes() {
        find_center();
        sample_histograms();
        if (team_.size() > 1) team_splits();
        sample_order0_sums();
        leader_decides([&] { rank_modes(); });
        // Order-0 estimates miss what the context model gains: the two
        // closest candidates (rank_modes always has at least three) are
        // re-estimated with contexts, by the team; every member gets the
        // same costs and sorts alike.
        for (unsigned c = 0; c < 2; ++c) ranked_[c].cost = refined_cost(ranked_[c].hint);
        sort_candidates(ranked_, 2);
    }

    // The sample's histograms for rank_modes (RankWork), built by the team:
    // rank r takes sampled elements r, r + size, ...; bins and counts go in
    // with team.add, and each histogram's largest value is the largest of
    // the ranks' own. Needs center_ (find_center) and stats_.
    MANS_HD_CALL void sample_histograms() {
        RankWork& work = env_.work()->rank;
        team_zero(team_, reinterpret_cast<std::uint8_t*>(&work), kRankWorkCleared);
        const bool adm_ok = adm_possible();
        const std::uint64_t adm_c = adm_ok ? mean_center() : 0;
        const unsigned nplanes = plane_count();
        const std::size_t count = sample_size();
        const unsigned size = team_.size();
        std::uint64_t* max_c = team_region(team_, kTeamRankFlags);
        std::uint64_t* max_d = team_region(team_, kTeamRankValues);
        std::uint64_t* max_r = team_region(team_, kTeamRankSums);
        team_.for_ranks([&](unsigned r) {
            std::uint64_t mc = 0, md = 0, mr = 0;
            std::uint32_t repeats = 0, adm_bits = 0;
            for (std::size_t k = r; k < count; k += size) {
                const std::size_t i = sampled_index(k);
                const std::uint64_t u = load_biased<U>(x_, i, flip_);
                const std::uint64_t vc = zigzag((u - center_) & E::mask, E::B);
                mc = vc > mc ? vc : mc;
                team_.add(work.center.bin(vc), 1);
                const std::uint64_t prev = i ? load_biased<U>(x_, i - 1, flip_) : center_;
                const std::uint64_t vd = zigzag((u - prev) & E::mask, E::B);
                md = vd > md ? vd : md;
                team_.add(work.delta.bin(vd), 1);
                // Repeats of values that would need raw bits (>= 256 needs
                // them under every split).
                if (u == prev && vc >= 256) {
                    ++repeats;
                } else {
                    mr = vc > mr ? vc : mr;
                    team_.add(work.repeat.bin(vc), 1);
                }
                const std::uint64_t w = u - stats_.min;
                for (unsigned b = 0; b < nplanes; ++b) team_.add(&work.planes[b][(w >> (8 * b)) & 0xff], 1);
                if (adm_ok) {
                    unsigned kbits = 0;
                    team_.add(&work.adm_codes[adm_code(u, adm_c, &kbits)], 1);
                    adm_bits += kbits;
                }
            }
            team_.add(&work.repeats, repeats);
            team_.add(&work.adm_bits, adm_bits);
            if (size == 1) {
                work.center.vmax = mc, work.delta.vmax = md, work.repeat.vmax = mr;
            } else {
                max_c[r] = mc, max_d[r] = md, max_r[r] = mr;
            }
        });
        team_.fence_atomics();
        // The leader writes the maxima; every member reads them in
        // team_splits, after the barrier that opens its next phase.
        if (size > 1 && team_.leads()) {
            for (unsigned r = 0; r < size; ++r) {
                work.center.vmax = max_c[r] > work.center.vmax ? max_c[r] : work.center.vmax;
                work.delta.vmax = max_d[r] > work.delta.vmax ? max_d[r] : work.delta.vmax;
                work.repeat.vmax = max_r[r] > work.repeat.vmax ? max_r[r] : work.repeat.vmax;
            }
        }
    }

    // Estimates every mapping from the sample's histograms (order 0) and
    // sorts them into ranked_. Also fixes the token splits. Writes the
    // scratch: leader_decides.
    MANS_HD_CALL void rank_modes() {
        Candidate* out = ranked_;
        RankWork& work = env_.work()->rank;
        ValueHist &hc = work.center, &hd = work.delta, &hr = work.repeat;
        const std::uint32_t repeats = work.repeats;
        const bool adm_ok = adm_possible();
        const unsigned nplanes = plane_count();
        const std::uint32_t sampled = static_cast<std::uint32_t>(sample_size());
        if (team_.size() == 1) {  // a team has found them (team_splits)
            split_center_ = best_split(hc, E::B, 0, work.tok);
            split_delta_ = best_split(hd, E::B, 0, work.tok);
            split_repeat_ = repeats ? best_split(hr, E::B, repeats, work.tok) : HybridChoice{};
        }
        unsigned count = 0;
        out[count++] = {ModeHint::token_center, split_center_.cost};
        out[count++] = {ModeHint::token_delta, split_delta_.cost};
        // The repeat token only pays (and is only worth a trial) with enough repeats.
        if (repeats >= sampled / 64 && repeats) out[count++] = {ModeHint::token_repeat, split_repeat_.cost};
        std::uint64_t plane_cost = 0;
        for (unsigned b = 0; b < nplanes; ++b) plane_cost += order0_cost(work.order0_sums[b]);
        out[count++] = {ModeHint::byte_planes, plane_cost};
        if (adm_ok)
            out[count++] = {ModeHint::adm, order0_cost(work.order0_sums[nplanes]) + std::uint64_t{work.adm_bits} * kFixOne};
        sort_candidates(out, count);
    }

    // The sums of rank_modes' order-0 estimates of the byte planes and then
    // the ADM codes (when ADM can code the block), by the team.
    MANS_HD_CALL void sample_order0_sums() {
        RankWork& work = env_.work()->rank;
        const std::uint32_t* hists[9] = {};
        unsigned m = 0;
        for (unsigned b = 0; b < plane_count(); ++b) hists[m++] = work.planes[b];
        if (adm_possible()) hists[m++] = work.adm_codes;
        team_order0_sums(team_, hists, m, work.order0_sums);
    }

    // rank_modes' three best splits (center, delta, repeat when there are
    // repeats) by the team: the splits' cost estimates are most of the
    // ranking's work (up to 35 candidates per histogram).
    MANS_HD_CALL void team_splits() {
        RankWork& work = env_.work()->rank;
        const ValueHist* h[3] = {&work.center, &work.delta, &work.repeat};
        const std::uint32_t repeats[3] = {0, 0, work.repeats};
        HybridChoice best[3] = {};
        team_best_splits(team_, h, repeats, work.repeats ? 3 : 2, E::B, work.rank_tok, work.split_costs, best);
        split_center_ = best[0], split_delta_ = best[1];
        split_repeat_ = work.repeats ? best[2] : HybridChoice{};
    }

    // Insertion sort by (cost, hint): ties break on the hint, so the order
    // is fully determined (at most kCandidates entries).
    MANS_HD static void sort_candidates(Candidate* c, unsigned count) {
        for (unsigned i = 1; i < count; ++i) {
            const Candidate v = c[i];
            unsigned j = i;
            while (j > 0 && (v.cost != c[j - 1].cost ? v.cost < c[j - 1].cost : v.hint < c[j - 1].hint)) {
                c[j] = c[j - 1];
                --j;
            }
            c[j] = v;
        }
    }

    // Context-aware estimate on the sample of a token stream whose token and
    // raw-bit count for element i come from tok_of(i, prev_u, &nraw). Sample
    // runs restart the context like lane starts do (the first element has
    // the context of token 0). In a team rank r takes a contiguous part of
    // the sample, starting from the token before it; the histogram's bins
    // go in with team.add, and the team estimates (team_context_sums).
    template <typename TokenOf>
    MANS_HD_CALL std::uint64_t sample_stream_cost(TokenOf&& tok_of) const {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
        if constexpr (std::is_same_v<Team, SoloTeam>) return host_sample_stream_cost(tok_of);
#endif
        StreamWork& w = env_.work()->stream;  // no stream is being coded now
        std::uint32_t (*hist8)[256] = w.hist8;
        team_zero(team_, reinterpret_cast<std::uint8_t*>(w.hist8), sizeof w.hist8);
        const auto prev_of = [&](std::size_t i) { return i ? load_biased<U>(x_, i - 1, flip_) : center_; };
        const std::size_t count = sample_size();
        std::uint64_t* rank_bits = team_region(team_, kTeamRankSums);
        std::uint64_t raw_bits = 0;
        team_.for_ranks([&](unsigned r) {
            const RankSpan part = rank_span(r, team_.size(), count);
            std::uint64_t bits = 0;
            unsigned prev_tok = 0;
            for (std::size_t k = part.begin; k < part.end; ++k) {
                const std::size_t i = sampled_index(k);
                const bool run_start = k != 0 && i != sampled_index(k - 1) + 1;
                if (k == part.begin && k != 0 && !run_start) {
                    unsigned unused = 0;
                    prev_tok = tok_of(i - 1, prev_of(i - 1), &unused);
                }
                unsigned nraw = 0;
                const unsigned tok = tok_of(i, prev_of(i), &nraw);
                team_.add(&hist8[run_start ? 0 : token_class8(prev_tok)][tok], 1);
                bits += nraw;
                prev_tok = tok;
            }
            if (team_.size() == 1)
                raw_bits = bits;
            else
                rank_bits[r] = bits;
        });
        team_.fence_atomics();
        if (team_.size() > 1)
            for (unsigned r = 0; r < team_.size(); ++r) raw_bits += rank_bits[r];
        team_context_sums(team_, hist8, w.sums);
        return best_context_cost_fix16(w.sums, nullptr) + raw_bits * kFixOne;
    }

#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
    // sample_stream_cost for one thread on the CPU: the sample's tokens run
    // by run into a buffer, then counted by previous-token class from a
    // table, alternate tokens into a second histogram, as
    // host_context_histogram counts a stream. The same counts and raw bits,
    // so the same cost; the shared loop's per-element run test, index
    // arithmetic and back-to-back increments of one bin took about a fifth
    // of u16 compression.
    template <typename TokenOf>
    std::uint64_t host_sample_stream_cost(TokenOf&& tok_of) const {
        StreamWork& w = env_.work()->stream;
        const std::size_t count = sample_size();
        // One run of the whole block when it is small, else kSampleRuns runs
        // of kSampleRun; a run restarts the context unless it follows the
        // previous one without a gap (blocks just over the sample size).
        const std::size_t run = count == n_ ? n_ : kSampleRun;
        const bool restarts = count != n_ && n_ / kSampleRuns != kSampleRun;
        std::uint8_t tok[kSampleRun * kSampleRuns];
        std::uint64_t raw_bits = 0;
        for (std::size_t k = 0; k < count; k += run) {
            const std::size_t first = sampled_index(k);
            std::uint64_t prev_u = first ? load_biased<U>(x_, first - 1, flip_) : center_;
            for (std::size_t i = first, q = k; i < first + run; ++i, ++q) {
                unsigned nraw = 0;
                tok[q] = static_cast<std::uint8_t>(tok_of(i, prev_u, &nraw));
                raw_bits += nraw;
                prev_u = load_biased<U>(x_, i, flip_);
            }
        }
        const std::uint8_t* const cls = host_token_classes();
        std::uint32_t (*hist8)[256] = w.hist8;
        std::uint32_t odd[kMaxContexts][256] = {};
        std::memset(hist8, 0, sizeof w.hist8);
        for (std::size_t start = 0; start < count; start += run) {
            const std::size_t end = start + run;
            ++hist8[start == 0 || restarts ? 0u : cls[tok[start - 1]]][tok[start]];
            std::size_t k = start + 1;
            for (; k + 1 < end; k += 2) {
                ++odd[cls[tok[k - 1]]][tok[k]];
                ++hist8[cls[tok[k]]][tok[k + 1]];
            }
            if (k < end) ++odd[cls[tok[k - 1]]][tok[k]];
        }
        for (unsigned c = 0; c < kMaxContexts; ++c)
            for (unsigned s = 0; s < 256; ++s) hist8[c][s] += odd[c][s];
        team_context_sums(team_, hist8, w.sums);
        return best_context_cost_fix16(w.sums, nullptr) + raw_bits * kFixOne;
    }
#endif

    MANS_HD_CALL std::uint64_t refined_cost(ModeHint hint) const {
        switch (hint) {
            case ModeHint::token_center:
            case ModeHint::token_delta:
            case ModeHint::token_repeat: {
                const HybridChoice& ch = hint == ModeHint::token_center  ? split_center_
                                         : hint == ModeHint::token_delta ? split_delta_
                                                                         : split_repeat_;
                const unsigned repeat_tok = hybrid_token_count(ch.split, E::B);
                const auto cost_with = [&](const auto& token_of) {
                    return sample_stream_cost([&](std::size_t i, std::uint64_t prev_u, unsigned* nraw) {
                        const std::uint64_t u = load_biased<U>(x_, i, flip_);
                        const std::uint64_t ref = hint == ModeHint::token_delta ? prev_u : center_;
                        unsigned tok = token_of(zigzag((u - ref) & E::mask, E::B), nraw);
                        if (hint == ModeHint::token_repeat && u == prev_u && *nraw) tok = repeat_tok, *nraw = 0;
                        return tok;
                    });
                };
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
                // The CPU's branch-free tokens (hybrid_tokens.hpp) for one
                // thread only. Teams take hybrid_token, as a GPU does; the
                // tests compare the one-thread costs with a LoopTeam's.
                if constexpr (E::B <= 32 && std::is_same_v<Team, SoloTeam>) {
                    const HybridTokens32 fast(ch.split);
                    if constexpr (E::B == 8) {
                        // A byte's source value has 256 values: their tokens and
                        // raw-bit counts from a table (PRISM's plane streams are
                        // many small u8 blocks, each estimated twice).
                        std::uint8_t tok8[256], nraw8[256];
                        for (unsigned v = 0; v < 256; ++v) {
                            unsigned nr = 0;
                            tok8[v] = static_cast<std::uint8_t>(fast.token(v, &nr));
                            nraw8[v] = static_cast<std::uint8_t>(nr);
                        }
                        return cost_with([&](std::uint64_t v, unsigned* nraw) {
                            *nraw = nraw8[v];
                            return static_cast<unsigned>(tok8[v]);
                        });
                    }
                    return cost_with([&](std::uint64_t v, unsigned* nraw) {
                        return fast.token(static_cast<std::uint32_t>(v), nraw);
                    });
                }
#endif
                return cost_with([&](std::uint64_t v, unsigned* nraw) { return hybrid_token(v, ch.split, nraw); });
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

    MANS_HD unsigned plane_count() const {
        const std::uint64_t range = stats_.max - stats_.min;
        unsigned p = 0;
        while (p < sizeof(U) && (range >> (8 * p))) ++p;
        return p;
    }

    MANS_HD void fail() { failed_ = true; }

    // Output helpers: an output that cannot take the bytes sets full_ (the
    // mapping's bytes written so far are then dropped by put_mode, and
    // nothing more is written until then).
    // In a team every member calls these alike, with equal bytes at p (its
    // own copy or the same memory): the leader writes a few bytes, the team
    // splits a long copy.
    MANS_HD void put_bytes(const void* p, std::size_t n) {
        if (full_) return;
        std::uint8_t* d = out_.grow(n);
        if (!d) {
            full_ = true;
            return;
        }
        if (n == 0) return;
        if (team_.size() > 1 && n > kLeaderWrites)
            team_copy(team_, d, static_cast<const std::uint8_t*>(p), n);
        else if (team_.leads())
            hd_memcpy(d, p, n);
    }
    static constexpr std::size_t kLeaderWrites = 64;
    MANS_HD void put_byte(unsigned v) {
        const std::uint8_t b = static_cast<std::uint8_t>(v);
        put_bytes(&b, 1);
    }
    MANS_HD void put_le(std::uint64_t v, unsigned bytes) {
        std::uint8_t buf[8];
        for (unsigned b = 0; b < bytes; ++b) buf[b] = static_cast<std::uint8_t>(v >> (8 * b));
        put_bytes(buf, bytes);
    }
    MANS_HD void put_value(std::uint64_t v) { put_le(v, sizeof(U)); }

    MANS_HD void put_stored() {
        put_byte(static_cast<unsigned>(BlockMode::stored));
        put_bytes(x_, n_ * sizeof(U));
    }

    MANS_HD bool put_constant() {
        put_byte(static_cast<unsigned>(BlockMode::constant));
        put_value(stats_.min);
        return true;
    }

    // The token stream of tokens_, then the raw-bit section (u32 length,
    // then the bytes).
    MANS_HD bool put_tokens_and_bits(const std::uint8_t* bits, std::size_t bits_len) {
        if (!put_stream()) return false;
        put_le(bits_len, 4);
        put_bytes(bits, bits_len);
        return !failed_;
    }
    MANS_HD_CALL bool put_stream() {
        if (full_) return false;
        const TokenEncodeBuffers b = env_.stream(n_);
        if (!b.enc || !b.words || !b.work) return fail(), false;
        const auto lanes = [this](RansEncodeArgs& a) { env_.lanes(a); };
        GrowNoted<std::remove_reference_t<decltype(out_)>> out{out_};
        if (encode_token_stream_into(tokens_, lay_, lanes, b, out, team_)) return true;
        if (out.full) full_ = true;
        else fail();
        return false;
    }
    // Token scratch for this block's layout; null (and failed_) when Env has none.
    MANS_HD std::uint8_t* token_buffer() {
        tokens_ = env_.tokens(lay_.slots());
        if (!tokens_) fail();
        return tokens_;
    }

    MANS_HD_CALL bool put_token(Predictor pred) {
        if (split_center_.cost == ~0ull)  // forced mode: the splits are still needed
            decide_modes();
        if (pred == Predictor::center_repeat && split_repeat_.cost == ~0ull) {
            // No repeats seen: any valid split.
            leader_decides([&] {
                RankWork& w = env_.work()->rank;
                w.repeat.clear();
                split_repeat_ = best_split(w.repeat, E::B, 1, w.tok);
            });
        }
        const HybridSplit split = pred == Predictor::center          ? split_center_.split
                                  : pred == Predictor::lane_previous ? split_delta_.split
                                                                     : split_repeat_.split;
        put_byte(static_cast<unsigned>(BlockMode::token));
        put_byte(static_cast<unsigned>(pred));
        put_value(center_);
        put_byte(split.s);
        put_byte(split.m);
        std::uint8_t* tokens = token_buffer();
        std::uint8_t* bits = env_.bits(bit_writer_bytes(n_ * E::B));
        if (!tokens || !bits) return fail(), false;
        std::size_t bits_len = 0;
        with_predictor(pred, [&](auto p) {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
            if constexpr (std::is_same_v<Team, SoloTeam> && E::B <= 32) {  // the CPU's encode_block
                if constexpr (HasHybridTokenizer<Env>::value) {
                    if (const auto tokenize = env_.hybrid_tokenizer()) {  // the CPU's SIMD kernel
                        bits_len = tokenize(HybridTokenizeArgs{x_, lay_, flip_, center_, split, sizeof(U),
                                                               decltype(p)::value, tokens, bits});
                        return true;
                    }
                }
                bits_len = tokenize_hybrid_serial<U, decltype(p)::value>(x_, lay_, flip_, center_, split, tokens, bits);
                return true;
            }
#endif
            bits_len = tokenize_lanes(team_, lay_, tokens, bits, [&](unsigned j, auto& sink) {
                tokenize_hybrid_lane<U, decltype(p)::value>(x_, lay_, flip_, center_, split, j, sink);
            });
            return true;
        });
        return put_tokens_and_bits(bits, bits_len);
    }

    MANS_HD_CALL bool put_adm() {
        const std::uint64_t c = mean_center();
        put_byte(static_cast<unsigned>(BlockMode::adm));
        put_value(c);
        std::uint8_t* tokens = token_buffer();
        std::uint8_t* bits = env_.bits(bit_writer_bytes(n_ * kAdmMaxK));
        if (!tokens || !bits) return fail(), false;
        const std::size_t bits_len = tokenize_lanes(team_, lay_, tokens, bits, [&](unsigned j, auto& sink) {
            for_each_element_of_lanes(lay_, j, j + 1, [&](std::size_t slot, std::size_t i) {
                unsigned k = 0;
                const unsigned code = adm_code(load_biased<U>(x_, i, flip_), c, &k);
                sink.put(slot, code, 1ull << (k - 1), k);  // k-1 zeros, then a one
            });
        });
        return put_tokens_and_bits(bits, bits_len);
    }

    MANS_HD_CALL bool put_byte_planes() {
        const unsigned nplanes = plane_count();
        if (nplanes == 0) return false;  // a constant block has no planes: stored/constant instead
        put_byte(static_cast<unsigned>(BlockMode::byte_planes));
        put_value(stats_.min);
        put_byte(nplanes);
        std::uint8_t* tokens = token_buffer();
        if (!tokens) return false;
        for (unsigned b = 0; b < nplanes; ++b) {
            team_.for_ranks([&](unsigned r) {  // each rank the tokens of its lanes
                const RankSpan mine = rank_span(r, team_.size(), lay_.lanes);
                for_each_element_of_lanes(lay_, mine.begin, mine.end, [&](std::size_t slot, std::size_t i) {
                    const std::uint64_t w = load_biased<U>(x_, i, flip_) - stats_.min;
                    tokens[slot] = static_cast<std::uint8_t>(w >> (8 * b));
                });
            });
            if (!put_stream()) return false;
        }
        return !failed_;
    }

    MANS_HD void put_varint(std::uint64_t v) {
        std::uint8_t buf[kMaxVarintBytes];
        put_bytes(buf, encode_varint(v, buf));
    }

    // Mode 5: sorted distinct values (gap-coded), then the element indices
    // as a nested u32 block coded by the same mappings.
    MANS_HD_CALL bool put_dictionary() {
        if constexpr (E::B < 16) return false;  // a u32 index per byte value never pays
        std::uint64_t* dict = env_.dict(n_);
        std::uint32_t* index = env_.index(n_);
        if (!dict || !index) return fail(), false;
        std::uint32_t* map = nullptr;
        if constexpr (E::B <= 16) {
            map = env_.value_map(std::size_t{1} << E::B);
            if (!map) return fail(), false;
            team_zero(team_, reinterpret_cast<std::uint8_t*>(map), (std::size_t{1} << E::B) * sizeof(std::uint32_t));
        }
        // The dictionary and the indices (dict_size_ 0: too many values):
        // one thread alone below, a team split (team_dictionary), the same
        // dictionary and indices.
        if (team_.size() > 1) {
            if (!team_dictionary(map, dict, index)) return fail(), false;
        } else leader_decides([&] {
            std::size_t size = 0;
            dict_size_ = 0;
            if constexpr (E::B <= 16) {
                // Counting: a map over the whole 16-bit value space.
                const std::size_t values = std::size_t{1} << E::B;
                for (std::size_t i = 0; i < n_; ++i) map[load_biased<U>(x_, i, flip_)] = 1;
                for (std::uint32_t v = 0; v < values; ++v)
                    if (map[v]) map[v] = static_cast<std::uint32_t>(size), dict[size++] = v;
                if (size * 2 > n_) return;
                for (std::size_t i = 0; i < n_; ++i) index[i] = map[load_biased<U>(x_, i, flip_)];
            } else {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
                std::uint64_t* tmp = E::B == 32 ? env_.sorted(n_) : nullptr;
                if (tmp) {
                    // The CPU with 32-bit values: (value, element) pairs in
                    // one word, radix-sorted by value, then one pass numbers
                    // the distinct values and files each element's number.
                    // The same dictionary and indices as the sort, unique
                    // and binary searches below, which took most of this
                    // mapping's time on u32 data (test_hd_algo.cpp).
                    for (std::size_t i = 0; i < n_; ++i) dict[i] = load_biased<U>(x_, i, flip_) << 32 | i;
                    radix_sort_u64(dict, n_, tmp, 64, 32);
                    size = dictionary_from_sorted_pairs(dict, n_, index);
                    if (size * 2 > n_) return;
                } else
#endif
                {
                    for (std::size_t i = 0; i < n_; ++i) dict[i] = load_biased<U>(x_, i, flip_);
                    sort_u64(dict, n_);
                    size = unique_u64(dict, n_);
                    if (size * 2 > n_) return;
                    for (std::size_t i = 0; i < n_; ++i)
                        index[i] =
                            static_cast<std::uint32_t>(lower_bound_u64(dict, size, load_biased<U>(x_, i, flip_)));
                }
            }
            dict_size_ = size;
        });
        const std::size_t size = dict_size_;
        if (size == 0) return false;
        put_byte(static_cast<unsigned>(BlockMode::dictionary));
        put_varint(size - 1);
        put_value(dict[0]);
        for (std::size_t d = 1; d < size; ++d) put_varint(dict[d] - dict[d - 1] - 1);
        if (full_) return false;  // the dictionary alone does not fit: it loses without its indices
        BlockEncoder<std::uint32_t, Env, true, Team> nested(reinterpret_cast<const std::uint8_t*>(index), n_, 0, env_,
                                                            team_);
        if (!nested.run(ModeHint::automatic)) {
            if (nested.output_full()) full_ = true;  // the dictionary loses
            else fail();
        }
        return !failed_ && !full_;
    }

    // put_dictionary's dictionary and indices by a team. 16-bit values: the
    // value map is marked by every rank (atomic OR), its marked values
    // numbered in order (team_enumerate over equal ranges of the value
    // space), each element's index read from it. Wider values: sorted
    // together (team_sort_u64) into the sorted scratch, the first of each
    // run numbered in order into dict, each element's index found by a
    // binary search. Sets dict_size_ (0: more than n / 2 values); false
    // when the Env has no sorted scratch.
    MANS_HD bool team_dictionary(std::uint32_t* map, std::uint64_t* dict, std::uint32_t* index) {
        const unsigned ranks = team_.size();
        std::size_t size = 0;
        if constexpr (E::B <= 16) {
            team_.for_ranks([&](unsigned r) {
                for (std::size_t i = r; i < n_; i += ranks) team_.or_word(&map[load_biased<U>(x_, i, flip_)], 1);
            });
            team_.fence_atomics();
            size = static_cast<std::size_t>(team_enumerate(
                team_, std::uint64_t{1} << E::B, [&](std::uint64_t v) { return map[v] != 0; },
                [&](std::uint64_t v, std::uint64_t k) { map[v] = static_cast<std::uint32_t>(k), dict[k] = v; }));
            if (size * 2 <= n_)
                team_.for_ranks([&](unsigned r) {
                    for (std::size_t i = r; i < n_; i += ranks) index[i] = map[load_biased<U>(x_, i, flip_)];
                });
        } else {
            std::uint64_t* sorted = env_.sorted(n_);
            if (!sorted) return false;
            team_.for_ranks([&](unsigned r) {
                for (std::size_t i = r; i < n_; i += ranks) sorted[i] = load_biased<U>(x_, i, flip_);
            });
            team_sort_u64(team_, sorted, n_);
            size = static_cast<std::size_t>(team_enumerate(
                team_, n_, [&](std::uint64_t j) { return j == 0 || sorted[j] != sorted[j - 1]; },
                [&](std::uint64_t j, std::uint64_t k) { dict[k] = sorted[j]; }));
            if (size * 2 <= n_)
                team_.for_ranks([&](unsigned r) {
                    for (std::size_t i = r; i < n_; i += ranks)
                        index[i] = static_cast<std::uint32_t>(lower_bound_u64(dict, size, load_biased<U>(x_, i, flip_)));
                });
        }
        dict_size_ = size * 2 <= n_ ? size : 0;
        return true;
    }

    const std::uint8_t* x_;
    std::size_t n_;
    std::uint64_t flip_;
    Env& env_;
    decltype(env_.out()) out_;
    LaneLayout lay_;
    Team team_;
    std::uint8_t* tokens_ = nullptr;  // token scratch of the current mapping
    Candidate ranked_[kCandidates] = {};
    std::size_t dict_size_ = 0;  // distinct values of the dictionary trial
    bool failed_ = false;
    bool full_ = false;  // the output could not take the current mapping's bytes
    bool dictionary_candidate_ = false;
    Stats stats_;
    std::uint64_t center_ = 0;
    HybridChoice split_center_, split_delta_, split_repeat_;
};


// Output bytes that hold every payload BlockEncoder::run can choose for a
// block of n elements of esize bytes (S = 1 + n * esize, the stored
// payload), with run's rule that a mapping which does not fit loses:
// - the stored payload is S bytes;
// - a first mapping is kept only when shorter than S (F <= S - 1);
// - a dictionary trial, written behind a kept first mapping, wins only when
//   shorter than it (D <= F - 1), so F + D <= 2S - 3 while it can win;
//   behind none it wins only when shorter than S. A trial that does not
//   fit is longer than any that can win, so it loses either way, and so
//   does its nested index block's mapping (its stored payload is tried
//   next, as with an output that grows).
// Every write grows the output by its exact size (no reservations).
MANS_HD std::size_t block_encode_out_bound(std::size_t n, std::size_t esize) {
    const std::size_t stored = 1 + n * esize;
    return 2 * stored;
}

}  // namespace mans::detail
