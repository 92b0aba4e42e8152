// Dilated max pooling on one tile block (docs/library.md, "conv2d and pooling"): MaxPool's vertex
// with window taps dilation apart (ONNX's dilations, PyTorch's MaxPool2d dilation), kept apart so
// that MaxPool's code and cycles stay as they are. out [cv, BR, OW] is channels [c0, c0 + cv) of
// one sample, output rows [r0, r0 + BR); this vertex computes rows [row, row + rows) and block
// channels [c, c + n) (packed in `rows`, `chans`).
//   in [cv, SH, W]  the input rows the block's windows reach (padding rows are not stored)
// Packed params (low | high 16 bits): kernel KH|KW, stride sh|sw, dilation dh|dw, inSize SH|W,
// outSize BR|OW; colPad = pw; rowBase (int32) = slab row of output row 0's window top.
// Each output: from -inf, a tap inside the input replaces the maximum when greater or NaN, taps
// in scan order (PyTorch's rule; tessera/conv_reference.hpp).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(MaxPoolDilated, (Input, float, in), (Output, float, out), (Param, uint32_t, kernel),
               (Param, uint32_t, stride), (Param, uint32_t, dilation), (Param, uint32_t, colPad),
               (Param, uint32_t, inSize), (Param, uint32_t, outSize), (Param, uint32_t, rowBase),
               (Param, uint32_t, rows), (Param, uint32_t, chans)) {
  const int32_t KH = static_cast<int32_t>(kernel & 0xffffu),
                KW = static_cast<int32_t>(kernel >> 16);
  const int32_t sh = static_cast<int32_t>(stride & 0xffffu),
                sw = static_cast<int32_t>(stride >> 16);
  const int32_t dh = static_cast<int32_t>(dilation & 0xffffu),
                dw = static_cast<int32_t>(dilation >> 16);
  const int32_t SH = static_cast<int32_t>(inSize & 0xffffu), W = static_cast<int32_t>(inSize >> 16);
  const uint32_t BR = outSize & 0xffffu, OW = outSize >> 16;
  const int32_t rb = static_cast<int32_t>(static_cast<uint32_t>(rowBase));
  const int32_t pw = static_cast<int32_t>(static_cast<uint32_t>(colPad));
  for (uint32_t c = chans & 0xffffu; c < (chans & 0xffffu) + (chans >> 16); ++c) {
    const float* plane = in.data() + c * static_cast<uint32_t>(SH * W);
    for (uint32_t r = rows & 0xffffu; r < (rows & 0xffffu) + (rows >> 16); ++r) {
      const int32_t y0 = rb + static_cast<int32_t>(r) * sh;
      for (uint32_t ox = 0; ox < OW; ++ox) {
        const int32_t x0 = static_cast<int32_t>(ox) * sw - pw;
        float best = -__builtin_inff();
        for (int32_t ky = 0; ky < KH; ++ky) {
          const int32_t iy = y0 + ky * dh;
          if (iy < 0 || iy >= SH) continue;
          for (int32_t kx = 0; kx < KW; ++kx) {
            const int32_t ix = x0 + kx * dw;
            if (ix < 0 || ix >= W) continue;
            const float v = plane[iy * W + ix];
            if (v > best || v != v) best = v;
          }
        }
        out[(c * BR + r) * OW + ox] = best;
      }
    }
  }
}
