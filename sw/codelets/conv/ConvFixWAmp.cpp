// conv2d's gradient to its weights on the matrix unit, step 3 of 3 (docs/library.md, "conv2d on
// the matrix unit"): one sample's partial weights of a chunk of taps, from MatMulAmp's
// c [rows, 4 ntg] to out [rows, K] (the sample's partial, output channels of the block), each one
// that is NaN, or +-0 where the chains may differ (below), recomputed by the scalar chain: from
// +0, fused multiply-adds of dy by the tap's input over the output positions (y, x) in increasing
// order, taps in the padding skipped (Conv2dBackwardWeights' order; why the others are equal:
// ConvFixAmp.cpp). This vertex does rows [r0, r0 + rn).
//   src [Q, SH, SW]  dy [rows, OH, OW]  c [rows, 4 ntg]  out [rows, K]
// Packed params as ConvGatherWAmp's; rows = r0|rn.
#include "conv_amp.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ConvFixWAmp, (Input, float, src), (Input, float, dy), (Input, float, c),
               (Output, float, out), (Param, uint32_t, kernel), (Param, uint32_t, mul),
               (Param, uint32_t, step), (Param, uint32_t, offset), (Param, uint32_t, srcSize),
               (Param, uint32_t, taps), (Param, uint32_t, outSize), (Param, uint32_t, groups),
               (Param, uint32_t, rows)) {
  const uint32_t KH = kernel & 0xffffu, KW = kernel >> 16, sh = mul & 0xffffu, sw = mul >> 16;
  const uint32_t dh = step & 0xffffu, dw = step >> 16;
  const int32_t offY = conv_amp::lo16s(offset), offX = conv_amp::hi16s(offset);
  const uint32_t SH = srcSize & 0xffffu, SW = srcSize >> 16, K = taps & 0xffffu;
  const uint32_t OH = outSize & 0xffffu, OW = outSize >> 16, P = OH * OW;
  const uint32_t tg0 = groups & 0xffffu, ntg = groups >> 16;
  const uint32_t r0 = rows & 0xffffu, rEnd = r0 + (rows >> 16);
  const uint32_t cols = ntg * 4;
  for (uint32_t r = r0; r < rEnd; ++r) {
    int32_t rowNonzero = -1;  // whether the gradient row has a nonzero element; -1: not looked
    for (uint32_t tl = 0; tl < cols; ++tl) {
      const uint32_t t = tg0 * 4 + tl;
      if (t >= K) break;
      float v = c[r * cols + tl];
      const uint32_t u = __builtin_bit_cast(uint32_t, v) & 0x7fffffffu;
      if (u != 0 && u <= 0x7f800000u) {
        out[r * K + t] = v;
        continue;
      }
      const uint32_t q = t / (KH * KW), kh = t / KW % KH, kw = t % KW;
      bool redo = u > 0x7f800000u;
      if (u == 0) {
        // A zero differs only where the tap reads the padding at some output position (else
        // the chains are the same but for fma(-0, +0, acc) == acc) and the gradient row is not
        // all zeros (else both chains stay +0 from +0: a -0 needs a nonzero product).
        const int32_t y0 = offY + static_cast<int32_t>(kh * dh),
                      x0 = offX + static_cast<int32_t>(kw * dw);
        const bool skips =
            y0 < 0 || y0 + static_cast<int32_t>((OH - 1) * sh) >= static_cast<int32_t>(SH) ||
            x0 < 0 || x0 + static_cast<int32_t>((OW - 1) * sw) >= static_cast<int32_t>(SW);
        if (skips && rowNonzero < 0) {
          rowNonzero = 0;
          for (uint32_t i = 0; i < P; ++i) {
            if (__builtin_bit_cast(uint32_t, dy[r * P + i]) & 0x7fffffffu) {
              rowNonzero = 1;
              break;
            }
          }
        }
        redo = skips && rowNonzero == 1;
      }
      if (redo) {
        const float* d = dy.data() + r * P;
        // The output columns [xa, xb) whose tap column x sw + cx lies inside the row (one range:
        // the column grows with x), as ConvGatherWAmp's; the others are skipped.
        const int32_t cx = offX + static_cast<int32_t>(kw * dw);
        const uint32_t xa = cx >= 0 ? 0 : (static_cast<uint32_t>(-cx) + sw - 1) / sw;
        uint32_t xb = cx >= static_cast<int32_t>(SW)
                          ? 0
                          : (static_cast<uint32_t>(static_cast<int32_t>(SW) - cx) + sw - 1) / sw;
        if (xb > OW) xb = OW;
        float acc = 0.0f;
        for (uint32_t y = 0; y < OH; ++y) {
          const int32_t sy = static_cast<int32_t>(y * sh + kh * dh) + offY;
          if (sy < 0 || sy >= static_cast<int32_t>(SH)) continue;
          const float* row = src.data() + (q * SH + static_cast<uint32_t>(sy)) * SW + cx;
          const float* dr = d + y * OW;
          for (uint32_t x = xa; x < xb; ++x)
            acc = __builtin_fmaf(dr[x], row[static_cast<int32_t>(x * sw)], acc);
        }
        v = acc;
      }
      out[r * K + t] = v;
    }
  }
}
