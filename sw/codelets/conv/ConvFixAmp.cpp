// conv2d on the matrix unit, step 3 of 3 (docs/library.md, "conv2d on the matrix unit"): a chunk's
// results from MatMulAmp's c [rows, 4 ng] to the block's result out [rows, BR, Wres], each one
// that is +-0 or NaN recomputed by the scalar chain (the taps of conv_amp.h in increasing order,
// invalid ones skipped, from bias or +0: the scalar codelets' order). Why that suffices: the
// unit's chain differs from the scalar one only by the products of skipped taps, each a weight
// times +0; such a step leaves a nonzero or infinite accumulator unchanged, may change the sign of
// a zero one, and makes a NaN of an infinite or NaN weight; every other step is the same fused
// multiply-add on both, and a step from a +0 or -0 accumulator with a nonzero product gives the
// same bits. So the two results are equal unless the unit's is a zero or a NaN, and a zero only
// where some tap was skipped (noTapSkipped). Geometry and
// packed params: conv_amp.h; this vertex does groups [p0, p0 + pn) of the chunk.
//   src [Q, SH, SW]  a [rows, Kpad] (the chain's weights)  bias [rows]  c [rows, 4 ng]
//   out [rows, BR, Wres]  the block (BR rows of the result from r0)
#include "conv_amp.h"
#include "tessera/vertex.hpp"

namespace {

__attribute__((noinline)) float chain(const conv_amp::Geom& g, const float* src, const float* w,
                                      float acc, uint32_t y, uint32_t x) {
  const uint32_t Q = g.K / (g.KH * g.KW);
  for (uint32_t q = 0; q < Q; ++q) {
    for (uint32_t kh = 0; kh < g.KH; ++kh, w += g.KW) {
      const int32_t sy = conv_amp::source(
          static_cast<int32_t>(y * g.mY) + static_cast<int32_t>(kh) * g.kY + g.offY, g.divY, g.SH);
      if (sy < 0) continue;
      const float* row = src + (q * g.SH + static_cast<uint32_t>(sy)) * g.SW;
      for (uint32_t kw = 0; kw < g.KW; ++kw) {
        const int32_t sx = conv_amp::source(
            static_cast<int32_t>(x * g.mX) + static_cast<int32_t>(kw) * g.kX + g.offX, g.divX,
            g.SW);
        if (sx >= 0) acc = __builtin_fmaf(row[sx], w[kw], acc);
      }
    }
  }
  return acc;
}

// True when every tap of result (y, x) reads inside the source (none skipped): then the unit's
// chain is the scalar one plus the padded k steps fma(-0, +0, acc), which return acc, so only a
// NaN (whose bits an all-skipped output may keep from the bias) needs the scalar chain. With a
// divisor (a strided input gradient) taps are skipped almost everywhere: false.
inline bool noTapSkipped(const conv_amp::Geom& g, uint32_t y, uint32_t x) {
  if (g.divY != 1 || g.divX != 1) return false;
  const int32_t ny = static_cast<int32_t>(y * g.mY) + g.offY,
                nx = static_cast<int32_t>(x * g.mX) + g.offX;
  // The taps' coordinates move linearly with kh and kw: the first and last decide.
  return conv_amp::source(ny, 1, g.SH) >= 0 &&
         conv_amp::source(ny + static_cast<int32_t>(g.KH - 1) * g.kY, 1, g.SH) >= 0 &&
         conv_amp::source(nx, 1, g.SW) >= 0 &&
         conv_amp::source(nx + static_cast<int32_t>(g.KW - 1) * g.kX, 1, g.SW) >= 0;
}

}  // namespace

TESSERA_VERTEX(ConvFixAmp, (Input, float, src), (Input, float, a), (Input, float, bias),
               (Input, float, c), (Output, float, out), (Param, uint32_t, kernel),
               (Param, uint32_t, mul), (Param, uint32_t, step), (Param, uint32_t, offset),
               (Param, uint32_t, div), (Param, uint32_t, srcSize), (Param, uint32_t, taps),
               (Param, uint32_t, res), (Param, uint32_t, origin), (Param, uint32_t, part)) {
  const conv_amp::Geom g =
      conv_amp::unpack(kernel, mul, step, offset, div, srcSize, taps, res, origin, part);
  const uint32_t rows = bias.size(), cols = c.size() / rows, plane = out.size() / rows;
  for (uint32_t ch = 0; ch < rows; ++ch) {
    const float* cr = c.data() + ch * cols;
    float* orow = out.data() + ch * plane;
    for (uint32_t i = g.p0; i < g.p0 + g.pn; ++i) {
      const uint32_t gi = g.g0 + i;
      const uint32_t y = g.r0 + gi / g.XG, x0 = gi % g.XG * 4;
      const uint32_t n = g.Wres - x0 < 4 ? g.Wres - x0 : 4;
      float* o = orow + (y - g.r0) * g.Wres + x0;
      for (uint32_t j = 0; j < n; ++j) {
        float v = cr[i * 4 + j];
        const uint32_t u = __builtin_bit_cast(uint32_t, v) & 0x7fffffffu;
        if (u > 0x7f800000u || (u == 0 && !noTapSkipped(g, y, x0 + j)))
          v = chain(g, src.data(), a.data() + ch * g.Kpad, g.init ? bias[ch] : 0.0f, y, x0 + j);
        o[j] = v;
      }
    }
  }
}
