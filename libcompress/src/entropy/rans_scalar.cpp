// rans_scalar.cpp - reference lane loops of the interleaved rANS coder.
//
// The encoder walks steps backwards and lanes from high to low, writing words
// downwards, so that the decoder reads words forwards in (step, lane)
// ascending order. Every SIMD or GPU kernel must emit exactly these bytes.
#include "entropy/rans.hpp"

namespace mans::detail {

void rans_encode_scalar(RansEncodeArgs& a) {
    const LaneLayout& lay = a.layout;
    std::uint32_t x[kMaxLanes];
    for (unsigned j = 0; j < lay.lanes; ++j) x[j] = kStateLow;
    std::uint16_t* w = a.words_end;
    for (std::size_t t = lay.seg; t-- > 0;) {
        const unsigned active = lay.active_at(t);
        const std::uint8_t* row = a.tokens + t * lay.lanes;
        const std::uint8_t* prev = t ? row - lay.lanes : nullptr;
        for (unsigned j = active; j-- > 0;) {
            const unsigned ctx = prev ? a.ctx_of[prev[j]] : 0;
            const EncSym& s = a.table[ctx * 256 + row[j]];
            if (enc_needs_word(x[j], s)) {
                if (w == a.words_begin) return;  // a.ok stays false
                *--w = static_cast<std::uint16_t>(x[j]);
                x[j] >>= 16;
            }
            x[j] = enc_apply(x[j], s);
        }
    }
    for (unsigned j = 0; j < lay.lanes; ++j) a.states[j] = x[j];
    a.words_first = w;
    a.ok = true;
}

bool rans_decode_scalar(const RansDecodeArgs& a) {
    const LaneLayout& lay = a.layout;
    const std::uint32_t mask = (1u << a.prob_bits) - 1;
    std::uint32_t x[kMaxLanes];
    for (unsigned j = 0; j < lay.lanes; ++j) x[j] = a.states[j];
    std::size_t rd = 0;
    for (std::size_t t = 0; t < lay.seg; ++t) {
        const unsigned active = lay.active_at(t);
        std::uint8_t* row = a.out + t * lay.lanes;
        const std::uint8_t* prev = t ? row - lay.lanes : nullptr;
        for (unsigned j = 0; j < active; ++j) {
            const std::uint32_t off = prev ? a.ctx_off[prev[j]] : 0;
            const std::uint32_t e = a.table[off + (x[j] & mask)];
            row[j] = static_cast<std::uint8_t>(e);
            x[j] = dec_apply(x[j], e, a.prob_bits);
            if (dec_needs_word(x[j])) {
                if (rd == a.nwords) return false;
                x[j] = (x[j] << 16) | a.words[rd++];
            }
        }
        for (unsigned j = active; j < lay.lanes; ++j) row[j] = 0;
    }
    // A valid stream ends with every word consumed and every lane back in
    // its initial state: a strong check against corrupt payloads.
    if (rd != a.nwords) return false;
    for (unsigned j = 0; j < lay.lanes; ++j)
        if (x[j] != kStateLow) return false;
    return true;
}

}  // namespace mans::detail
