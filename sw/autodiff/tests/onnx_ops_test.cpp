// Gradient checks of the ONNX ops of the autodiff layer (ops_math.cpp, and the ONNX forms of
// MatMul, Gemm, the reductions and the shape ops) on every backend of the one backend list: each
// forward and gradient equals a host reference of the same operation order bit for bit and
// agrees with a central finite difference of a double-precision forward (gradient_check.hpp).
// Shapes that are multiples of nothing, NumPy broadcasting both ways, rank-0 and unmapped
// constants, negative axes, keepdims 0 and 1. Also the graph-building errors of these ops.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "autodiff_util.hpp"
#include "gradient_check.hpp"
#include "tessera/autodiff.hpp"
#include "tessera/error.hpp"
#include "tessera/mathf.h"
#include "tessera/nn_reference.hpp"
#include "tessera/pad.hpp"

namespace tessera::autodiff {
namespace {

using namespace gradcheck;
using Shape = std::vector<size_t>;

size_t count(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), size_t{1}, std::multiplies<>());
}

// For each element of the broadcast shape `out` (row-major), the element of `in` it reads.
std::vector<size_t> broadcastIndex(const Shape& in, const Shape& out) {
  std::vector<size_t> map(count(out));
  const size_t lead = out.size() - in.size();
  for (size_t i = 0; i < map.size(); ++i) {
    size_t rest = i, src = 0, stride = 1;
    for (size_t d = out.size(); d-- > 0;) {
      const size_t idx = rest % out[d];
      rest /= out[d];
      if (d >= lead) {
        const size_t n = in[d - lead];
        if (n != 1) src += idx * stride;
        stride *= n;
      }
    }
    map[i] = src;
  }
  return map;
}

// t (of the broadcast shape) summed into the elements it was broadcast from, each in row-major
// order of the result from the first: ops::reduceToShape's order.
Floats reduceTo(const Floats& t, const std::vector<size_t>& map, size_t n) {
  Floats acc(n, 0.0f);
  std::vector<bool> started(n, false);
  for (size_t i = 0; i < t.size(); ++i) {
    acc[map[i]] = started[map[i]] ? acc[map[i]] + t[i] : t[i];
    started[map[i]] = true;
  }
  return acc;
}

class OnnxOpsTest : public GradientCheckTest {
 protected:
  /// A float32 variable mapped linearly with random values in [lo, hi].
  Tensor ranged(const Shape& shape, const std::string& name, uint32_t seed, float lo, float hi) {
    Tensor t = ops::createLinear(graph, ElemType::Float32, shape, name);
    return initialise(t, randomFloats(t.numElements(), seed, lo, hi));
  }
  /// An unmapped constant (as an importer makes one) with random values in [lo, hi].
  Tensor constant(const Shape& shape, const std::string& name, uint32_t seed, float lo, float hi) {
    const Floats v = randomFloats(count(shape), seed, lo, hi);
    values[name] = v;
    return graph.addConstant(shape, v, name);
  }
};

// ---- Add, Sub, Mul, Div, Pow with broadcasting.

TEST_P(OnnxOpsTest, BroadcastBinaryOpsAndTheirGradients) {
  struct Case {
    std::string op;
    Shape a, b;
    bool aConst, bConst;
    float lo[2], hi[2];
  };
  const std::vector<Case> cases = {
      {"Add", {2, 1, 4}, {3, 1}, false, false, {-2, -2}, {2, 2}},
      {"Add", {2, 3}, {2, 3}, false, false, {-2, -2}, {2, 2}},
      {"Sub", {3, 5, 7}, {}, false, true, {-2, -2}, {2, 2}},
      {"Sub", {7}, {3, 5, 7}, false, false, {-2, -2}, {2, 2}},
      {"Sub", {}, {2, 3}, true, false, {-2, -2}, {2, 2}},
      {"Add", {3, 4}, {}, false, true, {-2, -2}, {2, 2}},
      {"Add", {1}, {3, 4}, true, false, {-2, -2}, {2, 2}},
      {"Mul", {3, 1}, {2, 1, 4}, false, false, {-2, -2}, {2, 2}},
      {"Mul", {3, 5, 7}, {}, false, true, {-2, -2}, {2, 2}},
      {"Mul", {1}, {2, 3}, true, false, {-2, -2}, {2, 2}},
      {"Div", {2, 3, 4}, {4}, false, false, {-2, 0.5f}, {2, 2}},
      {"Div", {3, 5}, {1}, false, true, {-2, 0.5f}, {2, 2}},
      {"Div", {}, {2, 3}, true, false, {-2, 0.5f}, {2, 2}},
      {"Pow", {3, 4}, {}, false, true, {-2, 2}, {2, 2}},
      {"Pow", {2, 3}, {3}, false, false, {0.5f, -1.5f}, {2, 1.5f}},
      {"Pow", {5}, {1}, false, true, {0.5f, 0.5f}, {2, 0.5f}},
      // Compact broadcasts (BinaryBroadcast): a trailing block (a per-row statistic), the
      // broadcast operand first, a middle block, and one that wraps within a vertex's chunk.
      {"Sub", {3, 5, 7}, {3, 5, 1}, false, false, {-2, -2}, {2, 2}},
      {"Div", {3, 5, 1}, {3, 5, 7}, false, false, {-2, 0.5f}, {2, 2}},
      {"Mul", {1, 5, 1}, {3, 5, 7}, false, false, {-2, -2}, {2, 2}},
      {"Pow", {4, 6, 5}, {6, 1}, false, false, {0.5f, -1.5f}, {2, 1.5f}},
  };
  std::vector<std::pair<std::string, Tensor>> outs;
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    const std::string id = std::to_string(c);
    const uint32_t s = 100 + 10 * static_cast<uint32_t>(c);
    Value v[2];
    std::vector<Value> wrt;
    for (size_t i = 0; i < 2; ++i) {
      const std::string name = (i == 0 ? "a" : "b") + id;
      const Shape& shape = i == 0 ? k.a : k.b;
      const bool isConst = i == 0 ? k.aConst : k.bConst;
      if (k.op == "Pow" && isConst) {
        // Pow(x, 2) and Pow(x, 0.5) as exported: exact exponents, not random ones.
        values[name] = Floats(count(shape), k.lo[i]);
        v[i] = tape.input(graph.addConstant(shape, values[name], name));
      } else {
        v[i] = isConst ? tape.input(constant(shape, name, s + i, k.lo[i], k.hi[i]))
                       : tape.parameter(ranged(shape, name, s + i, k.lo[i], k.hi[i]));
      }
      if (!isConst) wrt.push_back(v[i]);
    }
    const Value y = tape.apply1(k.op, {v[0], v[1]}, {}, k.op + id);
    const Tensor seed = variable(y.tensor().shape(), "seed" + id, s + 5);
    const std::vector<Tensor> g = tape.gradients(y, seed, wrt, bwd, "bwd" + id);
    outs.emplace_back("y" + id, y.tensor());
    size_t gi = 0;
    if (!k.aConst) outs.emplace_back("da" + id, g[gi++]);
    if (!k.bConst) outs.emplace_back("db" + id, g[gi++]);
  }
  auto out = run(outs);
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    const std::string id = std::to_string(c);
    SCOPED_TRACE(fmt::format("{} [{}] [{}]", k.op, fmt::join(k.a, ","), fmt::join(k.b, ",")));
    const Floats &a = values["a" + id], &b = values["b" + id], &dy = values["seed" + id];
    const Shape shape = ops::broadcastShape(k.a, k.b, "test");
    const std::vector<size_t> ma = broadcastIndex(k.a, shape), mb = broadcastIndex(k.b, shape);
    Floats y(count(shape)), ga(y.size()), gb(y.size());
    for (size_t i = 0; i < y.size(); ++i) {
      const float x0 = a[ma[i]], x1 = b[mb[i]], g = dy[i];
      if (k.op == "Add") y[i] = x0 + x1, ga[i] = g, gb[i] = g;
      if (k.op == "Sub") y[i] = x0 - x1, ga[i] = g, gb[i] = g;
      if (k.op == "Mul") y[i] = x0 * x1, ga[i] = g * x1, gb[i] = g * x0;
      if (k.op == "Div") y[i] = x0 / x1, ga[i] = g / x1, gb[i] = -(g * (y[i] / x1));
      if (k.op == "Pow") {
        y[i] = tessera_powf(x0, x1);
        ga[i] = x1 == 0.0f ? 0.0f : g * (x1 * tessera_powf(x0, x1 - 1.0f));
        gb[i] = x0 == 0.0f && x1 >= 0.0f ? 0.0f : g * (y[i] * tessera_logf(x0));
      }
    }
    expectBitEqual(out["y" + id], y, "forward");
    auto f = [&](const std::vector<Doubles>& in) {
      double total = 0;
      for (size_t i = 0; i < ma.size(); ++i) {
        const double x0 = in[0][ma[i]], x1 = in[1][mb[i]];
        double r = 0;
        if (k.op == "Add") r = x0 + x1;
        if (k.op == "Sub") r = x0 - x1;
        if (k.op == "Mul") r = x0 * x1;
        if (k.op == "Div") r = x0 / x1;
        if (k.op == "Pow") r = std::pow(x0, x1);
        total += double{dy[i]} * r;
      }
      return total;
    };
    const std::vector<Doubles> in = {toDouble(a), toDouble(b)};
    if (!k.aConst) {
      const Floats want = reduceTo(ga, ma, count(k.a));
      expectBitEqual(out["da" + id], want, "da");
      expectNearFiniteDifference(out["da" + id], f, in, 0, "da");
    }
    if (!k.bConst) {
      Floats want = reduceTo(gb, mb, count(k.b));
      if (k.op == "Sub") {
        for (float& w : want) w = -w;
      }
      expectBitEqual(out["db" + id], want, "db");
      expectNearFiniteDifference(out["db" + id], f, in, 1, "db");
    }
  }
}

