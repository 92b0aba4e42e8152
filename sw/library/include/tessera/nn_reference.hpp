// Host references of the tessera/nn.hpp ops the autodiff layer differentiates: the same operations
// in the same order as the codelets (as sw/library/tests/nn_test.cpp checks them; docs/library.md,
// "Layers"), so that a gradient from the tape can be compared bit for bit, and double-precision
// forwards for the finite differences. Shared by the library and autodiff tests and the benchmark's
// CPU references (bench/train/cpu_resnet_tiny.cpp, cpu_transformer_tiny.cpp). Compile with
// -ffp-contract=off.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "tessera/mathf.h"
#include "tessera/ops.hpp"
#include "tessera/pad.hpp"
#include "tessera/philox.h"

namespace tessera::autodiff::gradcheck::nnref {

using Floats = std::vector<float>;
using Doubles = std::vector<double>;

/// Index (o, j, i) of a tensor viewed as [outer, len, inner] around an axis.
struct AxisView {
  size_t outer = 1, len = 1, inner = 1;
  AxisView(const std::vector<size_t>& shape, size_t axis) {
    for (size_t d = 0; d < shape.size(); ++d)
      (d < axis ? outer : d == axis ? len : inner) *= shape[d];
  }
  size_t at(size_t o, size_t j, size_t i) const { return (o * len + j) * inner + i; }
};

/// gelu (the Gelu codelet, erf form): x * 0.5 * (1 + erf(x * 0.707106781)), left to right.
inline Floats gelu(const Floats& x) {
  Floats y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = x[i] * 0.5f * (1.0f + tessera_erff(x[i] * 0.707106781f));
  return y;
}

/// geluBackward (the GeluGrad codelet) at the input x: dy (cdf + x pdf), cdf = 0.5 (1 + erf(x /
/// sqrt 2)), pdf = e^(-x^2 / 2) / sqrt(2 pi), PyTorch's order.
inline Floats geluGrad(const Floats& dy, const Floats& x) {
  Floats dx(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float cdf = 0.5f * (1.0f + tessera_erff(x[i] * 0.707106781f));
    const float pdf = tessera_expf(x[i] * x[i] * -0.5f) * 0.398942280f;
    dx[i] = dy[i] * (cdf + x[i] * pdf);
  }
  return dx;
}

/// dropout (the Dropout codelet; its backward is the same op on the gradient) of a tensor of
/// x.size() elements under the seed tensor's (key, step) and stream: element i is kept when its
/// Philox word is >= floor(p 2^32), and then multiplied by 1 / (1 - p); 0 otherwise (ops::dropout's
/// threshold and scale, p < 1).
inline Floats dropout(const Floats& x, uint32_t key, uint32_t step, float p, uint32_t stream) {
  const uint32_t threshold = static_cast<uint32_t>(std::floor(double{p} * 4294967296.0));
  const float scale = 1.0f / (1.0f - p);
  Floats y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const bool keep = tessera_random_word(key, step, stream, static_cast<uint32_t>(i)) >= threshold;
    y[i] = keep ? x[i] * scale : 0.0f;
  }
  return y;
}

/// softmax (or log-softmax) along axis: max, sum of e^(x - max), then each element.
inline Floats softmax(const Floats& x, const std::vector<size_t>& shape, size_t axis, bool log) {
  const AxisView v(shape, axis);
  Floats y(x.size());
  for (size_t o = 0; o < v.outer; ++o) {
    for (size_t i = 0; i < v.inner; ++i) {
      float mx = x[v.at(o, 0, i)];
      for (size_t j = 1; j < v.len; ++j) mx = x[v.at(o, j, i)] > mx ? x[v.at(o, j, i)] : mx;
      float sum = 0.0f;
      for (size_t j = 0; j < v.len; ++j) sum += tessera_expf(x[v.at(o, j, i)] - mx);
      for (size_t j = 0; j < v.len; ++j) {
        const float xj = x[v.at(o, j, i)];
        y[v.at(o, j, i)] = log ? (xj - mx) - tessera_logf(sum) : tessera_expf(xj - mx) / sum;
      }
    }
  }
  return y;
}

/// softmaxBackward / logSoftmaxBackward from the output y.
inline Floats softmaxGrad(const Floats& dy, const Floats& y, const std::vector<size_t>& shape,
                          size_t axis, bool log) {
  const AxisView v(shape, axis);
  Floats dx(y.size());
  for (size_t o = 0; o < v.outer; ++o) {
    for (size_t i = 0; i < v.inner; ++i) {
      float s = 0.0f;
      for (size_t j = 0; j < v.len; ++j)
        s += log ? dy[v.at(o, j, i)] : dy[v.at(o, j, i)] * y[v.at(o, j, i)];
      for (size_t j = 0; j < v.len; ++j) {
        const size_t k = v.at(o, j, i);
        dx[k] = log ? dy[k] - tessera_expf(y[k]) * s : y[k] * (dy[k] - s);
      }
    }
  }
  return dx;
}

