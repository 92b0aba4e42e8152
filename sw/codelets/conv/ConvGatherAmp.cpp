// conv2d on the matrix unit, step 1 of 3 (docs/library.md, "conv2d on the matrix unit"): the
// unit's operand b for one chunk of a block's result positions, col [ng][Kpad][4] (group i, tap t:
// the source values of the group's 4 positions at tap t), in MatMulAmp's column groups; taps that
// read outside the source (padding, strides of the input gradient) and the taps past K hold +0.
// With init, also the chunk's accumulators c [rows, 4 ng] <- bias (MatMulAmp then accumulates
// from them). Geometry and packed params: conv_amp.h. This vertex writes groups [p0, p0 + pn).
//   src  [Q, SH, SW]  the source channels (K = Q KH KW taps)
//   bias [rows]       col, c: the chunk's (aligned; c row-major)
#include "conv_amp.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ConvGatherAmp, (Input, float, src), (Input, float, bias), (Output, float, col),
               (Output, float, c), (Param, uint32_t, kernel), (Param, uint32_t, mul),
               (Param, uint32_t, step), (Param, uint32_t, offset), (Param, uint32_t, div),
               (Param, uint32_t, srcSize), (Param, uint32_t, taps), (Param, uint32_t, res),
               (Param, uint32_t, origin), (Param, uint32_t, part)) {
  const conv_amp::Geom g =
      conv_amp::unpack(kernel, mul, step, offset, div, srcSize, taps, res, origin, part);
  const uint32_t Q = g.K / (g.KH * g.KW);
  const int32_t SW = static_cast<int32_t>(g.SW), mX = static_cast<int32_t>(g.mX);
  for (uint32_t i = g.p0; i < g.p0 + g.pn; ++i) {
    const uint32_t gi = g.g0 + i;
    const uint32_t y = g.r0 + gi / g.XG, x0 = gi % g.XG * 4;
    const int32_t nx0 = static_cast<int32_t>(x0) * mX + g.offX;  // position 0's, at kw = 0
    // The taps [kwA, kwB) at which all four positions read inside the row (an interval: the
    // columns move linearly with kw); the others are read one position at a time.
    uint32_t kwA = g.KW, kwB = g.KW;
    if (g.divX == 1) {
      for (uint32_t kw = 0; kw < g.KW; ++kw) {
        const int32_t nx = nx0 + static_cast<int32_t>(kw) * g.kX;
        if (nx >= 0 && nx + 3 * mX < SW) {
          if (kwA == g.KW) kwA = kw;
          kwB = kw + 1;
        }
      }
    }
    if (kwA == g.KW) kwB = kwA;
    float* cp = col.data() + i * g.Kpad * 4;
    for (uint32_t q = 0; q < Q; ++q) {
      for (uint32_t kh = 0; kh < g.KH; ++kh) {
        const int32_t sy = conv_amp::source(
            static_cast<int32_t>(y * g.mY) + static_cast<int32_t>(kh) * g.kY + g.offY, g.divY,
            g.SH);
        if (sy < 0) {
          for (uint32_t e = 0; e < 4 * g.KW; ++e) cp[e] = 0.0f;
          cp += 4 * g.KW;
          continue;
        }
        const float* row = src.data() + (q * g.SH + static_cast<uint32_t>(sy)) * g.SW;
        for (uint32_t kw = 0; kw < g.KW; ++kw, cp += 4) {
          if (kw == kwA) {
            // Four positions at once, columns nx .. nx + 3 mX.
            const float* p = row + nx0 + static_cast<int32_t>(kw) * g.kX;
            float* const stop = cp + 4 * (kwB - kwA);
            if (mX == 1) {
              for (; cp != stop; cp += 4, p += g.kX) {
                const float v0 = p[0], v1 = p[1], v2 = p[2], v3 = p[3];
                cp[0] = v0, cp[1] = v1, cp[2] = v2, cp[3] = v3;
              }
            } else {
              for (; cp != stop; cp += 4, p += g.kX) {
                const float v0 = p[0], v1 = p[mX], v2 = p[2 * mX], v3 = p[3 * mX];
                cp[0] = v0, cp[1] = v1, cp[2] = v2, cp[3] = v3;
              }
            }
            kw = kwB;
            if (kw == g.KW) break;
          }
          const int32_t nx = nx0 + static_cast<int32_t>(kw) * g.kX;
          for (int32_t j = 0; j < 4; ++j) {
            const int32_t sx = conv_amp::source(nx + j * mX, g.divX, g.SW);
            cp[j] = sx < 0 ? 0.0f : row[sx];
          }
        }
      }
    }
    for (uint32_t e = 4 * g.K; e < 4 * g.Kpad; ++e) *cp++ = 0.0f;
  }
  if (!g.init) return;
  const uint32_t rows = bias.size(), cols = c.size() / rows;
  for (uint32_t ch = 0; ch < rows; ++ch) {
    const float b = bias[ch];
    float* p = c.data() + ch * cols + g.p0 * 4;
    for (uint32_t e = 0; e < 4 * g.pn; ++e) p[e] = b;
  }
}
