// The matrix unit's host reference, its operand sets (directed and random) and the program that
// runs a batch of them through every data-moving unit instruction (docs/tile.md, "Matrix unit"):
// shared by the model's tests (host/model/tests/amp_reference.hpp runs it on a TileModel) and the
// device tests that run it on every backend (host/tests/amp_device_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "rv_encode.hpp"

namespace tessera::test {

/// One operand set of AMP.S: inputs x, a weight bank W[k][j] and the accumulator row before.
struct AmpOperands {
  std::array<uint32_t, 4> x{};
  std::array<uint32_t, 16> w{};
  std::array<uint32_t, 4> acc{};
};

/// fma(a, b, c) in RNE with the core's NaN rule (every NaN result is the canonical NaN), on the
/// host's correctly rounded fmaf: a reference independent of the model's soft-float.
inline uint32_t referenceFma(uint32_t a, uint32_t b, uint32_t c) {
  const float r =
      std::fma(std::bit_cast<float>(a), std::bit_cast<float>(b), std::bit_cast<float>(c));
  return std::isnan(r) ? 0x7fc00000u : std::bit_cast<uint32_t>(r);
}

/// acc[j] after AMP.S: fma(x3,W3j, fma(x2,W2j, fma(x1,W1j, fma(x0,W0j, acc[j])))).
inline std::array<uint32_t, 4> referenceAmp(const AmpOperands& o) {
  std::array<uint32_t, 4> out{};
  for (unsigned j = 0; j < 4; ++j) {
    uint32_t sum = o.acc[j];
    for (unsigned k = 0; k < 4; ++k) sum = referenceFma(o.x[k], o.w[k * 4 + j], sum);
    out[j] = sum;
  }
  return out;
}

/// Operands that reach the special cases often: signed zeros, subnormals, infinities, NaNs with
/// payloads (quiet and signalling), the largest finite values (overflow), values of similar
/// magnitude (cancellation), and random bit patterns.
inline uint32_t randomOperand(std::mt19937_64& rng) {
  const uint64_t r = rng();
  const uint32_t sign = static_cast<uint32_t>(r >> 63) << 31;
  const uint32_t mant = static_cast<uint32_t>(r >> 8) & 0x7fffffu;
  switch (r % 16) {
    case 0:
      return sign;  // ±0
    case 1:
      return sign | (mant ? mant : 1u);  // subnormal
    case 2:
      return sign | 0x7f800000u;  // ±∞
    case 3:
      return sign | 0x7fc00000u | (mant & 0x3fffffu);  // quiet NaN with a payload
    case 4:
      return sign | 0x7f800000u | ((mant & 0x3fffffu) ? (mant & 0x3fffffu) : 1u);  // signalling
    case 5:
      return sign | 0x7f000000u | mant;  // near the top: products and sums overflow
    case 6:
      return sign | 0x00800000u | mant;  // smallest normals: results underflow
    case 7:
    case 8:
      return static_cast<uint32_t>(r >> 16);  // any bits
    default:
      // Magnitudes within 2^±8 of 1: long chains with cancellation and inexact sums.
      return sign | static_cast<uint32_t>(119 + (r >> 40) % 16) << 23 | mant;
  }
}

/// Operand sets of the sweep, from a fixed seed so that a failure is reproducible.
inline std::vector<AmpOperands> randomAmpOperands(std::mt19937_64& rng, size_t n) {
  std::vector<AmpOperands> sets(n);
  for (AmpOperands& o : sets) {
    for (uint32_t& v : o.x) v = randomOperand(rng);
    for (uint32_t& v : o.w) v = randomOperand(rng);
    for (uint32_t& v : o.acc) v = randomOperand(rng);
  }
  return sets;
}

/// An operand set with the result the IEEE rules give, worked by hand.
struct AmpDirectedCase {
  AmpOperands o;
  std::array<uint32_t, 4> want;
};

/// Directed special values: signed zeros, subnormals, overflow, 0·∞ and ∞ − ∞, NaN payloads.
inline std::vector<AmpDirectedCase> directedAmpCases() {
  constexpr uint32_t kOne = 0x3f800000u, kTwo = 0x40000000u, kInf = 0x7f800000u, kMax = 0x7f7fffffu,
                     kMinSub = 0x00000001u, kNeg = 0x80000000u, kSnan = 0x7f800123u,
                     kQnanPayload = 0xffc54321u, kNaN = 0x7fc00000u;
  auto diag = [](uint32_t v) {  // W = v on the diagonal, +0 elsewhere
    std::array<uint32_t, 16> w{};
    for (unsigned k = 0; k < 4; ++k) w[k * 4 + k] = v;
    return w;
  };
  std::vector<AmpDirectedCase> cases = {
      // x·I + acc: column j gets fma(x_j, 1, acc_j) after three exact +0 products.
      {{{kOne, kTwo, kNeg, 0}, diag(kOne), {0, 0, 0, kNeg}}, {kOne, kTwo, 0, 0}},
      // Signed zeros: −0 products onto −0 stay −0 and onto +0 give +0; +0 products onto −0
      // give +0 (an exact zero sum of opposite signs is +0 in RNE).
      {{{kNeg, kNeg, kNeg, kNeg}, diag(kOne), {kNeg, 0, kNeg, 0}}, {kNeg, 0, kNeg, 0}},
      {{{0, 0, 0, 0}, diag(kOne), {kNeg, kNeg, kNeg, kNeg}}, {0, 0, 0, 0}},
      // Subnormals are kept: 1 · minsub + minsub = 2·minsub; x = minsub times 1 + 0.
      {{{kMinSub, kMinSub, 0, 0}, diag(kOne), {kMinSub, 0, 0, 0}}, {2 * kMinSub, kMinSub, 0, 0}},
      // Column 0 overflows to +∞ (max · 2 + max); column 1 meets 0 · ∞ and column 2 ∞ − ∞,
      // both the canonical NaN; column 3 is 1 · 2 = 2 after three zero products.
      {{{kMax, kOne, 0, kOne}, diag(kTwo), {kMax, 0, 0xff800000u, 0}}, {kInf, kNaN, kNaN, kTwo}},
      // NaN payloads are not propagated: quiet and signalling inputs give the canonical NaN.
      {{{kQnanPayload, kSnan, kOne, kOne}, diag(kOne), {0, 0, kSnan, kQnanPayload}},
       {kNaN, kNaN, kNaN, kNaN}},
  };
  cases[4].o.w[2 * 4 + 1] = kInf;  // x2 = 0 times ∞ in column 1
  cases[4].o.w[3 * 4 + 2] = kInf;  // x3 = 1 times ∞ onto −∞ in column 2
  return cases;
}

/// A batch program and its memory layout: per set, AMP.LW x4 (bank b), AMP.LA (row r), AMP.S,
/// AMP.RD (column j) and FSW, AMP.SA with clear, in a loop over the sets laid out in memory;
/// then the cleared row's AMP.RD stored after the AMP.RD words, and EXIT. Code at 0.
struct AmpBatch {
  static constexpr uint32_t kW = 0x1000;  // n * 64 bytes of weights, then acc, x, out, rd
  uint32_t n = 0, accBase = 0, xBase = 0, outBase = 0, rdBase = 0;
  unsigned b = 0, r = 0, j = 0;
  std::vector<uint32_t> program;

