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
// input channel, so 6 channels (or 1) of two adjacent elements run together: per tap two gradient
// loads and up to 6 weight loads (adjacent, tap-major) feed up to 12 chains.
#include "tessera/vertex.hpp"

namespace {

struct Geom {
  const float* dy;  // gradient rows, output channel 0
  const float* w;   // tap 0 of the sub-block's first channel
  uint32_t C, OC, DSH, OW, KH, KW, dh, dw;
};

// Elements ix and ix + 1 of one input row by C channels (the second only when `two`): element
// ix takes the taps kw in [a0, a1), element ix + 1 those in [b0, b1) (b0 >= a0 and b1 >= a1 for
// stride 1, or a range emptied to the other's end); tap kw of element ix reads output column
// tx - kw dw of the row drow (output row of kh0, channel 0), element ix + 1 the column after it.
// Per (o, kh) three runs of kw: ix's taps below b0, the shared taps (one gradient load per
// element and C weight loads feed 2 C chains), ix + 1's taps from a1. Each chain still takes its
// taps in increasing (o, kh, kw) order.
template <int C>
__attribute__((noinline)) void pair(const Geom& g, const float* drow, int32_t tx, uint32_t kh0,
                                    uint32_t kh1, uint32_t a0, uint32_t a1, uint32_t b0,
                                    uint32_t b1, float* out, uint32_t ostride, bool two) {
  float accA[C], accB[C];
  for (int c = 0; c < C; ++c) accA[c] = accB[c] = 0.0f;
  const uint32_t up = g.dh * g.OW, plane = g.DSH * g.OW, dw = g.dw;
  const uint32_t e1 = a1 < b0 ? a1 : b0, s3 = a1 > b0 ? a1 : b0;
  for (uint32_t o = 0; o < g.OC; ++o) {
    for (uint32_t kh = kh0; kh < kh1; ++kh) {
      const float* pr = drow + o * plane + tx - (kh - kh0) * up;
      const float* pwk = g.w + (o * g.KH + kh) * g.KW * g.C;
      const float* pd = pr - a0 * dw;
      const float* pw = pwk + a0 * g.C;
#pragma clang loop unroll(disable) interleave(disable) vectorize(disable)
      for (uint32_t kw = a0; kw < e1; ++kw) {
        const float dv = *pd;
#pragma clang loop unroll(full)
        for (int c = 0; c < C; ++c) accA[c] = __builtin_fmaf(dv, pw[c], accA[c]);
        pd -= dw;
        pw += g.C;
      }
      pd = pr - b0 * dw;
      pw = pwk + b0 * g.C;
#pragma clang loop unroll(disable) interleave(disable) vectorize(disable)
      for (uint32_t kw = b0; kw < a1; ++kw) {
        const float da = pd[0], db = pd[1];
#pragma clang loop unroll(full)
        for (int c = 0; c < C; ++c) {
          const float wv = pw[c];
          accA[c] = __builtin_fmaf(da, wv, accA[c]);
          accB[c] = __builtin_fmaf(db, wv, accB[c]);
        }
        pd -= dw;
        pw += g.C;
      }
      pd = pr + 1 - s3 * dw;
      pw = pwk + s3 * g.C;
#pragma clang loop unroll(disable) interleave(disable) vectorize(disable)
      for (uint32_t kw = s3; kw < b1; ++kw) {
        const float dv = *pd;
#pragma clang loop unroll(full)
        for (int c = 0; c < C; ++c) accB[c] = __builtin_fmaf(dv, pw[c], accB[c]);
        pd -= dw;
        pw += g.C;
      }
    }
  }
  for (int c = 0; c < C; ++c) out[c * ostride] = accA[c];
  if (two) {
    for (int c = 0; c < C; ++c) out[c * ostride + 1] = accB[c];
  }
}

using PairFn = void (*)(const Geom&, const float*, int32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                        uint32_t, uint32_t, float*, uint32_t, bool);

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

__attribute__((noinline)) void subBlock(PairFn fn, const Geom& g, float* out, uint32_t BR,
                                        uint32_t W, uint32_t row, uint32_t rows, uint32_t rowStep,
                                        int32_t rowBase, int32_t oy0, int32_t pw) {
  const uint32_t ostride = BR * W;
  for (uint32_t r = row; r < row + rows * rowStep; r += rowStep) {
    const int32_t t = rowBase + static_cast<int32_t>(r) - oy0;  // iy + ph - dyRow0
    uint32_t kh0 = firstTap(t, g.DSH, g.dh), kh1 = endTap(t, g.dh, g.KH);
    if (kh0 >= kh1) kh0 = kh1 = 0;
    // Output row t - kh0 * dh (inside dy when the range is not empty).
    const float* drow = g.dy + static_cast<int32_t>(g.OW) * (t - static_cast<int32_t>(kh0 * g.dh));
    for (uint32_t ix = 0; ix < W; ix += 2) {
      const int32_t tx = static_cast<int32_t>(ix) + pw;
      const bool two = ix + 1 < W;
      uint32_t a0 = firstTap(tx, g.OW, g.dw), a1 = endTap(tx, g.dw, g.KW);
      uint32_t b0 = a1, b1 = a1;
      if (two) b0 = firstTap(tx + 1, g.OW, g.dw), b1 = endTap(tx + 1, g.dw, g.KW);
      if (a0 >= a1) a0 = a1 = b0;
      if (b0 >= b1) b0 = b1 = a1;
      fn(g, drow, tx, kh0, kh1, a0, a1, b0, b1, out + r * W + ix, ostride, two);
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
    // Blocks of 6 channels, then single ones (a 4-channel block would cost 1 KB of code on
    // every tile, which LeNet's graph on 128 KiB tiles does not have).
    const uint32_t c = end - j >= 6 ? 6 : 1;
    g.w = w.data() + cFirst + j;
    float* o = dx.data() + j * BR * W;
    subBlock(c == 6 ? pair<6> : pair<1>, g, o, BR, W, r0, rn, rowStep, rb, oy0, pw);
    j += c;
  }
}
