// conv2d's gradient to its weights on the matrix unit, step 1 of 3 (docs/library.md, "conv2d on
// the matrix unit"): the unit's operand b for one sample and a chunk of tap groups,
// b [ntg][Ppad][4] (tap group i, position p: the source values of its 4 taps at output position
// p), in MatMulAmp's column groups; taps in the padding, taps past K and positions past OH OW hold
// +0. Tap t = (q, kh, kw) at output position (y, x) reads src[q][y sh - ph + kh dh][x sw - pw +
// kw dw] (conv_amp.h's forward geometry). This vertex writes tap groups [tp0, tp0 + tpn) of the
// chunk at positions [p0, p0 + pn).
//   src [Q, SH, SW]  the sample's input channels
// Packed params (low | high 16 bits; signed where said): kernel KH|KW, mul sh|sw, step dh|dw,
// offset -ph|-pw (signed), srcSize SH|SW, taps K|Kpad, outSize OH|OW, groups tg0|ntg (the
// chunk's first tap group and its tap groups), part tp0|tpn, positions p0|pn.
#include "conv_amp.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ConvGatherWAmp, (Input, float, src), (Output, float, b), (Param, uint32_t, kernel),
               (Param, uint32_t, mul), (Param, uint32_t, step), (Param, uint32_t, offset),
               (Param, uint32_t, srcSize), (Param, uint32_t, taps), (Param, uint32_t, outSize),
               (Param, uint32_t, groups), (Param, uint32_t, part), (Param, uint32_t, positions)) {
  const uint32_t KH = kernel & 0xffffu, KW = kernel >> 16, sh = mul & 0xffffu, sw = mul >> 16;
  const uint32_t dh = step & 0xffffu, dw = step >> 16;
  const int32_t offY = conv_amp::lo16s(offset), offX = conv_amp::hi16s(offset);
  const uint32_t SH = srcSize & 0xffffu, SW = srcSize >> 16, K = taps & 0xffffu;
  const uint32_t OH = outSize & 0xffffu, OW = outSize >> 16, P = OH * OW;
  const uint32_t tg0 = groups & 0xffffu, ntg = groups >> 16;
  const uint32_t tp0 = part & 0xffffu, tpn = part >> 16;
  const uint32_t p0 = positions & 0xffffu, pEnd = p0 + (positions >> 16);
  const uint32_t Ppad = b.size() / (ntg * 4);
  for (uint32_t i = tp0; i < tp0 + tpn; ++i) {
    for (uint32_t j = 0; j < 4; ++j) {
      float* out = b.data() + i * Ppad * 4 + j;
      const uint32_t t = (tg0 + i) * 4 + j;
      if (t >= K) {
        for (uint32_t p = p0; p < pEnd; ++p) out[p * 4] = 0.0f;
        continue;
      }
      const uint32_t q = t / (KH * KW), kh = t / KW % KH, kw = t % KW;
      // Output columns [xlo, xhi) whose tap column x sw + offX + kw dw lies inside the row.
      const int32_t cx = offX + static_cast<int32_t>(kw * dw);
      const uint32_t xlo = cx >= 0 ? 0 : (static_cast<uint32_t>(-cx) + sw - 1) / sw;
      uint32_t xhi = cx >= static_cast<int32_t>(SW)
                         ? 0
                         : (static_cast<uint32_t>(static_cast<int32_t>(SW) - cx) + sw - 1) / sw;
      if (xhi > OW) xhi = OW;
      for (uint32_t p = p0; p < pEnd;) {
        const uint32_t y = p / OW, x = p - y * OW;
        uint32_t end = p + (OW - x);
        if (end > pEnd) end = pEnd;
        const int32_t sy = static_cast<int32_t>(y * sh + kh * dh) + offY;
        if (p >= P || sy < 0 || sy >= static_cast<int32_t>(SH)) {
          for (; p < end; ++p) out[p * 4] = 0.0f;
          continue;
        }
        const float* row = src.data() + (q * SH + static_cast<uint32_t>(sy)) * SW;
        const uint32_t a = x < xlo ? (xlo - x < end - p ? p + (xlo - x) : end) : p;
        const uint32_t e = x < xhi ? (xhi - x < end - p ? p + (xhi - x) : end) : p;
        for (; p < a; ++p) out[p * 4] = 0.0f;
        if (p < e) {
          const float* s = row + static_cast<int32_t>((p - y * OW) * sw) + cx;
          float* o = out + p * 4;
          float* const oe = out + e * 4;
          for (; o != oe; o += 4, s += sw) *o = *s;
          p = e;
        }
        for (; p < end; ++p) out[p * 4] = 0.0f;
      }
    }
  }
}