// ---- Sqrt, Exp, Log, Reciprocal, Erf, Neg, Identity.

TEST_P(OnnxOpsTest, UnaryOpsAndTheirGradients) {
  const Shape shape = {3, 5};
  const std::vector<std::string> types = {"Sqrt", "Exp", "Log",     "Reciprocal",
                                          "Erf",  "Neg", "Identity"};
  std::vector<std::pair<std::string, Tensor>> outs;
  for (size_t c = 0; c < types.size(); ++c) {
    const std::string id = std::to_string(c);
    const bool positive = c < 4;
    const Value x = tape.parameter(
        ranged(shape, "x" + id, 200 + static_cast<uint32_t>(c), positive ? 0.5f : -2.0f, 2.0f));
    const Value y = tape.apply1(types[c], {x}, {}, types[c] + id);
    const Tensor seed = variable(shape, "seed" + id, 220 + static_cast<uint32_t>(c));
    outs.emplace_back("y" + id, y.tensor());
    outs.emplace_back("dx" + id, tape.gradients(y, seed, {x}, bwd, "bwd" + id)[0]);
  }
  auto out = run(outs);
  for (size_t c = 0; c < types.size(); ++c) {
    const std::string& type = types[c];
    const std::string id = std::to_string(c);
    SCOPED_TRACE(type);
    const Floats &x = values["x" + id], &dy = values["seed" + id];
    Floats y(x.size()), dx(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const float v = x[i], g = dy[i];
      if (type == "Sqrt") y[i] = tessera_sqrtf(v), dx[i] = g / (2.0f * y[i]);
      if (type == "Exp") y[i] = tessera_expf(v), dx[i] = g * y[i];
      if (type == "Log") y[i] = tessera_logf(v), dx[i] = g / v;
      if (type == "Reciprocal") y[i] = 1.0f / v, dx[i] = -(g * (y[i] * y[i]));
      if (type == "Erf") y[i] = tessera_erff(v), dx[i] = 1.12837917f * tessera_expf(-(v * v)) * g;
      if (type == "Neg") y[i] = v * -1.0f, dx[i] = g * -1.0f;
      if (type == "Identity") y[i] = v, dx[i] = g;
    }
    expectBitEqual(out["y" + id], y, "forward");
    expectBitEqual(out["dx" + id], dx, "dx");
    expectNearFiniteDifference(
        out["dx" + id],
        [&](const std::vector<Doubles>& in) {
          double total = 0;
          for (size_t i = 0; i < in[0].size(); ++i) {
            const double v = in[0][i];
            double r = v;
            if (type == "Sqrt") r = std::sqrt(v);
            if (type == "Exp") r = std::exp(v);
            if (type == "Log") r = std::log(v);
            if (type == "Reciprocal") r = 1.0 / v;
            if (type == "Erf") r = std::erf(v);
            if (type == "Neg") r = -v;
            total += double{dy[i]} * r;
          }
          return total;
        },
        {toDouble(x)}, 0, "dx");
  }
}

// ---- Clip: min and max (relu6, hardtanh), min only (an absent max is no bound).

TEST_P(OnnxOpsTest, ClipAndItsGradient) {
  const Shape shape = {4, 6};
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<float, float>> bounds = {{-0.5f, 1.0f}, {0.25f, inf}};
  std::vector<std::pair<std::string, Tensor>> outs;
  for (size_t c = 0; c < bounds.size(); ++c) {
    const std::string id = std::to_string(c);
    const Value x =
        tape.parameter(ranged(shape, "x" + id, 260 + static_cast<uint32_t>(c), -2.0f, 2.0f));
    Attributes at{{"min", double{bounds[c].first}}};
    if (bounds[c].second != inf) at["max"] = double{bounds[c].second};
    const Value y = tape.apply1("Clip", {x}, at, "clip" + id);
    const Tensor seed = variable(shape, "seed" + id, 270 + static_cast<uint32_t>(c));
    outs.emplace_back("y" + id, y.tensor());
    outs.emplace_back("dx" + id, tape.gradients(y, seed, {x}, bwd, "bwd" + id)[0]);
  }
  auto out = run(outs);
  for (size_t c = 0; c < bounds.size(); ++c) {
    const std::string id = std::to_string(c);
    const auto [lo, hi] = bounds[c];
    const Floats &x = values["x" + id], &dy = values["seed" + id];
    Floats y(x.size()), dx(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      y[i] = std::min(std::max(x[i], lo), hi);
      dx[i] = x[i] > lo && x[i] < hi ? dy[i] : 0.0f;
    }
    expectBitEqual(out["y" + id], y, "forward");
    expectBitEqual(out["dx" + id], dx, "dx");
    expectNearFiniteDifference(
        out["dx" + id],
        [&](const std::vector<Doubles>& in) {
          double total = 0;
          for (size_t i = 0; i < in[0].size(); ++i)
            total += double{dy[i]} * std::min(std::max(in[0][i], double{lo}), double{hi});
          return total;
        },
        {toDouble(x)}, 0, "dx");
  }
  Attributes bad{{"min", 1.0}, {"max", 0.0}};
  EXPECT_THROW(tape.apply1("Clip", {tape.parameter(variable(shape, "xb", 280))}, bad, "clipbad"),
               Error);
}

// ---- ReduceSum, ReduceMean, GlobalAveragePool.

TEST_P(OnnxOpsTest, ReductionsOverAnyAxes) {
  struct Case {
    std::string op;
    Shape shape;
    std::vector<int64_t> axes;
    int64_t keepdims;
  };
  const std::vector<Case> cases = {
      {"ReduceSum", {3, 5, 7}, {1}, 1},     {"ReduceMean", {3, 5, 7}, {0, 2}, 0},
      {"ReduceMean", {3, 5, 7}, {-1}, 1},   {"ReduceSum", {3, 5, 7}, {}, 0},
      {"ReduceSum", {2, 3, 4}, {0, -1}, 1}, {"GlobalAveragePool", {2, 3, 4, 5}, {}, 1},
      {"ReduceMean", {4, 1, 3}, {1}, 0},
  };
  std::vector<std::pair<std::string, Tensor>> outs;
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    const std::string id = std::to_string(c);
    const Value x = tape.parameter(variable(k.shape, "x" + id, 300 + static_cast<uint32_t>(c)));
    Attributes at;
    if (k.op != "GlobalAveragePool") at = {{"axes", k.axes}, {"keepdims", k.keepdims}};
    const Value y = tape.apply1(k.op, {x}, at, k.op + id);
    const Tensor seed = variable(y.tensor().shape(), "seed" + id, 320 + static_cast<uint32_t>(c));
    outs.emplace_back("y" + id, y.tensor());
    outs.emplace_back("dx" + id, tape.gradients(y, seed, {x}, bwd, "bwd" + id)[0]);
  }
  auto out = run(outs);
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    const std::string id = std::to_string(c);
    SCOPED_TRACE(
        fmt::format("{} [{}] axes [{}]", k.op, fmt::join(k.shape, ","), fmt::join(k.axes, ",")));
    std::vector<bool> reduced(k.shape.size(), k.axes.empty());
    for (int64_t a : k.axes)
      reduced[static_cast<size_t>(a < 0 ? a + int64_t(k.shape.size()) : a)] = true;
    if (k.op == "GlobalAveragePool") reduced = {false, false, true, true};
    Shape kept;
    size_t n = 1;
    for (size_t d = 0; d < k.shape.size(); ++d) {
      kept.push_back(reduced[d] ? 1 : k.shape[d]);
      if (reduced[d]) n *= k.shape[d];
    }
    // Each input element's result element; inputs visited in row-major order visit each result's
    // reduced indices in row-major order too.
    const std::vector<size_t> map = [&] {
      std::vector<size_t> m(count(k.shape));
      for (size_t i = 0; i < m.size(); ++i) {
        size_t rest = i, dst = 0, stride = 1;
        for (size_t d = k.shape.size(); d-- > 0;) {
          const size_t idx = rest % k.shape[d];
          rest /= k.shape[d];
          if (!reduced[d]) dst += idx * stride;
          stride *= kept[d];
        }
        m[i] = dst;
      }
      return m;
    }();
    const Floats &x = values["x" + id], &dy = values["seed" + id];
    const bool mean = k.op != "ReduceSum";
    Floats y = reduceTo(x, map, count(kept));
    if (mean) {
      for (float& v : y) v = v / static_cast<float>(n);
    }
    Floats dx(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      dx[i] = mean ? dy[map[i]] / static_cast<float>(n) : dy[map[i]];
    expectBitEqual(out["y" + id], y, "forward");
    expectBitEqual(out["dx" + id], dx, "dx");
    expectNearFiniteDifference(
        out["dx" + id],
        [&](const std::vector<Doubles>& in) {
          Doubles s(count(kept), 0.0);
          for (size_t i = 0; i < in[0].size(); ++i) s[map[i]] += in[0][i];
          double total = 0;
          for (size_t j = 0; j < s.size(); ++j)
            total += double{dy[j]} * (mean ? s[j] / double(n) : s[j]);
          return total;
        },
        {toDouble(x)}, 0, "dx");
  }
}