/// softmax (or log-softmax) in double.
inline Doubles softmaxDouble(const Doubles& x, const std::vector<size_t>& shape, size_t axis,
                             bool log) {
  const AxisView v(shape, axis);
  Doubles y(x.size());
  for (size_t o = 0; o < v.outer; ++o) {
    for (size_t i = 0; i < v.inner; ++i) {
      double sum = 0.0;
      for (size_t j = 0; j < v.len; ++j) sum += std::exp(x[v.at(o, j, i)]);
      for (size_t j = 0; j < v.len; ++j) {
        const size_t k = v.at(o, j, i);
        y[k] = log ? x[k] - std::log(sum) : std::exp(x[k]) / sum;
      }
    }
  }
  return y;
}

/// A normalisation's forward (with the statistics it used: per row or channel) and gradients.
struct Norm {
  Floats out, mean, invStd, dx, dw, db, runMean, runVar;
};

/// layerNorm over rows of len and layerNormBackward with gradient dy.
inline Norm layerNorm(const Floats& x, const Floats& w, const Floats& b, const Floats& dy,
                      size_t len, float eps) {
  const size_t rows = x.size() / len;
  const float fn = static_cast<float>(len);
  Norm r;
  r.out.resize(x.size());
  r.dx.resize(x.size());
  Floats gx(x.size());
  for (size_t i = 0; i < rows; ++i) {
    const float* xr = &x[i * len];
    float s = 0.0f;
    for (size_t j = 0; j < len; ++j) s += xr[j];
    const float m = s / fn;
    float v = 0.0f;
    for (size_t j = 0; j < len; ++j) v += (xr[j] - m) * (xr[j] - m);
    const float rs = 1.0f / std::sqrt(v / fn + eps);
    for (size_t j = 0; j < len; ++j) r.out[i * len + j] = (xr[j] - m) * rs * w[j] + b[j];
    r.mean.push_back(m);
    r.invStd.push_back(rs);
    float s1 = 0.0f, s2 = 0.0f;
    for (size_t j = 0; j < len; ++j) {
      const float g = dy[i * len + j] * w[j];
      const float xh = (xr[j] - m) * rs;
      s1 += g;
      s2 += g * xh;
      gx[i * len + j] = dy[i * len + j] * xh;
    }
    const float a = s1 / fn, bb = s2 / fn;
    for (size_t j = 0; j < len; ++j)
      r.dx[i * len + j] = ((dy[i * len + j] * w[j] - a) - (xr[j] - m) * rs * bb) * rs;
  }
  // Column sums of gxhat and dy, rows in order (reduceSum along axis 0).
  for (size_t j = 0; j < len; ++j) {
    float sw = gx[j], sb = dy[j];
    for (size_t i = 1; i < rows; ++i) sw += gx[i * len + j], sb += dy[i * len + j];
    r.dw.push_back(sw);
    r.db.push_back(sb);
  }
  return r;
}

/// layerNorm in double.
inline Doubles layerNormDouble(const Doubles& x, const Doubles& w, const Doubles& b, size_t len,
                               double eps) {
  Doubles y(x.size());
  for (size_t i = 0; i < x.size() / len; ++i) {
    double m = 0.0, v = 0.0;
    for (size_t j = 0; j < len; ++j) m += x[i * len + j];
    m /= static_cast<double>(len);
    for (size_t j = 0; j < len; ++j) v += (x[i * len + j] - m) * (x[i * len + j] - m);
    v /= static_cast<double>(len);
    for (size_t j = 0; j < len; ++j)
      y[i * len + j] = (x[i * len + j] - m) / std::sqrt(v + eps) * w[j] + b[j];
  }
  return y;
}

