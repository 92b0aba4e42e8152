// The matrix unit's host reference and its operand sweep (docs/tile.md, "Matrix unit"), shared by
// the model's regular tests (a short sweep) and amp_sweep (the long one, label "sweep").
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "tile_harness.hpp"

namespace tessera::model::test {

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

/// Runs `sets` through every data-moving unit instruction on the model and compares each result
/// with the reference: per set, AMP.LW x4 (bank b), AMP.LA (row r), AMP.S, AMP.RD (column j) and
/// FSW, AMP.SA with clear, in a loop over the sets laid out in memory. Returns the mismatches.
inline size_t runAmpBatch(const std::vector<AmpOperands>& sets, unsigned b, unsigned r,
                          unsigned j) {
  using namespace rv;
  constexpr uint32_t kW = 0x1000;  // sets.size() * 64 bytes of weights, then acc, x, out, rd
  const uint32_t n = static_cast<uint32_t>(sets.size());
  const uint32_t accBase = kW + 64 * n, xBase = accBase + 16 * n, outBase = xBase + 16 * n,
                 rdBase = outBase + 16 * n;
  TileConfig config{0, 1, 65536, true, true, TESS_NUM_CONTEXTS};
  config.hasMatrixUnit = true;
  TileModel tile(config);
  if (rdBase + 4 * n > config.memBytes) {
    ADD_FAILURE() << "batch of " << n << " sets does not fit in tile memory";
    return n;
  }
  std::vector<uint32_t> prog;
  auto emit = [&](auto... words) { (prog.push_back(words), ...); };
  auto emitLi = [&](uint32_t rd, uint32_t v) {
    for (uint32_t w : li(rd, v)) prog.push_back(w);
  };
  emitLi(a0, kW);
  emitLi(a1, accBase);
  emitLi(a2, xBase);
  emitLi(a3, outBase);
  emitLi(a4, rdBase);
  emitLi(a5, n);
  const int32_t loop = static_cast<int32_t>(prog.size());
  emit(amp_lw(a0, a0, b, 0), amp_lw(a0, a0, b, 1), amp_lw(a0, a0, b, 2), amp_lw(a0, a0, b, 3),
       amp_la(a1, a1, r), amp_s(a2, a2, b, r), amp_rd(1, r, j), fsw(1, a4, 0), addi(a4, a4, 4),
       amp_sa(a3, a3, r, 1), addi(a5, a5, -1));
  emit(bne(a5, zero, 4 * (loop - static_cast<int32_t>(prog.size()))));
  // After the last set's clearing AMP.SA the row must read +0.
  emit(amp_rd(2, r, j), kLoadMmioBase, kExit);

  auto put = [&](uint32_t addr, const uint32_t* words, size_t count) {
    tile.writeMemory(addr, std::span(reinterpret_cast<const uint8_t*>(words), count * 4));
  };
  put(0, prog.data(), prog.size());
  for (uint32_t i = 0; i < n; ++i) {
    put(kW + 64 * i, sets[i].w.data(), 16);
    put(accBase + 16 * i, sets[i].acc.data(), 4);
    put(xBase + 16 * i, sets[i].x.data(), 4);
  }
  const TileState state = tile.run(uint64_t{1} << 40);
  if (state != TileState::Halted) {
    ADD_FAILURE() << "the sweep program did not halt (trap cause " << tile.trap().cause << ")";
    return n;
  }
  EXPECT_EQ(tile.freg(0, 2), 0u) << "AMP.SA with C did not clear row " << r;
  size_t bad = 0;
  for (uint32_t i = 0; i < n; ++i) {
    std::array<uint32_t, 4> got{};
    tile.readMemory(outBase + 16 * i, std::span(reinterpret_cast<uint8_t*>(got.data()), 16));
    uint32_t rd = 0;
    tile.readMemory(rdBase + 4 * i, std::span(reinterpret_cast<uint8_t*>(&rd), 4));
    const std::array<uint32_t, 4> want = referenceAmp(sets[i]);
    if (got != want || rd != want[j]) {
      if (++bad <= 5) {
        unsigned c = 0;
        while (c < 3 && got[c] == want[c]) ++c;
        ADD_FAILURE() << std::hex << "set " << i << " (b " << b << ", r " << r << "): acc "
                      << sets[i].acc[c] << " x " << sets[i].x[0] << ' ' << sets[i].x[1] << ' '
                      << sets[i].x[2] << ' ' << sets[i].x[3] << " W column " << sets[i].w[c] << ' '
                      << sets[i].w[4 + c] << ' ' << sets[i].w[8 + c] << ' ' << sets[i].w[12 + c]
                      << ": column " << c << " got " << got[c] << " want " << want[c]
                      << ", AMP.RD (column " << j << ") got " << rd << " want " << want[j];
      }
    }
  }
  return bad;
}

/// The sweep: `total` random operand sets in batches, every bank, row and column in turn.
inline void ampSweep(size_t total, uint64_t seed) {
  std::mt19937_64 rng(seed);
  constexpr size_t kBatch = 400;
  size_t bad = 0;
  for (size_t done = 0, batch = 0; done < total; done += kBatch, ++batch) {
    const std::vector<AmpOperands> sets = randomAmpOperands(rng, std::min(kBatch, total - done));
    bad += runAmpBatch(sets, static_cast<unsigned>(batch % 2), static_cast<unsigned>(batch / 2 % 4),
                       static_cast<unsigned>(batch / 8 % 4));
  }
  EXPECT_EQ(bad, 0u) << "of " << total << " operand sets";
}

}  // namespace tessera::model::test
