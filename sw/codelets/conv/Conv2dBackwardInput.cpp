// conv2d's gradient to its input on one tile block (docs/library.md, "conv2d and pooling"):
// dx [cv, BR, W] is input channels [c0, c0 + cv) of one sample, input rows [r0, r0 + BR); this
// vertex computes rows [row, row + rows) and block channels [c, c + n) (packed in `rows`, `chans`).
//   dy [go, DSH, OW]  gradient rows [dyRow0, dyRow0 + DSH) of the output channels of the groups
//   used w  [go, icg, KH, KW]  those channels' weights
// Packed params (low | high 16 bits): kernel KH|KW, stride sh|sw, padding ph|pw, dilation dh|dw,
// dySize DSH|OW, dxSize BR|W, channels icg|ocg; rowBase = r0 + ph; cFirst = c0 mod icg.
// Each element: fused multiply-adds from +0 over (o, kh, kw) in increasing order of the outputs
// it reached (tessera/conv_reference.hpp).
#include "tessera/vertex.hpp"

namespace {

// Stride 1, four adjacent elements whose every kw tap reaches a stored output: one weight load
// feeds four chains. d points at dy(o0, row of kh0, column of element 0 for kw = 0).
__attribute__((noinline)) void four(const float* d, const float* w, float* out, uint32_t ocs,
                                    uint32_t dStride, uint32_t wStride, uint32_t kh0, uint32_t kh1,
                                    uint32_t KW, uint32_t rowStep, uint32_t dw) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  for (uint32_t o = 0; o < ocs; ++o) {
    for (uint32_t kh = kh0; kh < kh1; ++kh) {
      const float* pd = d + o * dStride - (kh - kh0) * rowStep;
      const float* pw = w + o * wStride + kh * KW;
      for (uint32_t kw = 0; kw < KW; ++kw) {
        const float wv = *pw++;
        s0 = __builtin_fmaf(pd[0], wv, s0);
        s1 = __builtin_fmaf(pd[1], wv, s1);
        s2 = __builtin_fmaf(pd[2], wv, s2);
        s3 = __builtin_fmaf(pd[3], wv, s3);
        pd -= dw;
      }
    }
  }
  out[0] = s0, out[1] = s1, out[2] = s2, out[3] = s3;
}

}  // namespace

