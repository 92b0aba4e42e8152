// Max pooling's gradient on one tile block (docs/library.md, "conv2d and pooling"): dx [cv, BR, W]
// is channels [c0, c0 + cv) of one sample, input rows [r0, r0 + BR); this vertex computes rows
// [row, row + rows) and block channels [c, c + n) (packed in `rows`, `chans`).
//   x  [cv, XSH, W]   input rows [xRow0, xRow0 + XSH): every row of the windows that reach the
//   block dy [cv, DSH, OW]  gradient rows [dyRow0, dyRow0 + DSH): the windows that reach the block
// Packed params (low | high 16 bits): kernel KH|KW, stride sh|sw, padding ph|pw, xSize XSH|W,
// dySize DSH|OW; dxRow0 = r0 | (BR << 16); origin = xRow0 | (dyRow0 << 16).
// Each element: from +0, the gradient of every window (in output order) whose first maximum
// (MaxPool's rule) it is (tessera/conv_reference.hpp). The vertex walks the windows that reach
// its rows once each, in output order, and adds a window's gradient to its maximum when that
// lies in its rows: each element receives the same additions in the same order as in the
// reference, with one scan per window instead of one per (element, window) pair and no divide
// per element (a divide is a long op, 8 rounds of its context).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(MaxPoolGrad, (Input, float, x), (Input, float, dy), (Output, float, dx),
               (Param, uint32_t, kernel), (Param, uint32_t, stride), (Param, uint32_t, padding),
               (Param, uint32_t, xSize), (Param, uint32_t, dySize), (Param, uint32_t, dxRow0),
               (Param, uint32_t, origin), (Param, uint32_t, rows), (Param, uint32_t, chans)) {
  const int32_t KH = static_cast<int32_t>(kernel & 0xffffu),
                KW = static_cast<int32_t>(kernel >> 16);
  const int32_t sh = static_cast<int32_t>(stride & 0xffffu),
                sw = static_cast<int32_t>(stride >> 16);
  const int32_t ph = static_cast<int32_t>(padding & 0xffffu),
                pw = static_cast<int32_t>(padding >> 16);
  const int32_t XSH = static_cast<int32_t>(xSize & 0xffffu), W = static_cast<int32_t>(xSize >> 16);
  const int32_t DSH = static_cast<int32_t>(dySize & 0xffffu),
                OW = static_cast<int32_t>(dySize >> 16);
  const int32_t r0 = static_cast<int32_t>(dxRow0 & 0xffffu),
                BR = static_cast<int32_t>(dxRow0 >> 16);
  const int32_t xr0 = static_cast<int32_t>(origin & 0xffffu),
                dr0 = static_cast<int32_t>(origin >> 16);
  const int32_t rowA = static_cast<int32_t>(rows & 0xffffu),
                rowB = rowA + static_cast<int32_t>(rows >> 16);
  // The vertex's rows in slab coordinates, and the windows oy with
  // oy * sh - ph <= iy < oy * sh - ph + KH for some of its rows iy, among the stored ones.
  const int32_t sa = r0 + rowA - xr0, sb = r0 + rowB - xr0;
  const int32_t ta = r0 + rowA + ph - KH + 1;
  int32_t oya = ta <= 0 ? 0 : (ta + sh - 1) / sh;
  int32_t oyb = (r0 + rowB - 1 + ph) / sh + 1;
  if (oya < dr0) oya = dr0;
  if (oyb > dr0 + DSH) oyb = dr0 + DSH;
  for (uint32_t c = chans & 0xffffu; c < (chans & 0xffffu) + (chans >> 16); ++c) {
    const float* xp = x.data() + c * static_cast<uint32_t>(XSH * W);
    const float* dp = dy.data() + c * static_cast<uint32_t>(DSH * OW);
    // The vertex's first row of this channel: slab row sa.
    float* dxp = dx.data() + (c * static_cast<uint32_t>(BR) + static_cast<uint32_t>(rowA)) *
                                 static_cast<uint32_t>(W);
    if (KH == 2 && KW == 2 && sh == 2 && sw == 2 && ph == 0 && pw == 0 && W == 2 * OW &&
        2 * oya - xr0 == sa && sb - sa == 2 * (oyb - oya) && sb <= XSH) {
      // 2x2 windows with stride 2 that tile the vertex's rows exactly (LeNet's): each element
      // is in one window, so it is +0 plus that window's gradient where it is the window's
      // first maximum (the same scan and rule as below) and +0 elsewhere; written once, with no
      // zero fill first.
      for (int32_t oy = oya; oy < oyb; ++oy) {
        const float* xa = xp + (2 * oy - xr0) * W;
        const float* xb = xa + W;
        float* da = dxp + (2 * oy - xr0 - sa) * W;
        float* db = da + W;
        const float* drow = dp + (oy - dr0) * OW;
        for (int32_t ox = 0; ox < OW; ++ox, xa += 2, xb += 2, da += 2, db += 2) {
          float best = xa[0];
          int32_t at = 0;
          if (xa[1] > best || xa[1] != xa[1]) best = xa[1], at = 1;
          if (xb[0] > best || xb[0] != xb[0]) best = xb[0], at = 2;
          if (xb[1] > best || xb[1] != xb[1]) at = 3;
          const float g = 0.0f + drow[ox];
          da[0] = at == 0 ? g : 0.0f;
          da[1] = at == 1 ? g : 0.0f;
          db[0] = at == 2 ? g : 0.0f;
          db[1] = at == 3 ? g : 0.0f;
        }
      }
      continue;
    }
    for (int32_t i = 0; i < (sb - sa) * W; ++i) dxp[i] = 0.0f;
    for (int32_t oy = oya; oy < oyb; ++oy) {
      const int32_t y0 = oy * sh - ph - xr0;  // window top in the slab
      const int32_t ya = y0 < 0 ? 0 : y0, yb = y0 + KH < XSH ? y0 + KH : XSH;
      const float* drow = dp + (oy - dr0) * OW;
      for (int32_t ox = 0; ox < OW; ++ox) {
        const int32_t x0 = ox * sw - pw;
        const int32_t xa = x0 < 0 ? 0 : x0, xb = x0 + KW < W ? x0 + KW : W;
        float best = -__builtin_inff();
        int32_t aty = ya, atx = xa;
        for (int32_t yy = ya; yy < yb; ++yy) {
          const float* xrow = xp + yy * W;
          for (int32_t xx = xa; xx < xb; ++xx) {
            const float v = xrow[xx];
            if (v > best || v != v) best = v, aty = yy, atx = xx;
          }
        }
        if (aty >= sa && aty < sb) {
          float& d = dxp[(aty - sa) * W + atx];
          d = d + drow[ox];
        }
      }
    }
  }
}
