// Average pooling with PyTorch's divisor per window, on one tile block (docs/library.md, "conv2d
// and pooling"): the fields and packed params are AvgPool's (pool/AvgPool.cpp), and
//   limits = slabRow0 | (H << 16): the input row of slab row 0, the input's height
//   pad    = ph | (pw << 16);  include (count_include_pad) 0 or 1
// Each output: the window's stored elements added from +0 in scan order (as AvgPool), divided by
// the window's element count inside the input (include 0), or inside the padded input (include 1:
// KH * KW except for the partial last window of ceil_mode) (tessera/conv_reference.hpp).
#include "tessera/pool_window.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(AvgPoolDiv, (Input, float, in), (Output, float, out), (Param, uint32_t, kernel),
               (Param, uint32_t, stride), (Param, uint32_t, colPad), (Param, uint32_t, inSize),
               (Param, uint32_t, outSize), (Param, uint32_t, rowBase), (Param, uint32_t, rows),
               (Param, uint32_t, chans), (Param, uint32_t, limits), (Param, uint32_t, pad),
               (Param, uint32_t, include)) {
  const int32_t KH = static_cast<int32_t>(kernel & 0xffffu),
                KW = static_cast<int32_t>(kernel >> 16);
  const int32_t sh = static_cast<int32_t>(stride & 0xffffu),
                sw = static_cast<int32_t>(stride >> 16);
  const int32_t SH = static_cast<int32_t>(inSize & 0xffffu), W = static_cast<int32_t>(inSize >> 16);
  const uint32_t BR = outSize & 0xffffu, OW = outSize >> 16;
  const int32_t rb = static_cast<int32_t>(static_cast<uint32_t>(rowBase));
  const int32_t pw = static_cast<int32_t>(static_cast<uint32_t>(colPad));
  const int32_t row0 = static_cast<int32_t>(limits & 0xffffu),
                H = static_cast<int32_t>(limits >> 16);
  const int32_t ph = static_cast<int32_t>(pad & 0xffffu);
  const bool inc = include != 0;
  for (uint32_t c = chans & 0xffffu; c < (chans & 0xffffu) + (chans >> 16); ++c) {
    const float* plane = in.data() + c * static_cast<uint32_t>(SH * W);
    for (uint32_t r = rows & 0xffffu; r < (rows & 0xffffu) + (rows >> 16); ++r) {
      const int32_t y0 = rb + static_cast<int32_t>(r) * sh;
      const int32_t ya = y0 < 0 ? 0 : y0, yb = y0 + KH < SH ? y0 + KH : SH;
      const int32_t gy = y0 + row0;  // the window's top in the input
      const int32_t hy = tessera_pool_extent(gy, KH, H, ph, inc);
      for (uint32_t ox = 0; ox < OW; ++ox) {
        const int32_t x0 = static_cast<int32_t>(ox) * sw - pw;
        const int32_t xa = x0 < 0 ? 0 : x0, xb = x0 + KW < W ? x0 + KW : W;
        const int32_t wx = tessera_pool_extent(x0, KW, W, pw, inc);
        float s = 0.0f;
        for (int32_t iy = ya; iy < yb; ++iy) {
          for (int32_t ix = xa; ix < xb; ++ix) s += plane[iy * W + ix];
        }
        out[(c * BR + r) * OW + ox] = s / static_cast<float>(hy * wx);
      }
    }
  }
}