/// batchNormTraining (training) or batchNormInference and batchNormBackward of x [n, c, s]: each
/// channel's values (n-major, then spatial) in `parts` parts as ops::batchNormParts splits them,
/// partial sums from 0 left to right, added in part order; running statistics updated with
/// momentum (PyTorch's) and the unbiased variance.
inline Norm batchNorm(const Floats& x, const Floats& w, const Floats& b, const Floats& dy,
                      const Floats& rm, const Floats& rv, size_t n, size_t c, size_t s, float eps,
                      float momentum, bool training, size_t parts) {
  Norm r;
  r.out.resize(x.size());
  r.dx.resize(x.size());
  const size_t len = n * s;
  const float fn = static_cast<float>(len);
  auto total = [&](const std::function<float(size_t)>& term) {
    float t = 0.0f;
    for (size_t k = 0; k < parts; ++k) {
      float p = 0.0f;
      for (size_t j = len * k / parts; j < len * (k + 1) / parts; ++j) p += term(j);
      t = k == 0 ? p : t + p;
    }
    return t;
  };
  for (size_t ch = 0; ch < c; ++ch) {
    Floats row, g;
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < s; ++k)
        row.push_back(x[(i * c + ch) * s + k]), g.push_back(dy[(i * c + ch) * s + k]);
    }
    float m, is;
    if (training) {
      m = total([&](size_t j) { return row[j]; }) / fn;
      const float vb = total([&](size_t j) { return (row[j] - m) * (row[j] - m); }) / fn;
      is = 1.0f / std::sqrt(vb + eps);
      const float ub = fn / static_cast<float>(len - 1);
      r.runMean.push_back(momentum * m + (1.0f - momentum) * rm[ch]);
      r.runVar.push_back(momentum * (vb * ub) + (1.0f - momentum) * rv[ch]);
    } else {
      m = rm[ch];
      is = 1.0f / std::sqrt(rv[ch] + eps);
    }
    r.mean.push_back(m);
    r.invStd.push_back(is);
    const float s1 = total([&](size_t j) { return g[j]; });
    const float s2 = total([&](size_t j) { return g[j] * ((row[j] - m) * is); });
    r.db.push_back(s1);
    r.dw.push_back(s2);
    const float a = (s1 / fn) * w[ch], bb = (s2 / fn) * w[ch];
    for (size_t j = 0; j < len; ++j) {
      const size_t at = ((j / s) * c + ch) * s + j % s;
      r.out[at] = (row[j] - m) * is * w[ch] + b[ch];
      r.dx[at] = training ? ((g[j] * w[ch] - a) - (row[j] - m) * is * bb) * is : g[j] * w[ch] * is;
    }
  }
  return r;
}

/// Batch normalisation in double: with the batch statistics (training) or the given ones.
inline Doubles batchNormDouble(const Doubles& x, const Doubles& w, const Doubles& b, size_t n,
                               size_t c, size_t s, double eps, const Doubles* rm = nullptr,
                               const Doubles* rv = nullptr) {
  Doubles y(x.size());
  for (size_t ch = 0; ch < c; ++ch) {
    double m = 0.0, v = 0.0;
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < s; ++k) m += x[(i * c + ch) * s + k];
    }
    m /= static_cast<double>(n * s);
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < s; ++k)
        v += (x[(i * c + ch) * s + k] - m) * (x[(i * c + ch) * s + k] - m);
    }
    v /= static_cast<double>(n * s);
    if (rm) m = (*rm)[ch], v = (*rv)[ch];
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < s; ++k) {
        y[(i * c + ch) * s + k] =
            (x[(i * c + ch) * s + k] - m) / std::sqrt(v + eps) * w[ch] + b[ch];
      }
    }
  }
  return y;
}

/// One matmul as ops::matmul computes it: the plan's k parts, fused multiply-adds in k order,
/// parts added in order.
inline Floats matmul(const Graph& g, const float* a, const float* b, size_t m, size_t k, size_t n,
                     bool ta, bool tb) {
  const ops::MatMulPlan plan = ops::planMatMul(g, m, k, n);
  const size_t per = (k + plan.k - 1) / plan.k;
  Floats c(m * n);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      float total = 0;
      for (size_t p = 0; p < plan.k; ++p) {
        float s = 0.0f;
        for (size_t q = p * per; q < std::min(k, (p + 1) * per); ++q) {
          s = std::fmaf(ta ? a[q * m + i] : a[i * k + q], tb ? b[j * k + q] : b[q * n + j], s);
        }
        total = p == 0 ? s : total + s;
      }
      c[i * n + j] = total;
    }
  }
  return c;
}

/// batchMatMul: one matmul per batch.
inline Floats batchMatMul(const Graph& g, const Floats& a, const Floats& b, size_t batch, size_t m,
                          size_t k, size_t n, bool ta, bool tb) {
  Floats c;
  for (size_t i = 0; i < batch; ++i) {
    const Floats ci = matmul(g, &a[i * m * k], &b[i * k * n], m, k, n, ta, tb);
    c.insert(c.end(), ci.begin(), ci.end());
  }
  return c;
}

