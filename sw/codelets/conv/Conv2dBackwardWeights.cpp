// conv2d's gradient to its weights, one partial per sample (docs/library.md, "conv2d and
// pooling"): dw [nb, ocv, icg, KH, KW] holds, for each sample of the block, the block's output
// channels [o0, o0 + ocv); this vertex computes its flat elements [first, first + count).
//   x  [nb, gc, H, W]  the samples' input channels of the groups used
//   dy [nb, ocv, OH, OW]
// Packed params (low | high 16 bits): kernel KH|KW, stride sh|sw, padding ph|pw, dilation dh|dw,
// inSize H|W, outSize OH|OW, channels icg|ocg; ocFirst = o0 mod ocg; outChannels = ocv.
// Each element: fused multiply-adds from +0 over (y, x) in increasing order, padding skipped
// (the library then adds the samples in order; tessera/conv_reference.hpp).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Conv2dBackwardWeights, (Input, float, x), (Input, float, dy), (Output, float, dw),
               (Param, uint32_t, kernel), (Param, uint32_t, stride), (Param, uint32_t, padding),
               (Param, uint32_t, dilation), (Param, uint32_t, inSize), (Param, uint32_t, outSize),
               (Param, uint32_t, channels), (Param, uint32_t, ocFirst), (Param, uint32_t, outChannels), (Param, uint32_t, first),
               (Param, uint32_t, count)) {
  const uint32_t KH = kernel & 0xffffu, KW = kernel >> 16, sh = stride & 0xffffu, sw = stride >> 16;
  const int32_t ph = static_cast<int32_t>(padding & 0xffffu), pw = static_cast<int32_t>(padding >> 16);
  const uint32_t dh = dilation & 0xffffu, ddw = dilation >> 16;
  const uint32_t H = inSize & 0xffffu, W = inSize >> 16, OH = outSize & 0xffffu, OW = outSize >> 16;
  const uint32_t icg = channels & 0xffffu, ocg = channels >> 16;
  const uint32_t E = icg * KH * KW;               // elements per output channel
  const uint32_t ocv = outChannels;
  const uint32_t nb = dw.size() / (ocv * E);
  const uint32_t gc = x.size() / (nb * H * W);
  const uint32_t g0 = ocFirst / ocg;
  for (uint32_t f = first; f < first + count; ++f) {
    const uint32_t n = f / (ocv * E), e = f % (ocv * E);
    const uint32_t o = e / E, kw = e % KW, kh = e / KW % KH, ic = e / (KW * KH) % icg;
    const uint32_t cin = ((ocFirst + o) / ocg - g0) * icg + ic;
    const float* xp = x.data() + (n * gc + cin) * H * W;
    const float* dp = dy.data() + (n * ocv + o) * OH * OW;
    // Output columns whose tap kw lands inside the row: 0 <= ox * sw - pw + kw * dw < W.
    const int32_t cx = static_cast<int32_t>(kw * ddw) - pw;
    const uint32_t ox0 = cx >= 0 ? 0 : (static_cast<uint32_t>(-cx) + sw - 1) / sw;
    uint32_t ox1 = cx >= static_cast<int32_t>(W) ? 0 : (static_cast<uint32_t>(static_cast<int32_t>(W) - cx) + sw - 1) / sw;
    if (ox1 > OW) ox1 = OW;
    float s = 0.0f;
    for (uint32_t oy = 0; oy < OH; ++oy) {
      const int32_t iy = static_cast<int32_t>(oy * sh + kh * dh) - ph;
      if (iy < 0 || iy >= static_cast<int32_t>(H)) continue;
      const float* pd = dp + oy * OW + ox0;
      const float* px = xp + static_cast<uint32_t>(iy) * W + static_cast<uint32_t>(static_cast<int32_t>(ox0 * sw) + cx);
      for (uint32_t ox = ox0; ox < ox1; ++ox) {
        s = __builtin_fmaf(*pd, *px, s);
        ++pd;
        px += sw;
      }
    }
    dw[f] = s;
  }
}
