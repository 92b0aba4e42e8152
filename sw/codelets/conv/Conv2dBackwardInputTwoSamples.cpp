// conv2d's gradient to its input for two samples at once, stride 1 and one group
// (docs/library.md, "conv2d and pooling"): Conv2dBackwardInputBlocked on two blocks of one tile
// that cover the same channels and rows of two samples (dy, dx of the first; dy2, dx2 of the
// second). Both samples' elements at one position reach the same taps, so every weight load
// feeds both: per tap that two adjacent elements reach, 4 gradient loads and 6 weight loads feed
// 24 chains. Channels in blocks of 6 only (the library takes this codelet when the block's
// channels are a multiple of 6). Fields and packed params as Conv2dBackwardInputBlocked's; each
// chain in the same order as there (tessera/conv_reference.hpp).
#include "tessera/vertex.hpp"

namespace {

constexpr int kC = 6;

struct Geom {
  const float* dy;   // gradient rows of the first sample, output channel 0
  const float* dy2;  // the second sample's
  const float* w;    // tap 0 of the sub-block's first channel
  uint32_t C, OC, DSH, OW, KH, KW, dh, dw;
};

// Elements ix and ix + 1 (the second only when `two`) of one input row of both samples by 6
// channels; kw ranges [a0, a1) and [b0, b1) as in Conv2dBackwardInputBlocked's pair; `row` is
// the offset of the output row of kh0 in a sample's gradient rows.
__attribute__((noinline)) void pair2(const Geom& g, int32_t row, int32_t tx, uint32_t kh0,
                                     uint32_t kh1, uint32_t a0, uint32_t a1, uint32_t b0,
                                     uint32_t b1, float* out, float* out2, uint32_t ostride,
                                     bool two) {
  float accA[kC], accB[kC], accA2[kC], accB2[kC];
  for (int c = 0; c < kC; ++c) accA[c] = accB[c] = accA2[c] = accB2[c] = 0.0f;
  const uint32_t up = g.dh * g.OW, plane = g.DSH * g.OW, dw = g.dw;
  const uint32_t e1 = a1 < b0 ? a1 : b0, s3 = a1 > b0 ? a1 : b0;
  for (uint32_t o = 0; o < g.OC; ++o) {
    for (uint32_t kh = kh0; kh < kh1; ++kh) {
      const int32_t at =
          row + static_cast<int32_t>(o * plane) + tx - static_cast<int32_t>((kh - kh0) * up);
      const float* pwk = g.w + (o * g.KH + kh) * g.KW * g.C;
      const float* pd = g.dy + at - static_cast<int32_t>(a0 * dw);
      const float* pd2 = g.dy2 + at - static_cast<int32_t>(a0 * dw);
      const float* pw = pwk + a0 * g.C;
#pragma clang loop unroll(disable) interleave(disable) vectorize(disable)
      for (uint32_t kw = a0; kw < e1; ++kw) {
        const float d = *pd, d2 = *pd2;
#pragma clang loop unroll(full)
        for (int c = 0; c < kC; ++c) {
          const float wv = pw[c];
          accA[c] = __builtin_fmaf(d, wv, accA[c]);
          accA2[c] = __builtin_fmaf(d2, wv, accA2[c]);
        }
        pd -= dw;
        pd2 -= dw;
        pw += g.C;
      }
      pd = g.dy + at - static_cast<int32_t>(b0 * dw);
      pd2 = g.dy2 + at - static_cast<int32_t>(b0 * dw);
      pw = pwk + b0 * g.C;
#pragma clang loop unroll(disable) interleave(disable) vectorize(disable)
      for (uint32_t kw = b0; kw < a1; ++kw) {
        const float da = pd[0], db = pd[1], da2 = pd2[0], db2 = pd2[1];
#pragma clang loop unroll(full)
        for (int c = 0; c < kC; ++c) {
          const float wv = pw[c];
          accA[c] = __builtin_fmaf(da, wv, accA[c]);
          accB[c] = __builtin_fmaf(db, wv, accB[c]);
          accA2[c] = __builtin_fmaf(da2, wv, accA2[c]);
          accB2[c] = __builtin_fmaf(db2, wv, accB2[c]);
        }
        pd -= dw;
        pd2 -= dw;
        pw += g.C;
      }
      pd = g.dy + at + 1 - static_cast<int32_t>(s3 * dw);
      pd2 = g.dy2 + at + 1 - static_cast<int32_t>(s3 * dw);
      pw = pwk + s3 * g.C;
#pragma clang loop unroll(disable) interleave(disable) vectorize(disable)
      for (uint32_t kw = s3; kw < b1; ++kw) {
        const float d = *pd, d2 = *pd2;
#pragma clang loop unroll(full)
        for (int c = 0; c < kC; ++c) {
          const float wv = pw[c];
          accB[c] = __builtin_fmaf(d, wv, accB[c]);
          accB2[c] = __builtin_fmaf(d2, wv, accB2[c]);
        }
        pd -= dw;
        pd2 -= dw;
        pw += g.C;
      }
    }
  }
  for (int c = 0; c < kC; ++c) out[c * ostride] = accA[c], out2[c * ostride] = accA2[c];
  if (two) {
    for (int c = 0; c < kC; ++c) out[c * ostride + 1] = accB[c], out2[c * ostride + 1] = accB2[c];
  }
}

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

}  // namespace