// ---- MatMul with numpy.matmul's shapes and Gemm.

// op(x) op(y) on the host as the backward computes it: from zero in k order (a block-mapped leaf's
// accumulation), or ops::matmul's plan.
Floats product(const Graph& g, const Floats& x, const Floats& y, size_t m, size_t k, size_t n,
               bool tx, bool ty, bool accumulate) {
  if (!accumulate) return nnref::matmul(g, x.data(), y.data(), m, k, n, tx, ty);
  Floats c(m * n);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      float s = 0.0f;
      for (size_t q = 0; q < k; ++q)
        s = std::fmaf(tx ? x[q * m + i] : x[i * k + q], ty ? y[j * k + q] : y[q * n + j], s);
      c[i * n + j] = s;
    }
  }
  return c;
}

Doubles productDouble(const Doubles& x, const Doubles& y, size_t batch, size_t m, size_t k,
                      size_t n, size_t strideX, size_t strideY, const std::vector<size_t>& bx,
                      const std::vector<size_t>& by) {
  Doubles c(batch * m * n, 0.0);
  for (size_t z = 0; z < batch; ++z) {
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        for (size_t q = 0; q < k; ++q)
          c[(z * m + i) * n + j] += x[bx[z] * strideX + i * k + q] * y[by[z] * strideY + q * n + j];
      }
    }
  }
  return c;
}

TEST_P(OnnxOpsTest, MatMulWithNumpyShapes) {
  struct Case {
    Shape a, b;
  };
  // N-D x 2-D (Linear on [B, S, D]), batch broadcasting, a 1-D a, a 1-D b.
  const std::vector<Case> cases = {
      {{2, 3, 4}, {4, 5}}, {{2, 1, 3, 4}, {3, 4, 2}}, {{4}, {4, 3}}, {{2, 3, 4}, {4}}};
  std::vector<std::pair<std::string, Tensor>> outs;
  std::vector<std::array<Value, 2>> vs;
  for (size_t c = 0; c < cases.size(); ++c) {
    const std::string id = std::to_string(c);
    const uint32_t s = 400 + 10 * static_cast<uint32_t>(c);
    const Value a = param(cases[c].a, "a" + id, s), b = param(cases[c].b, "b" + id, s + 1);
    const Value y = tape.apply1("MatMul", {a, b}, {}, "mm" + id);
    const Tensor seed = variable(y.tensor().shape(), "seed" + id, s + 2);
    const std::vector<Tensor> g = tape.gradients(y, seed, {a, b}, bwd, "bwd" + id);
    outs.emplace_back("y" + id, y.tensor());
    outs.emplace_back("da" + id, g[0]);
    outs.emplace_back("db" + id, g[1]);
    vs.push_back({a, b});
  }
  auto out = run(outs);
  for (size_t c = 0; c < cases.size(); ++c) {
    const std::string id = std::to_string(c);
    SCOPED_TRACE(
        fmt::format("[{}] x [{}]", fmt::join(cases[c].a, ","), fmt::join(cases[c].b, ",")));
    const Floats &a = values["a" + id], &b = values["b" + id], &dy = values["seed" + id];
    Floats y, da, db;
    std::function<double(const std::vector<Doubles>&)> f;
    if (c == 0 || c == 2 || c == 3) {
      // One 2-D product of a viewed as [m, k] with b as [k, n].
      const size_t k = cases[c].a.back(), m = a.size() / k, n = c == 3 ? 1 : cases[c].b.back();
      const bool accB = c != 3 && blockMapped(graph, vs[c][1].tensor());
      y = product(graph, a, b, m, k, n, false, false, false);
      da = product(graph, dy, b, m, n, k, false, true, false);
      db = product(graph, a, dy, k, m, n, true, false, accB);
      f = [=](const std::vector<Doubles>& in) {
        const Doubles r = productDouble(in[0], in[1], 1, m, k, n, 0, 0, {0}, {0});
        double t = 0;
        for (size_t i = 0; i < r.size(); ++i) t += double{dy[i]} * r[i];
        return t;
      };
    } else {
      // [2,1,3,4] x [3,4,2]: batches (i, j) of [2, 3] read a[i] and b[j].
      const size_t m = 3, k = 4, n = 2;
      std::vector<size_t> ba, bb;
      for (size_t i = 0; i < 2; ++i) {
        for (size_t j = 0; j < 3; ++j) ba.push_back(i), bb.push_back(j);
      }
      Floats dA(6 * m * k), dB(6 * k * n);
      for (size_t z = 0; z < 6; ++z) {
        const Floats yz =
            product(graph, Floats(a.begin() + ba[z] * m * k, a.begin() + (ba[z] + 1) * m * k),
                    Floats(b.begin() + bb[z] * k * n, b.begin() + (bb[z] + 1) * k * n), m, k, n,
                    false, false, false);
        y.insert(y.end(), yz.begin(), yz.end());
        const Floats gz(dy.begin() + z * m * n, dy.begin() + (z + 1) * m * n);
        const Floats az =
            product(graph, gz, Floats(b.begin() + bb[z] * k * n, b.begin() + (bb[z] + 1) * k * n),
                    m, n, k, false, true, false);
        const Floats bz =
            product(graph, Floats(a.begin() + ba[z] * m * k, a.begin() + (ba[z] + 1) * m * k), gz,
                    k, m, n, true, false, false);
        std::copy(az.begin(), az.end(), dA.begin() + z * m * k);
        std::copy(bz.begin(), bz.end(), dB.begin() + z * k * n);
      }
      da = reduceTo(dA, broadcastIndex({2, 1, m, k}, {2, 3, m, k}), a.size());
      db = reduceTo(dB, broadcastIndex({3, k, n}, {2, 3, k, n}), b.size());
      f = [=](const std::vector<Doubles>& in) {
        const Doubles r = productDouble(in[0], in[1], 6, m, k, n, m * k, k * n, ba, bb);
        double t = 0;
        for (size_t i = 0; i < r.size(); ++i) t += double{dy[i]} * r[i];
        return t;
      };
    }
    expectBitEqual(out["y" + id], y, "forward");
    expectBitEqual(out["da" + id], da, "da");
    expectBitEqual(out["db" + id], db, "db");
    expectNearFiniteDifference(out["da" + id], f, {toDouble(a), toDouble(b)}, 0, "da");
    expectNearFiniteDifference(out["db" + id], f, {toDouble(a), toDouble(b)}, 1, "db");
  }
}

