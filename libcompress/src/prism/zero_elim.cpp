// zero_elim.cpp - the CPU's zero elimination: zero_elim_hd.hpp into a
// growing vector. The byte layout is described there.
#include "prism/zero_elim.hpp"

namespace mans::detail::prism {

void zero_elim_encode(const std::uint8_t* src, std::size_t n, std::vector<std::uint8_t>* out) {
    std::vector<std::uint8_t> maps(zero_elim_map_bytes(n));  // B0, B1, ..., BL back to back
    const std::size_t base = out->size();
    out->resize(base + n + maps.size());  // worst case
    out->resize(base + zero_elim_encode_into(src, n, maps.data(), out->data() + base));
}

}  // namespace mans::detail::prism