TESSERA_VERTEX(Conv2dBackwardInputTwoSamples, (Input, float, dy), (Input, float, dy2),
               (Input, float, w), (Output, float, dx), (Output, float, dx2),
               (Param, uint32_t, kernel), (Param, uint32_t, padding), (Param, uint32_t, dilation),
               (Param, uint32_t, dySize), (Param, uint32_t, dxSize), (Param, uint32_t, rowBase),
               (Param, uint32_t, dyRow0), (Param, uint32_t, cFirst), (Param, uint32_t, rows),
               (Param, uint32_t, rowStep), (Param, uint32_t, chans)) {
  Geom g;
  g.KH = kernel & 0xffffu, g.KW = kernel >> 16;
  g.dh = dilation & 0xffffu, g.dw = dilation >> 16;
  g.DSH = dySize & 0xffffu, g.OW = dySize >> 16;
  const uint32_t BR = dxSize & 0xffffu, W = dxSize >> 16;
  g.OC = dy.size() / (g.DSH * g.OW);
  g.C = w.size() / (g.OC * g.KH * g.KW);
  g.dy = dy.data();
  g.dy2 = dy2.data();
  const int32_t pw = static_cast<int32_t>(padding >> 16);
  const int32_t rb = static_cast<int32_t>(rowBase), oy0 = static_cast<int32_t>(dyRow0);
  const uint32_t first = chans & 0xffffu, end = first + (chans >> 16);
  const uint32_t r0 = rows & 0xffffu, rn = rows >> 16;
  const uint32_t ostride = BR * W;
  for (uint32_t j = first; j + kC <= end; j += kC) {
    g.w = w.data() + cFirst + j;
    float* o = dx.data() + j * BR * W;
    float* o2 = dx2.data() + j * BR * W;
    for (uint32_t r = r0; r < r0 + rn * rowStep; r += rowStep) {
      const int32_t t = rb + static_cast<int32_t>(r) - oy0;  // iy + ph - dyRow0
      uint32_t kh0 = firstTap(t, g.DSH, g.dh), kh1 = endTap(t, g.dh, g.KH);
      if (kh0 >= kh1) kh0 = kh1 = 0;
      const int32_t row = static_cast<int32_t>(g.OW) * (t - static_cast<int32_t>(kh0 * g.dh));
      for (uint32_t ix = 0; ix < W; ix += 2) {
        const int32_t tx = static_cast<int32_t>(ix) + pw;
        const bool two = ix + 1 < W;
        uint32_t a0 = firstTap(tx, g.OW, g.dw), a1 = endTap(tx, g.dw, g.KW);
        uint32_t b0 = a1, b1 = a1;
        if (two) b0 = firstTap(tx + 1, g.OW, g.dw), b1 = endTap(tx + 1, g.dw, g.KW);
        if (a0 >= a1) a0 = a1 = b0;
        if (b0 >= b1) b0 = b1 = a1;
        pair2(g, row, tx, kh0, kh1, a0, a1, b0, b1, o + r * W + ix, o2 + r * W + ix, ostride, two);
      }
    }
  }
}
