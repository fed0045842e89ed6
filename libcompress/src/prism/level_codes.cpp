// level_codes.cpp - see level_codes.hpp.
#include "prism/level_codes.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cmath>

#include "backend.hpp"
#include "core/status.hpp"
#include "prism/cpu_kernels.hpp"
#include "prism/level_assembly_hd.hpp"  // chunk_segment_for_plane, dropped_digits
#include "prism/plane_coding.hpp"
#include "prism/truncation_stats_hd.hpp"

namespace mans::detail::prism {
namespace {

// Calls fn(chunk, codes of the range in it) for every chunk a range touches.
template <typename F>
void for_each_chunk(const std::vector<CodeRange>& ranges, std::uint64_t chunk, F&& fn) {
    for (const CodeRange& r : ranges) {
        if (r.last <= r.first) continue;
        for (std::uint64_t ch = r.first / chunk; ch <= (r.last - 1) / chunk; ++ch)
            fn(ch, std::min(r.last, (ch + 1) * chunk) - std::max(r.first, ch * chunk));
    }
}

}  // namespace

// ---------------------------------------------------------------- encoder

LevelEncoder::LevelEncoder(std::uint64_t codes, std::uint32_t chunk_codes, Coding coding, unsigned batch_chunks)
    : codes_(codes),
      nchunks_((codes + chunk_codes - 1) / chunk_codes),
      chunk_(chunk_codes),
      shift_(static_cast<unsigned>(__builtin_ctz(chunk_codes))),
      mask_(chunk_codes - 1u),
      coding_(coding),
      batch_chunks_(std::min(kMaxBatchChunks, std::max(1u, batch_chunks))),
      bufs_(static_cast<std::size_t>(nchunks_)),
      pool_(chunk_codes),
      written_(static_cast<std::size_t>(nchunks_), 0),
      done_(static_cast<std::size_t>(nchunks_)) {}

std::uint64_t LevelEncoder::len(std::uint64_t ch) const { return std::min<std::uint64_t>(chunk_, codes_ - ch * chunk_); }

// Buffers of the chunks coded in the last step go back to the pool.
void LevelEncoder::recycle() {
    for (std::uint64_t ch : coding_now_) pool_.give(std::move(bufs_[ch]));
    coding_now_.clear();
}

StepJobs LevelEncoder::prepare(const std::vector<CodeRange>& ranges) {
    recycle();
    for_each_chunk(ranges, chunk_, [&](std::uint64_t ch, std::uint64_t) {
        if (!bufs_[ch]) bufs_[ch] = pool_.take();
    });
    if (queue_.size() >= batch_chunks_) coding_now_.swap(queue_);
    return StepJobs{0, coding_now_.size()};  // full chunks are not written again
}

void LevelEncoder::commit(const std::vector<CodeRange>& ranges) {
    for_each_chunk(ranges, chunk_, [&](std::uint64_t ch, std::uint64_t n) {
        written_[ch] += n;
        if (written_[ch] == len(ch)) queue_.push_back(ch);
    });
}

void LevelEncoder::code_chunk(std::uint64_t ch) {
    const std::uint64_t n = len(ch);
    const std::int32_t* q = bufs_[ch].get();
    std::vector<std::uint32_t> words(static_cast<std::size_t>(n));
    std::uint32_t any = 0;
    for (std::uint64_t j = 0; j < n; ++j) any |= words[j] = encode_code(q[j], coding_);
    Chunk& c = done_[ch];
    ++c.coded;  // one job per chunk: no other thread touches c
    const unsigned P = planes_for(any, coding_);
    c.planes = P;
    TruncationPartial stats[kMaxPlanes + 1];
    cpu_backend().prism_kernels().truncation_stats(q, words.data(), n, P, coding_, stats);
    c.max_err.resize(P + 1);
    c.sum_sq.resize(P + 1);
    for (unsigned d = 0; d <= P; ++d) c.max_err[d] = stats[d].max_err, c.sum_sq[d] = stats[d].sum_sq.to_double();
    const bool two_forms = coding_ == Coding::sign_magnitude && P >= 2;
    encode_plane_chunks(words.data(), n, P, coding_, &c.seg, two_forms ? &c.after_zero_plane : nullptr);
}

Errc LevelEncoder::finish(LevelMeta* m, std::vector<Segment>* segments, std::vector<std::vector<std::uint8_t>>* bytes,
                          std::vector<std::uint32_t>* checksums, int threads) {
    recycle();
    coding_now_.swap(queue_);
#pragma omp parallel for num_threads(threads) schedule(dynamic)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(coding_now_.size()); ++i)
        code_chunk(coding_now_[static_cast<std::size_t>(i)]);
    recycle();
    pool_ = BufferPool<std::int32_t>(chunk_);
    unsigned P = 0;
    for (std::uint64_t ch = 0; ch < nchunks_; ++ch) {
        if (written_[ch] != len(ch) || done_[ch].coded != 1) return Errc::internal;
        P = std::max(P, done_[ch].planes);
    }
    // Truncation tables: keeping `kept` planes drops d = P - kept digits;
    // a chunk with fewer digits than d loses all of its codes.
    m->planes = static_cast<std::uint8_t>(P);
    m->max_err.assign(P + 1, 0);
    m->sum_sq.assign(P + 1, 0);
    for (const Chunk& c : done_)
        for (unsigned kept = 0; kept <= P; ++kept) {
            const unsigned d = dropped_digits(P, kept, c.planes);
            m->max_err[kept] = std::max(m->max_err[kept], c.max_err[d]);
            m->sum_sq[kept] += c.sum_sq[d];
        }
    for (unsigned b = 0; b <= P; ++b) m->sum_sq[b] = decode_sum_sq(encode_sum_sq(m->sum_sq[b]));  // as stored

    XXH3_state_t* st = XXH3_createState();
    if (!st) return Errc::out_of_memory;
    for (unsigned b = 0; b < P; ++b) {
        XXH3_64bits_reset(st);
        for (Chunk& c : done_) {
            std::vector<std::uint8_t> seg;
            const int k = chunk_segment_for_plane(coding_, P, c.planes, b);
            if (k == kAfterZeroPlaneSegment) seg = std::move(c.after_zero_plane);
            else if (k != kNoSegment) seg = std::move(c.seg[static_cast<std::size_t>(k)]);
            segments->push_back(Segment{static_cast<std::uint32_t>(seg.size())});
            XXH3_64bits_update(st, seg.data(), seg.size());
            bytes->push_back(std::move(seg));
        }
        checksums->push_back(static_cast<std::uint32_t>(XXH3_64bits_digest(st)));
    }
    XXH3_freeState(st);
    done_.clear();
    return Errc::ok;
}

// ---------------------------------------------------------------- decoder

LevelDecoder::LevelDecoder(const Header& h, unsigned l, unsigned kept, std::vector<const std::uint8_t*> plane_data,
                           unsigned ahead)
    : h_(h),
      level_(l),
      kept_(kept),
      ahead_(ahead),
      plane_data_(std::move(plane_data)),
      codes_(h.level[l].codes),
      nchunks_(h.chunks(l)),
      chunk_(h.chunk_codes),
      pow2_((h.chunk_codes & (h.chunk_codes - 1)) == 0),
      shift_(static_cast<unsigned>(__builtin_ctz(h.chunk_codes))),
      bufs_(static_cast<std::size_t>(nchunks_)),
      pool_(h.chunk_codes),
      used_(static_cast<std::size_t>(nchunks_), 0) {}

std::uint64_t LevelDecoder::len(std::uint64_t ch) const { return std::min<std::uint64_t>(chunk_, codes_ - ch * chunk_); }

StepJobs LevelDecoder::prepare(const std::vector<CodeRange>& ranges) {
    need_.clear();
    auto take = [&](std::uint64_t ch) {
        if (ch >= nchunks_ || bufs_[ch] || used_[ch]) return;  // held, or used up (never needed again)
        bufs_[ch] = pool_.take();
        need_.push_back(ch);
    };
    for_each_chunk(ranges, chunk_, [&](std::uint64_t ch, std::uint64_t) { take(ch); });
    const std::size_t urgent = need_.size();
    for (const CodeRange& r : ranges)
        if (r.last > r.first)
            for (std::uint64_t k = 1; k <= ahead_; ++k) take((r.last - 1) / chunk_ + k);
    errors_.assign(need_.size(), Errc::ok);
    return StepJobs{urgent, need_.size()};
}

void LevelDecoder::job(std::size_t j) {
    const std::uint64_t ch = need_[j], n = len(ch);
    std::uint32_t* words = bufs_[ch].get();
    std::fill(words, words + n, 0u);
    const std::uint8_t* payload[kMaxPlanes];
    std::size_t size[kMaxPlanes];
    for (unsigned b = 0; b < kept_; ++b) {
        const std::size_t si = h_.segment_index(level_, b, ch);
        payload[b] = plane_data_[b] + (h_.segment_offset[si] - h_.plane_range_begin(level_, b));
        size[b] = h_.segments[si].stored;
    }
    errors_[j] = decode_plane_chunks(payload, size, words, n, 0, kept_, h_.level[level_].planes, h_.coding);
}

Errc LevelDecoder::commit(const std::vector<CodeRange>& ranges) {
    for (Errc e : errors_)  // the first failing chunk's error, whatever the schedule
        if (e != Errc::ok) return e;
    for_each_chunk(ranges, chunk_, [&](std::uint64_t ch, std::uint64_t n) {
        used_[ch] += n;
        if (used_[ch] == len(ch)) pool_.give(std::move(bufs_[ch]));
    });
    return Errc::ok;
}

}  // namespace mans::detail::prism
