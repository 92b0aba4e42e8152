// round_double() against the host: x86 CVTSD2SS rounds a double to binary32 in the MXCSR mode
// with IEEE flags (tininess after rounding), so in RNE/RTZ/RDN/RUP both must agree bit for bit.
#include "round.hpp"

#include <gtest/gtest.h>
#include <immintrin.h>

#include <bit>
#include <random>

namespace tessera::fp {
namespace {

Result host_round(double x, unsigned rm) {
  static constexpr uint32_t kRc[4] = {0, 3u << 13, 1u << 13, 2u << 13};
  const unsigned saved = _mm_getcsr();
  __m128d v = _mm_set_sd(x);
  asm volatile("" : "+x"(v));
  _mm_setcsr(0x1f80 | kRc[rm]);
  __m128 r = _mm_cvtsd_ss(_mm_setzero_ps(), v);
  asm volatile("" : "+x"(r));
  const uint32_t mx = _mm_getcsr() & 0x3f;
  _mm_setcsr(saved);
  const uint32_t flags = ((mx & 8) ? kOF : 0) | ((mx & 16) ? kUF : 0) | ((mx & 32) ? kNX : 0);
  return {static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_castps_si128(r))), flags};
}

// Random doubles whose binary32 rounding exercises every path: exponents from far below the
// subnormal range to beyond overflow, and significands with few low bits set (ties, exact values).
TEST(RoundDouble, MatchesHostInNativeModes) {
  std::mt19937_64 rng(12345);
  int checked = 0;
  for (int i = 0; i < 400000; ++i) {
    const int e = static_cast<int>(rng() % 320) - 180;  // 2^-180 .. 2^139
    uint64_t mant = rng() & ((uint64_t{1} << 52) - 1);
    switch (rng() % 4) {
      case 0:
        mant &= ~((uint64_t{1} << (rng() % 53)) - 1);
        break;  // few significant bits
      case 1:
        mant |= (uint64_t{1} << (rng() % 52)) - 1;
        break;  // runs of ones
      default:
        break;
    }
    const uint64_t bits =
        (uint64_t{rng() & 1} << 63) | (static_cast<uint64_t>(e + 1023) << 52) | mant;
    const double x = std::bit_cast<double>(bits);
    for (unsigned rm = 0; rm < 4; ++rm) {
      const Result want = host_round(x, rm);
      const Result got = round_double(x, rm);
      ASSERT_EQ(got.value, want.value) << "x=" << std::hexfloat << x << " rm=" << rm;
      ASSERT_EQ(got.flags, want.flags) << "x=" << std::hexfloat << x << " rm=" << rm;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 1600000);
}

// RMM differs from RNE only on ties, where it rounds away from zero.
TEST(RoundDouble, RmmTies) {
  // 1 + 2^-24 lies halfway between 1 and 1 + 2^-23.
  EXPECT_EQ(round_double(1.0 + 0x1p-24, kRMM).value, 0x3f800001u);
  EXPECT_EQ(round_double(1.0 + 0x1p-24, kRNE).value, 0x3f800000u);
  EXPECT_EQ(round_double(-(1.0 + 0x1p-24), kRMM).value, 0xbf800001u);
  // Just below the tie: nearest is 1.
  EXPECT_EQ(round_double(1.0 + 0x1p-24 - 0x1p-50, kRMM).value, 0x3f800000u);
  // 2^-150 is halfway between 0 and the smallest subnormal: away gives 2^-149, tiny and inexact.
  const Result r = round_double(0x1p-150, kRMM);
  EXPECT_EQ(r.value, 0x00000001u);
  EXPECT_EQ(r.flags, kUF | kNX);
  // The largest finite value plus half its ulp (2^104) rounds away to infinity.
  const Result o = round_double(0x1.fffffep127 + 0x1p103, kRMM);
  EXPECT_EQ(o.value, 0x7f800000u);
  EXPECT_EQ(o.flags, kOF | kNX);
}

}  // namespace
}  // namespace tessera::fp
