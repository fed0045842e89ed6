// rans_avx2.hpp - AVX2 rANS lane kernels (built for AVX2 in their own
// translation unit and only called after run-time detection). They write and
// read exactly the bytes of the scalar reference kernels.
#pragma once

#include "entropy/rans.hpp"

namespace mans::cpu {

void rans_encode_avx2(detail::RansEncodeArgs& a);
bool rans_decode_avx2(const detail::RansDecodeArgs& a);

}  // namespace mans::cpu
