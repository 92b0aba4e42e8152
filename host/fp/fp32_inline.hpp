// Private header of tessera_fp: the hot operations of the software binary32 arithmetic (add, sub,
// mul, the four FMAs), inline so that the model's interpreter runs them without a call; fp32.cpp
// defines the public functions of fp32.hpp with them. The rare NaN/infinity cases stay out of line
// (detail::*_special). How the arithmetic stays exact: see fp32.cpp.
#pragma once

#include <algorithm>
#include <bit>

#include "fp32.hpp"
#include "round.hpp"

namespace tessera::fp {
namespace detail {

inline constexpr uint32_t kSign = 0x80000000u;

inline bool is_nan(uint32_t a) { return (a & 0x7fffffffu) > 0x7f800000u; }
inline bool is_snan(uint32_t a) { return is_nan(a) && !(a & 0x00400000u); }
inline bool is_inf(uint32_t a) { return (a & 0x7fffffffu) == 0x7f800000u; }
inline bool is_zero(uint32_t a) { return (a & 0x7fffffffu) == 0; }
// Infinity or NaN: the biased exponent is all ones.
inline bool not_finite(uint32_t a) { return (a & 0x7f800000u) == 0x7f800000u; }

// A finite value as m * 2^e with m < 2^24 (m = 0 for a zero).
struct Term {
  uint64_t m;
  int e;
};
inline Term unpack(uint32_t a) {
  const uint32_t bexp = (a >> 23) & 0xff;
  return {(a & 0x7fffffu) | (bexp ? 0x800000u : 0u), (bexp ? static_cast<int>(bexp) : 1) - 150};
}

// x >> s with a sticky 1 if any 1 was shifted out (round to odd at the new lsb); s >= 1.
inline uint64_t shift_right_jam(uint64_t x, int s) {
  if (s >= 64) return x != 0;
  return (x >> s) | ((x & ((uint64_t{1} << s) - 1)) != 0);
}

// The sign of an exact zero sum of terms of signs sx and sy (IEEE 754 6.3).
inline Result zero_sum(bool sx, bool sy, unsigned rm) {
  if (sx == sy) return {sx ? kSign : 0u, 0};
  return {rm == kRDN ? kSign : 0u, 0};
}

// (-1)^sx X 2^ex + (-1)^sy Y 2^ey rounded per rm; X, Y nonzero and below 2^48.
inline Result sum_round(bool sx, uint64_t x, int ex, bool sy, uint64_t y, int ey, unsigned rm) {
  const int tx = ex + (64 - std::countl_zero(x));
  const int ty = ey + (64 - std::countl_zero(y));
  const int k = std::max(std::min(ex, ey), std::max(tx, ty) - 62);  // lsb of the aligned sum
  const uint64_t ax = ex >= k ? x << (ex - k) : shift_right_jam(x, k - ex);
  const uint64_t ay = ey >= k ? y << (ey - k) : shift_right_jam(y, k - ey);
  // Both below 2^62: the signed sum fits in 64 bits.
  const int64_t s = (sx ? -static_cast<int64_t>(ax) : static_cast<int64_t>(ax)) +
                    (sy ? -static_cast<int64_t>(ay) : static_cast<int64_t>(ay));
  if (s == 0) return {rm == kRDN ? kSign : 0u, 0};
  const bool neg = s < 0;
  return round_pack(neg, neg ? 0 - static_cast<uint64_t>(s) : static_cast<uint64_t>(s), k, rm);
}

/// NaN and infinity cases of add (b already negated for sub).
Result add_special(uint32_t a, uint32_t b);
/// NaN and infinity cases of mul.
Result mul_special(uint32_t a, uint32_t b);
/// NaN and infinity cases of a*b+c (RISC-V: inf*0 is invalid even when c is a quiet NaN).
Result fma_special(uint32_t a, uint32_t b, uint32_t c);

inline Result add_impl(uint32_t a, uint32_t b, unsigned rm) {
  if (not_finite(a) || not_finite(b)) [[unlikely]] return add_special(a, b);
  const Term x = unpack(a), y = unpack(b);
  if (x.m == 0) return y.m == 0 ? zero_sum(a & kSign, b & kSign, rm) : Result{b, 0};
  if (y.m == 0) return {a, 0};
  return sum_round(a & kSign, x.m, x.e, b & kSign, y.m, y.e, rm);
}

// Normalises a nonzero finite value: m with its leading 1 at bit 23.
inline Term unpack_normal(uint32_t a) {
  Term t = unpack(a);
  const int shift = std::countl_zero(t.m) - 40;
  t.m <<= shift;
  t.e -= shift;
  return t;
}

// a*b + c with one rounding, all NaN/infinity rules of RISC-V included.
inline Result fma_impl(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  const bool sp = (a ^ b) & kSign;
  if (not_finite(a) || not_finite(b) || not_finite(c)) [[unlikely]] {
    return fma_special(a, b, c);
  }
  const Term x = unpack(a), y = unpack(b), z = unpack(c);
  const uint64_t p = x.m * y.m;  // exact: below 2^48
  if (p == 0) return z.m == 0 ? zero_sum(sp, c & kSign, rm) : Result{c, 0};
  if (z.m == 0) return round_pack(sp, p, x.e + y.e, rm);
  return sum_round(sp, p, x.e + y.e, c & kSign, z.m, z.e, rm);
}

// a * b: the product of two 24-bit significands is exact in 48 bits.
inline Result mul_impl(uint32_t a, uint32_t b, unsigned rm) {
  if (not_finite(a) || not_finite(b)) [[unlikely]] return mul_special(a, b);
  const uint32_t sign = (a ^ b) & kSign;
  const Term x = unpack(a), y = unpack(b);
  if (x.m == 0 || y.m == 0) return {sign, 0};
  return round_pack(sign != 0, x.m * y.m, x.e + y.e, rm);
}

}  // namespace detail

/// a + b (inline form of add()).
inline Result add_inline(uint32_t a, uint32_t b, unsigned rm) { return detail::add_impl(a, b, rm); }
/// a - b (inline form of sub()).
inline Result sub_inline(uint32_t a, uint32_t b, unsigned rm) {
  return detail::add_impl(a, b ^ detail::kSign, rm);
}
/// a * b (inline form of mul()).
inline Result mul_inline(uint32_t a, uint32_t b, unsigned rm) { return detail::mul_impl(a, b, rm); }
/// a*b+c (inline form of madd()).
inline Result madd_inline(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  return detail::fma_impl(a, b, c, rm);
}
/// a*b-c (inline form of msub()).
inline Result msub_inline(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  return detail::fma_impl(a, b, c ^ detail::kSign, rm);
}
/// -(a*b)+c (inline form of nmsub()).
inline Result nmsub_inline(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  return detail::fma_impl(a ^ detail::kSign, b, c, rm);
}
/// -(a*b)-c (inline form of nmadd()).
inline Result nmadd_inline(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  return detail::fma_impl(a ^ detail::kSign, b, c ^ detail::kSign, rm);
}

}  // namespace tessera::fp
