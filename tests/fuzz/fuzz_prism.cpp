// fuzz_prism - arbitrary bytes as a PRISM archive, retrieved with a request
// chosen by the first byte and then refined to a full retrieval. Must return
// an error or a result of the declared size, never crash, hang or read
// outside the archive.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mans/prism.hpp"

using namespace mans::prism;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const std::uint8_t selector = data[0];
    Reader r;
    if (Reader::open(memory_source(data + 1, size - 1), &r) != mans::Errc::ok) return 0;
    // A valid tiny archive may describe a huge constant grid: stay small.
    if (r.info().count > (std::uint64_t{1} << 16)) return 0;
    const double range = r.info().value_max - r.info().value_min;
    Target first;
    switch (selector % 5) {
        case 0: first = Target::full(); break;
        case 1: first = Target::abs(r.info().abs_bound * (1 + selector)); break;
        case 2: first = Target::rel(range > 0 ? 1e-2 : 1); break;
        case 3: first = Target::psnr(20.0 + selector % 80); break;
        default: first = Target::bytes(r.info().header_bytes + r.info().base_bytes + 64u * selector); break;
    }
    Plan plan;
    (void)r.plan(first, nullptr, &plan);
    Retrieval x;
    if (r.retrieve(first, &x, 1) != mans::Errc::ok) return 0;
    const std::size_t expect = static_cast<std::size_t>(r.info().count) * float_size(r.info().type);
    if (x.bytes() != expect) __builtin_trap();
    if (r.refine(&x, Target::full(), 1) == mans::Errc::ok && x.bytes() != expect) __builtin_trap();
    return 0;
}
