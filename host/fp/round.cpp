#include "round.hpp"

#include <bit>

namespace tessera::fp {
namespace {

// Whether to increment a truncated magnitude, given its lsb and the discarded part compared with
// half an ulp (rest vs half, both in units of the original significand).
bool round_up(unsigned rm, bool sign, bool lsb, uint64_t rest, uint64_t half) {
  if (rest == 0) return false;
  switch (rm) {
    case kRNE: return rest > half || (rest == half && lsb);
    case kRTZ: return false;
    case kRDN: return sign;
    case kRUP: return !sign;
    default: return rest >= half;  // RMM
  }
}

// Truncate m by shift bits (1..63, or more: everything discarded) and round per rm.
uint64_t shift_round(uint64_t m, int shift, unsigned rm, bool sign, bool* inexact) {
  uint64_t kept, rest, half;
  if (shift >= 64) {
    kept = 0;
    rest = m;  // all of m lies strictly below half an ulp of the target lsb
    half = rest + 1;
  } else {
    kept = m >> shift;
    rest = m & ((uint64_t{1} << shift) - 1);
    half = uint64_t{1} << (shift - 1);
  }
  *inexact = rest != 0;
  return kept + (round_up(rm, sign, kept & 1, rest, half) ? 1 : 0);
}

}  // namespace

Result round_double(double x, unsigned rm) {
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  const bool sign = bits >> 63;
  const uint32_t sbit = sign ? 0x80000000u : 0;
  const int bexp = static_cast<int>((bits >> 52) & 0x7ff);
  if (bexp == 0) return {sbit, 0};  // zero (callers never pass double subnormals)
  const uint64_t m = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  int e = bexp - 1023;  // x = m * 2^(e-52), m in [2^52, 2^53)
  bool inexact = false;
  uint32_t flags = 0;
  uint64_t kept;
  if (e >= -126) {
    kept = shift_round(m, 29, rm, sign, &inexact);  // 24-bit significand
    if (kept == (uint64_t{1} << 24)) {
      kept >>= 1;
      ++e;
    }
    if (e > 127) {
      const bool to_inf = rm == kRNE || rm == kRMM || (rm == kRUP && !sign) || (rm == kRDN && sign);
      return {sbit | (to_inf ? 0x7f800000u : 0x7f7fffffu), kOF | kNX};
    }
    const uint32_t v = sbit | (static_cast<uint32_t>(e + 127) << 23) |
                       (static_cast<uint32_t>(kept) & 0x7fffffu);
    return {v, inexact ? kNX : 0};
  }
  // Subnormal range: the lsb has weight 2^-149. Tininess is judged after rounding to 24 bits
  // with an unbounded exponent: only a value that then reaches 2^-126 is not tiny.
  bool unused_inexact;
  const bool tiny = !(e == -127 && shift_round(m, 29, rm, sign, &unused_inexact) == (1u << 24));
  kept = shift_round(m, 29 + (-126 - e), rm, sign, &inexact);
  if (inexact) flags |= kNX | (tiny ? kUF : 0);
  return {sbit | static_cast<uint32_t>(kept), flags};  // kept == 2^23 packs as 2^-126
}

}  // namespace tessera::fp
