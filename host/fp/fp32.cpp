// tessera::fp in software: integer arithmetic on the operands' significands, rounded by
// round_pack() (round.hpp). Nothing here reads or writes the host's MXCSR or uses host floating
// point, so results, flags and speed are the same whatever the calling thread's FP state holds
// (rounding mode, sticky flags, DAZ/FTZ). The host-FPU reference (host_fp32.cpp) is the oracle:
// host/fp/tests/soft_vs_host_test.cpp compares the two bit for bit in all five rounding modes.
//
// How an addition stays exact: both terms are integers times powers of two. They are aligned to a
// common lsb; when that would need more than 62 bits, the smaller term lies entirely below the
// larger one's precision and is rounded to odd at 2^(top-62) (shifted right, with a sticky 1 if any
// bit was dropped). The larger term is a multiple of twice that grid, so the sum is the
// round-to-odd of the exact sum with over 30 bits to spare, and rounding it to 24 bits is exact in
// every mode.
#include "fp32.hpp"

#include <bit>

#include "fp32_inline.hpp"

namespace tessera::fp {
namespace detail {

// NaN and infinity cases of add (a and b as added, i.e. b already negated for sub).
Result add_special(uint32_t a, uint32_t b) {
  if (is_nan(a) || is_nan(b)) return {kCanonicalNaN, (is_snan(a) || is_snan(b)) ? kNV : 0};
  if (is_inf(a) && is_inf(b) && ((a ^ b) & kSign)) return {kCanonicalNaN, kNV};
  return {is_inf(a) ? a : b, 0};
}

Result mul_special(uint32_t a, uint32_t b) {
  const uint32_t sign = (a ^ b) & kSign;
  if (is_nan(a) || is_nan(b)) return {kCanonicalNaN, (is_snan(a) || is_snan(b)) ? kNV : 0};
  if (is_zero(a) || is_zero(b)) return {kCanonicalNaN, kNV};  // inf * 0
  return {sign | 0x7f800000u, 0};
}

Result fma_special(uint32_t a, uint32_t b, uint32_t c) {
  const bool sp = (a ^ b) & kSign;
  // RISC-V: inf*0 is invalid even when c is a quiet NaN.
  const bool inf_times_zero = (is_inf(a) && is_zero(b)) || (is_zero(a) && is_inf(b));
  if (is_nan(a) || is_nan(b) || is_nan(c)) {
    const bool nv = is_snan(a) || is_snan(b) || is_snan(c) || inf_times_zero;
    return {kCanonicalNaN, nv ? kNV : 0};
  }
  if (inf_times_zero) return {kCanonicalNaN, kNV};
  if (is_inf(a) || is_inf(b)) {
    if (is_inf(c) && (c & kSign) != (sp ? kSign : 0u)) return {kCanonicalNaN, kNV};
    return {(sp ? kSign : 0u) | 0x7f800000u, 0};
  }
  return {c, 0};  // c infinite, the product finite
}

Result add_general(uint32_t a, uint32_t b, unsigned rm) {
  return add_integer(a, b, rm);
}
Result mul_general(uint32_t a, uint32_t b, unsigned rm) {
  return mul_integer(a, b, rm);
}
Result fma_general(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  return fma_integer(a, b, c, rm);
}

}  // namespace detail

namespace {

using namespace detail;

// Int-to-float conversion of an exactly known integer value.
Result int_to_float(bool neg, uint32_t mag, unsigned rm) {
  if (mag == 0) return {0, 0};
  return round_pack(neg, mag, 0, rm);
}

}  // namespace

Result add(uint32_t a, uint32_t b, unsigned rm) {
  return add_inline(a, b, rm);
}
Result sub(uint32_t a, uint32_t b, unsigned rm) {
  return sub_inline(a, b, rm);
}

Result mul(uint32_t a, uint32_t b, unsigned rm) {
  return mul_inline(a, b, rm);
}

Result div(uint32_t a, uint32_t b, unsigned rm) {
  const uint32_t sign = (a ^ b) & kSign;
  if (is_nan(a) || is_nan(b)) return {kCanonicalNaN, (is_snan(a) || is_snan(b)) ? kNV : 0};
  if (is_inf(a)) return is_inf(b) ? Result{kCanonicalNaN, kNV} : Result{sign | 0x7f800000u, 0};
  if (is_inf(b)) return {sign, 0};
  if (is_zero(b)) return is_zero(a) ? Result{kCanonicalNaN, kNV} : Result{sign | 0x7f800000u, kDZ};
  if (is_zero(a)) return {sign, 0};
  const Term x = unpack_normal(a), y = unpack_normal(b);
  // (x.m << 40) / y.m lies in (2^39, 2^41): over 26 significant bits; the remainder is the sticky.
  const uint64_t num = x.m << 40;
  const uint64_t q = num / y.m;
  const uint64_t r = num - q * y.m;
  return round_pack(sign != 0, q | (r != 0), x.e - y.e - 40, rm);
}

Result sqrt(uint32_t a, unsigned rm) {
  if (is_nan(a)) return {kCanonicalNaN, is_snan(a) ? kNV : 0};
  if (is_zero(a)) return {a, 0};  // sqrt(-0) = -0
  if (a & kSign) return {kCanonicalNaN, kNV};
  if (is_inf(a)) return {a, 0};
  Term x = unpack_normal(a);
  if (x.e & 1) {  // an even exponent halves exactly
    x.m <<= 1;
    x.e -= 1;
  }
  // isqrt(m * 2^38): m * 2^38 < 2^63, root in [2^30, 2^32): 31+ bits, sticky from the remainder.
  // Newton's iteration from a power of two above the root decreases monotonically to floor(root).
  const uint64_t n = x.m << 38;
  uint64_t r = uint64_t{1} << ((64 - std::countl_zero(n) + 1) / 2);
  for (;;) {
    const uint64_t next = (r + n / r) / 2;
    if (next >= r) break;
    r = next;
  }
  return round_pack(false, r | (r * r != n), (x.e - 38) / 2, rm);
}

Result madd(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  return madd_inline(a, b, c, rm);
}
Result msub(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  return msub_inline(a, b, c, rm);
}
Result nmsub(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  return nmsub_inline(a, b, c, rm);
}
Result nmadd(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  return nmadd_inline(a, b, c, rm);
}

namespace {

// Total order key of a non-NaN value (-0 < +0) for min/max.
int64_t order_key(uint32_t a) {
  const int64_t mag = a & 0x7fffffffu;
  return (a & kSign) ? -mag - 1 : mag;
}

Result min_max(uint32_t a, uint32_t b, bool want_max) {
  const uint32_t flags = (is_snan(a) || is_snan(b)) ? kNV : 0;
  if (is_nan(a) && is_nan(b)) return {kCanonicalNaN, flags};
  if (is_nan(a)) return {b, flags};
  if (is_nan(b)) return {a, flags};
  const bool a_less = order_key(a) < order_key(b);
  return {(a_less != want_max) ? a : b, flags};
}

// Numeric comparison of two non-NaN values (+0 == -0).
bool num_less(uint32_t a, uint32_t b) {
  if (is_zero(a) && is_zero(b)) return false;
  return order_key(a) < order_key(b);
}
bool num_eq(uint32_t a, uint32_t b) {
  return a == b || (is_zero(a) && is_zero(b));
}

// Rounds float a to an integer per rm: magnitude (saturated to 2^40 for huge inputs), sign, and
// whether the conversion was inexact. a must not be NaN or infinite.
uint64_t round_to_int(uint32_t a, unsigned rm, bool* inexact) {
  const bool sign = a & kSign;
  const int bexp = static_cast<int>((a >> 23) & 0xff);
  const uint64_t m = (a & 0x7fffffu) | (bexp ? 0x800000u : 0);
  const int e = (bexp ? bexp : 1) - 150;  // |a| = m * 2^e
  *inexact = false;
  if (e >= 0) return e > 16 ? (uint64_t{1} << 40) : (m << e);
  const int sh = -e;
  uint64_t kept, rest, half;
  if (sh >= 40) {
    kept = 0;
    rest = m;
    half = m + 1;  // m < 2^24: strictly below half of 1
  } else {
    kept = m >> sh;
    rest = m & ((uint64_t{1} << sh) - 1);
    half = uint64_t{1} << (sh - 1);
  }
  if (rest == 0) return kept;
  *inexact = true;
  bool up;
  switch (rm) {
    case kRNE:
      up = rest > half || (rest == half && (kept & 1));
      break;
    case kRTZ:
      up = false;
      break;
    case kRDN:
      up = sign;
      break;
    case kRUP:
      up = !sign;
      break;
    default:
      up = rest >= half;
      break;
  }
  return kept + (up ? 1 : 0);
}

}  // namespace

Result min(uint32_t a, uint32_t b) {
  return min_max(a, b, false);
}
Result max(uint32_t a, uint32_t b) {
  return min_max(a, b, true);
}

Result eq(uint32_t a, uint32_t b) {
  if (is_nan(a) || is_nan(b)) return {0, (is_snan(a) || is_snan(b)) ? kNV : 0};
  return {num_eq(a, b) ? 1u : 0u, 0};
}

Result lt(uint32_t a, uint32_t b) {
  if (is_nan(a) || is_nan(b)) return {0, kNV};
  return {num_less(a, b) ? 1u : 0u, 0};
}

Result le(uint32_t a, uint32_t b) {
  if (is_nan(a) || is_nan(b)) return {0, kNV};
  return {(num_less(a, b) || num_eq(a, b)) ? 1u : 0u, 0};
}

Result cvt_w_s(uint32_t a, unsigned rm) {
  if (is_nan(a)) return {0x7fffffffu, kNV};
  const bool sign = a & kSign;
  if (is_inf(a)) return {sign ? 0x80000000u : 0x7fffffffu, kNV};
  bool inexact;
  const uint64_t mag = round_to_int(a, rm, &inexact);
  if (!sign && mag > 0x7fffffffu) return {0x7fffffffu, kNV};
  if (sign && mag > 0x80000000u) return {0x80000000u, kNV};
  const uint32_t v = sign ? static_cast<uint32_t>(0 - mag) : static_cast<uint32_t>(mag);
  return {v, inexact ? kNX : 0};
}

Result cvt_wu_s(uint32_t a, unsigned rm) {
  if (is_nan(a)) return {0xffffffffu, kNV};
  const bool sign = a & kSign;
  if (is_inf(a)) return {sign ? 0u : 0xffffffffu, kNV};
  bool inexact;
  const uint64_t mag = round_to_int(a, rm, &inexact);
  if (!sign && mag > 0xffffffffu) return {0xffffffffu, kNV};
  if (sign && mag != 0) return {0, kNV};
  return {sign ? 0u : static_cast<uint32_t>(mag), inexact ? kNX : 0};
}

Result cvt_s_w(uint32_t a, unsigned rm) {
  const bool neg = static_cast<int32_t>(a) < 0;
  return int_to_float(neg, neg ? 0u - a : a, rm);
}

Result cvt_s_wu(uint32_t a, unsigned rm) {
  return int_to_float(false, a, rm);
}

uint32_t sgnj(uint32_t a, uint32_t b) {
  return (a & ~kSign) | (b & kSign);
}
uint32_t sgnjn(uint32_t a, uint32_t b) {
  return (a & ~kSign) | (~b & kSign);
}
uint32_t sgnjx(uint32_t a, uint32_t b) {
  return a ^ (b & kSign);
}

uint32_t fclass(uint32_t a) {
  const bool sign = a & kSign;
  const uint32_t bexp = (a >> 23) & 0xff;
  const uint32_t frac = a & 0x7fffffu;
  if (bexp == 0xff) {
    if (frac == 0) return sign ? 1u << 0 : 1u << 7;
    return (frac & 0x400000u) ? 1u << 9 : 1u << 8;
  }
  if (bexp == 0) {
    if (frac == 0) return sign ? 1u << 3 : 1u << 4;
    return sign ? 1u << 2 : 1u << 5;
  }
  return sign ? 1u << 1 : 1u << 6;
}

}  // namespace tessera::fp