/// batchMatMul in double.
inline Doubles batchMatMulDouble(const Doubles& a, const Doubles& b, size_t batch, size_t m,
                                 size_t k, size_t n, bool ta, bool tb) {
  Doubles c(batch * m * n, 0.0);
  for (size_t z = 0; z < batch; ++z) {
    const double* az = &a[z * m * k];
    const double* bz = &b[z * k * n];
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        for (size_t q = 0; q < k; ++q) {
          c[(z * m + i) * n + j] +=
              (ta ? az[q * m + i] : az[i * k + q]) * (tb ? bz[j * k + q] : bz[q * n + j]);
        }
      }
    }
  }
  return c;
}

/// The element of x along one dimension (of n, padded by b before it) that padded position p
/// holds in ops::pad's Reflect and Edge modes (p inside [b, b + n): p - b).
inline size_t padSource(size_t p, size_t b, size_t n, ops::PadMode mode) {
  if (p >= b && p < b + n) return p - b;
  if (p < b) return mode == ops::PadMode::Reflect ? b - p : 0;
  const size_t beyond = p - (b + n - 1);
  return mode == ops::PadMode::Reflect ? n - 1 - beyond : n - 1;
}

/// ops::pad: every result element the input element it copies (or value, Constant's border).
inline Floats pad(const Floats& x, const std::vector<size_t>& shape,
                  const std::vector<size_t>& begin, const std::vector<size_t>& end,
                  ops::PadMode mode, float value) {
  std::vector<size_t> out = shape;
  size_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d) count *= (out[d] += begin[d] + end[d]);
  Floats y(count);
  for (size_t i = 0; i < count; ++i) {
    size_t rest = i, src = 0, stride = 1;
    bool border = false;
    for (size_t d = shape.size(); d-- > 0;) {
      const size_t p = rest % out[d];
      rest /= out[d];
      border = border || p < begin[d] || p >= begin[d] + shape[d];
      src += padSource(p, begin[d], shape[d], mode) * stride;
      stride *= shape[d];
    }
    y[i] = mode == ops::PadMode::Constant && border ? value : x[src];
  }
  return y;
}

/// ops::padGrad, in its order: g (of the padded shape) folded axis by axis from the last; along
/// axis d, over [0, padded) on the axes before d and the input's extent on those after it, each
/// border plane added into the plane it copies (source + border), the begin side from the input
/// outwards, then the end side; the result is the interior.
inline Floats padGrad(const Floats& g, const std::vector<size_t>& shape,
                      const std::vector<size_t>& begin, const std::vector<size_t>& end,
                      ops::PadMode mode) {
  const size_t rank = shape.size();
  std::vector<size_t> out = shape;
  for (size_t d = 0; d < rank; ++d) out[d] += begin[d] + end[d];
  Floats acc = g;
  auto flat = [&](const std::vector<size_t>& idx) {
    size_t i = 0;
    for (size_t d = 0; d < rank; ++d) i = i * out[d] + idx[d];
    return i;
  };
  // Every index of the region: axes before d over [0, out), d fixed, axes after d interior.
  auto forEach = [&](size_t d, size_t at, const std::function<void(std::vector<size_t>&)>& f) {
    std::vector<size_t> lo(rank), hi(rank), idx(rank);
    for (size_t a = 0; a < rank; ++a) {
      lo[a] = a < d ? 0 : a == d ? at : begin[a];
      hi[a] = a < d ? out[a] : a == d ? at + 1 : begin[a] + shape[a];
      if (lo[a] >= hi[a]) return;
      idx[a] = lo[a];
    }
    for (;;) {
      f(idx);
      size_t a = rank;
      while (a-- > 0) {
        if (++idx[a] < hi[a]) break;
        idx[a] = lo[a];
      }
      if (a == static_cast<size_t>(-1)) return;
    }
  };
  if (mode != ops::PadMode::Constant) {
    for (size_t d = rank; d-- > 0;) {
      const size_t b = begin[d], n = shape[d];
      auto fold = [&](size_t p) {
        const size_t src = b + padSource(p, b, n, mode);
        forEach(d, p, [&](std::vector<size_t>& idx) {
          const size_t from = flat(idx);
          idx[d] = src;
          const size_t to = flat(idx);
          idx[d] = p;
          acc[to] = acc[to] + acc[from];
        });
      };
      for (size_t p = b; p-- > 0;) fold(p);
      for (size_t p = b + n; p < b + n + end[d]; ++p) fold(p);
    }
  }
  Floats dx;
  std::vector<size_t> idx(rank, 0);
  size_t count = 1;
  for (size_t d = 0; d < rank; ++d) count *= shape[d];
  for (size_t i = 0; i < count; ++i) {
    size_t rest = i;
    for (size_t d = rank; d-- > 0;) {
      idx[d] = begin[d] + rest % shape[d];
      rest /= shape[d];
    }
    dx.push_back(acc[flat(idx)]);
  }
  return dx;
}

}  // namespace tessera::autodiff::gradcheck::nnref
