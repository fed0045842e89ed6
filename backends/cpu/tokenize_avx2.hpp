// tokenize_avx2.hpp - the hybrid-token mapping's tokenizer for elements
// of up to 32 bits with AVX2 and BMI2 (built for them in its own
// translation unit, called only after run-time detection). It writes
// tokenize_hybrid_serial's tokens and raw bits exactly.
#pragma once

#include <cstddef>

#include "mapping/hybrid_tokens.hpp"

namespace mans::cpu {

std::size_t tokenize_hybrid_avx2(const detail::HybridTokenizeArgs& a);

}  // namespace mans::cpu
