// IEEE 754 binary16 <-> binary32 conversions of the matrix unit (docs/tile.md, "Matrix unit",
// "fp16 conversions"), and its stochastic-rounding generator: the one definition the model
// executes and the host references (host/testing/amp_batch.hpp) use. Bit patterns in and out;
// no flags (the unit raises none), every NaN result canonical.
#pragma once

#include <cstdint>

namespace tessera::fp {

/// The canonical binary16 NaN, what a NaN input becomes on narrowing.
inline constexpr uint16_t kCanonicalNaN16 = 0x7e00u;

/// binary16 -> binary32, exact: subnormals are normalised, ±0 and ±∞ keep their sign, every NaN
/// becomes the canonical 0x7fc00000 (its payload and sign are not kept).
constexpr uint32_t f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h >> 15) << 31;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return mant ? 0x7fc00000u : sign | 0x7f800000u;
  if (exp != 0) return sign | (exp + 112) << 23 | mant << 13;
  if (mant == 0) return sign;
  // Subnormal: value mant * 2^-24; normalise so that bit 10 is the hidden bit.
  uint32_t e = 113;  // biased binary32 exponent of 2^-14
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return sign | e << 23 | (mant & 0x3ffu) << 13;
}

/// binary32 -> binary16. With stochastic false: round to nearest, ties to even, and a magnitude
/// that rounds above 65504 gives ±∞. With stochastic true: the magnitude is truncated to the
/// binary16 grid (the neighbour above 65504 being ∞) and rounded up iff F + u >= 2^16, F being
/// the first 16 bits of the discarded fraction of an ulp (bits below ignored) and u the random
/// 16 bits. Both keep the sign of zero results; NaN gives the canonical 0x7e00; ±∞ stays ±∞.
constexpr uint16_t f32_to_f16(uint32_t a, bool stochastic, uint32_t u) {
  const uint32_t sign = (a >> 31) << 15;
  const uint32_t e = (a >> 23) & 0xffu;
  const uint32_t m = a & 0x7fffffu;
  if (e == 0xff) return static_cast<uint16_t>(m ? kCanonicalNaN16 : sign | 0x7c00u);
  if (e == 0 && m == 0) return static_cast<uint16_t>(sign);
  // The value is sig * 2^(e - 150) (sig 24 bits with the hidden bit; a subnormal's e counts
  // as 1). Its leading bit's exponent E = e - 127 for a normal input, below -126 otherwise.
  if (e >= 127 + 16) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 2^16 in every mode
  const uint64_t sig = e ? (m | 0x800000u) : m;
  const int E = e ? static_cast<int>(e) - 127 : -127;
  const int q = (E > -14 ? E : -14) - 10;                   // the binary16 quantum: 2^q
  const int n = q - ((e ? static_cast<int>(e) : 1) - 150);  // discarded bits, >= 13
  const uint64_t kept = n >= 64 ? 0 : sig >> n;
  const uint64_t rem = n >= 64 ? sig : sig - (kept << n);  // the fraction, rem / 2^n of an ulp
  bool up;
  if (stochastic) {
    const uint64_t f = n <= 16 ? rem << (16 - n) : (n - 16 >= 64 ? 0 : rem >> (n - 16));
    up = f + (u & 0xffffu) >= 0x10000u;
  } else {
    const uint64_t half = uint64_t{1} << (n - 1 >= 63 ? 63 : n - 1);
    up = n - 1 < 63 && (rem > half || (rem == half && (kept & 1)));
  }
  // kept + up in units of 2^q: a normal's significand (1024..2048) or a subnormal's (0..1024);
  // the carry of 2047 + 1 or 1023 + 1 moves into the exponent field by itself.
  const uint32_t eb = static_cast<uint32_t>((E > -14 ? E : -14) + 15);  // biased, >= 1
  const uint32_t bits = ((eb - 1) << 10) + static_cast<uint32_t>(kept) + (up ? 1u : 0u);
  return static_cast<uint16_t>(sign | (bits >= 0x7c00u ? 0x7c00u : bits));
}

/// The stochastic-rounding generator's step (xorshift32, Marsaglia's 13, 17, 5): the next state
/// of a nonzero state, never 0; period 2^32 - 1.
constexpr uint32_t amp_sr_step(uint32_t s) {
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  return s;
}

}  // namespace tessera::fp
