// Average pooling with count_include_pad on one tile block (docs/library.md, "conv2d and
// pooling"); the fields and packed params are MaxPool's (pool/MaxPool.cpp). Each output: the
// window's stored elements added from +0 in scan order, then divided by KH * KW
// (tessera/conv_reference.hpp).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(AvgPool, (Input, float, in), (Output, float, out), (Param, uint32_t, kernel),
               (Param, uint32_t, stride), (Param, uint32_t, colPad), (Param, uint32_t, inSize),
               (Param, uint32_t, outSize), (Param, uint32_t, rowBase), (Param, uint32_t, rows),
               (Param, uint32_t, chans)) {
  const int32_t KH = static_cast<int32_t>(kernel & 0xffffu),
                KW = static_cast<int32_t>(kernel >> 16);
  const int32_t sh = static_cast<int32_t>(stride & 0xffffu),
                sw = static_cast<int32_t>(stride >> 16);
  const int32_t SH = static_cast<int32_t>(inSize & 0xffffu), W = static_cast<int32_t>(inSize >> 16);
  const uint32_t BR = outSize & 0xffffu, OW = outSize >> 16;
  const int32_t rb = static_cast<int32_t>(static_cast<uint32_t>(rowBase));
  const int32_t pw = static_cast<int32_t>(static_cast<uint32_t>(colPad));
  const float div = static_cast<float>(KH * KW);
  for (uint32_t c = chans & 0xffffu; c < (chans & 0xffffu) + (chans >> 16); ++c) {
    const float* plane = in.data() + c * static_cast<uint32_t>(SH * W);
    for (uint32_t r = rows & 0xffffu; r < (rows & 0xffffu) + (rows >> 16); ++r) {
      const int32_t y0 = rb + static_cast<int32_t>(r) * sh;
      const int32_t ya = y0 < 0 ? 0 : y0, yb = y0 + KH < SH ? y0 + KH : SH;
      for (uint32_t ox = 0; ox < OW; ++ox) {
        const int32_t x0 = static_cast<int32_t>(ox) * sw - pw;
        const int32_t xa = x0 < 0 ? 0 : x0, xb = x0 + KW < W ? x0 + KW : W;
        float s = 0.0f;
        for (int32_t iy = ya; iy < yb; ++iy) {
          for (int32_t ix = xa; ix < xb; ++ix) s += plane[iy * W + ix];
        }
        out[(c * BR + r) * OW + ox] = s / div;
      }
    }
  }
}
