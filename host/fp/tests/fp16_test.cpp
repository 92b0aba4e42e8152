// The matrix unit's binary16 conversions (fp16.hpp) against the host compiler's _Float16 (an
// independent implementation: libgcc's conversions, nearest-even) and the stochastic rounding
// against its definition worked in exact double arithmetic (docs/tile.md, "fp16 conversions").
#include "fp16.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "fp32.hpp"

namespace tessera::fp {
namespace {

uint16_t hostNarrow(uint32_t a) {
  const float f = std::bit_cast<float>(a);
  return std::isnan(f) ? kCanonicalNaN16 : std::bit_cast<uint16_t>(static_cast<_Float16>(f));
}

TEST(Fp16, WideningMatchesTheHostForEveryHalf) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = static_cast<float>(std::bit_cast<_Float16>(static_cast<uint16_t>(h)));
    const uint32_t want = std::isnan(f) ? kCanonicalNaN : std::bit_cast<uint32_t>(f);
    ASSERT_EQ(f16_to_f32(static_cast<uint16_t>(h)), want) << std::hex << h;
  }
}

TEST(Fp16, NearestEvenMatchesTheHost) {
  size_t bad = 0;
  auto check = [&](uint32_t a) {
    if (f32_to_f16(a, false, 0) != hostNarrow(a) && ++bad <= 5) {
      ADD_FAILURE() << std::hex << a << " got " << f32_to_f16(a, false, 0) << " want "
                    << hostNarrow(a);
    }
  };
  for (uint64_t a = 0; a < (uint64_t{1} << 32); a += 4099) check(static_cast<uint32_t>(a));
  // Every exponent around binary16's range, with mantissas near each rounding boundary.
  for (uint32_t e = 90; e < 150; ++e) {
    for (uint32_t hi = 0; hi < 1024; hi += 7) {
      for (uint32_t lo : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x1fffu}) {
        check(e << 23 | hi << 13 | lo);
        check(0x80000000u | e << 23 | hi << 13 | lo);
      }
    }
  }
  std::mt19937_64 rng(0xf16);
  for (int i = 0; i < 1000000; ++i) check(static_cast<uint32_t>(rng()));
  EXPECT_EQ(bad, 0u);
}

// The largest half at or below |v| (65536 standing for ∞ above 65504) and its upper neighbour.
double halfValue(uint32_t bits) {
  return bits >= 0x7c00u
             ? 65536.0
             : static_cast<double>(std::bit_cast<_Float16>(static_cast<uint16_t>(bits)));
}

TEST(Fp16, StochasticRoundingFollowsItsDefinition) {
  std::mt19937_64 rng(0x5a);
  size_t bad = 0;
  for (int i = 0; i < 300000; ++i) {
    uint32_t a = static_cast<uint32_t>(rng());
    if (i % 2) a = (a & 0x807fffffu) | static_cast<uint32_t>(100 + rng() % 45) << 23;
    const uint32_t u = static_cast<uint32_t>(rng()) & 0xffffu;
    const float f = std::bit_cast<float>(a);
    uint16_t want;
    if (std::isnan(f)) {
      want = kCanonicalNaN16;
    } else {
      const double v = std::fabs(static_cast<double>(f));
      uint32_t lo = 0, hi = 0x7c00u;  // binary search for the truncation
      while (lo < hi) {
        const uint32_t mid = (lo + hi + 1) / 2;
        if (halfValue(mid) <= v)
          lo = mid;
        else
          hi = mid - 1;
      }
      uint32_t t = lo;
      if (t < 0x7c00u) {
        const double frac = (v - halfValue(t)) / (halfValue(t + 1) - halfValue(t));
        const auto F = static_cast<uint32_t>(std::floor(std::ldexp(frac, 16)));
        if (F + u >= 0x10000u) ++t;
      }
      want = static_cast<uint16_t>((a >> 31) << 15 | t);
    }
    if (f32_to_f16(a, true, u) != want && ++bad <= 5) {
      ADD_FAILURE() << std::hex << a << " u " << u << " got " << f32_to_f16(a, true, u) << " want "
                    << want;
    }
  }
  EXPECT_EQ(bad, 0u);
}

// With a uniform u, SR is unbiased: the mean of many roundings of x is x.
TEST(Fp16, StochasticRoundingIsUnbiased) {
  const uint32_t a = std::bit_cast<uint32_t>(1.0f + 0.3f / 1024.0f);  // 30% of an ulp above 1
  double sum = 0;
  for (uint32_t u = 0; u < 0x10000u; ++u) sum += halfValue(f32_to_f16(a, true, u));
  EXPECT_NEAR(sum / 0x10000, static_cast<double>(std::bit_cast<float>(a)), 1e-7);
}

TEST(Fp16, GeneratorIsXorshift32) {
  uint32_t s = 1;
  for (uint32_t want : {270369u, 67634689u, 2647435461u}) EXPECT_EQ(s = amp_sr_step(s), want);
}

}  // namespace
}  // namespace tessera::fp