TEST_P(OnnxOpsTest, GemmWithBiasScalesAndTransposes) {
  // PyTorch's Linear: A [5, 3], B [4, 3] (transB), C [4]; then alpha 0.5, beta 2, transA with a
  // C of [5, 1] broadcast along the columns.
  const Value a0 = param({5, 3}, "a0", 500), b0 = param({4, 3}, "b0", 501),
              c0 = param({4}, "c0", 502);
  const Value y0 = tape.apply1("Gemm", {a0, b0, c0}, {{"transB", int64_t{1}}}, "linear");
  const Value a1 = param({3, 5}, "a1", 510), b1 = param({3, 4}, "b1", 511),
              c1 = param({5, 1}, "c1", 512);
  const Value y1 = tape.apply1("Gemm", {a1, b1, c1},
                               {{"transA", int64_t{1}}, {"alpha", 0.5}, {"beta", 2.0}}, "gemm");
  const Tensor s0 = variable({5, 4}, "s0", 503), s1 = variable({5, 4}, "s1", 513);
  const std::vector<Tensor> g0 = tape.gradients(y0, s0, {a0, b0, c0}, bwd, "bwd0");
  const std::vector<Tensor> g1 = tape.gradients(y1, s1, {a1, b1, c1}, bwd, "bwd1");
  auto out = run({{"y0", y0.tensor()},
                  {"da0", g0[0]},
                  {"db0", g0[1]},
                  {"dc0", g0[2]},
                  {"y1", y1.tensor()},
                  {"da1", g1[0]},
                  {"db1", g1[1]},
                  {"dc1", g1[2]}});
  const size_t m = 5, k = 3, n = 4;
  {
    SCOPED_TRACE("linear");
    const Floats &a = values["a0"], &b = values["b0"], &c = values["c0"], &dy = values["s0"];
    Floats y = product(graph, a, b, m, k, n, false, true, false);
    for (size_t i = 0; i < y.size(); ++i) y[i] = y[i] + c[i % n];
    expectBitEqual(out["y0"], y, "forward");
    expectBitEqual(out["da0"],
                   product(graph, dy, b, m, n, k, false, false, blockMapped(graph, a0.tensor())),
                   "da");
    expectBitEqual(out["db0"],
                   product(graph, dy, a, n, m, k, true, false, blockMapped(graph, b0.tensor())),
                   "db");
    expectBitEqual(out["dc0"], reduceTo(dy, broadcastIndex({n}, {m, n}), n), "dc");
    auto f = [&](const std::vector<Doubles>& in) {
      double t = 0;
      for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
          double s = in[2][j];
          for (size_t q = 0; q < k; ++q) s += in[0][i * k + q] * in[1][j * k + q];
          t += double{dy[i * n + j]} * s;
        }
      }
      return t;
    };
    const std::vector<Doubles> in = {toDouble(a), toDouble(b), toDouble(c)};
    expectNearFiniteDifference(out["da0"], f, in, 0, "da");
    expectNearFiniteDifference(out["db0"], f, in, 1, "db");
    expectNearFiniteDifference(out["dc0"], f, in, 2, "dc");
  }
  {
    SCOPED_TRACE("alpha, beta, transA");
    const Floats &a = values["a1"], &b = values["b1"], &c = values["c1"], &dy = values["s1"];
    Floats y = product(graph, a, b, m, k, n, true, false, false);
    for (size_t i = 0; i < y.size(); ++i) y[i] = y[i] * 0.5f + c[i / n] * 2.0f;
    expectBitEqual(out["y1"], y, "forward");
    Floats ga(dy.size());
    for (size_t i = 0; i < dy.size(); ++i) ga[i] = dy[i] * 0.5f;
    expectBitEqual(out["da1"],
                   product(graph, b, ga, k, n, m, false, true, blockMapped(graph, a1.tensor())),
                   "da");
    expectBitEqual(out["db1"],
                   product(graph, a, ga, k, m, n, false, false, blockMapped(graph, b1.tensor())),
                   "db");
    Floats dc = reduceTo(dy, broadcastIndex({m, 1}, {m, n}), m);
    for (float& v : dc) v = v * 2.0f;
    expectBitEqual(out["dc1"], dc, "dc");
    auto f = [&](const std::vector<Doubles>& in) {
      double t = 0;
      for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
          double s = 0;
          for (size_t q = 0; q < k; ++q) s += in[0][q * m + i] * in[1][q * n + j];
          t += double{dy[i * n + j]} * (0.5 * s + 2.0 * in[2][i]);
        }
      }
      return t;
    };
    const std::vector<Doubles> in = {toDouble(a), toDouble(b), toDouble(c)};
    expectNearFiniteDifference(out["da1"], f, in, 0, "da");
    expectNearFiniteDifference(out["db1"], f, in, 1, "db");
    expectNearFiniteDifference(out["dc1"], f, in, 2, "dc");
  }
}

// ---- Reshape, Transpose, Squeeze, Unsqueeze, Flatten, Concat, Pad, Gather (constant indices),
// Identity: each result element is an input element (or Pad's constant), so the reference is a
// map from result elements to the inputs' elements (all inputs' elements in one row, in input
// order); each input element's gradient sums the gradients of the result elements that read it,
// the first copied, the others added in order (Gather's repeats), zero where none does.

TEST_P(OnnxOpsTest, ShapeOpsAndTheirGradients) {
  using Ints = std::vector<int64_t>;
  struct Case {
    std::string op;
    std::vector<Shape> inputs;
    Attributes attributes;
    Shape result;
    std::function<std::vector<long>()> map;  // source of each result element, -1: the constant
  };
  // Row-major index helpers.
  auto at = [](const Shape& s, const std::vector<size_t>& idx) {
    size_t i = 0;
    for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + idx[d];
    return i;
  };
  auto unravel = [](const Shape& s, size_t i) {
    std::vector<size_t> idx(s.size());
    for (size_t d = s.size(); d-- > 0;) idx[d] = i % s[d], i /= s[d];
    return idx;
  };
  auto identity = [](size_t n) {
    return [n] {
      std::vector<long> m(n);
      std::iota(m.begin(), m.end(), 0);
      return m;
    };
  };
  std::vector<Case> cases = {
      {"Reshape", {{2, 3, 4}}, {{"shape", Ints{0, -1}}}, {2, 12}, identity(24)},
      {"Reshape",
       {{2, 3, 4}},
       {{"shape", Ints{4, 0, 2}}, {"allowzero", int64_t{0}}},
       {4, 3, 2},
       identity(24)},
      {"Squeeze", {{3, 1, 4}}, {{"axes", Ints{-2}}}, {3, 4}, identity(12)},
      {"Unsqueeze", {{3, 4}}, {{"axes", Ints{0, -1}}}, {1, 3, 4, 1}, identity(12)},
      {"Flatten", {{2, 3, 4}}, {{"axis", int64_t{-1}}}, {6, 4}, identity(24)},
      {"Identity", {{3, 5}}, {}, {3, 5}, identity(15)},
      {"Transpose",
       {{2, 3, 4}},
       {{"perm", Ints{2, 0, 1}}},
       {4, 2, 3},
       [&] {
         std::vector<long> m;
         for (size_t i = 0; i < 24; ++i) {
           const auto o = unravel({4, 2, 3}, i);
           m.push_back(static_cast<long>(at({2, 3, 4}, {o[1], o[2], o[0]})));
         }
         return m;
       }},
      {"Concat",
       {{2, 3}, {2, 2}},
       {{"axis", int64_t{-1}}},
       {2, 5},
       [&] {
         std::vector<long> m;
         for (size_t r = 0; r < 2; ++r) {
           for (size_t c = 0; c < 5; ++c)
             m.push_back(static_cast<long>(c < 3 ? r * 3 + c : 6 + r * 2 + (c - 3)));
         }
         return m;
       }},
      {"Pad",
       {{2, 3}},
       {{"pads", Ints{1, 0, 0, 2}}, {"constant_value", 0.5}},
       {3, 5},
       [&] {
         std::vector<long> m;
         for (size_t r = 0; r < 3; ++r) {
           for (size_t c = 0; c < 5; ++c)
             m.push_back(r >= 1 && c < 3 ? static_cast<long>((r - 1) * 3 + c) : -1);
         }
         return m;
       }},
      {"Gather",
       {{3, 4, 2}},
       {{"axis", int64_t{1}}},
       {3, 3, 2},
       [&] {
         const size_t picks[3] = {2, 3, 2};  // indices [2, -1, 2]
         std::vector<long> m;
         for (size_t i = 0; i < 18; ++i) {
           const auto o = unravel({3, 3, 2}, i);
           m.push_back(static_cast<long>(at({3, 4, 2}, {o[0], picks[o[1]], o[2]})));
         }
         return m;
       }},
      {"Gather",
       {{3, 4}},
       {{"axis", int64_t{-1}}},
       {3},
       [&] {
         return std::vector<long>{1, 5, 9};  // a rank-0 index 1
       }},
  };
  std::vector<std::pair<std::string, Tensor>> outs;
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    const std::string id = std::to_string(c);
    std::vector<Value> ins, wrt;
    for (size_t i = 0; i < k.inputs.size(); ++i) {
      ins.push_back(param(k.inputs[i], fmt::format("x{}_{}", id, i),
                          600 + 10 * static_cast<uint32_t>(c) + static_cast<uint32_t>(i)));
      wrt.push_back(ins.back());
    }
    if (k.op == "Gather") {
      const std::vector<int32_t> idx =
          k.result.size() == 1 ? std::vector<int32_t>{1} : std::vector<int32_t>{2, -1, 2};
      const Shape ishape = k.result.size() == 1 ? Shape{} : Shape{3};
      ins.push_back(tape.input(graph.addConstant(ishape, idx, "idx" + id)));
    }
    const Value y = tape.apply1(k.op, ins, k.attributes, k.op + id);
    ASSERT_EQ(y.tensor().shape(), k.result) << k.op;
    const Tensor seed = variable(k.result, "seed" + id, 650 + static_cast<uint32_t>(c));
    const std::vector<Tensor> g = tape.gradients(y, seed, wrt, bwd, "bwd" + id);
    outs.emplace_back("y" + id, y.tensor());
    for (size_t i = 0; i < g.size(); ++i) outs.emplace_back(fmt::format("dx{}_{}", id, i), g[i]);
  }
  auto out = run(outs);
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    const std::string id = std::to_string(c);
    SCOPED_TRACE(fmt::format("{} {}", k.op, c));
    Floats x;
    std::vector<size_t> offsets;
    for (size_t i = 0; i < k.inputs.size(); ++i) {
      offsets.push_back(x.size());
      const Floats& v = values[fmt::format("x{}_{}", id, i)];
      x.insert(x.end(), v.begin(), v.end());
    }
    const std::vector<long> map = k.map();
    const Floats& dy = values["seed" + id];
    Floats y(map.size()), dx(x.size(), 0.0f);
    std::vector<bool> started(x.size(), false);
    for (size_t i = 0; i < map.size(); ++i) {
      if (map[i] < 0) {
        y[i] = 0.5f;
        continue;
      }
      const size_t src = static_cast<size_t>(map[i]);
      y[i] = x[src];
      dx[src] = started[src] ? dx[src] + dy[i] : dy[i];
      started[src] = true;
    }
    expectBitEqual(out["y" + id], y, "forward");
    for (size_t i = 0; i < k.inputs.size(); ++i) {
      const size_t end = i + 1 < offsets.size() ? offsets[i + 1] : x.size();
      const Floats want(dx.begin() + static_cast<long>(offsets[i]),
                        dx.begin() + static_cast<long>(end));
      expectBitEqual(out[fmt::format("dx{}_{}", id, i)], want, fmt::format("dx{}", i));
      std::vector<Doubles> in;
      for (size_t j = 0; j < k.inputs.size(); ++j)
        in.push_back(toDouble(values[fmt::format("x{}_{}", id, j)]));
      expectNearFiniteDifference(
          out[fmt::format("dx{}_{}", id, i)],
          [&](const std::vector<Doubles>& v) {
            double t = 0;
            for (size_t e = 0; e < map.size(); ++e) {
              if (map[e] < 0) {
                t += double{dy[e]} * 0.5;
                continue;
              }
              size_t src = static_cast<size_t>(map[e]), which = 0;
              while (which + 1 < offsets.size() && src >= offsets[which + 1]) ++which;
              t += double{dy[e]} * v[which][src - offsets[which]];
            }
            return t;
          },
          in, i, fmt::format("dx{}", i));
    }
  }
}

