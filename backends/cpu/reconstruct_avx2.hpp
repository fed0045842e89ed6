// reconstruct_avx2.hpp - the hybrid-token mapping's decoder for elements
// of 8, 16 and 32 bits with AVX2 (built for it in its own translation unit,
// called only after run-time detection). It gives
// reconstruct_hybrid_serial's elements and verdict exactly.
#pragma once

#include "mapping/block_decode.hpp"

namespace mans::cpu {

bool reconstruct_hybrid_avx2(const detail::HybridReconstructArgs& a);

}  // namespace mans::cpu
