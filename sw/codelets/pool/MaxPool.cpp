// Max pooling on one tile block (docs/library.md, "conv2d and pooling"): out [cv, BR, OW] is
// channels [c0, c0 + cv) of one sample, output rows [r0, r0 + BR); this vertex computes rows
// [row, row + rows) and block channels [c, c + n) (packed in `rows`, `chans`).
//   in [cv, SH, W]  the input rows the block's windows reach (padding rows are not stored)
// Packed params (low | high 16 bits): kernel KH|KW, stride sh|sw, inSize SH|W, outSize BR|OW;
// colPad = pw; rowBase (int32) = slab row of output row 0's window top.
// Each output: from -inf, an element replaces the maximum when greater or NaN, in scan order
// (PyTorch's rule; tessera/conv_reference.hpp).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(MaxPool, (Input, float, in), (Output, float, out), (Param, uint32_t, kernel),
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
  for (uint32_t c = chans & 0xffffu; c < (chans & 0xffffu) + (chans >> 16); ++c) {
    const float* plane = in.data() + c * static_cast<uint32_t>(SH * W);
    for (uint32_t r = rows & 0xffffu; r < (rows & 0xffffu) + (rows >> 16); ++r) {
      const int32_t y0 = rb + static_cast<int32_t>(r) * sh;
      const int32_t ya = y0 < 0 ? 0 : y0, yb = y0 + KH < SH ? y0 + KH : SH;
      if (KH == 2 && KW == 2 && sh == 2 && sw == 2 && pw == 0 && y0 >= 0 && y0 + 2 <= SH &&
          static_cast<int32_t>(2 * OW) <= W) {
        // 2x2 windows with stride 2 inside the row (LeNet's): the same four elements in scan
        // order, with the same rule (the first replaces -inf unless it is -inf itself, which
        // leaves the same bits), without the loops' bounds.
        const float* a = plane + y0 * W;
        const float* b = a + W;
        float* o = out.data() + (c * BR + r) * OW;
        for (uint32_t ox = 0; ox < OW; ++ox, a += 2, b += 2) {
          float best = a[0];
          if (a[1] > best || a[1] != a[1]) best = a[1];
          if (b[0] > best || b[0] != b[0]) best = b[0];
          if (b[1] > best || b[1] != b[1]) best = b[1];
          o[ox] = best;
        }
        continue;
      }
      for (uint32_t ox = 0; ox < OW; ++ox) {
        const int32_t x0 = static_cast<int32_t>(ox) * sw - pw;
        const int32_t xa = x0 < 0 ? 0 : x0, xb = x0 + KW < W ? x0 + KW : W;
        float best = -__builtin_inff();
        for (int32_t iy = ya; iy < yb; ++iy) {
          for (int32_t ix = xa; ix < xb; ++ix) {
            const float v = plane[iy * W + ix];
            if (v > best || v != v) best = v;
          }
        }
        out[(c * BR + r) * OW + ox] = best;
      }
    }
  }
}