// ---- Pad's reflect and edge modes (PyTorch's ReflectionPad / ReplicationPad and padding_mode
// "reflect" / "replicate"): the forward is the copy nnref::pad describes, bit for bit; the
// gradient nnref::padGrad's sums bit for bit and a central finite difference of the (linear)
// double forward.

TEST_P(OnnxOpsTest, PadReflectAndEdgeAndTheirGradients) {
  using Ints = std::vector<int64_t>;
  struct Case {
    std::string mode;
    Shape in;
    Ints pads;  // ONNX's: begins, then ends, of the axes
    Ints axes;  // empty: all
  };
  const std::vector<Case> cases = {
      {"reflect", {2, 2, 4, 5}, {0, 0, 1, 2, 0, 0, 3, 1}, {}},  // ReflectionPad2d((2, 1, 1, 3))
      {"edge", {2, 2, 4, 5}, {0, 0, 2, 1, 0, 0, 1, 3}, {}},     // ReplicationPad2d((1, 3, 2, 1))
      {"reflect", {3, 4}, {2, 1}, {-1}},                        // one axis, ReflectionPad1d
      {"edge", {3, 1, 4}, {2, 3, 1, 0}, {0, 1}},                // a dimension of 1
      {"reflect", {2, 3, 4}, {1, 2, 3, 1, 1, 2}, {}},           // every axis
  };
  std::vector<std::pair<std::string, Tensor>> outs;
  std::vector<Shape> results;
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    const std::string id = std::to_string(c);
    const Value x = param(k.in, "x" + id, 700 + static_cast<uint32_t>(c));
    Attributes at{{"mode", k.mode}, {"pads", k.pads}};
    if (!k.axes.empty()) at["axes"] = k.axes;
    const Value y = tape.apply1("Pad", {x}, at, "pad" + id);
    results.push_back(y.tensor().shape());
    const Tensor seed = variable(results.back(), "seed" + id, 750 + static_cast<uint32_t>(c));
    const std::vector<Tensor> g = tape.gradients(y, seed, {x}, bwd, "bwd" + id);
    outs.emplace_back("y" + id, y.tensor());
    outs.emplace_back("dx" + id, g[0]);
  }
  auto out = run(outs);
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    const std::string id = std::to_string(c);
    SCOPED_TRACE(fmt::format("{} {}", k.mode, c));
    std::vector<size_t> begin(k.in.size(), 0), end(k.in.size(), 0);
    for (size_t i = 0; i < k.pads.size() / 2; ++i) {
      int64_t a = k.axes.empty() ? static_cast<int64_t>(i) : k.axes[i];
      if (a < 0) a += static_cast<int64_t>(k.in.size());
      begin[static_cast<size_t>(a)] = static_cast<size_t>(k.pads[i]);
      end[static_cast<size_t>(a)] = static_cast<size_t>(k.pads[i + k.pads.size() / 2]);
    }
    const ops::PadMode mode = k.mode == "reflect" ? ops::PadMode::Reflect : ops::PadMode::Edge;
    Shape padded = k.in;
    for (size_t d = 0; d < padded.size(); ++d) padded[d] += begin[d] + end[d];
    ASSERT_EQ(results[c], padded);
    const Floats& x = values["x" + id];
    const Floats& dy = values["seed" + id];
    expectBitEqual(out["y" + id], nnref::pad(x, k.in, begin, end, mode, 0.0f), "forward");
    expectBitEqual(out["dx" + id], nnref::padGrad(dy, k.in, begin, end, mode), "dx");
    // Every padded element is an input element: d(sum dy * pad(x)) / dx by differences.
    Floats index(count(k.in));
    std::iota(index.begin(), index.end(), 0.0f);
    const Floats map = nnref::pad(index, k.in, begin, end, mode, 0.0f);
    expectNearFiniteDifference(
        out["dx" + id],
        [&](const std::vector<Doubles>& v) {
          double t = 0;
          for (size_t e = 0; e < map.size(); ++e)
            t += double{dy[e]} * v[0][static_cast<size_t>(map[e])];
          return t;
        },
        {toDouble(x)}, 0, "dx");
  }
}

// ---- The ONNX forms of the nn ops: LayerNormalization without a bias, Softmax along a negative
// axis, Dropout as ONNX gives it (the identity).

