// thread_team.hpp - a team (core/team.hpp) of real threads for the tests:
// one std::thread per member, every member runs the code between phases, a
// barrier before and after each phase, rank 0 leads, and histogram adds and
// shared raw-bit words are atomic. It is as close to a warp as a CPU gets,
// and under ThreadSanitizer it looks for races between members (a member writing
// what only the leader or one rank may write).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "core/team.hpp"

namespace mans_test {

class Barrier {
public:
    explicit Barrier(unsigned n) : n_(n) {}
    void wait() {
        std::unique_lock<std::mutex> lock(m_);
        const std::uint64_t gen = gen_;
        if (++waiting_ == n_) {
            waiting_ = 0;
            ++gen_;
            cv_.notify_all();
        } else {
            cv_.wait(lock, [&] { return gen_ != gen; });
        }
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    unsigned n_, waiting_ = 0;
    std::uint64_t gen_ = 0;
};

struct ThreadTeamState {
    explicit ThreadTeamState(unsigned n) : bar(n) {
        for (std::uint64_t& w : area) w = 0xA5A5A5A5A5A5A5A5ull;  // garbage, as on a GPU
    }
    Barrier bar;
    std::uint64_t area[mans::detail::kTeamSharedWords];
    bool votes[mans::detail::kMaxTeamSize];

    // The warp's ballot: the mask of members whose p is true; every member
    // calls it at the same points.
    std::uint64_t ballot(unsigned rank, unsigned n, bool p) {
        votes[rank] = p;
        bar.wait();
        std::uint64_t mask = 0;
        for (unsigned r = 0; r < n; ++r) mask |= std::uint64_t{votes[r]} << r;
        bar.wait();  // every member has read the votes
        return mask;
    }
};

struct ThreadTeam {
    unsigned rank, n;
    ThreadTeamState* st;
    unsigned size() const { return n; }
    template <typename F>
    void for_ranks(F&& fn) const {
        st->bar.wait();
        fn(rank);
        st->bar.wait();
    }
    bool leads() const { return rank == 0; }
    std::uint64_t* shared() const { return st->area; }
    void add(std::uint32_t* p, std::uint32_t v) const { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
    void or_word(std::uint32_t* p, std::uint32_t v) const { __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
    void fence_atomics() const {}  // the barrier's mutex already orders them
};

}  // namespace mans_test
