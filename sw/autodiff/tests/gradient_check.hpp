// What every gradient check of the autodiff layer shares (docs/autodiff.md, "Tests"): random
// inputs, the bit-for-bit comparison with a host reference, the comparison with a central finite
// difference of a double-precision forward, and a fixture that builds a forward and a backward
// program on a 4-tile graph and runs them on one backend of host/testing/backends.hpp.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "backends.hpp"
#include "tessera/autodiff.hpp"
#include "tessera/compiler.hpp"
#include "tessera/engine.hpp"
#include "tessera/error.hpp"
#include "tessera/ops.hpp"

namespace tessera::autodiff::gradcheck {

using Floats = std::vector<float>;
using Doubles = std::vector<double>;

/// Values in [lo, hi] at least 0.05 from 0 (so that relu's kink is further than the step of a
/// finite difference).
inline Floats randomFloats(size_t n, uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Floats v(n);
  for (float& x : v) {
    x = dist(rng);
    if (std::fabs(x) < 0.05f) x += x < 0 ? -0.1f : 0.1f;
  }
  return v;
}

/// Every element of got equals want's, bit for bit.
inline void expectBitEqual(const Floats& got, const Floats& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
        << what << " element " << i << ": got " << got[i] << ", want " << want[i];
  }
}

/// The gradient-check tolerance: |device - finite difference| <= 1e-4 * max(1, max |finite
/// difference|). The device gradient is float32 with sums of at most a few dozen terms (relative
/// error ~1e-6); the central difference in double with step 1e-3 of these smooth (or piecewise
/// linear away from their kinks) functions is exact to ~1e-7. 1e-4 leaves two orders of margin
/// either way yet catches any wrong term, sign or transpose (errors of order 1).
inline void expectNearFiniteDifference(const Floats& got,
                                       const std::function<double(const std::vector<Doubles>&)>& f,
                                       std::vector<Doubles> inputs, size_t which,
                                       const std::string& what, double tolerance = 1e-4) {
  const double h = 1e-3;
  Doubles fd(inputs[which].size());
  double mx = 1.0;
  for (size_t i = 0; i < fd.size(); ++i) {
    const double x = inputs[which][i];
    inputs[which][i] = x + h;
    const double up = f(inputs);
    inputs[which][i] = x - h;
    const double down = f(inputs);
    inputs[which][i] = x;
    fd[i] = (up - down) / (2 * h);
    mx = std::max(mx, std::fabs(fd[i]));
  }
  ASSERT_EQ(got.size(), fd.size()) << what;
  for (size_t i = 0; i < fd.size(); ++i) {
    ASSERT_LE(std::fabs(got[i] - fd[i]), tolerance * mx)
        << what << " element " << i << ": got " << got[i] << ", finite difference " << fd[i];
  }
}

/// v in double.
inline Doubles toDouble(const Floats& v) {
  return {v.begin(), v.end()};
}

/// sum(seed * y) in double: the loss whose gradient a vector-Jacobian product with seed is.
inline double dot(const Floats& seed, const Doubles& y) {
  double s = 0;
  for (size_t i = 0; i < y.size(); ++i) s += double{seed[i]} * y[i];
  return s;
}

/// A graph of kTiles tiles with a forward program (recorded by tape) followed by a backward one,
/// run on the backend given as the test's parameter.
class GradientCheckTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { backends::skipIfExcluded(GetParam()); }
  static constexpr unsigned kTiles = 4;
  Graph graph{Target{kTiles, 65536, 6}};
  Sequence fwd, bwd, prog{std::vector<Program>{fwd, bwd}};
  Tape tape{graph, fwd};
  /// The initial value of every tensor made by variable(), by name.
  std::map<std::string, Floats> values;

  /// A float32 variable mapped linearly with random values (randomFloats(n, seed)).
  Tensor variable(std::vector<size_t> shape, const std::string& name, uint32_t seed,
                  size_t grain = 1) {
    Tensor t = ops::createLinear(graph, ElemType::Float32, shape, name, grain);
    return initialise(t, randomFloats(t.numElements(), seed));
  }
  /// t with initial value v, remembered in values.
  Tensor initialise(const Tensor& t, const Floats& v) {
    graph.setInitialValue(t, v);
    values[t.debugName()] = v;
    return t;
  }
  /// A parameter of the tape made by variable().
  Value param(std::vector<size_t> shape, const std::string& name, uint32_t seed) {
    return tape.parameter(variable(std::move(shape), name, seed));
  }

  /// Compile forward + backward, run them, and read each output.
  std::map<std::string, Floats> run(const std::vector<std::pair<std::string, Tensor>>& outputs) {
    for (const auto& [name, t] : outputs) graph.exposeTensor(name, t);
    Compiled c = compile(graph, prog);
    DeviceOptions o;
    o.tiles = kTiles;
    const backends::Opened dev = backends::open(GetParam(), o);
    Engine engine(*dev.device, c.executable);
    RunResult r = engine.run(2'000'000'000);
    EXPECT_EQ(r.reason, StopReason::Halted) << describeTrap(r.trap);
    std::map<std::string, Floats> out;
    for (const auto& [name, t] : outputs) {
      std::vector<uint8_t> bytes = engine.readTensor(name);
      Floats f(bytes.size() / 4);
      std::memcpy(f.data(), bytes.data(), bytes.size());
      out[name] = f;
    }
    return out;
  }
};

/// A graph-building fixture: a 4-tile graph, a forward sequence and its tape, and parameters made
/// of new tensors (for the tests of the errors an op raises while the graph is built).
class GraphBuilding : public ::testing::Test {
 protected:
  Graph graph{Target{4, 65536, 6}};
  Sequence fwd, bwd;
  Tape tape{graph, fwd};
  Value param(std::vector<size_t> shape, const std::string& name) {
    return tape.parameter(ops::createLinear(graph, ElemType::Float32, shape, name));
  }
};

/// f throws a tessera::Error whose message contains every one of parts.
inline void expectThrowContaining(const std::function<void()>& f,
                                  const std::vector<std::string>& parts) {
  try {
    f();
    FAIL() << "no error";
  } catch (const Error& e) {
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

}  // namespace tessera::autodiff::gradcheck
