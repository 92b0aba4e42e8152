// Dilated max pooling's gradient on one tile block (docs/library.md, "conv2d and pooling"):
// MaxPoolGrad with window taps dilation apart. dx [cv, BR, W] is channels [c0, c0 + cv) of one
// sample, input rows [r0, r0 + BR); this vertex computes rows [row, row + rows) and block
// channels [c, c + n) (packed in `rows`, `chans`).
//   x  [cv, XSH, W]   input rows [xRow0, xRow0 + XSH): every row of the windows that reach the
//   block dy [cv, DSH, OW]  gradient rows [dyRow0, dyRow0 + DSH): the windows that reach the block
// Packed params (low | high 16 bits): kernel KH|KW, stride sh|sw, padding ph|pw, dilation dh|dw,
// xSize XSH|W, dySize DSH|OW; dxRow0 = r0 | (BR << 16); origin = xRow0 | (dyRow0 << 16).
// Each element: from +0, the gradient of every window (in output order) whose first maximum
// (MaxPoolDilated's rule) it is (tessera/conv_reference.hpp).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(MaxPoolDilatedGrad, (Input, float, x), (Input, float, dy), (Output, float, dx),
               (Param, uint32_t, kernel), (Param, uint32_t, stride), (Param, uint32_t, padding),
               (Param, uint32_t, dilation), (Param, uint32_t, xSize), (Param, uint32_t, dySize),
               (Param, uint32_t, dxRow0), (Param, uint32_t, origin), (Param, uint32_t, rows),
               (Param, uint32_t, chans)) {
  const int32_t KH = static_cast<int32_t>(kernel & 0xffffu),
                KW = static_cast<int32_t>(kernel >> 16);
  const int32_t sh = static_cast<int32_t>(stride & 0xffffu),
                sw = static_cast<int32_t>(stride >> 16);
  const int32_t ph = static_cast<int32_t>(padding & 0xffffu),
                pw = static_cast<int32_t>(padding >> 16);
  const int32_t dh = static_cast<int32_t>(dilation & 0xffffu),
                dw = static_cast<int32_t>(dilation >> 16);
  const int32_t EH = (KH - 1) * dh + 1, EW = (KW - 1) * dw + 1;  // the windows' extents
  const int32_t XSH = static_cast<int32_t>(xSize & 0xffffu), W = static_cast<int32_t>(xSize >> 16);
  const int32_t DSH = static_cast<int32_t>(dySize & 0xffffu),
                OW = static_cast<int32_t>(dySize >> 16);
  const int32_t r0 = static_cast<int32_t>(dxRow0 & 0xffffu),
                BR = static_cast<int32_t>(dxRow0 >> 16);
  const int32_t xr0 = static_cast<int32_t>(origin & 0xffffu),
                dr0 = static_cast<int32_t>(origin >> 16);
  for (uint32_t c = chans & 0xffffu; c < (chans & 0xffffu) + (chans >> 16); ++c) {
    const float* xp = x.data() + c * static_cast<uint32_t>(XSH * W);
    const float* dp = dy.data() + c * static_cast<uint32_t>(DSH * OW);
    for (uint32_t r = rows & 0xffffu; r < (rows & 0xffffu) + (rows >> 16); ++r) {
      const int32_t iy = r0 + static_cast<int32_t>(r);  // global row
      // Windows oy with oy * sh - ph <= iy < oy * sh - ph + EH, among the stored ones.
      int32_t oya = iy + ph - EH + 1 <= 0 ? 0 : (iy + ph - EH + 1 + sh - 1) / sh;
      int32_t oyb = (iy + ph) / sh + 1;
      if (oya < dr0) oya = dr0;
      if (oyb > dr0 + DSH) oyb = dr0 + DSH;
      for (int32_t ix = 0; ix < W; ++ix) {
        int32_t oxa = ix + pw - EW + 1 <= 0 ? 0 : (ix + pw - EW + 1 + sw - 1) / sw;
        int32_t oxb = (ix + pw) / sw + 1;
        if (oxb > OW) oxb = OW;
        float s = 0.0f;
        for (int32_t oy = oya; oy < oyb; ++oy) {
          const int32_t y0 = oy * sh - ph - xr0;  // window top in the slab
          int32_t ya = y0;                        // the first tap inside the slab
          while (ya < 0) ya += dh;
          for (int32_t ox = oxa; ox < oxb; ++ox) {
            const int32_t x0 = ox * sw - pw;
            int32_t xa = x0;
            while (xa < 0) xa += dw;
            float best = -__builtin_inff();
            int32_t at = ya * W + xa;
            for (int32_t yy = ya; yy < y0 + EH && yy < XSH; yy += dh) {
              for (int32_t xx = xa; xx < x0 + EW && xx < W; xx += dw) {
                const float v = xp[yy * W + xx];
                if (v > best || v != v) best = v, at = yy * W + xx;
              }
            }
            if (at == (iy - xr0) * W + ix) s = s + dp[(oy - dr0) * OW + ox];
          }
        }
        dx[(c * static_cast<uint32_t>(BR) + r) * static_cast<uint32_t>(W) +
           static_cast<uint32_t>(ix)] = s;
      }
    }
  }
}
