// thread_team.hpp - a team (core/team.hpp) of real threads for the tests:
// one std::thread per member, every member runs the code between phases, a
// barrier before and after each phase, rank 0 leads, and histogram adds and
// shared raw-bit words are atomic. It is as close to a warp as a CPU gets,
// and under ThreadSanitizer it looks for races between members (a member writing
// what only the leader or one rank may write).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "core/team.hpp"

namespace mans_test {

// A generation barrier: the last member to arrive opens the next generation
// (release); the others wait for it (acquire). A waiter yields a few times
// first (32 or 64 members on two cores would otherwise sleep and wake at
// every phase), then sleeps on a condition variable: when waiters only
// yielded, the members that still had work got a core after every yielder
// had had its turn, and beside one other busy process (ctest -j2 on two
// cores) the ballot tests took 119 s instead of 2.8 s.
class Barrier {
public:
    explicit Barrier(unsigned n) : n_(n) {}
    void wait() {
        const std::uint64_t gen = gen_.load(std::memory_order_acquire);
        if (waiting_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
            waiting_.store(0, std::memory_order_relaxed);
            bool wake;
            {
                std::lock_guard<std::mutex> lock(mutex_);
                gen_.store(gen + 1, std::memory_order_release);
                wake = sleepers_ != 0;
            }
            if (wake) opened_.notify_all();
            return;
        }
        for (unsigned i = 0; i < kYields; ++i) {
            if (gen_.load(std::memory_order_acquire) != gen) return;
            std::this_thread::yield();
        }
        std::unique_lock<std::mutex> lock(mutex_);
        ++sleepers_;
        opened_.wait(lock, [&] { return gen_.load(std::memory_order_acquire) != gen; });
        --sleepers_;
    }

private:
    // Ballot tests on 2 cores, alone / beside one busy process: 0 yields
    // 8.1 / 12.2 s, 16 yields 2.9 / 11-14 s, 64 yields 2.6 / 32 s.
    static constexpr unsigned kYields = 16;
    const unsigned n_;
    std::atomic<unsigned> waiting_{0};
    std::atomic<std::uint64_t> gen_{0};
    std::mutex mutex_;
    std::condition_variable opened_;
    unsigned sleepers_ = 0;  // under mutex_
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
    void add64(std::uint64_t* p, std::uint64_t v) const { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
    void or_word(std::uint32_t* p, std::uint32_t v) const { __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
    void fence_atomics() const {}  // the barrier's release/acquire already orders them
};

// Runs member(r) for every rank r < size, each in a thread of its own, and
// waits for all of them.
template <typename Member>
void run_members(unsigned size, Member&& member) {
    std::vector<std::thread> threads;
    for (unsigned r = 0; r < size; ++r) threads.emplace_back([&member, r] { member(r); });
    for (std::thread& t : threads) t.join();
}

}  // namespace mans_test
