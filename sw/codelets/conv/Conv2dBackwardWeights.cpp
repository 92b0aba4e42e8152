// conv2d's gradient to its weights, one partial per sample (docs/library.md, "conv2d and
// pooling"): dw [nb, ocv, icg, KH, KW] holds, for each sample of the block, the block's output
// channels [o0, o0 + ocv); this vertex computes its flat elements [first, first + count).
//   x  [nb, gc, H, W]  the samples' input channels of the groups used
//   dy [nb, ocv, OH, OW]
// Packed params (low | high 16 bits): kernel KH|KW, stride sh|sw, padding ph|pw, dilation dh|dw,
// inSize H|W, outSize OH|OW, channels icg|ocg; ocFirst = o0 mod ocg; outChannels = ocv.
// Each element: fused multiply-adds from +0 over (y, x) in increasing order, padding skipped
// (the library then adds the samples in order; tessera/conv_reference.hpp). Four taps of a
// kernel row at a time share each gradient load where their columns overlap.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Conv2dBackwardWeights, (Input, float, x), (Input, float, dy), (Output, float, dw),
               (Param, uint32_t, kernel), (Param, uint32_t, stride), (Param, uint32_t, padding),
               (Param, uint32_t, dilation), (Param, uint32_t, inSize), (Param, uint32_t, outSize),
               (Param, uint32_t, channels), (Param, uint32_t, ocFirst),
               (Param, uint32_t, outChannels), (Param, uint32_t, first), (Param, uint32_t, count)) {
  const uint32_t KH = kernel & 0xffffu, KW = kernel >> 16, sh = stride & 0xffffu, sw = stride >> 16;
  const int32_t ph = static_cast<int32_t>(padding & 0xffffu),
                pw = static_cast<int32_t>(padding >> 16);
  const uint32_t dh = dilation & 0xffffu, ddw = dilation >> 16;
  const uint32_t H = inSize & 0xffffu, W = inSize >> 16, OH = outSize & 0xffffu, OW = outSize >> 16;
  const uint32_t icg = channels & 0xffffu, ocg = channels >> 16;
  const uint32_t E = icg * KH * KW;  // elements per output channel
  const uint32_t ocv = outChannels;
  const uint32_t nb = dw.size() / (ocv * E);
  const uint32_t gc = x.size() / (nb * H * W);
  const uint32_t g0 = ocFirst / ocg;
  const uint32_t last = first + count;
  for (uint32_t f = first; f < last;) {
    const uint32_t n = f / (ocv * E), e = f % (ocv * E);
    const uint32_t o = e / E, kw = e % KW, kh = e / KW % KH, ic = e / (KW * KH) % icg;
    // Up to four taps of one kernel row share each gradient load (consecutive elements).
    uint32_t nk = KW - kw;
    if (nk > 4) nk = 4;
    if (nk > last - f) nk = last - f;
    const uint32_t cin = ((ocFirst + o) / ocg - g0) * icg + ic;
    const float* xp = x.data() + (n * gc + cin) * H * W;
    const float* dp = dy.data() + (n * ocv + o) * OH * OW;
    // Output columns whose tap k lands inside the row: 0 <= ox * sw - pw + k * dw < W.
    uint32_t lo[4], hi[4];
    uint32_t lo4 = 0, hi4 = OW;
    for (uint32_t k = 0; k < nk; ++k) {
      const int32_t cx = static_cast<int32_t>((kw + k) * ddw) - pw;
      lo[k] = cx >= 0 ? 0 : (static_cast<uint32_t>(-cx) + sw - 1) / sw;
      hi[k] = cx >= static_cast<int32_t>(W)
                  ? 0
                  : (static_cast<uint32_t>(static_cast<int32_t>(W) - cx) + sw - 1) / sw;
      if (hi[k] > OW) hi[k] = OW;
      if (lo[k] > hi[k]) lo[k] = hi[k];
      lo4 = lo[k] > lo4 ? lo[k] : lo4;
      hi4 = hi[k] < hi4 ? hi[k] : hi4;
    }
    if (nk < 4 || lo4 >= hi4) {
      // One tap at a time.
      for (uint32_t k = 0; k < nk; ++k) {
        const int32_t cx = static_cast<int32_t>((kw + k) * ddw) - pw;
        float s = 0.0f;
        for (uint32_t oy = 0; oy < OH; ++oy) {
          const int32_t iy = static_cast<int32_t>(oy * sh + kh * dh) - ph;
          if (iy < 0 || iy >= static_cast<int32_t>(H)) continue;
          const float* pd = dp + oy * OW;
          const float* px = xp + static_cast<uint32_t>(iy) * W + static_cast<uint32_t>(cx);
          for (uint32_t ox = lo[k]; ox < hi[k]; ++ox) s = __builtin_fmaf(pd[ox], px[ox * sw], s);
        }
        dw[f + k] = s;
      }
      f += nk;
      continue;
    }
    // Four taps: per row, each tap's own columns left of the common range, the common range
    // with one gradient load for four taps, then each tap's columns right of it; every chain
    // still runs over (y, x) in increasing order.
    const int32_t cx0 = static_cast<int32_t>(kw * ddw) - pw;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (uint32_t oy = 0; oy < OH; ++oy) {
      const int32_t iy = static_cast<int32_t>(oy * sh + kh * dh) - ph;
      if (iy < 0 || iy >= static_cast<int32_t>(H)) continue;
      const float* pd = dp + oy * OW;
      const float* px =
          xp + static_cast<uint32_t>(iy) * W + static_cast<uint32_t>(cx0);  // tap kw, column 0
      for (uint32_t ox = lo[0]; ox < lo4; ++ox) s0 = __builtin_fmaf(pd[ox], px[ox * sw], s0);
      for (uint32_t ox = lo[1]; ox < lo4; ++ox) s1 = __builtin_fmaf(pd[ox], px[ox * sw + ddw], s1);
      for (uint32_t ox = lo[2]; ox < lo4; ++ox)
        s2 = __builtin_fmaf(pd[ox], px[ox * sw + 2 * ddw], s2);
      for (uint32_t ox = lo[3]; ox < lo4; ++ox)
        s3 = __builtin_fmaf(pd[ox], px[ox * sw + 3 * ddw], s3);
      const float* q = px + lo4 * sw;
      const float* qe = pd + hi4;
      if (ddw == 1) {
        for (const float* d = pd + lo4; d < qe; ++d, q += sw) {
          const float g = *d;
          s0 = __builtin_fmaf(g, q[0], s0);
          s1 = __builtin_fmaf(g, q[1], s1);
          s2 = __builtin_fmaf(g, q[2], s2);
          s3 = __builtin_fmaf(g, q[3], s3);
        }
      } else {
        for (const float* d = pd + lo4; d < qe; ++d, q += sw) {
          const float g = *d;
          s0 = __builtin_fmaf(g, q[0], s0);
          s1 = __builtin_fmaf(g, q[ddw], s1);
          s2 = __builtin_fmaf(g, q[2 * ddw], s2);
          s3 = __builtin_fmaf(g, q[3 * ddw], s3);
        }
      }
      for (uint32_t ox = hi4; ox < hi[0]; ++ox) s0 = __builtin_fmaf(pd[ox], px[ox * sw], s0);
      for (uint32_t ox = hi4; ox < hi[1]; ++ox) s1 = __builtin_fmaf(pd[ox], px[ox * sw + ddw], s1);
      for (uint32_t ox = hi4; ox < hi[2]; ++ox)
        s2 = __builtin_fmaf(pd[ox], px[ox * sw + 2 * ddw], s2);
      for (uint32_t ox = hi4; ox < hi[3]; ++ox)
        s3 = __builtin_fmaf(pd[ox], px[ox * sw + 3 * ddw], s3);
    }
    dw[f] = s0, dw[f + 1] = s1, dw[f + 2] = s2, dw[f + 3] = s3;
    f += 4;
  }
}
