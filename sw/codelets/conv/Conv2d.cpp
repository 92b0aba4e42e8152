// conv2d forward on one tile block (docs/library.md, "conv2d and pooling"): out [ocv, BR, OW] is
// output channels [o0, o0 + ocv) of one sample, output rows [r0, r0 + BR); this vertex computes
// its rows [row, row + rows) and block channels [oc, oc + n) (packed in `rows` and `ocs`).
//   in   [gc, SH, W]  input rows of the groups the block's channels use, the rows its taps reach
//   w    [icg * KH * KW, ocv]  the block's weights, tap-major (a transposed view of [ocv, icg, KH,
//   KW]) bias [ocv]
// Packed params (low 16 bits | high 16 bits): kernel KH|KW, stride sh|sw, dilation dh|dw,
// inSize SH|W, outSize BR|OW, channels icg|ocg; colPad = pw; rowBase (int32) = slab row of
// output row 0's first tap; ocFirst = o0 mod ocg.
// Each output: bias, then fused multiply-adds over the taps (c', kh, kw) in increasing order with
// padding taps skipped — tessera/conv_reference.hpp does the same. The inner loop computes 4
// output columns by up to 6 channels: per tap 4 + 6 loads feed 24 FMAs.
#include "tessera/vertex.hpp"

namespace {

struct Geom {
  const float* x;  // the slab's first channel of this group
  const float* w;  // column of the sub-block's first channel
  uint32_t ocv, sw, dh, dw, SH, W, KH, KW, icg;
};

// P output columns (x0 = input column of the first one's kw = 0) by C channels, taps kh in
// [kh0, kh1), kw in [kw0, kw1); acc from bias; results to out[c * ostride + p].
template <int P, int C>
__attribute__((noinline)) void tapBlock(const Geom& g, const float* bias, float* out,
                                        uint32_t ostride, int32_t row, uint32_t kh0, uint32_t kh1,
                                        int32_t x0, uint32_t kw0, uint32_t kw1) {
  float acc[P][C];
  for (int c = 0; c < C; ++c) {
    for (int p = 0; p < P; ++p) acc[p][c] = bias[c];
  }
  const uint32_t sw = g.sw;
  for (uint32_t ic = 0; ic < g.icg; ++ic) {
    for (uint32_t kh = kh0; kh < kh1; ++kh) {
      const float* px = g.x + (ic * g.SH + static_cast<uint32_t>(row) + kh * g.dh) * g.W +
                        static_cast<uint32_t>(x0) + kw0 * g.dw;
      const float* pw = g.w + ((ic * g.KH + kh) * g.KW + kw0) * g.ocv;
      for (uint32_t kw = kw0; kw < kw1; ++kw) {
        float xv[P];
        for (int p = 0; p < P; ++p) xv[p] = px[p * sw];
#pragma clang loop unroll(full)
        for (int c = 0; c < C; ++c) {
          const float wv = pw[c];
          for (int p = 0; p < P; ++p) acc[p][c] = __builtin_fmaf(xv[p], wv, acc[p][c]);
        }
        px += g.dw;
        pw += g.ocv;
      }
    }
  }
  for (int c = 0; c < C; ++c) {
    for (int p = 0; p < P; ++p) out[c * ostride + p] = acc[p][c];
  }
}

// First kw whose column x0 + kw * dw is >= 0, and one past the last whose column is < W.
inline uint32_t firstTap(int32_t x0, uint32_t d) {
  return x0 >= 0 ? 0 : (static_cast<uint32_t>(-x0) + d - 1) / d;
}
inline uint32_t endTap(int32_t x0, uint32_t d, uint32_t k, uint32_t limit) {
  if (x0 >= static_cast<int32_t>(limit)) return 0;
  const uint32_t n = (static_cast<uint32_t>(static_cast<int32_t>(limit) - x0) + d - 1) / d;
  return n < k ? n : k;
}

using TapBlockFn = void (*)(const Geom&, const float*, float*, uint32_t, int32_t, uint32_t,
                            uint32_t, int32_t, uint32_t, uint32_t);

// Rows [row, row + rows) of one channel sub-block: four columns at once (four4) where every tap
// of all four is inside the row, else one (one) with the column's own tap range. One copy for
// every sub-block width (the widths differ only in the functions passed): code size counts, the
// codelet image is on every tile.
__attribute__((noinline)) void subBlock(TapBlockFn four, TapBlockFn one, const Geom& g,
                                        const float* bias, float* out, uint32_t BR, uint32_t OW,
                                        uint32_t row, uint32_t rows, int32_t rowBase, uint32_t sh,
                                        int32_t pw) {
  const uint32_t ostride = BR * OW;
  for (uint32_t r = row; r < row + rows; ++r) {
    const int32_t y0 = rowBase + static_cast<int32_t>(r * sh);
    uint32_t kh0 = firstTap(y0, g.dh), kh1 = endTap(y0, g.dh, g.KH, g.SH);
    if (kh0 >= kh1) kh0 = kh1 = 0;  // a row of padding only: the bias
    float* orow = out + r * OW;
    for (uint32_t ox = 0; ox < OW;) {
      const int32_t x0 = static_cast<int32_t>(ox * g.sw) - pw;
      if (ox + 4 <= OW && x0 >= 0 &&
          x0 + static_cast<int32_t>(3 * g.sw + (g.KW - 1) * g.dw) < static_cast<int32_t>(g.W)) {
        four(g, bias, orow + ox, ostride, y0, kh0, kh1, x0, 0, g.KW);
        ox += 4;
        continue;
      }
      uint32_t kw0 = firstTap(x0, g.dw), kw1 = endTap(x0, g.dw, g.KW, g.W);
      if (kw0 >= kw1) kw0 = kw1 = 0;
      one(g, bias, orow + ox, ostride, y0, kh0, kh1, x0, kw0, kw1);
      ++ox;
    }
  }
}

}  // namespace

