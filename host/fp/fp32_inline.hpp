// Private header of tessera_fp: the hot operations of the software binary32 arithmetic (add, sub,
// mul, the four FMAs), inline so that the model's interpreter runs them without a call; fp32.cpp
// defines the public functions of fp32.hpp with them. The rare NaN/infinity cases stay out of line
// (detail::*_special). How the arithmetic stays exact: see fp32.cpp.
//
// Fast path, exact by construction: when every operand is a normal number and the exact result
// fits in a double's 53 bits (always for a product; for a sum or an FMA when the exponents are
// close enough, checked on the bit patterns), the host computes it in double precision. An exact
// operation on normal doubles gives the same bits and raises no flag whatever the host's rounding
// mode, DAZ/FTZ or exception masks, so nothing depends on MXCSR. That double is then rounded to
// binary32 in software (round_exact_double). Everything else takes the integer path.
#pragma once

#include <algorithm>
#include <bit>

#include "fp32.hpp"
#include "round.hpp"

namespace tessera::fp {
namespace detail {

inline constexpr uint32_t kSign = 0x80000000u;

inline bool is_nan(uint32_t a) {
  return (a & 0x7fffffffu) > 0x7f800000u;
}
inline bool is_snan(uint32_t a) {
  return is_nan(a) && !(a & 0x00400000u);
}
inline bool is_inf(uint32_t a) {
  return (a & 0x7fffffffu) == 0x7f800000u;
}
inline bool is_zero(uint32_t a) {
  return (a & 0x7fffffffu) == 0;
}
// Infinity or NaN: the biased exponent is all ones.
inline bool not_finite(uint32_t a) {
  return (a & 0x7f800000u) == 0x7f800000u;
}

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
[[gnu::always_inline]] inline Result sum_round(bool sx, uint64_t x, int ex, bool sy, uint64_t y,
                                               int ey, unsigned rm) {
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

// A biased exponent field of a normal number: 1..254.
inline bool normal_exp(uint32_t bexp) {
  return bexp - 1u < 254u;
}

inline double to_double(uint32_t a) {
  return static_cast<double>(std::bit_cast<float>(a));
}

// Rounds s, the exact (nonzero or zero) result of an operation whose terms have signs sx and sy,
// to binary32 per rm. The sign of an exact zero follows IEEE 754 6.3, not the host.
[[gnu::always_inline]] inline Result round_exact_double(double s, bool sx, bool sy, unsigned rm) {
  const uint64_t bits = std::bit_cast<uint64_t>(s);
  if ((bits << 1) == 0) return zero_sum(sx, sy, rm);
  const bool neg = bits >> 63;
  const int dexp = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t m = bits & ((uint64_t{1} << 52) - 1);
  const int fexp = dexp - 1023 + 127;
  if (fexp < 1 || fexp > 254) [[unlikely]] {  // subnormal or overflowing binary32
    return round_pack_outline(neg, m | (uint64_t{1} << 52), dexp - 1075, rm);
  }
  const uint64_t rest = m & ((uint64_t{1} << 29) - 1);
  uint32_t v =
      (neg ? kSign : 0u) | (static_cast<uint32_t>(fexp) << 23) | static_cast<uint32_t>(m >> 29);
  if (rest == 0) return {v, 0};
  // A carry out of the significand moves into the exponent, up to infinity: the right result.
  v += round_detail::round_up(rm, neg, v & 1, rest, uint64_t{1} << 28) ? 1 : 0;
  return {v, (v & 0x7fffffffu) == 0x7f800000u ? kOF | kNX : kNX};
}

// Whether a, b and c are normal and a*b + c is exact in double: a*b < 2^(E+2) and c < 2^(C+1)
// (E = sum of a's and b's unbiased exponents, C = c's), so the sum stays below 2^(max(E+2, C+1)+1);
// its lowest set bit is at least the lower of the product's (E-46 plus the trailing zeros of both
// significands) and c's (C-23 plus c's). At most 53 bits between them: exact. For full
// significands that admits C - E in [-27, 5]; short ones (1.0, 0.5, small integers) go further.
[[gnu::always_inline]] inline bool fma_fits_double(uint32_t a, uint32_t b, uint32_t c) {
  const uint32_t ea = (a >> 23) & 0xff, eb = (b >> 23) & 0xff, ec = (c >> 23) & 0xff;
  if (!normal_exp(ea) || !normal_exp(eb) || !normal_exp(ec)) return false;
  const int e = static_cast<int>(ea + eb) - 254, ce = static_cast<int>(ec) - 127;
  const int top = std::max(e + 2, ce + 1) + 1;
  const int lsb =
      std::min(e - 46 + std::countr_zero(a | 0x800000u) + std::countr_zero(b | 0x800000u),
               ce - 23 + std::countr_zero(c | 0x800000u));
  return top - lsb <= 53;
}

/// NaN and infinity cases of add (b already negated for sub).
Result add_special(uint32_t a, uint32_t b);
/// NaN and infinity cases of mul.
Result mul_special(uint32_t a, uint32_t b);
/// NaN and infinity cases of a*b+c (RISC-V: inf*0 is invalid even when c is a quiet NaN).
Result fma_special(uint32_t a, uint32_t b, uint32_t c);

/// The integer path of a + b (fp32.cpp): out of line, so the fast path needs no stack frame.
Result add_general(uint32_t a, uint32_t b, unsigned rm);

[[gnu::always_inline]] inline Result add_impl(uint32_t a, uint32_t b, unsigned rm) {
  const uint32_t ea = (a >> 23) & 0xff, eb = (b >> 23) & 0xff;
  // Exponents at most 28 apart: the sum needs at most 24 + 28 + 1 bits.
  if (normal_exp(ea) && normal_exp(eb) && static_cast<uint32_t>(ea - eb + 28) <= 56u) [[likely]] {
    return round_exact_double(to_double(a) + to_double(b), a & kSign, b & kSign, rm);
  }
  return add_general(a, b, rm);
}

// The integer path of a + b.
inline Result add_integer(uint32_t a, uint32_t b, unsigned rm) {
  if (not_finite(a) || not_finite(b)) [[unlikely]]
    return add_special(a, b);
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
/// The general path of a*b + c (fp32.cpp): out of line, so the fast path needs no stack frame.
Result fma_general(uint32_t a, uint32_t b, uint32_t c, unsigned rm);

[[gnu::always_inline]] inline Result fma_impl(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  if (fma_fits_double(a, b, c)) [[likely]] {
    return round_exact_double(to_double(a) * to_double(b) + to_double(c), (a ^ b) & kSign,
                              c & kSign, rm);
  }
  return fma_general(a, b, c, rm);
}

// The general path of a*b + c.
inline Result fma_integer(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  const bool sp = (a ^ b) & kSign;
  // A zero addend (an accumulator's first step): the product alone, exact in double, never zero.
  if ((c << 1) == 0 && normal_exp((a >> 23) & 0xff) && normal_exp((b >> 23) & 0xff)) {
    return round_exact_double(to_double(a) * to_double(b), false, false, rm);
  }
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
/// The integer path of a * b (fp32.cpp): out of line, so the fast path needs no stack frame.
Result mul_general(uint32_t a, uint32_t b, unsigned rm);

[[gnu::always_inline]] inline Result mul_impl(uint32_t a, uint32_t b, unsigned rm) {
  if (normal_exp((a >> 23) & 0xff) && normal_exp((b >> 23) & 0xff)) [[likely]] {
    return round_exact_double(to_double(a) * to_double(b), false, false, rm);  // never zero
  }
  return mul_general(a, b, rm);
}

// The integer path of a * b.
inline Result mul_integer(uint32_t a, uint32_t b, unsigned rm) {
  if (not_finite(a) || not_finite(b)) [[unlikely]]
    return mul_special(a, b);
  const uint32_t sign = (a ^ b) & kSign;
  const Term x = unpack(a), y = unpack(b);
  if (x.m == 0 || y.m == 0) return {sign, 0};
  return round_pack(sign != 0, x.m * y.m, x.e + y.e, rm);
}

}  // namespace detail

/// a + b (inline form of add()).
inline Result add_inline(uint32_t a, uint32_t b, unsigned rm) {
  return detail::add_impl(a, b, rm);
}
/// a - b (inline form of sub()).
inline Result sub_inline(uint32_t a, uint32_t b, unsigned rm) {
  return detail::add_impl(a, b ^ detail::kSign, rm);
}
/// a * b (inline form of mul()).
inline Result mul_inline(uint32_t a, uint32_t b, unsigned rm) {
  return detail::mul_impl(a, b, rm);
}
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
