// The FLOPs table of the element-by-element codelets (docs/compiler.md, "FLOPs").
#include "flops.hpp"

#include <array>
#include <utility>

namespace tessera::ops {

uint64_t elementFlops(std::string_view codelet) {
  // Each row: the codelet and its formula's operations per output element.
  static constexpr std::array<std::pair<std::string_view, uint64_t>, 38> kTable{{
      {"Add", 1},            // a + b
      {"Sub", 1},            // a - b
      {"Mul", 1},            // a * b
      {"Div", 1},            // a / b
      {"Pow", 1},            // pow(a, b)
      {"AddBias", 1},        // x + bias
      {"AddScalar", 1},      // x + s
      {"DivScalar", 1},      // x / s
      {"ScalarDiv", 1},      // s / x
      {"ScalarSub", 1},      // s - x
      {"Scale", 1},          // s * x
      {"ScaleInPlace", 1},   // x = s * x
      {"ScaleByScalar", 1},  // s * x
      {"ScaledAddTo", 2},    // data + s * delta (one multiply-add)
      {"Relu", 1},           // max(x, 0)
      {"ReluGrad", 1},       // x > 0 ? g : 0
      {"Clip", 2},           // min(max(x, lo), hi)
      {"ClipGrad", 2},       // lo < x < hi ? g : 0
      {"Exp", 1},
      {"Log", 1},
      {"Sqrt", 1},
      {"Reciprocal", 1},
      {"Erf", 1},
      {"Tanh", 1},
      {"Sigmoid", 1},
      {"Gelu", 4},            // x * 0.5 * (1 + erf(x / sqrt 2))
      {"TanhGrad", 3},        // g * (1 - y * y)
      {"SigmoidGrad", 3},     // g * y * (1 - y)
      {"GeluGrad", 7},        // g * (Phi(x) + x * phi(x)): erf, exp and five operations
      {"ErfGrad", 3},         // g * 2/sqrt(pi) * exp(-x * x)
      {"SqrtGrad", 2},        // g / (2 * y)
      {"ReciprocalGrad", 3},  // -g * y * y
      {"DivGradB", 3},        // -g * a / (b * b)
      {"PowGradA", 3},        // g * b * pow(a, b - 1)
      {"PowGradB", 3},        // g * y * log(a)
      {"Fill", 0},
      {"AddInt", 0},
      {"Dropout", 1},  // x * mask * scale, the mask's integer arithmetic not counted
  }};
  for (const auto& [name, flops] : kTable) {
    if (name == codelet) return flops;
  }
  return 0;
}

}  // namespace tessera::ops