TESSERA_VERTEX(Conv2d, (Input, float, in), (Input, float, w), (Input, float, bias),
               (Output, float, out), (Param, uint32_t, kernel), (Param, uint32_t, stride),
               (Param, uint32_t, dilation), (Param, uint32_t, colPad), (Param, uint32_t, inSize),
               (Param, uint32_t, outSize), (Param, uint32_t, channels), (Param, uint32_t, rowBase),
               (Param, uint32_t, ocFirst), (Param, uint32_t, rows), (Param, uint32_t, ocs)) {
  Geom g;
  g.KH = kernel & 0xffffu, g.KW = kernel >> 16;
  g.dh = dilation & 0xffffu, g.dw = dilation >> 16;
  g.SH = inSize & 0xffffu, g.W = inSize >> 16;
  g.icg = channels & 0xffffu;
  g.sw = stride >> 16;
  const uint32_t sh = stride & 0xffffu, ocg = channels >> 16;
  const uint32_t BR = outSize & 0xffffu, OW = outSize >> 16;
  const uint32_t taps = g.icg * g.KH * g.KW;
  g.ocv = w.size() / taps;
  const uint32_t first = ocs & 0xffffu, end = first + (ocs >> 16);
  const uint32_t r0 = rows & 0xffffu, rn = rows >> 16;
  const int32_t rb = static_cast<int32_t>(static_cast<uint32_t>(rowBase));
  const int32_t pw = static_cast<int32_t>(static_cast<uint32_t>(colPad));
  for (uint32_t j = first; j < end;) {
    // A sub-block of up to 6 channels within one group.
    const uint32_t grp = (ocFirst + j) / ocg;
    uint32_t n = (grp + 1) * ocg - ocFirst;
    if (n > end) n = end;
    n -= j;
    const uint32_t c = n >= 6 ? 6 : n >= 4 ? 4 : 1;
    g.x = in.data() + (grp - ocFirst / ocg) * g.icg * g.SH * g.W;
    g.w = w.data() + j;
    const float* b = bias.data() + j;
    float* o = out.data() + j * BR * OW;
    switch (c) {
      case 6:
        subBlock(tapBlock<4, 6>, tapBlock<1, 6>, g, b, o, BR, OW, r0, rn, rb, sh, pw);
        break;
      case 4:
        subBlock(tapBlock<4, 4>, tapBlock<1, 4>, g, b, o, BR, OW, r0, rn, rb, sh, pw);
        break;
      default:
        subBlock(tapBlock<4, 1>, tapBlock<1, 1>, g, b, o, BR, OW, r0, rn, rb, sh, pw);
        break;
    }
    j += c;
  }
}
