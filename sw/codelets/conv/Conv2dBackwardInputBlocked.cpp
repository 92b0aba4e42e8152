// conv2d's gradient to its input on one tile block, stride 1 and one group (docs/library.md,
// "conv2d and pooling"): dx [cv, BR, W] is input channels [c0, c0 + cv) of one sample, input rows
// [r0, r0 + BR); this vertex computes block rows row, row + rowStep, ... (`rows` of them) and
// block channels [c, c + n) (packed in `rows`, `chans`).
//   dy [OC, DSH, OW]   gradient rows [dyRow0, dyRow0 + DSH) of every output channel
//   w  [OC * KH * KW, C]  the weights, tap-major (a copy of [OC, C, KH, KW] transposed)
// Packed params (low | high 16 bits): kernel KH|KW, padding ph|pw, dilation dh|dw, dySize
// DSH|OW, dxSize BR|W; rowBase = r0 + ph; cFirst = c0.
// Each element: fused multiply-adds from +0 over (o, kh, kw) in increasing order of the outputs
// it reached, as Conv2dBackwardInput (tessera/conv_reference.hpp). With stride 1 the taps that
// reach stored outputs are one range of kh per row and one of kw per column, the same for every
// input channel, so up to 6 channels of one element run together: per tap one gradient load
// and up to 6 weight loads (adjacent, tap-major) feed up to 6 chains.
#include "tessera/vertex.hpp"

namespace {

struct Geom {
  const float* dy;  // gradient rows, output channel 0
  const float* w;   // tap 0 of the sub-block's first channel
  uint32_t C, OC, DSH, OW, KH, KW, dh, dw;
};

// One element (d = dy(o = 0, output row of kh = kh0, output column of kw = kw0)) by C channels.
template <int C>
__attribute__((noinline)) void element(const Geom& g, const float* d, uint32_t kh0, uint32_t kh1,
                                       uint32_t kw0, uint32_t kw1, float* out, uint32_t ostride) {
  float acc[C];
  for (int c = 0; c < C; ++c) acc[c] = 0.0f;
  const uint32_t up = g.dh * g.OW, plane = g.DSH * g.OW;
  for (uint32_t o = 0; o < g.OC; ++o) {
    const float* pdo = d + o * plane;
    for (uint32_t kh = kh0; kh < kh1; ++kh) {
      const float* pd = pdo - (kh - kh0) * up;
      const float* pw = g.w + ((o * g.KH + kh) * g.KW + kw0) * g.C;
      for (uint32_t kw = kw0; kw < kw1; ++kw) {
        const float dv = *pd;
#pragma clang loop unroll(full)
        for (int c = 0; c < C; ++c) acc[c] = __builtin_fmaf(dv, pw[c], acc[c]);
        pd -= g.dw;
        pw += g.C;
      }
    }
  }
  for (int c = 0; c < C; ++c) out[c * ostride] = acc[c];
}

using ElementFn = void (*)(const Geom&, const float*, uint32_t, uint32_t, uint32_t, uint32_t,
                           float*, uint32_t);

// Taps k with 0 <= t - k * d < n: [first, end) clipped to [0, K) (first = 0 when t < n).
inline uint32_t firstTap(int32_t t, uint32_t n, uint32_t d) {
  if (t < static_cast<int32_t>(n)) return 0;
  const uint32_t v = static_cast<uint32_t>(t) - n + d;
  return d == 1 ? v : v / d;
}
inline uint32_t endTap(int32_t t, uint32_t d, uint32_t K) {
  if (t < 0) return 0;
  const uint32_t v = (d == 1 ? static_cast<uint32_t>(t) : static_cast<uint32_t>(t) / d) + 1;
  return v < K ? v : K;
}

__attribute__((noinline)) void subBlock(ElementFn fn, const Geom& g, float* out, uint32_t BR,
                                        uint32_t W, uint32_t row, uint32_t rows, uint32_t rowStep,
                                        int32_t rowBase, int32_t oy0, int32_t pw) {
  const uint32_t ostride = BR * W;
  for (uint32_t r = row; r < row + rows * rowStep; r += rowStep) {
    const int32_t t = rowBase + static_cast<int32_t>(r) - oy0;  // iy + ph - dyRow0
    uint32_t kh0 = firstTap(t, g.DSH, g.dh), kh1 = endTap(t, g.dh, g.KH);
    if (kh0 >= kh1) kh0 = kh1 = 0;
    for (uint32_t ix = 0; ix < W; ++ix) {
      const int32_t tx = static_cast<int32_t>(ix) + pw;
      uint32_t kw0 = firstTap(tx, g.OW, g.dw), kw1 = endTap(tx, g.dw, g.KW);
      if (kw0 >= kw1) kw0 = kw1 = 0;
      // Output row t - kh0 * dh, column tx - kw0 * dw (inside dy when the ranges are not empty).
      const float* d = g.dy + static_cast<int32_t>(g.OW) * (t - static_cast<int32_t>(kh0 * g.dh)) +
                       (tx - static_cast<int32_t>(kw0 * g.dw));
      fn(g, d, kh0, kh1, kw0, kw1, out + r * W + ix, ostride);
    }
  }
}

}  // namespace

TESSERA_VERTEX(Conv2dBackwardInputBlocked, (Input, float, dy), (Input, float, w),
               (Output, float, dx), (Param, uint32_t, kernel), (Param, uint32_t, padding),
               (Param, uint32_t, dilation), (Param, uint32_t, dySize), (Param, uint32_t, dxSize),
               (Param, uint32_t, rowBase), (Param, uint32_t, dyRow0), (Param, uint32_t, cFirst),
               (Param, uint32_t, rows), (Param, uint32_t, rowStep), (Param, uint32_t, chans)) {
  Geom g;
  g.KH = kernel & 0xffffu, g.KW = kernel >> 16;
  g.dh = dilation & 0xffffu, g.dw = dilation >> 16;
  g.DSH = dySize & 0xffffu, g.OW = dySize >> 16;
  const uint32_t BR = dxSize & 0xffffu, W = dxSize >> 16;
  g.OC = dy.size() / (g.DSH * g.OW);
  g.C = w.size() / (g.OC * g.KH * g.KW);
  g.dy = dy.data();
  const int32_t pw = static_cast<int32_t>(padding >> 16);
  const int32_t rb = static_cast<int32_t>(rowBase), oy0 = static_cast<int32_t>(dyRow0);
  const uint32_t first = chans & 0xffffu, end = first + (chans >> 16);
  const uint32_t r0 = rows & 0xffffu, rn = rows >> 16;
  for (uint32_t j = first; j < end;) {
    const uint32_t n = end - j, c = n >= 6 ? 6 : n >= 4 ? 4 : 1;
    g.w = w.data() + cFirst + j;
    float* o = dx.data() + j * BR * W;
    switch (c) {
      case 6:
        subBlock(element<6>, g, o, BR, W, r0, rn, rowStep, rb, oy0, pw);
        break;
      case 4:
        subBlock(element<4>, g, o, BR, W, r0, rn, rowStep, rb, oy0, pw);
        break;
      default:
        subBlock(element<1>, g, o, BR, W, r0, rn, rowStep, rb, oy0, pw);
        break;
    }
    j += c;
  }
}