TEST_P(OnnxOpsTest, LayerNormWithoutBiasSoftmaxNegativeAxisAndDropout) {
  const Shape shape = {3, 2, 5};
  const float eps = 1e-5f;
  const Value x = param(shape, "x", 700), w = param({5}, "w", 701);
  const Value ln =
      tape.apply1("LayerNormalization", {x, w, Value()}, {{"epsilon", double{eps}}}, "ln");
  const Value sm = tape.apply1("Softmax", {x}, {{"axis", int64_t{-2}}}, "softmax");
  const Value dr = tape.apply1("Dropout", {x}, {{"ratio", 0.25}}, "dropout");
  const Tensor s0 = variable(shape, "s0", 702), s1 = variable(shape, "s1", 703),
               s2 = variable(shape, "s2", 704);
  const std::vector<Tensor> g0 = tape.gradients(ln, s0, {x, w}, bwd, "bwd_ln");
  const std::vector<Tensor> g1 = tape.gradients(sm, s1, {x}, bwd, "bwd_softmax");
  const std::vector<Tensor> g2 = tape.gradients(dr, s2, {x}, bwd, "bwd_dropout");
  auto out = run({{"ln", ln.tensor()},
                  {"dx0", g0[0]},
                  {"dw0", g0[1]},
                  {"sm", sm.tensor()},
                  {"dx1", g1[0]},
                  {"dr", dr.tensor()},
                  {"dx2", g2[0]}});
  const Floats &xv = values["x"], &wv = values["w"];
  const Floats zeros(5, 0.0f);
  const nnref::Norm r = nnref::layerNorm(xv, wv, zeros, values["s0"], 5, eps);
  expectBitEqual(out["ln"], r.out, "layer norm");
  expectBitEqual(out["dx0"], r.dx, "layer norm dx");
  expectBitEqual(out["dw0"], r.dw, "layer norm dscale");
  const std::vector<Doubles> in = {toDouble(xv), toDouble(wv), Doubles(5, 0.0)};
  auto fl = [&](const std::vector<Doubles>& v) {
    return dot(values["s0"], nnref::layerNormDouble(v[0], v[1], v[2], 5, eps));
  };
  expectNearFiniteDifference(out["dx0"], fl, in, 0, "layer norm dx");
  expectNearFiniteDifference(out["dw0"], fl, in, 1, "layer norm dscale");
  const Floats y = nnref::softmax(xv, shape, 1, false);
  expectBitEqual(out["sm"], y, "softmax");
  expectBitEqual(out["dx1"], nnref::softmaxGrad(values["s1"], y, shape, 1, false), "softmax dx");
  expectNearFiniteDifference(
      out["dx1"],
      [&](const std::vector<Doubles>& v) {
        return dot(values["s1"], nnref::softmaxDouble(v[0], shape, 1, false));
      },
      {toDouble(xv)}, 0, "softmax dx");
  expectBitEqual(out["dr"], xv, "dropout");
  expectBitEqual(out["dx2"], values["s2"], "dropout dx");
}

// ---- A chain as PyTorch exports it before opset 17: Linear on [B, S, D] (MatMul + Add), GELU
// through Div, Erf, Add, Mul, Mul with scalar constants, layer normalisation through ReduceMean,
// Sub, Pow, Sqrt and Div, then Transpose, Reshape, Gemm and Softmax. Each op is checked bit for
// bit above; here the composition: the forward against a double-precision forward (within 1e-5)
// and every gradient against finite differences.

TEST_P(OnnxOpsTest, ExportedGeluAndLayerNormChainMatchesDoubles) {
  using Ints = std::vector<int64_t>;
  const size_t B = 2, S = 3, D = 4, N = 5;
  const Value x = param({B, S, D}, "x", 800), w = param({D, D}, "w", 801), b = param({D}, "b", 802),
              w2 = param({S * D, N}, "w2", 803), b2 = param({N}, "b2", 804);
  auto scalar = [&](float v, const std::string& name, Shape shape = {}) {
    return tape.input(graph.addConstant(shape, Floats(1, v), name));
  };
  const Value h = tape.apply1("Add", {tape.apply1("MatMul", {x, w}, {}, "fc/mm"), b}, {}, "fc/add");
  const Value e =
      tape.apply1("Erf", {tape.apply1("Div", {h, scalar(1.41421354f, "sqrt2")}, {}, "gelu/div")},
                  {}, "gelu/erf");
  const Value g = tape.apply1(
      "Mul",
      {tape.apply1("Mul", {h, tape.apply1("Add", {e, scalar(1.0f, "one", {1})}, {}, "gelu/add")},
                   {}, "gelu/mul"),
       scalar(0.5f, "half")},
      {}, "gelu/half");
  const Attributes last = {{"axes", Ints{-1}}, {"keepdims", int64_t{1}}};
  const Value m = tape.apply1("ReduceMean", {g}, last, "ln/mean");
  const Value d = tape.apply1("Sub", {g, m}, {}, "ln/sub");
  const Value v = tape.apply1(
      "ReduceMean", {tape.apply1("Pow", {d, scalar(2.0f, "two")}, {}, "ln/pow")}, last, "ln/var");
  const Value n = tape.apply1(
      "Div",
      {d, tape.apply1("Sqrt", {tape.apply1("Add", {v, scalar(1e-5f, "eps")}, {}, "ln/eps")}, {},
                      "ln/sqrt")},
      {}, "ln/div");
  const Value t = tape.apply1("Transpose", {n}, {{"perm", Ints{0, 2, 1}}}, "t");
  const Value r = tape.apply1("Reshape", {t}, {{"shape", Ints{0, -1}}}, "r");
  const Value o = tape.apply1("Gemm", {r, w2, b2}, {}, "head");
  const Value y = tape.apply1("Softmax", {o}, {}, "softmax");
  const Tensor seed = variable({B, N}, "seed", 805);
  const std::vector<Tensor> grads = tape.gradients(y, seed, {x, w, b, w2, b2}, bwd, "bwd");
  auto out = run({{"y", y.tensor()},
                  {"dx", grads[0]},
                  {"dw", grads[1]},
                  {"db", grads[2]},
                  {"dw2", grads[3]},
                  {"db2", grads[4]}});
  auto forward = [&](const std::vector<Doubles>& in) {
    const Doubles &X = in[0], &W = in[1], &Bv = in[2], &W2 = in[3], &B2 = in[4];
    Doubles nn(B * S * D);
    for (size_t bs = 0; bs < B * S; ++bs) {
      double gl[4], mean = 0, var = 0;
      for (size_t j = 0; j < D; ++j) {
        double hv = Bv[j];
        for (size_t q = 0; q < D; ++q) hv += X[bs * D + q] * W[q * D + j];
        gl[j] = hv * (1.0 + std::erf(hv / std::sqrt(2.0))) * 0.5;
        mean += gl[j] / D;
      }
      for (size_t j = 0; j < D; ++j) var += (gl[j] - mean) * (gl[j] - mean) / D;
      for (size_t j = 0; j < D; ++j) nn[bs * D + j] = (gl[j] - mean) / std::sqrt(var + 1e-5);
    }
    Doubles yv(B * N);
    for (size_t i = 0; i < B; ++i) {
      double logits[5], mx = -1e300, sum = 0;
      for (size_t k = 0; k < N; ++k) {
        double s = B2[k];
        // r[i][dd * S + ss] = n[i][ss][dd]
        for (size_t dd = 0; dd < D; ++dd) {
          for (size_t ss = 0; ss < S; ++ss)
            s += nn[(i * S + ss) * D + dd] * W2[(dd * S + ss) * N + k];
        }
        logits[k] = s;
        mx = std::max(mx, s);
      }
      for (size_t k = 0; k < N; ++k) sum += std::exp(logits[k] - mx);
      for (size_t k = 0; k < N; ++k) yv[i * N + k] = std::exp(logits[k] - mx) / sum;
    }
    return yv;
  };
  const std::vector<Doubles> in = {toDouble(values["x"]), toDouble(values["w"]),
                                   toDouble(values["b"]), toDouble(values["w2"]),
                                   toDouble(values["b2"])};
  const Doubles want = forward(in);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(out["y"][i], want[i], 1e-5) << "y element " << i;
  const Floats& dy = values["seed"];
  auto f = [&](const std::vector<Doubles>& v) { return dot(dy, forward(v)); };
  const char* names[] = {"dx", "dw", "db", "dw2", "db2"};
  for (size_t i = 0; i < 5; ++i) expectNearFiniteDifference(out[names[i]], f, in, i, names[i]);
}

// ---- Self-attention as PyTorch exports it: projections on [B, S, D], Reshape and Transpose into
// heads, batched MatMul with broadcast-free batches [B, H], scaling by a constant, Softmax on the
// last axis, the residual Add, LayerNormalization, Gather of the first position (a rank-0 constant
// index), Gemm (transB) and LogSoftmax. The forward against doubles, every gradient against finite
// differences.

