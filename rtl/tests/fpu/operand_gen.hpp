// Operand generation for the FPU differential tests: random bit patterns mixed with weighted
// special classes and with operand relations that hit cancellation, overflow, underflow and ties.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "fpu_ops.hpp"

namespace tessera::fpu_test {

/// One operand set.
struct Operands {
  uint32_t a, b, c;
};

/// Deterministic (seeded) generator of FPU operands.
class OperandGen {
 public:
  /// A generator whose sequence depends only on seed.
  explicit OperandGen(uint64_t seed) : rng_(seed) {}

  /// One FP operand from the weighted mix of special classes and random bits.
  uint32_t fp();
  /// One integer operand for FCVT.S.W[U] (edges, small values, random widths).
  uint32_t integer();
  /// An operand set for op, often with a relation between the operands (see the .cpp).
  Operands operands(FpuOp op);

  /// FP edge values for the exhaustive cross products.
  static std::vector<uint32_t> fp_edges();
  /// A shorter FP edge list for the three-operand cross products.
  static std::vector<uint32_t> fma_edges();
  /// Integer edge values for FCVT.S.W[U].
  static std::vector<uint32_t> int_edges();

 private:
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }
  uint32_t sign() { return static_cast<uint32_t>(rng_() & 1) << 31; }
  uint32_t frac() { return static_cast<uint32_t>(rng_()) & 0x7fffffu; }
  uint32_t with_exp(uint32_t e) { return sign() | (e << 23) | frac(); }
  uint32_t nudge(uint32_t x);  // x moved by a few ulps (as bits), sign kept
  uint32_t few_bits();         // a normal number with only a few significant bits

  std::mt19937_64 rng_;
};

}  // namespace tessera::fpu_test
