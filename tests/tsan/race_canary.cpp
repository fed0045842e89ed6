// race_canary.cpp - a deliberate data race in an OpenMP loop. scripts/run-tsan.sh
// builds it with the suite's flags and requires ThreadSanitizer to report it,
// so a TSan setup that hides races (options, suppressions, a missing Archer)
// fails the job instead of passing silently. Not part of any library or test.
#include <cstdio>

int main() {
    long sum = 0;  // shared and unsynchronised on purpose
#pragma omp parallel for num_threads(2) schedule(static)
    for (int i = 0; i < 100000; ++i) sum += i;
    std::printf("race_canary: sum %ld\n", sum);
    return 0;
}