TEST_P(OnnxOpsTest, ExportedAttentionBlockMatchesDoubles) {
  using Ints = std::vector<int64_t>;
  const size_t B = 2, S = 3, D = 4, H = 2, E = 2, N = 3;
  const Value x = param({B, S, D}, "x", 900), wq = param({D, D}, "wq", 901),
              wk = param({D, D}, "wk", 902), wv = param({D, D}, "wv", 903),
              gamma = param({D}, "gamma", 904), beta = param({D}, "beta", 905),
              wo = param({N, D}, "wo", 906), bo = param({N}, "bo", 907);
  auto heads = [&](const Value& w, const std::string& name, const Ints& perm) {
    const Value p = tape.apply1("MatMul", {x, w}, {}, name + "/mm");
    const Value r = tape.apply1("Reshape", {p}, {{"shape", Ints{0, 0, int64_t(H), int64_t(E)}}},
                                name + "/heads");
    return tape.apply1("Transpose", {r}, {{"perm", perm}}, name + "/t");
  };
  const Value q = heads(wq, "q", {0, 2, 1, 3}), kt = heads(wk, "k", {0, 2, 3, 1}),
              v = heads(wv, "v", {0, 2, 1, 3});
  const Value scale = tape.input(graph.addConstant({}, Floats{1.41421354f}, "scale"));
  const Value scores =
      tape.apply1("Div", {tape.apply1("MatMul", {q, kt}, {}, "qk"), scale}, {}, "scaled");
  const Value att = tape.apply1("Softmax", {scores}, {{"axis", int64_t{-1}}}, "att");
  const Value ctxv = tape.apply1("MatMul", {att, v}, {}, "av");
  const Value merged = tape.apply1(
      "Reshape", {tape.apply1("Transpose", {ctxv}, {{"perm", Ints{0, 2, 1, 3}}}, "merge/t")},
      {{"shape", Ints{0, 0, -1}}}, "merge");
  const Value res = tape.apply1("Add", {x, merged}, {}, "residual");
  const Value ln = tape.apply1("LayerNormalization", {res, gamma, beta},
                               {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}, "ln");
  const Value first = tape.input(graph.addConstant({}, std::vector<int32_t>{0}, "first"));
  const Value cls = tape.apply1("Gather", {ln, first}, {{"axis", int64_t{1}}}, "cls");
  const Value logits = tape.apply1("Gemm", {cls, wo, bo}, {{"transB", int64_t{1}}}, "head");
  const Value y = tape.apply1("LogSoftmax", {logits}, {}, "logsoftmax");
  const Tensor seed = variable({B, N}, "seed", 908);
  const std::vector<Value> ps = {x, wq, wk, wv, gamma, beta, wo, bo};
  const std::vector<Tensor> grads = tape.gradients(y, seed, ps, bwd, "bwd");
  const char* names[] = {"x", "wq", "wk", "wv", "gamma", "beta", "wo", "bo"};
  std::vector<std::pair<std::string, Tensor>> outs = {{"y", y.tensor()}};
  for (size_t i = 0; i < ps.size(); ++i) outs.emplace_back(std::string("d") + names[i], grads[i]);
  auto out = run(outs);
  auto forward = [&](const std::vector<Doubles>& in) {
    const Doubles &X = in[0], &G = in[4], &Be = in[5], &Wo = in[6], &Bo = in[7];
    auto proj = [&](const Doubles& W) {
      Doubles p(B * S * D, 0.0);
      for (size_t bs = 0; bs < B * S; ++bs) {
        for (size_t j = 0; j < D; ++j) {
          for (size_t q2 = 0; q2 < D; ++q2) p[bs * D + j] += X[bs * D + q2] * W[q2 * D + j];
        }
      }
      return p;
    };
    const Doubles Q = proj(in[1]), K = proj(in[2]), V = proj(in[3]);
    Doubles ctx(B * S * D, 0.0);
    for (size_t b = 0; b < B; ++b) {
      for (size_t h = 0; h < H; ++h) {
        for (size_t i = 0; i < S; ++i) {
          double sc[3], mx = -1e300, sum = 0;
          for (size_t j = 0; j < S; ++j) {
            double s2 = 0;
            for (size_t e = 0; e < E; ++e)
              s2 += Q[(b * S + i) * D + h * E + e] * K[(b * S + j) * D + h * E + e];
            sc[j] = s2 / 1.41421354;
            mx = std::max(mx, sc[j]);
          }
          for (size_t j = 0; j < S; ++j) sum += std::exp(sc[j] - mx);
          for (size_t j = 0; j < S; ++j) {
            const double a = std::exp(sc[j] - mx) / sum;
            for (size_t e = 0; e < E; ++e)
              ctx[(b * S + i) * D + h * E + e] += a * V[(b * S + j) * D + h * E + e];
          }
        }
      }
    }
    Doubles yv(B * N);
    for (size_t b = 0; b < B; ++b) {
      // Position 0 of the residual, normalised.
      double r[4], mean = 0, var = 0;
      for (size_t j = 0; j < D; ++j)
        r[j] = X[(b * S) * D + j] + ctx[(b * S) * D + j], mean += r[j] / D;
      for (size_t j = 0; j < D; ++j) var += (r[j] - mean) * (r[j] - mean) / D;
      double l[3], mx = -1e300, sum = 0;
      for (size_t k = 0; k < N; ++k) {
        l[k] = Bo[k];
        for (size_t j = 0; j < D; ++j)
          l[k] += ((r[j] - mean) / std::sqrt(var + 1e-5) * G[j] + Be[j]) * Wo[k * D + j];
        mx = std::max(mx, l[k]);
      }
      for (size_t k = 0; k < N; ++k) sum += std::exp(l[k] - mx);
      for (size_t k = 0; k < N; ++k) yv[b * N + k] = l[k] - mx - std::log(sum);
    }
    return yv;
  };
  std::vector<Doubles> in;
  for (const char* nm : names) in.push_back(toDouble(values[nm]));
  const Doubles want = forward(in);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(out["y"][i], want[i], 1e-5) << "y element " << i;
  const Floats& dy = values["seed"];
  auto f = [&](const std::vector<Doubles>& v) { return dot(dy, forward(v)); };
  for (size_t i = 0; i < ps.size(); ++i)
    expectNearFiniteDifference(out[std::string("d") + names[i]], f, in, i, names[i]);
}

// ---- A CNN with batch normalisation as exported (ONNX attributes throughout): Conv with padding
// and bias, BatchNormalization in training mode (batch statistics; ONNX's momentum), Tanh,
// AveragePool, GlobalAveragePool, Flatten and Gemm (transB). The forward against doubles, every
// gradient against finite differences.

TEST_P(OnnxOpsTest, ExportedCnnWithBatchNormMatchesDoubles) {
  using Ints = std::vector<int64_t>;
  const size_t N = 2, C = 3, HW = 6, K = 2;
  const Value x = param({N, 1, HW, HW}, "x", 1000), w = param({C, 1, 3, 3}, "w", 1001),
              b = param({C}, "b", 1002), gamma = param({C}, "gamma", 1003),
              beta = param({C}, "beta", 1004), w2 = param({K, C}, "w2", 1005),
              b2 = param({K}, "b2", 1006);
  const Value mean = tape.input(variable({C}, "mean", 1007));
  const Value var = tape.input(ranged({C}, "var", 1008, 0.5f, 2.0f));
  const Value conv = tape.apply1(
      "Conv", {x, w, b},
      {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{1, 1}}}, "conv");
  const Value bn =
      tape.apply1("BatchNormalization", {conv, gamma, beta, mean, var},
                  {{"epsilon", 1e-5}, {"momentum", 0.9}, {"training_mode", int64_t{1}}}, "bn");
  const Value act = tape.apply1("Tanh", {bn}, {}, "tanh");
  const Value pool = tape.apply1("AveragePool", {act},
                                 {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}, "pool");
  const Value gap = tape.apply1("GlobalAveragePool", {pool}, {}, "gap");
  const Value flat = tape.apply1("Flatten", {gap}, {}, "flatten");
  const Value y = tape.apply1("Gemm", {flat, w2, b2}, {{"transB", int64_t{1}}}, "fc");
  ASSERT_EQ(y.tensor().shape(), (Shape{N, K}));
  const Tensor seed = variable({N, K}, "seed", 1009);
  const std::vector<Value> ps = {x, w, b, gamma, beta, w2, b2};
  const std::vector<Tensor> grads = tape.gradients(y, seed, ps, bwd, "bwd");
  const char* names[] = {"x", "w", "b", "gamma", "beta", "w2", "b2"};
  std::vector<std::pair<std::string, Tensor>> outs = {{"y", y.tensor()}};
  for (size_t i = 0; i < ps.size(); ++i) outs.emplace_back(std::string("d") + names[i], grads[i]);
  auto out = run(outs);
  auto forward = [&](const std::vector<Doubles>& in) {
    const Doubles &X = in[0], &W = in[1], &Bc = in[2], &G = in[3], &Be = in[4], &W2 = in[5],
                  &B2 = in[6];
    Doubles c(N * C * HW * HW);
    for (size_t n = 0; n < N; ++n) {
      for (size_t o = 0; o < C; ++o) {
        for (size_t i = 0; i < HW; ++i) {
          for (size_t j = 0; j < HW; ++j) {
            double s2 = Bc[o];
            for (size_t ki = 0; ki < 3; ++ki) {
              for (size_t kj = 0; kj < 3; ++kj) {
                const long ii = long(i + ki) - 1, jj = long(j + kj) - 1;
                if (ii < 0 || jj < 0 || ii >= long(HW) || jj >= long(HW)) continue;
                s2 += X[(n * HW + size_t(ii)) * HW + size_t(jj)] * W[(o * 3 + ki) * 3 + kj];
              }
            }
            c[((n * C + o) * HW + i) * HW + j] = s2;
          }
        }
      }
    }
    const double count = double(N * HW * HW);
    Doubles feat(N * C, 0.0);
    for (size_t o = 0; o < C; ++o) {
      double m = 0, v2 = 0;
      for (size_t n = 0; n < N; ++n) {
        for (size_t p = 0; p < HW * HW; ++p) m += c[(n * C + o) * HW * HW + p] / count;
      }
      for (size_t n = 0; n < N; ++n) {
        for (size_t p = 0; p < HW * HW; ++p) {
          const double d = c[(n * C + o) * HW * HW + p] - m;
          v2 += d * d / count;
        }
      }
      for (size_t n = 0; n < N; ++n) {
        // Average pooling 2x2 then the global average: the mean of the 36 activations.
        double total = 0;
        for (size_t p = 0; p < HW * HW; ++p) {
          const double z = (c[(n * C + o) * HW * HW + p] - m) / std::sqrt(v2 + 1e-5) * G[o] + Be[o];
          total += std::tanh(z);
        }
        feat[n * C + o] = total / double(HW * HW);
      }
    }
    Doubles yv(N * K);
    for (size_t n = 0; n < N; ++n) {
      for (size_t k = 0; k < K; ++k) {
        double s2 = B2[k];
        for (size_t o = 0; o < C; ++o) s2 += feat[n * C + o] * W2[k * C + o];
        yv[n * K + k] = s2;
      }
    }
    return yv;
  };
  std::vector<Doubles> in;
  for (const char* nm : names) in.push_back(toDouble(values[nm]));
  const Doubles want = forward(in);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(out["y"][i], want[i], 1e-5) << "y element " << i;
  const Floats& dy = values["seed"];
  auto f = [&](const std::vector<Doubles>& v) { return dot(dy, forward(v)); };
  for (size_t i = 0; i < ps.size(); ++i)
    expectNearFiniteDifference(out[std::string("d") + names[i]], f, in, i, names[i]);
}