  /// The batch of n sets on bank b, row r, column j.
  AmpBatch(uint32_t sets, unsigned bank, unsigned row, unsigned col)
      : n(sets),
        accBase(kW + 64 * sets),
        xBase(accBase + 16 * sets),
        outBase(xBase + 16 * sets),
        rdBase(outBase + 16 * sets),
        b(bank),
        r(row),
        j(col) {
    using namespace rv;
    auto emit = [&](auto... words) { (program.push_back(words), ...); };
    auto emitLi = [&](uint32_t rd, uint32_t v) {
      for (uint32_t w : li(rd, v)) program.push_back(w);
    };
    emitLi(a0, kW);
    emitLi(a1, accBase);
    emitLi(a2, xBase);
    emitLi(a3, outBase);
    emitLi(a4, rdBase);
    emitLi(a5, n);
    const int32_t loop = static_cast<int32_t>(program.size());
    emit(amp_lw(a0, a0, b, 0), amp_lw(a0, a0, b, 1), amp_lw(a0, a0, b, 2), amp_lw(a0, a0, b, 3),
         amp_la(a1, a1, r), amp_s(a2, a2, b, r), amp_rd(1, r, j), fsw(1, a4, 0), addi(a4, a4, 4),
         amp_sa(a3, a3, r, 1), addi(a5, a5, -1));
    emit(bne(a5, zero, 4 * (loop - static_cast<int32_t>(program.size()))));
    // After the last set's clearing AMP.SA the row must read +0.
    emit(amp_rd(2, r, j), fsw(2, a4, 0), lui(t0, 0x80000), sw(zero, t0, 0));
  }
  /// Bytes of memory the batch needs from 0.
  uint32_t endBytes() const { return rdBase + 4 * n + 4; }

  /// Writes the program and the sets through write(addr, words, count).
  template <class Write>
  void place(const std::vector<AmpOperands>& sets, Write&& write) const {
    write(0, program.data(), program.size());
    for (uint32_t i = 0; i < n; ++i) {
      write(kW + 64 * i, sets[i].w.data(), 16);
      write(accBase + 16 * i, sets[i].acc.data(), 4);
      write(xBase + 16 * i, sets[i].x.data(), 4);
    }
  }

  /// Compares every result (read(addr, words, count)) with the reference; returns the mismatches
  /// and reports the first few.
  template <class Read>
  size_t check(const std::vector<AmpOperands>& sets, Read&& read) const {
    uint32_t cleared = ~0u;
    read(rdBase + 4 * n, &cleared, 1);
    EXPECT_EQ(cleared, 0u) << "AMP.SA with C did not clear row " << r;
    size_t bad = 0;
    for (uint32_t i = 0; i < n; ++i) {
      std::array<uint32_t, 4> got{};
      read(outBase + 16 * i, got.data(), 4);
      uint32_t rd = 0;
      read(rdBase + 4 * i, &rd, 1);
      const std::array<uint32_t, 4> want = referenceAmp(sets[i]);
      if (got != want || rd != want[j]) {
        if (++bad <= 5) {
          unsigned c = 0;
          while (c < 3 && got[c] == want[c]) ++c;
          ADD_FAILURE() << std::hex << "set " << i << " (b " << b << ", r " << r << "): acc "
                        << sets[i].acc[c] << " x " << sets[i].x[0] << ' ' << sets[i].x[1] << ' '
                        << sets[i].x[2] << ' ' << sets[i].x[3] << " W column " << sets[i].w[c]
                        << ' ' << sets[i].w[4 + c] << ' ' << sets[i].w[8 + c] << ' '
                        << sets[i].w[12 + c] << ": column " << c << " got " << got[c] << " want "
                        << want[c] << ", AMP.RD (column " << j << ") got " << rd << " want "
                        << want[j];
        }
      }
    }
    return bad;
  }
};

}  // namespace tessera::test
