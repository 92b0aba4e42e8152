// Host references of tessera/conv.hpp: the same operations in the same order as the codelets
// (docs/library.md, "conv2d and pooling"), so that a device result can be compared bit for bit,
// and a CPU model of a network can reproduce the device exactly. Header-only; tensors are flat
// row-major NCHW vectors. Compile with -ffp-contract=off (or none of GCC's contraction): every
// fused multiply-add is an explicit std::fmaf.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "tessera/conv.hpp"
#include "tessera/pool_window.h"

namespace tessera::ops::reference {

/// Geometry of a convolution, resolved from shapes and Conv2dParams.
struct ConvGeom {
  long N, C, H, W, OC, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, G, icg, ocg;
  /// From in [N, C, H, W], weights [OC, C / groups, KH, KW] and the params.
  ConvGeom(const std::vector<size_t>& in, const std::vector<size_t>& w, const Conv2dParams& p)
      : N(long(in[0])),
        C(long(in[1])),
        H(long(in[2])),
        W(long(in[3])),
        OC(long(w[0])),
        KH(long(w[2])),
        KW(long(w[3])),
        sh(long(p.stride[0])),
        sw(long(p.stride[1])),
        ph(long(p.padding[0])),
        pw(long(p.padding[1])),
        dh(long(p.dilation[0])),
        dw(long(p.dilation[1])),
        G(long(p.groups)),
        icg(long(in[1] / p.groups)),
        ocg(long(w[0] / p.groups)) {
    const std::vector<size_t> o = conv2dOutputShape(in, w, p, "reference");
    OH = long(o[2]), OW = long(o[3]);
  }
};

/// conv2d: bias (or +0), then fmaf over (c', kh, kw) increasing, padding taps skipped.
inline std::vector<float> conv2d(const ConvGeom& g, const std::vector<float>& x,
                                 const std::vector<float>& w, const std::vector<float>* bias) {
  std::vector<float> y(size_t(g.N * g.OC * g.OH * g.OW));
  for (long n = 0; n < g.N; ++n)
    for (long o = 0; o < g.OC; ++o) {
      const long c0 = (o / g.ocg) * g.icg;
      for (long oy = 0; oy < g.OH; ++oy)
        for (long ox = 0; ox < g.OW; ++ox) {
          float s = bias ? (*bias)[size_t(o)] : 0.0f;
          for (long c = 0; c < g.icg; ++c)
            for (long kh = 0; kh < g.KH; ++kh) {
              const long iy = oy * g.sh - g.ph + kh * g.dh;
              if (iy < 0 || iy >= g.H) continue;
              for (long kw = 0; kw < g.KW; ++kw) {
                const long ix = ox * g.sw - g.pw + kw * g.dw;
                if (ix < 0 || ix >= g.W) continue;
                s = std::fmaf(x[size_t(((n * g.C + c0 + c) * g.H + iy) * g.W + ix)],
                              w[size_t(((o * g.icg + c) * g.KH + kh) * g.KW + kw)], s);
              }
            }
          y[size_t(((n * g.OC + o) * g.OH + oy) * g.OW + ox)] = s;
        }
    }
  return y;
}

/// conv2dBackwardInput: per input element, fmaf from +0 over (o in its group, kh, kw) increasing.
inline std::vector<float> conv2dBackwardInput(const ConvGeom& g, const std::vector<float>& dy,
                                              const std::vector<float>& w) {
  std::vector<float> dx(size_t(g.N * g.C * g.H * g.W));
  for (long n = 0; n < g.N; ++n)
    for (long c = 0; c < g.C; ++c) {
      const long grp = c / g.icg, cl = c % g.icg;
      for (long iy = 0; iy < g.H; ++iy)
        for (long ix = 0; ix < g.W; ++ix) {
          float s = 0.0f;
          for (long o = grp * g.ocg; o < (grp + 1) * g.ocg; ++o)
            for (long kh = 0; kh < g.KH; ++kh) {
              const long t = iy + g.ph - kh * g.dh;
              if (t < 0 || t % g.sh || t / g.sh >= g.OH) continue;
              for (long kw = 0; kw < g.KW; ++kw) {
                const long u = ix + g.pw - kw * g.dw;
                if (u < 0 || u % g.sw || u / g.sw >= g.OW) continue;
                s = std::fmaf(dy[size_t(((n * g.OC + o) * g.OH + t / g.sh) * g.OW + u / g.sw)],
                              w[size_t(((o * g.icg + cl) * g.KH + kh) * g.KW + kw)], s);
              }
            }
          dx[size_t(((n * g.C + c) * g.H + iy) * g.W + ix)] = s;
        }
    }
  return dx;
}

/// conv2dBackwardWeights: per sample an fmaf chain from +0 over (y, x) increasing, then the
/// samples added in order from the first.
inline std::vector<float> conv2dBackwardWeights(const ConvGeom& g, const std::vector<float>& x,
                                                const std::vector<float>& dy) {
  const size_t E = size_t(g.OC * g.icg * g.KH * g.KW);
  std::vector<float> dw(E);
  for (size_t e = 0; e < E; ++e) {
    const long kw = long(e) % g.KW, kh = long(e) / g.KW % g.KH, c = long(e) / (g.KW * g.KH) % g.icg,
               o = long(e) / (g.KW * g.KH * g.icg);
    const long cin = (o / g.ocg) * g.icg + c;
    float total = 0.0f;
    for (long n = 0; n < g.N; ++n) {
      float s = 0.0f;
      for (long oy = 0; oy < g.OH; ++oy) {
        const long iy = oy * g.sh - g.ph + kh * g.dh;
        if (iy < 0 || iy >= g.H) continue;
        for (long ox = 0; ox < g.OW; ++ox) {
          const long ix = ox * g.sw - g.pw + kw * g.dw;
          if (ix < 0 || ix >= g.W) continue;
          s = std::fmaf(dy[size_t(((n * g.OC + o) * g.OH + oy) * g.OW + ox)],
                        x[size_t(((n * g.C + cin) * g.H + iy) * g.W + ix)], s);
        }
      }
      total = n == 0 ? s : total + s;
    }
    dw[e] = total;
  }
  return dw;
}

/// conv2dBackwardBias: per sample the plane summed left to right from its first element, then the
/// samples added in order from the first.
inline std::vector<float> conv2dBackwardBias(const ConvGeom& g, const std::vector<float>& dy) {
  std::vector<float> db(size_t(g.OC));
  const long S = g.OH * g.OW;
  for (long o = 0; o < g.OC; ++o) {
    float total = 0.0f;
    for (long n = 0; n < g.N; ++n) {
      const float* p = &dy[size_t((n * g.OC + o) * S)];
      float s = p[0];
      for (long i = 1; i < S; ++i) s += p[i];
      total = n == 0 ? s : total + s;
    }
    db[size_t(o)] = total;
  }
  return db;
}

/// Geometry of a pooling layer.
struct PoolGeom {
  long N, C, H, W, KH, KW, sh, sw, ph, pw, OH, OW;
  bool include = true;  ///< count_include_pad
  long dh = 1, dw = 1;  ///< max pooling's dilation
  /// From in [N, C, H, W] and the params.
  PoolGeom(const std::vector<size_t>& in, const Pool2dParams& p)
      : N(long(in[0])),
        C(long(in[1])),
        H(long(in[2])),
        W(long(in[3])),
        KH(long(p.kernel[0])),
        KW(long(p.kernel[1])),
        sh(long(p.stride[0] ? p.stride[0] : p.kernel[0])),
        sw(long(p.stride[1] ? p.stride[1] : p.kernel[1])),
        ph(long(p.padding[0])),
        pw(long(p.padding[1])),
        include(p.countIncludePad),
        dh(long(p.dilation[0])),
        dw(long(p.dilation[1])) {
    const std::vector<size_t> o = pool2dOutputShape(in, p, "reference");
    OH = long(o[2]), OW = long(o[3]);
  }
};

/// Flat index (iy * W + ix) of the first maximum of window (oy, ox) of plane x, PyTorch's rule:
/// start at -inf and the window's first element, take an element that is greater or NaN.
/// With dilation, the window's taps dh (dw) apart, from its first tap inside the input.
inline long maxPoolArgMax(const PoolGeom& g, const float* x, long oy, long ox) {
  const long y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
  long ya = y0, xa = x0;
  while (ya < 0) ya += g.dh;
  while (xa < 0) xa += g.dw;
  const long ey = y0 + (g.KH - 1) * g.dh + 1, ex = x0 + (g.KW - 1) * g.dw + 1;
  const long yb = ey < g.H ? ey : g.H, xb = ex < g.W ? ex : g.W;
  float best = -std::numeric_limits<float>::infinity();
  long at = ya * g.W + xa;
  for (long iy = ya; iy < yb; iy += g.dh)
    for (long ix = xa; ix < xb; ix += g.dw) {
      const float v = x[iy * g.W + ix];
      if (v > best || v != v) best = v, at = iy * g.W + ix;
    }
  return at;
}

/// maxPool2d.
inline std::vector<float> maxPool2d(const PoolGeom& g, const std::vector<float>& x) {
  std::vector<float> y(size_t(g.N * g.C * g.OH * g.OW));
  for (long p = 0; p < g.N * g.C; ++p)
    for (long oy = 0; oy < g.OH; ++oy)
      for (long ox = 0; ox < g.OW; ++ox) {
        const float* plane = &x[size_t(p * g.H * g.W)];
        y[size_t((p * g.OH + oy) * g.OW + ox)] = plane[maxPoolArgMax(g, plane, oy, ox)];
      }
  return y;
}

/// maxPool2dBackward: each window's gradient added to its argmax, windows in output order, from +0.
inline std::vector<float> maxPool2dBackward(const PoolGeom& g, const std::vector<float>& x,
                                            const std::vector<float>& dy) {
  std::vector<float> dx(x.size(), 0.0f);
  for (long p = 0; p < g.N * g.C; ++p)
    for (long oy = 0; oy < g.OH; ++oy)
      for (long ox = 0; ox < g.OW; ++ox) {
        const long at = maxPoolArgMax(g, &x[size_t(p * g.H * g.W)], oy, ox);
        float& d = dx[size_t(p * g.H * g.W + at)];
        d = d + dy[size_t((p * g.OH + oy) * g.OW + ox)];
      }
  return dx;
}

/// Average pooling's divisor for window (oy, ox), PyTorch's: the window inside the padded input
/// (count_include_pad; KH * KW but for ceil mode's last window), or inside the input.
inline float avgPoolDivisor(const PoolGeom& g, long oy, long ox) {
  const auto extent = [&](long start, long k, long n, long pad) {
    return tessera_pool_extent(int32_t(start), int32_t(k), int32_t(n), int32_t(pad), g.include);
  };
  return float(extent(oy * g.sh - g.ph, g.KH, g.H, g.ph) *
               extent(ox * g.sw - g.pw, g.KW, g.W, g.pw));
}

/// avgPool2d: sum from +0 over the window's rows then columns, / avgPoolDivisor.
inline std::vector<float> avgPool2d(const PoolGeom& g, const std::vector<float>& x) {
  std::vector<float> y(size_t(g.N * g.C * g.OH * g.OW));
  for (long p = 0; p < g.N * g.C; ++p)
    for (long oy = 0; oy < g.OH; ++oy)
      for (long ox = 0; ox < g.OW; ++ox) {
        float s = 0.0f;
        for (long iy = oy * g.sh - g.ph; iy < oy * g.sh - g.ph + g.KH; ++iy)
          for (long ix = ox * g.sw - g.pw; ix < ox * g.sw - g.pw + g.KW; ++ix)
            if (iy >= 0 && iy < g.H && ix >= 0 && ix < g.W)
              s += x[size_t((p * g.H + iy) * g.W + ix)];
        y[size_t((p * g.OH + oy) * g.OW + ox)] = s / avgPoolDivisor(g, oy, ox);
      }
  return y;
}

/// avgPool2dBackward: each input element += gradOut / avgPoolDivisor over its windows in output
/// order.
inline std::vector<float> avgPool2dBackward(const PoolGeom& g, const std::vector<float>& dy) {
  std::vector<float> dx(size_t(g.N * g.C * g.H * g.W), 0.0f);
  for (long p = 0; p < g.N * g.C; ++p)
    for (long oy = 0; oy < g.OH; ++oy)
      for (long ox = 0; ox < g.OW; ++ox) {
        const float d = dy[size_t((p * g.OH + oy) * g.OW + ox)] / avgPoolDivisor(g, oy, ox);
        for (long iy = oy * g.sh - g.ph; iy < oy * g.sh - g.ph + g.KH; ++iy)
          for (long ix = ox * g.sw - g.pw; ix < ox * g.sw - g.pw + g.KW; ++ix)
            if (iy >= 0 && iy < g.H && ix >= 0 && ix < g.W) {
              float& t = dx[size_t((p * g.H + iy) * g.W + ix)];
              t = t + d;
            }
      }
  return dx;
}

}  // namespace tessera::ops::reference
