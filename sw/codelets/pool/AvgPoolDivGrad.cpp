// The gradient of AvgPoolDiv on one tile block (docs/library.md, "conv2d and pooling"): the fields
// and packed params are AvgPoolGrad's (pool/AvgPoolGrad.cpp), and height = H (the input's) and
// include (count_include_pad) 0 or 1. Each element: from +0, dy / (the window's divisor, as
// AvgPoolDiv's) of every window that contains it, in output order (tessera/conv_reference.hpp).
#include "tessera/pool_window.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(AvgPoolDivGrad, (Input, float, dy), (Output, float, dx), (Param, uint32_t, kernel),
               (Param, uint32_t, stride), (Param, uint32_t, padding), (Param, uint32_t, dySize),
               (Param, uint32_t, dxSize), (Param, uint32_t, origin), (Param, uint32_t, rows),
               (Param, uint32_t, chans), (Param, uint32_t, height), (Param, uint32_t, include)) {
  const int32_t KH = static_cast<int32_t>(kernel & 0xffffu),
                KW = static_cast<int32_t>(kernel >> 16);
  const int32_t sh = static_cast<int32_t>(stride & 0xffffu),
                sw = static_cast<int32_t>(stride >> 16);
  const int32_t ph = static_cast<int32_t>(padding & 0xffffu),
                pw = static_cast<int32_t>(padding >> 16);
  const int32_t DSH = static_cast<int32_t>(dySize & 0xffffu),
                OW = static_cast<int32_t>(dySize >> 16);
  const uint32_t BR = dxSize & 0xffffu;
  const int32_t W = static_cast<int32_t>(dxSize >> 16);
  const int32_t r0 = static_cast<int32_t>(origin & 0xffffu),
                dr0 = static_cast<int32_t>(origin >> 16);
  const int32_t H = static_cast<int32_t>(height);
  const bool inc = include != 0;
  for (uint32_t c = chans & 0xffffu; c < (chans & 0xffffu) + (chans >> 16); ++c) {
    const float* dp = dy.data() + c * static_cast<uint32_t>(DSH * OW);
    for (uint32_t r = rows & 0xffffu; r < (rows & 0xffffu) + (rows >> 16); ++r) {
      const int32_t iy = r0 + static_cast<int32_t>(r);
      int32_t oya = iy + ph - KH + 1 <= 0 ? 0 : (iy + ph - KH + 1 + sh - 1) / sh;
      int32_t oyb = (iy + ph) / sh + 1;
      if (oya < dr0) oya = dr0;
      if (oyb > dr0 + DSH) oyb = dr0 + DSH;
      for (int32_t ix = 0; ix < W; ++ix) {
        const int32_t oxa = ix + pw - KW + 1 <= 0 ? 0 : (ix + pw - KW + 1 + sw - 1) / sw;
        int32_t oxb = (ix + pw) / sw + 1;
        if (oxb > OW) oxb = OW;
        float s = 0.0f;
        for (int32_t oy = oya; oy < oyb; ++oy) {
          const int32_t gy = oy * sh - ph;
          const int32_t hy = tessera_pool_extent(gy, KH, H, ph, inc);
          for (int32_t ox = oxa; ox < oxb; ++ox) {
            const int32_t x0 = ox * sw - pw;
            const int32_t wx = tessera_pool_extent(x0, KW, W, pw, inc);
            s = s + dp[(oy - dr0) * OW + ox] / static_cast<float>(hy * wx);
          }
        }
        dx[(c * BR + r) * static_cast<uint32_t>(W) + static_cast<uint32_t>(ix)] = s;
      }
    }
  }
}
