// level_codes.hpp - the codes of one level, held a chunk at a time.
//
// The sweep (sweep.hpp) produces and consumes a level's codes in steps of a
// few code ranges; only the chunks those ranges touch are held.
//
// LevelEncoder codes a chunk once all its codes are there (full chunks are
// coded in batches, one per thread), before the level's plane count P is
// known (it follows from every code of the level).
// The chunk is coded with its own plane count P_c <= P; in the level the
// planes above it are empty, and an empty plane leaves the contexts of the
// next one (FORMAT.md 4.5) as if it were absent, with one exception: after
// it no sign-magnitude code is "fresh", so that coding's first magnitude
// plane is also coded that way. Same bytes as coding the level at once.
//
// LevelDecoder decodes the chunks a step needs from planes [0, kept) held in
// memory, and frees them once every code in them was used.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "prism/archive.hpp"

namespace mans::detail::prism {

// Codes [first, last) of one level.
struct CodeRange {
    std::uint64_t first = 0, last = 0;
};

// Jobs of a parallel step: [0, urgent) before its points, the rest beside them.
struct StepJobs {
    std::size_t urgent = 0, total = 0;
};

// Fixed-size chunk buffers, reused (no page faults and zeroing per chunk).
template <typename W>
class BufferPool {
public:
    explicit BufferPool(std::uint64_t size) : size_(size) {}
    std::unique_ptr<W[]> take() {
        if (free_.empty()) return std::unique_ptr<W[]>(new W[static_cast<std::size_t>(size_)]);
        std::unique_ptr<W[]> b = std::move(free_.back());
        free_.pop_back();
        return b;
    }
    void give(std::unique_ptr<W[]> b) {
        if (b) free_.push_back(std::move(b));
    }

private:
    std::uint64_t size_;
    std::vector<std::unique_ptr<W[]>> free_;
};

// Steps are prepare (sequential) - jobs (parallel, with the points) - commit.
class LevelEncoder {
public:
    // batch_chunks: full chunks are held until that many are queued, then
    // coded in one step (the finish codes the rest). A chunk is a step's
    // longest job, and a small level fills about one per step, so with one
    // at a time the other threads of a step wait for it; give the thread
    // count. At most kMaxBatchChunks are held (chunk_codes * 4 bytes each:
    // 16 MiB for 131072 codes), so memory does not grow with threads. The
    // bytes do not depend on it.
    static constexpr unsigned kMaxBatchChunks = 32;
    LevelEncoder(std::uint64_t codes, std::uint32_t chunk_codes, Coding coding, unsigned batch_chunks = 1);

    // Buffers for every chunk the ranges touch; every code is then written
    // exactly once. Returns the jobs: coding the chunks filled before, once
    // batch_chunks of them are waiting.
    StepJobs prepare(const std::vector<CodeRange>& ranges);
    void job(std::size_t j) { code_chunk(coding_now_[j]); }
    std::int32_t& code(std::uint64_t i) { return bufs_[i >> shift_][i & mask_]; }
    // The ranges are written: chunks whose codes are all there are queued.
    void commit(const std::vector<CodeRange>& ranges);
    // Plane count and truncation tables into *m, the level's segments (plane
    // by plane, chunk by chunk) appended to *segments / *bytes, one checksum
    // per plane appended to *checksums. internal when a code was never written.
    Errc finish(LevelMeta* m, std::vector<Segment>* segments, std::vector<std::vector<std::uint8_t>>* bytes,
                std::vector<std::uint32_t>* checksums, int threads);

private:
    struct Chunk {
        unsigned coded = 0;                            // times code_chunk ran: 1 in finish
        unsigned planes = 0;                           // P_c
        std::vector<std::vector<std::uint8_t>> seg;    // P_c segments
        std::vector<std::uint8_t> after_zero_plane;    // sign-magnitude plane 1 below an empty plane
        // By digits dropped d = 0..P_c: largest |code error| and sum of its squares.
        std::vector<double> max_err, sum_sq;
    };
    std::uint64_t len(std::uint64_t ch) const;
    void code_chunk(std::uint64_t ch);
    void recycle();

    std::uint64_t codes_, nchunks_;
    std::uint32_t chunk_;
    unsigned shift_;
    std::uint64_t mask_;
    Coding coding_;
    std::size_t batch_chunks_;
    std::vector<std::unique_ptr<std::int32_t[]>> bufs_;
    BufferPool<std::int32_t> pool_;
    std::vector<std::uint64_t> written_;
    std::vector<Chunk> done_;
    std::vector<std::uint64_t> queue_;       // full chunks, not coded yet
    std::vector<std::uint64_t> coding_now_;  // the jobs of the current step
};

class LevelDecoder {
public:
    // planes [0, kept) of level l; plane_data[b] holds the stored bytes of plane b
    // (its chunks in order, as in the archive).
    LevelDecoder(const Header& h, unsigned l, unsigned kept, std::vector<const std::uint8_t*> plane_data,
                 unsigned ahead);

    // Buffers for the chunks the ranges touch that are not held, and for the
    // `ahead` chunks after each (codes are used in increasing order, so they
    // are needed soon: every thread gets a chunk to decode); returns the
    // jobs: decoding them, those of the ranges first (urgent).
    StepJobs prepare(const std::vector<CodeRange>& ranges);
    void job(std::size_t j);
    std::uint32_t word(std::uint64_t i) const {
        const std::uint64_t ch = pow2_ ? i >> shift_ : i / chunk_;
        return bufs_[ch][i - ch * chunk_];
    }
    // The words of codes [i, i + m) when one chunk holds them all, else null.
    const std::uint32_t* words(std::uint64_t i, std::uint64_t m) const {
        const std::uint64_t ch = pow2_ ? i >> shift_ : i / chunk_;
        const std::uint64_t at = i - ch * chunk_;
        return at + m <= chunk_ ? bufs_[ch].get() + at : nullptr;
    }
    // The ranges were used: the first decoding error of the step (corrupt_block
    // & co.), else chunks whose codes were all used are freed.
    Errc commit(const std::vector<CodeRange>& ranges);

private:
    std::uint64_t len(std::uint64_t ch) const;

    const Header& h_;
    unsigned level_, kept_, ahead_;
    std::vector<const std::uint8_t*> plane_data_;
    std::uint64_t codes_, nchunks_, chunk_;
    bool pow2_;
    unsigned shift_;
    std::vector<std::unique_ptr<std::uint32_t[]>> bufs_;
    BufferPool<std::uint32_t> pool_;
    std::vector<std::uint64_t> used_;
    std::vector<std::uint64_t> need_;  // the jobs of the current step
    std::vector<Errc> errors_;
};

}  // namespace mans::detail::prism
