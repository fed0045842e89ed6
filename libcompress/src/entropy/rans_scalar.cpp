// rans_scalar.cpp - the reference lane loops (rans.hpp) as the CPU
// backend's scalar kernels.
#include "entropy/rans.hpp"

namespace mans::detail {

void rans_encode_scalar(RansEncodeArgs& a) { rans_encode_reference(a); }

bool rans_decode_scalar(const RansDecodeArgs& a) { return rans_decode_reference(a); }

}  // namespace mans::detail
