// rans_scalar.cpp - reference lane loops of the interleaved rANS coder.
//
// The encoder walks steps backwards and lanes from high to low, writing words
// downwards, so that the decoder reads words forwards in (step, lane)
// ascending order. Every SIMD or GPU kernel must emit exactly these bytes.
#include "entropy/rans.hpp"

namespace mans::detail {

void rans_encode_steps_scalar(const RansEncodeArgs& a, std::size_t t_lo, std::size_t t_hi,
                              std::uint32_t* x, std::uint16_t** wp) {
    const LaneLayout& lay = a.layout;
    std::uint16_t* w = *wp;
    for (std::size_t t = t_hi; t-- > t_lo;) {
        const unsigned active = lay.active_at(t);
        const std::uint8_t* row = a.tokens + t * lay.lanes;
        const std::uint8_t* prev = t ? row - lay.lanes : nullptr;
        for (unsigned j = active; j-- > 0;) {
            const unsigned ctx = prev ? a.ctx_of[prev[j]] : 0;
            const EncSym& s = a.table[ctx * 256 + row[j]];
            // Branch-free renormalisation: the store is harmless when unused.
            const std::uint32_t xv = x[j];
            const bool out = enc_needs_word(xv, s);
            w[-1] = static_cast<std::uint16_t>(xv);
            w -= out;
            x[j] = enc_apply(out ? xv >> 16 : xv, s);
        }
    }
    *wp = w;
}

void rans_encode_scalar(RansEncodeArgs& a) {
    std::uint32_t x[kMaxLanes];
    for (unsigned j = 0; j < a.layout.lanes; ++j) x[j] = kStateLow;
    std::uint16_t* w = a.words_end;
    rans_encode_steps_scalar(a, 0, a.layout.seg, x, &w);
    for (unsigned j = 0; j < a.layout.lanes; ++j) a.states[j] = x[j];
    a.words_first = w;
    a.ok = true;
}

bool rans_decode_scalar(const RansDecodeArgs& a) { return rans_decode_reference(a); }

}  // namespace mans::detail
