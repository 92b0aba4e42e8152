// conv2d on the matrix unit (docs/library.md, "conv2d on the matrix unit"): the geometry that
// ConvGatherAmp (the unit's operand) and ConvFixAmp (the result, with the scalar chain where the
// unit's may differ) share. A result element (y, x) of one channel is a chain of fused
// multiply-adds over the taps t = (q, kh, kw) in increasing order; tap t reads source element
// (q, sy, sx) with
//   ny = y * mY + kh * kY + offY,  sy = ny / divY,  valid iff ny >= 0, divY | ny, sy < SH
// (the same in x), and invalid taps are skipped. conv2d's forward is mY = sh, kY = dh, offY = -ph,
// divY = 1 over the input; its gradient to the input is mY = 1, kY = -dh, offY = ph, divY = sh
// over the output gradient: the orders of tessera/conv_reference.hpp.
//
// Packed params (low 16 bits | high 16 bits; signed halves where said):
//   kernel KH|KW, mul mY|mX, step kY|kX (signed), offset offY|offX (signed), div divY|divX,
//   srcSize SH|SW, taps K|Kpad (Kpad = K rounded up to a multiple of 4), res Wres|init (init:
//   the chain starts from bias, else from +0), origin r0|g0 (the block's first result row, the
//   chunk's first group), part p0|pn (this vertex's groups of the chunk).
// A block's positions go in groups of 4 along a row (a row of Wres results is ceil(Wres / 4)
// groups, the last one padded with columns never stored); group gi of the block is row
// r0 + gi / XG, columns 4 (gi % XG) .. + 3.
#pragma once

#include <stdint.h>

namespace conv_amp {

struct Geom {
  uint32_t KH, KW, mY, mX, divY, divX, SH, SW, K, Kpad, Wres, XG, r0, g0, p0, pn;
  int32_t kY, kX, offY, offX;
  bool init;
};

inline int32_t lo16s(uint32_t v) {
  return static_cast<int16_t>(v & 0xffffu);
}
inline int32_t hi16s(uint32_t v) {
  return static_cast<int16_t>(v >> 16);
}

inline Geom unpack(uint32_t kernel, uint32_t mul, uint32_t step, uint32_t offset, uint32_t div,
                   uint32_t srcSize, uint32_t taps, uint32_t res, uint32_t origin, uint32_t part) {
  Geom g;
  g.KH = kernel & 0xffffu, g.KW = kernel >> 16;
  g.mY = mul & 0xffffu, g.mX = mul >> 16;
  g.kY = lo16s(step), g.kX = hi16s(step);
  g.offY = lo16s(offset), g.offX = hi16s(offset);
  g.divY = div & 0xffffu, g.divX = div >> 16;
  g.SH = srcSize & 0xffffu, g.SW = srcSize >> 16;
  g.K = taps & 0xffffu, g.Kpad = taps >> 16;
  g.Wres = res & 0xffffu, g.init = (res >> 16) != 0;
  g.XG = (g.Wres + 3) / 4;
  g.r0 = origin & 0xffffu, g.g0 = origin >> 16;
  g.p0 = part & 0xffffu, g.pn = part >> 16;
  return g;
}

// Source index of a coordinate n along an axis (n = y * m + k * step + off), or -1 if invalid.
inline int32_t source(int32_t n, uint32_t div, uint32_t size) {
  if (n < 0) return -1;
  uint32_t s = static_cast<uint32_t>(n);
  if (div != 1) {
    if (s % div) return -1;
    s /= div;
  }
  return s < size ? static_cast<int32_t>(s) : -1;
}

}  // namespace conv_amp
