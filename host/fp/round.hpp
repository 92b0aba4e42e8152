// Private helpers of tessera_fp: round an exactly known value to binary32 in software. They are
// the rounding of every software operation (fp32.cpp) and of the host reference's RMM fix-up.
#pragma once

#include <bit>

#include "fp32.hpp"

namespace tessera::fp {

/// round_pack() below, out of line (for the rare cases of inlined fast paths).
Result round_pack_outline(bool sign, uint64_t m, int e, unsigned rm);

/// Round x (finite; the exact value of an operation, a normal or zero double) to binary32 per rm,
/// with the NX/UF/OF flags of IEEE 754 (tininess after rounding, as RISC-V and x86 SSE).
Result round_double(double x, unsigned rm);

namespace round_detail {

inline constexpr uint32_t kSignBit = 0x80000000u;

// Whether to increment a truncated magnitude, given its lsb and the discarded part compared with
// half an ulp (rest vs half, both in units of the original significand).
inline bool round_up(unsigned rm, bool sign, bool lsb, uint64_t rest, uint64_t half) {
  if (rest == 0) return false;
  if (rm == kRNE) [[likely]]
    return rest > half || (rest == half && lsb);
  switch (rm) {
    case kRTZ:
      return false;
    case kRDN:
      return sign;
    case kRUP:
      return !sign;
    default:
      return rest >= half;  // RMM
  }
}

// Truncate m by shift bits (1..63, or more: everything discarded) and round per rm.
inline uint64_t shift_round(uint64_t m, int shift, unsigned rm, bool sign, bool* inexact) {
  uint64_t kept, rest, half;
  if (shift >= 64) {
    kept = 0;
    rest = m;  // m < 2^63: all of it lies strictly below half an ulp of the target lsb
    half = rest + 1;
  } else {
    kept = m >> shift;
    rest = m & ((uint64_t{1} << shift) - 1);
    half = uint64_t{1} << (shift - 1);
  }
  *inexact = rest != 0;
  return kept + (round_up(rm, sign, kept & 1, rest, half) ? 1 : 0);
}

}  // namespace round_detail

/// Round m * 2^e (m != 0, m < 2^63, any e whose result stays within the binary32 range or beyond
/// it: overflow and underflow are handled) to binary32 per rm, sign given apart, with the NX/UF/OF
/// flags of IEEE 754 (tininess after rounding). A caller that has dropped low bits of an inexact
/// value must OR a sticky 1 into m's lowest bit, at least two bits below the 24-bit precision
/// (round to odd), which makes this rounding exact in every mode.
/// Inline: it is the tail of every operation of the model's FPU.
[[gnu::always_inline]] inline Result round_pack(bool sign, uint64_t m, int e, unsigned rm) {
  using namespace round_detail;
  const uint32_t sbit = sign ? kSignBit : 0;
  const int n = 64 - std::countl_zero(m);  // significant bits of m
  int top = e + n - 1;                     // exponent of m's leading bit
  bool inexact = false;
  if (top >= -126) {
    uint64_t kept;
    if (n <= 24) {
      kept = m << (24 - n);  // exact
    } else {
      kept = shift_round(m, n - 24, rm, sign, &inexact);
      if (kept == (uint64_t{1} << 24)) {
        kept >>= 1;
        ++top;
      }
    }
    if (top > 127) {
      const bool to_inf = rm == kRNE || rm == kRMM || (rm == kRUP && !sign) || (rm == kRDN && sign);
      return {sbit | (to_inf ? 0x7f800000u : 0x7f7fffffu), kOF | kNX};
    }
    const uint32_t v =
        sbit | (static_cast<uint32_t>(top + 127) << 23) | (static_cast<uint32_t>(kept) & 0x7fffffu);
    return {v, inexact ? kNX : 0};
  }
  // Subnormal range: the lsb has weight 2^-149. Tininess is judged after rounding to 24 bits
  // with an unbounded exponent: only a value that then reaches 2^-126 is not tiny.
  bool unused_inexact;
  const bool tiny = !(top == -127 && n > 24 &&
                      shift_round(m, n - 24, rm, sign, &unused_inexact) == (uint64_t{1} << 24));
  const int shift = -149 - e;
  uint64_t kept;
  if (shift <= 0) {
    kept = m << -shift;  // exact (top < -126, so it fits in 23 bits)
  } else {
    kept = shift_round(m, shift, rm, sign, &inexact);
  }
  const uint32_t flags = inexact ? (kNX | (tiny ? kUF : 0)) : 0;
  return {sbit | static_cast<uint32_t>(kept), flags};  // kept == 2^23 packs as 2^-126
}

}  // namespace tessera::fp