// ---- Plain SGD through the ONNX forms of Linear (MatMul of [B, S, D] by a 2-D weight, broadcast
// Add of a bias; Flatten; Gemm with transB and C): Optimizer::minimize fuses the weights' update
// into their matmuls (sinks) and applies the biases' gradients, exactly what Tape::gradients gives.

TEST_P(OnnxOpsTest, SgdStepThroughOnnxLinearLayersMatchesTheGradients) {
  const size_t B = 2, S = 3, D = 4, H = 5, K = 3;
  const Tensor xt = variable({B, S, D}, "x", 1100);
  Tensor labels = ops::createLinear(graph, ElemType::Int32, {B}, "labels");
  graph.setInitialValue(labels, std::vector<int32_t>{2, 0});
  const float lr = 0.125f, lossScale = 0.5f;
  struct Net {
    Value w1, b1, w2, b2, loss;
  };
  auto build = [&](Tape& t, const std::string& p) {
    Net net;
    net.w1 = t.parameter(
        initialise(ops::createMatMulRhs(graph, B * S, D, H, p + "w1"), randomFloats(D * H, 1101)));
    net.b1 = t.parameter(initialise(ops::createLinear(graph, ElemType::Float32, {H}, p + "b1"),
                                    randomFloats(H, 1102)));
    net.w2 = t.parameter(initialise(ops::createMatMulRhs(graph, B, K, S * H, p + "w2"),
                                    randomFloats(K * S * H, 1103)));
    net.b2 = t.parameter(initialise(ops::createLinear(graph, ElemType::Float32, {K}, p + "b2"),
                                    randomFloats(K, 1104)));
    const Value h = t.apply1(
        "Tanh",
        {t.apply1("Add", {t.apply1("MatMul", {t.input(xt), net.w1}, {}, p + "fc1"), net.b1}, {},
                  p + "fc1/bias")},
        {}, p + "tanh");
    const Value f = t.apply1("Flatten", {h}, {{"axis", int64_t{1}}}, p + "flatten");
    const Value logits = t.apply1("Gemm", {f, net.w2, net.b2}, {{"transB", int64_t{1}}}, p + "fc2");
    net.loss = softmaxCrossEntropy(t, logits, t.input(labels), lossScale, p + "loss");
    return net;
  };
  Tape other(graph, fwd);
  const Net a = build(tape, "a/"), b = build(other, "b/");
  const std::vector<Tensor> g = tape.gradients(a.loss, {a.w1, a.b1, a.w2, a.b2}, bwd, lossScale);
  OptimizerConfig oc;
  oc.learningRate = lr;
  Optimizer opt(graph, oc, "lr");
  opt.minimize(other, b.loss, {b.w1, b.b1, b.w2, b.b2}, bwd, lossScale);
  auto out = run({{"gw1", g[0]},
                  {"gb1", g[1]},
                  {"gw2", g[2]},
                  {"gb2", g[3]},
                  {"w1", b.w1.tensor()},
                  {"b1", b.b1.tensor()},
                  {"w2", b.w2.tensor()},
                  {"b2", b.b2.tensor()}});
  for (const char* w : {"b1", "b2"}) {
    const Floats& w0 = values[std::string("a/") + w];
    Floats want(w0.size());
    for (size_t i = 0; i < w0.size(); ++i)
      want[i] = std::fmaf(-lr, out[std::string("g") + w][i], w0[i]);
    expectBitEqual(out[w], want, std::string(w) + " after the step");
  }
  // The weights' updates are fused into their matmuls (w + sum of a (-lr g)): within rounding.
  for (const char* w : {"w1", "w2"}) {
    const Floats& w0 = values[std::string("a/") + w];
    for (size_t i = 0; i < w0.size(); ++i) {
      const float want = w0[i] - lr * out[std::string("g") + w][i];
      EXPECT_NEAR(out[w][i], want, 1e-6f * (1.0f + std::fabs(want))) << w << " element " << i;
    }
    EXPECT_NE(out[w], w0) << w;
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, OnnxOpsTest, ::testing::ValuesIn(backends::names()),
                         [](const auto& info) { return info.param; });

// ---- Graph-building errors: each names the op's debug name, the tensors and their shapes, or the
// attribute.

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(OnnxOpsErrors, NameTheOpTheShapesAndTheAttribute) {
  Graph graph(Target{4, 65536, 6});
  Sequence prog;
  Tape tape(graph, prog);
  const Value a = tape.input(ops::createLinear(graph, ElemType::Float32, {2, 3}, "a"));
  const Value b = tape.input(ops::createLinear(graph, ElemType::Float32, {4}, "b"));
  EXPECT_NE(errorOf([&] {
              tape.apply1("Add", {a, b}, {}, "bias");
            }).find("bias (Add) of \"a\" and \"b\": shapes [2,3] and [4] do not broadcast"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              tape.apply1("MatMul", {a, b}, {}, "mm");
            }).find("mm (MatMul): inner dimensions differ"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              tape.apply1(
                  "Pad", {a},
                  {{"mode", std::string("wrap")}, {"pads", std::vector<int64_t>{0, 1, 0, 1}}},
                  "pad");
            }).find("pad (Pad): mode \"wrap\" is not supported"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              tape.apply1("ReduceMean", {a}, {{"axes", std::vector<int64_t>{2}}}, "mean");
            }).find("mean (ReduceMean): axes [2] are out of range"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              tape.apply1("Reshape", {a}, {{"shape", std::vector<int64_t>{-1, -1}}}, "rs");
            }).find("rs (Reshape): \"a\" [2,3] cannot take shape [-1,-1]: more than one -1"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              tape.apply1("Gemm", {a, a}, {}, "fc");
            }).find("fc (Gemm): A and B must be matrices"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              tape.apply1("Add", {a, Value(), b}, {}, "gap");
            }).find("gap (Add): input 1 is absent"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              tape.apply1("Dropout", {a}, {{"training_mode", int64_t{1}}}, "drop");
            }).find("drop (Dropout): training_mode 1 needs a seed input"),
            std::string::npos);
  EXPECT_NE(
      errorOf([&] {
        tape.apply1("Squeeze", {a}, {{"axes", std::vector<int64_t>{0}}}, "sq");
      })
          .find("sq (Squeeze): axes [0] are out of range, repeated or (Squeeze) not of size 1 "
                "for \"a\" [2,3]"),
      std::string::npos);
  const Value idx = tape.input(ops::createLinear(graph, ElemType::Int32, {2}, "idx"));
  EXPECT_NE(errorOf([&] {
              tape.apply1("Gather", {a, idx}, {{"axis", int64_t{1}}}, "pick");
            }).find("pick (Gather): indices \"idx\" [2] must be a constant"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::autodiff
