// The matrix unit's host reference, its operand sets (directed and random) and the program that
// runs a batch of them through every data-moving unit instruction (docs/tile.md, "Matrix unit"):
// shared by the model's tests (host/model/tests/amp_reference.hpp runs it on a TileModel) and the
// device tests that run it on every backend (host/tests/amp_device_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "fp16.hpp"
#include "rv_encode.hpp"
#include "tessera/chip_params.h"

namespace tessera::test {

/// One operand set of AMP.S: inputs x, a weight bank W[k][j] and the accumulator row before.
/// AMP.H reads the same 16 + 64 bytes as halves (amp16x, amp16w).
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

/// Which step instruction a batch runs: AMP.S (fp32 inputs) or AMP.H (fp16 inputs).
enum class AmpPrecision { Fp32, Fp16 };

/// Input k (0..7) of AMP.H: bits 16k + 15..16k of the 16 bytes at rs1.
inline uint16_t amp16x(const AmpOperands& o, unsigned k) {
  return static_cast<uint16_t>(o.x[k / 2] >> (16 * (k % 2)));
}
/// W16[k][j] of AMP.H: the bank's 64 bytes as a row-major 8 x 4 binary16 matrix.
inline uint16_t amp16w(const AmpOperands& o, unsigned k, unsigned j) {
  const unsigned h = 4 * k + j;  // the half's index in the 64 bytes
  return static_cast<uint16_t>(o.w[h / 2] >> (16 * (h % 2)));
}

/// acc[j] after AMP.H: the chain over k = 0..7 of fma(f32(x_k), f32(W16[k][j]), acc[j]), RNE.
inline std::array<uint32_t, 4> referenceAmpH(const AmpOperands& o) {
  std::array<uint32_t, 4> out{};
  for (unsigned j = 0; j < 4; ++j) {
    uint32_t sum = o.acc[j];
    for (unsigned k = 0; k < 8; ++k) {
      sum = referenceFma(fp::f16_to_f32(amp16x(o, k)), fp::f16_to_f32(amp16w(o, k, j)), sum);
    }
    out[j] = sum;
  }
  return out;
}

/// The reference of the batch's step instruction.
inline std::array<uint32_t, 4> referenceStep(const AmpOperands& o, AmpPrecision p) {
  return p == AmpPrecision::Fp16 ? referenceAmpH(o) : referenceAmp(o);
}

/// binary16 operands that reach the special cases often: signed zeros, subnormals, infinities,
/// NaNs with payloads (quiet and signalling), the largest finite values, values near 1.
inline uint16_t randomHalf(std::mt19937_64& rng) {
  const uint64_t r = rng();
  const uint16_t sign = static_cast<uint16_t>((r >> 63) << 15);
  const uint16_t mant = static_cast<uint16_t>((r >> 8) & 0x3ffu);
  switch (r % 16) {
    case 0:
      return sign;
    case 1:
      return sign | (mant ? mant : 1u);  // subnormal
    case 2:
      return sign | 0x7c00u;
    case 3:
      return sign | 0x7e00u | (mant & 0x1ffu);  // quiet NaN with a payload
    case 4:
      return sign | 0x7c00u | ((mant & 0x1ffu) ? (mant & 0x1ffu) : 1u);  // signalling
    case 5:
      return sign | 0x7800u | mant;  // near 65504: products near 2^32
    case 6:
    case 7:
      return static_cast<uint16_t>(r >> 16);  // any bits
    default:
      // Magnitudes within 2^±4 of 1.
      return sign | static_cast<uint16_t>((11 + (r >> 40) % 8) << 10) | mant;
  }
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

/// Operand sets of AMP.H: halves from randomHalf, the accumulator from randomOperand.
inline std::vector<AmpOperands> randomAmpHOperands(std::mt19937_64& rng, size_t n) {
  std::vector<AmpOperands> sets(n);
  auto pair = [&] { return uint32_t{randomHalf(rng)} | uint32_t{randomHalf(rng)} << 16; };
  for (AmpOperands& o : sets) {
    for (uint32_t& v : o.x) v = pair();
    for (uint32_t& v : o.w) v = pair();
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

/// Directed AMP.H values: signed zeros, binary16 subnormals (exact in binary32), ∞ and NaN
/// inputs, 0·∞, the largest halves, and a chain that is inexact in binary32.
inline std::vector<AmpDirectedCase> directedAmpHCases() {
  constexpr uint16_t kOne = 0x3c00u, kTwo = 0x4000u, kInf = 0x7c00u, kMax = 0x7bffu,
                     kMinSub = 0x0001u, kNeg = 0x8000u, kSnan = 0x7c01u, kQnanPayload = 0xfe55u,
                     kThird = 0x3555u;  // 0.333251953125
  constexpr uint32_t kNaN = 0x7fc00000u;
  // x_k as 8 halves; W16 = v on the diagonal k = j and k = j + 4, +0 elsewhere.
  auto set = [](std::array<uint16_t, 8> x, uint16_t v, std::array<uint32_t, 4> acc) {
    AmpOperands o;
    for (unsigned k = 0; k < 8; ++k) o.x[k / 2] |= uint32_t{x[k]} << (16 * (k % 2));
    for (unsigned j = 0; j < 4; ++j) {
      for (unsigned k : {j, j + 4}) {
        const unsigned h = 4 * k + j;
        o.w[h / 2] |= uint32_t{v} << (16 * (h % 2));
      }
    }
    o.acc = acc;
    return o;
  };
  std::vector<AmpDirectedCase> cases = {
      // Column j sums x_j·1 and x_{j+4}·1 onto acc_j: 1 + 2, 2 + 0, 1 + 1; in column 2 the +0
      // product x0·W16[0][2] makes the −0 accumulator +0 (RNE), and the −0 products keep it.
      {set({kOne, kTwo, kNeg, kOne, kTwo, 0, kNeg, kOne}, kOne, {0, 0, 0x80000000u, 0}),
       {0x40400000u, 0x40000000u, 0, 0x40000000u}},
      // Signed zeros: −0 products (x all −0) onto −0 stay −0, onto +0 give +0.
      {set({kNeg, kNeg, kNeg, kNeg, kNeg, kNeg, kNeg, kNeg}, kOne,
           {0x80000000u, 0, 0x80000000u, 0}),
       {0x80000000u, 0, 0x80000000u, 0}},
      // Subnormal halves are exact normals in binary32: 2^-24 · 1 = 0x33800000, and column 2
      // adds it twice (2^-23).
      {set({kMinSub, 0, kMinSub, 0, 0, 0, kMinSub, 0}, kOne, {0, 0, 0, 0}),
       {0x33800000u, 0, 0x34000000u, 0}},
      // The largest halves: 65504² · 2 = 4190209 · 2^11, exact in binary32; zeros; a NaN
      // accumulator with a payload gives the canonical NaN; 65504 · 2 = 131008.
      {set({kMax, 0, kOne, kOne, kMax, 0, kOne, kOne}, kMax, {0, 0, 0x7fc12345u, 0}),
       {0x4fffc004u, 0, kNaN, 0x47ffe000u}},
      // NaN inputs (quiet with a payload, signalling) reach every column: the canonical NaN.
      {set({kQnanPayload, kSnan, 0, 0, 0, 0, 0, 0}, kOne, {0, 0, 0, 0}), {kNaN, kNaN, kNaN, kNaN}},
      // ∞ weights: 0·∞ (column 0), ∞ + ∞ (1), −∞ + ∞ (2, from the accumulator), ∞ − ∞ (3).
      {set({0, kOne, kOne, kOne, 0, kOne, kOne, 0xbc00u}, kInf, {0, 0, 0xff800000u, 0}),
       {kNaN, 0x7f800000u, kNaN, kNaN}},
      // Rounding in binary32 (the products are exact): (1 + 2^-23) + 2·(2·0.333251953125) in
      // column 0 ends on a tie at the binary32 ulp of 2 (2^-22), rounded to even (down) to
      // 2.3330078125; the other columns are 2·0.66650390625 = 1.3330078125, exact.
      {set({kThird, kThird, kThird, kThird, kThird, kThird, kThird, kThird}, kTwo,
           {0x3f800001u, 0, 0, 0}),
       {0x40155000u, 0x3faaa000u, 0x3faaa000u, 0x3faaa000u}},
  };
  return cases;
}

/// A batch program and its memory layout: per set, AMP.LW x4 (bank b), AMP.LA (row r), AMP.S
/// (or AMP.H with AmpPrecision::Fp16), AMP.RD (column j) and FSW, AMP.SA with clear, in a loop
/// over the sets laid out in memory; then the cleared row's AMP.RD stored after the AMP.RD
/// words, and EXIT. Code at 0.
struct AmpBatch {
  static constexpr uint32_t kW = 0x1000;  // n * 64 bytes of weights, then acc, x, out, rd
  uint32_t n = 0, accBase = 0, xBase = 0, outBase = 0, rdBase = 0;
  unsigned b = 0, r = 0, j = 0;
  AmpPrecision precision = AmpPrecision::Fp32;
  std::vector<uint32_t> program;

  /// The batch of n sets on bank b, row r, column j, stepped by AMP.S or AMP.H.
  AmpBatch(uint32_t sets, unsigned bank, unsigned row, unsigned col,
           AmpPrecision p = AmpPrecision::Fp32)
      : n(sets),
        accBase(kW + 64 * sets),
        xBase(accBase + 16 * sets),
        outBase(xBase + 16 * sets),
        rdBase(outBase + 16 * sets),
        b(bank),
        r(row),
        j(col),
        precision(p) {
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
         amp_la(a1, a1, r), p == AmpPrecision::Fp16 ? amp_h(a2, a2, b, r) : amp_s(a2, a2, b, r),
         amp_rd(1, r, j), fsw(1, a4, 0), addi(a4, a4, 4), amp_sa(a3, a3, r, 1), addi(a5, a5, -1));
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
      const std::array<uint32_t, 4> want = referenceStep(sets[i], precision);
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

/// One operand set of the conversions: two binary32 patterns a, b for AMP.CVTHS and
/// AMP.CVTHS.SR (rs1, rs2), and two packed halves h for AMP.CVTSH.LO and .HI.
struct AmpCvtOperands {
  uint32_t a = 0, b = 0, h = 0;
};

/// The four results of one set: {RNE pack, SR pack, binary32 of h's low half, of its high half}.
using AmpCvtResults = std::array<uint32_t, 4>;

/// The results of `sets` in order, the generator seeded with `seed` (AMP.SEED) and stepped once
/// per AMP.CVTHS.SR: low half with bits 15..0 of the new state, high half with bits 31..16.
inline std::vector<AmpCvtResults> referenceCvt(const std::vector<AmpCvtOperands>& sets,
                                               uint32_t seed) {
  uint32_t state = seed ? seed : TESS_AMP_SR_SEED0;
  std::vector<AmpCvtResults> out;
  out.reserve(sets.size());
  for (const AmpCvtOperands& o : sets) {
    const uint32_t rne =
        uint32_t{fp::f32_to_f16(o.b, false, 0)} << 16 | fp::f32_to_f16(o.a, false, 0);
    state = fp::amp_sr_step(state);
    const uint32_t sr = uint32_t{fp::f32_to_f16(o.b, true, state >> 16)} << 16 |
                        fp::f32_to_f16(o.a, true, state & 0xffffu);
    out.push_back({rne, sr, fp::f16_to_f32(static_cast<uint16_t>(o.h)),
                   fp::f16_to_f32(static_cast<uint16_t>(o.h >> 16))});
  }
  return out;
}

/// binary32 operands of the narrowing that reach its cases often: signed zeros, infinities,
/// NaN payloads, binary32 subnormals, the binary16 subnormal range, the top of its range
/// (65504, 65520 and beyond), exact halves and ties, and random bits.
inline uint32_t randomCvtOperand(std::mt19937_64& rng) {
  const uint64_t r = rng();
  const uint32_t sign = static_cast<uint32_t>(r >> 63) << 31;
  const uint32_t mant = static_cast<uint32_t>(r >> 8) & 0x7fffffu;
  const uint32_t e16 = static_cast<uint32_t>(113 + (r >> 40) % 30);  // binary16's normal range
  switch (r % 16) {
    case 0:
      return sign;
    case 1:
      return sign | 0x7f800000u;
    case 2:
      return sign | 0x7f800000u | (mant ? mant : 1u);  // NaN, quiet or signalling
    case 3:
      return sign | (mant ? mant : 1u);  // binary32 subnormal
    case 4:
      return sign | static_cast<uint32_t>(100 + (r >> 40) % 14) << 23 | mant;  // near 2^-24
    case 5:
      return sign | static_cast<uint32_t>(141 + (r >> 40) % 3) << 23 | mant;  // near 65504
    case 6:
      return sign | e16 << 23 | (mant & ~0x1fffu) | 0x1000u;  // a tie
    case 7:
      return sign | e16 << 23 | (mant & ~0x1fffu);  // exact
    case 8:
    case 9:
      return static_cast<uint32_t>(r >> 16);
    default:
      return sign | e16 << 23 | mant;
  }
}

/// Operand sets of the conversions.
inline std::vector<AmpCvtOperands> randomCvtOperands(std::mt19937_64& rng, size_t n) {
  std::vector<AmpCvtOperands> sets(n);
  for (AmpCvtOperands& o : sets) {
    o.a = randomCvtOperand(rng);
    o.b = randomCvtOperand(rng);
    o.h = uint32_t{randomHalf(rng)} | uint32_t{randomHalf(rng)} << 16;
  }
  return sets;
}

/// A narrowing or widening with the result IEEE 754 gives, worked by hand.
struct CvtCase {
  uint32_t in;
  uint32_t want;
};

/// binary32 -> binary16, nearest-even: overflow, ties, subnormals, signed zeros, NaN payloads.
inline std::vector<CvtCase> directedNarrowCases() {
  return {
      {0x3f800000u, 0x3c00u},  // 1
      {0xc0000000u, 0xc000u},  // −2
      {0x477fe000u, 0x7bffu},  // 65504, the largest half
      {0x477fefffu, 0x7bffu},  // just below 65520: down
      {0x477ff000u, 0x7c00u},  // 65520: the tie rounds to even, ∞
      {0x501502f9u, 0x7c00u},  // 10^10: ∞
      {0xc77ff000u, 0xfc00u},  // −65520: −∞
      {0xff800000u, 0xfc00u},  // −∞
      {0xffc12345u, 0x7e00u},  // quiet NaN with a payload and the sign: the canonical NaN
      {0x7f800001u, 0x7e00u},  // signalling NaN
      {0x00000000u, 0x0000u},  // +0
      {0x80000000u, 0x8000u},  // −0
      {0x33800000u, 0x0001u},  // 2^-24, the smallest subnormal half
      {0x33000000u, 0x0000u},  // 2^-25: a tie between 0 and 2^-24, to even (+0)
      {0x33000001u, 0x0001u},  // just above it
      {0xb3000000u, 0x8000u},  // −2^-25: −0
      {0x33400000u, 0x0001u},  // 0.75·2^-24: up
      {0x33c00000u, 0x0002u},  // 1.5·2^-24: a tie between 1 and 2 ulps, to even
      {0x387fe000u, 0x0400u},  // 1023.5·2^-24: a tie, to even = the smallest normal 2^-14
      {0x38800000u, 0x0400u},  // 2^-14
      {0x3f801000u, 0x3c00u},  // 1 + 2^-11: a tie, to even (down)
      {0x3f803000u, 0x3c02u},  // 1 + 3·2^-11: a tie, to even (up)
      {0x3f801001u, 0x3c01u},  // just above 1 + 2^-11: up
      {0x00000001u, 0x0000u},  // a binary32 subnormal: +0
      {0x80000001u, 0x8000u},  // −0
  };
}

/// binary16 -> binary32, exact: subnormals normalised, NaN canonical.
inline std::vector<CvtCase> directedWidenCases() {
  return {
      {0x0001u, 0x33800000u}, {0x8001u, 0xb3800000u}, {0x03ffu, 0x387fc000u},
      {0x0400u, 0x38800000u}, {0x7bffu, 0x477fe000u}, {0x7c00u, 0x7f800000u},
      {0xfc00u, 0xff800000u}, {0x7e00u, 0x7fc00000u}, {0x7c01u, 0x7fc00000u},
      {0xfe55u, 0x7fc00000u}, {0x0000u, 0x00000000u}, {0x8000u, 0x80000000u},
      {0x3c00u, 0x3f800000u}, {0xc000u, 0xc0000000u}, {0x3555u, 0x3eaaa000u},
  };
}

/// The directed cases as operand sets (narrowing in a and b, widening in h's two halves).
inline std::vector<AmpCvtOperands> directedCvtOperands() {
  const std::vector<CvtCase> narrow = directedNarrowCases(), widen = directedWidenCases();
  std::vector<AmpCvtOperands> sets;
  for (size_t i = 0; i < std::max(narrow.size(), widen.size()); ++i) {
    AmpCvtOperands o;
    o.a = narrow[i % narrow.size()].in;
    o.b = narrow[(i + 1) % narrow.size()].in;
    o.h = widen[i % widen.size()].in | widen[(i + 3) % widen.size()].in << 16;
    sets.push_back(o);
  }
  return sets;
}

/// A conversion batch program: AMP.SEED, then per set (12 bytes in: a, b, h) LW x3, AMP.CVTHS
/// and SW, AMP.CVTHS.SR and SW, AMP.CVTSH.LO and .HI and FSW x2 (16 bytes out), in a loop;
/// then the generator's next AMP.CVTHS.SR of 1 + 2^-11 (both halves) stored after the results,
/// and EXIT. Code at 0.
struct AmpCvtBatch {
  static constexpr uint32_t kIn = 0x1000;
  uint32_t n = 0, seed = 0, outBase = 0;
  std::vector<uint32_t> program;

  /// The batch of n sets with the generator seeded by `seed`.
  AmpCvtBatch(uint32_t sets, uint32_t seedValue)
      : n(sets), seed(seedValue), outBase(kIn + 12 * sets) {
    using namespace rv;
    auto emit = [&](auto... words) { (program.push_back(words), ...); };
    auto emitLi = [&](uint32_t rd, uint32_t v) {
      for (uint32_t w : li(rd, v)) program.push_back(w);
    };
    emitLi(a0, kIn);
    emitLi(a1, outBase);
    emitLi(a5, n);
    emitLi(t1, seed);
    emit(amp_seed(t1));
    const int32_t loop = static_cast<int32_t>(program.size());
    emit(lw(a2, a0, 0), lw(a3, a0, 4), lw(a4, a0, 8), amp_cvths(t2, a2, a3), sw(t2, a1, 0),
         amp_cvths_sr(t2, a2, a3), sw(t2, a1, 4), amp_cvtsh_lo(1, a4), fsw(1, a1, 8),
         amp_cvtsh_hi(2, a4), fsw(2, a1, 12), addi(a0, a0, 12), addi(a1, a1, 16), addi(a5, a5, -1));
    emit(bne(a5, zero, 4 * (loop - static_cast<int32_t>(program.size()))));
    emitLi(a2, 0x3f801000u);
    emit(amp_cvths_sr(t2, a2, a2), sw(t2, a1, 0), lui(t0, 0x80000), sw(zero, t0, 0));
  }
  /// Bytes of memory the batch needs from 0.
  uint32_t endBytes() const { return outBase + 16 * n + 4; }

  /// Writes the program and the sets through write(addr, words, count).
  template <class Write>
  void place(const std::vector<AmpCvtOperands>& sets, Write&& write) const {
    write(0, program.data(), program.size());
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t in[3] = {sets[i].a, sets[i].b, sets[i].h};
      write(kIn + 12 * i, in, 3);
    }
  }

  /// Compares every result (read(addr, words, count)) with the reference; returns the mismatches
  /// and reports the first few.
  template <class Read>
  size_t check(const std::vector<AmpCvtOperands>& sets, Read&& read) const {
    const std::vector<AmpCvtResults> want = referenceCvt(sets, seed);
    std::vector<AmpCvtOperands> tail = sets;
    tail.push_back({0x3f801000u, 0x3f801000u, 0});
    uint32_t last = 0;
    read(outBase + 16 * n, &last, 1);
    EXPECT_EQ(last, referenceCvt(tail, seed).back()[1]) << "the generator after the batch";
    size_t bad = 0;
    static constexpr const char* kWhat[4] = {"AMP.CVTHS", "AMP.CVTHS.SR", "AMP.CVTSH.LO",
                                             "AMP.CVTSH.HI"};
    for (uint32_t i = 0; i < n; ++i) {
      AmpCvtResults got{};
      read(outBase + 16 * i, got.data(), 4);
      if (got == want[i]) continue;
      if (++bad <= 5) {
        unsigned c = 0;
        while (c < 3 && got[c] == want[i][c]) ++c;
        ADD_FAILURE() << std::hex << "set " << i << " a " << sets[i].a << " b " << sets[i].b
                      << " h " << sets[i].h << ": " << kWhat[c] << " got " << got[c] << " want "
                      << want[i][c];
      }
    }
    return bad;
  }
};

}  // namespace tessera::test