TESSERA_VERTEX(Conv2dBackwardInput, (Input, float, dy), (Input, float, w), (Output, float, dx),
               (Param, uint32_t, kernel), (Param, uint32_t, stride), (Param, uint32_t, padding),
               (Param, uint32_t, dilation), (Param, uint32_t, dySize), (Param, uint32_t, dxSize),
               (Param, uint32_t, channels), (Param, uint32_t, rowBase), (Param, uint32_t, dyRow0),
               (Param, uint32_t, cFirst), (Param, uint32_t, rows), (Param, uint32_t, chans)) {
  const uint32_t KH = kernel & 0xffffu, KW = kernel >> 16, sh = stride & 0xffffu, sw = stride >> 16;
  const uint32_t pw = padding >> 16, dh = dilation & 0xffffu, dw = dilation >> 16;
  const uint32_t DSH = dySize & 0xffffu, OW = dySize >> 16, BR = dxSize & 0xffffu, W = dxSize >> 16;
  const uint32_t icg = channels & 0xffffu, ocg = channels >> 16;
  const int32_t oy0 = static_cast<int32_t>(static_cast<uint32_t>(dyRow0));
  const uint32_t g0 = cFirst / icg;
  for (uint32_t c = chans & 0xffffu; c < (chans & 0xffffu) + (chans >> 16); ++c) {
    const uint32_t grp = (cFirst + c) / icg - g0, cl = (cFirst + c) % icg;
    for (uint32_t r = rows & 0xffffu; r < (rows & 0xffffu) + (rows >> 16); ++r) {
      const int32_t ty = static_cast<int32_t>(rowBase + r);  // iy + ph
      for (uint32_t ix = 0; ix < W; ++ix) {
        const int32_t tx = static_cast<int32_t>(ix + pw);
        float s = 0.0f;
        if (sh == 1 && sw == 1) {
          // Stride 1: the taps that reach stored outputs are one range of kh and one of kw.
          const uint32_t kh0 = ty - oy0 >= static_cast<int32_t>(DSH)
                                   ? (static_cast<uint32_t>(ty - oy0) - DSH + dh) / dh
                                   : 0;
          const uint32_t kw0 =
              tx >= static_cast<int32_t>(OW) ? (static_cast<uint32_t>(tx) - OW + dw) / dw : 0;
          uint32_t kh1 = ty - oy0 < 0 ? 0 : static_cast<uint32_t>(ty - oy0) / dh + 1;
          uint32_t kw1 = static_cast<uint32_t>(tx) / dw + 1;
          if (kh1 > KH) kh1 = KH;
          if (kw1 > KW) kw1 = KW;
          if (ix + 4 <= W && kw0 == 0 && static_cast<uint32_t>(tx) + 3 < OW && kw1 == KW) {
            if (kh0 < kh1) {
              four(dy.data() + (grp * ocg * DSH + static_cast<uint32_t>(ty - oy0) - kh0 * dh) * OW +
                       static_cast<uint32_t>(tx),
                   w.data() + (grp * ocg * icg + cl) * KH * KW, &dx[(c * BR + r) * W + ix], ocg,
                   DSH * OW, icg * KH * KW, kh0, kh1, KW, dh * OW, dw);
            } else {
              for (uint32_t j = 0; j < 4; ++j) dx[(c * BR + r) * W + ix + j] = 0.0f;
            }
            ix += 3;
            continue;
          }
          for (uint32_t o = grp * ocg; o < (grp + 1) * ocg; ++o) {
            for (uint32_t kh = kh0; kh < kh1; ++kh) {
              const float* pd = dy.data() +
                                (o * DSH + static_cast<uint32_t>(ty - oy0) - kh * dh) * OW +
                                static_cast<uint32_t>(tx) - kw0 * dw;
              const float* pw8 = w.data() + ((o * icg + cl) * KH + kh) * KW + kw0;
              for (uint32_t kw = kw0; kw < kw1; ++kw) {
                s = __builtin_fmaf(*pd, *pw8, s);
                pd -= dw;
                ++pw8;
              }
            }
          }
          dx[(c * BR + r) * W + ix] = s;
          continue;
        }
        for (uint32_t o = grp * ocg; o < (grp + 1) * ocg; ++o) {
          for (uint32_t kh = 0; kh < KH; ++kh) {
            const int32_t t = ty - static_cast<int32_t>(kh * dh);
            if (t < 0) break;
            if (sh != 1 && static_cast<uint32_t>(t) % sh) continue;
            const int32_t oy =
                (sh == 1 ? t : static_cast<int32_t>(static_cast<uint32_t>(t) / sh)) - oy0;
            if (oy < 0 || oy >= static_cast<int32_t>(DSH)) continue;
            const float* drow = dy.data() + (o * DSH + static_cast<uint32_t>(oy)) * OW;
            const float* wrow = w.data() + ((o * icg + cl) * KH + kh) * KW;
            for (uint32_t kw = 0; kw < KW; ++kw) {
              const int32_t u = tx - static_cast<int32_t>(kw * dw);
              if (u < 0) break;
              if (sw != 1 && static_cast<uint32_t>(u) % sw) continue;
              const uint32_t ox =
                  sw == 1 ? static_cast<uint32_t>(u) : static_cast<uint32_t>(u) / sw;
              if (ox >= OW) continue;
              s = __builtin_fmaf(drow[ox], wrow[kw], s);
            }
          }
        }
        dx[(c * BR + r) * W + ix] = s;
      }
    }
  }
}
