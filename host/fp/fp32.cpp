// tessera::fp on x86-64 SSE: each arithmetic op runs once on the host with MXCSR set to the
// requested rounding mode and its exception flags cleared; RISC-V fix-ups follow in software.
// RMM (absent on x86) recomputes the exact value in double and rounds it with round_double().
// This file is compiled with -frounding-math; the asm barriers below keep the compiler from
// moving arithmetic across the MXCSR accesses.
#include <immintrin.h>

#include <cmath>

#include "fp32.hpp"
#include "round.hpp"

namespace tessera::fp {
namespace {

constexpr uint32_t kSign = 0x80000000u;
constexpr uint32_t kMxcsrMasks = 0x1f80;  // all exceptions masked, DAZ/FTZ off

bool is_nan(uint32_t a) { return (a & 0x7fffffffu) > 0x7f800000u; }
bool is_snan(uint32_t a) { return is_nan(a) && !(a & 0x00400000u); }
bool is_inf(uint32_t a) { return (a & 0x7fffffffu) == 0x7f800000u; }
bool is_zero(uint32_t a) { return (a & 0x7fffffffu) == 0; }

// MXCSR rounding-control field for RISC-V rm 0..3 (RMM runs as RNE, then is fixed up).
uint32_t rc_bits(unsigned rm) {
  switch (rm) {
    case kRTZ: return 3u << 13;
    case kRDN: return 1u << 13;
    case kRUP: return 2u << 13;
    default: return 0;
  }
}

// x86 MXCSR flags (IE DE ZE OE UE PE = bits 0..5) to RISC-V fflags; DE has no counterpart.
uint32_t map_flags(uint32_t mx) {
  return ((mx & 1) ? kNV : 0) | ((mx & 4) ? kDZ : 0) | ((mx & 8) ? kOF : 0) |
         ((mx & 16) ? kUF : 0) | ((mx & 32) ? kNX : 0);
}

template <class V>
inline void barrier(V& v) {
  asm volatile("" : "+x"(v));
}

// Runs op (returning an __m128 or __m128d whose low lane is the result) under rounding mode rm
// with clean flags; returns the raw MXCSR flag bits through *mx.
template <class Op>
inline auto run(unsigned rm, uint32_t* mx, Op op) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(kMxcsrMasks | rc_bits(rm));
  auto r = op();
  barrier(r);
  *mx = _mm_getcsr() & 0x3f;
  _mm_setcsr(saved);
  return r;
}

inline __m128 f_vec(uint32_t a) {
  __m128 v = _mm_castsi128_ps(_mm_cvtsi32_si128(static_cast<int>(a)));
  barrier(v);
  return v;
}
inline uint32_t f_bits(__m128 v) { return static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_castps_si128(v))); }
inline __m128d d_vec(uint32_t a) {
  __m128d v = _mm_cvtss_sd(_mm_setzero_pd(), f_vec(a));  // exact; no flag matters here
  barrier(v);
  return v;
}
inline double d_val(__m128d v) { return _mm_cvtsd_f64(v); }

__attribute__((target("fma"))) __m128 fma_ss_hw(__m128 a, __m128 b, __m128 c) {
  return _mm_fmadd_ss(a, b, c);
}
__attribute__((target("fma"))) __m128d fma_sd_hw(__m128d a, __m128d b, __m128d c) {
  return _mm_fmadd_sd(a, b, c);
}
// Decided once at load time; the fallback (glibc fmaf, correctly rounded in the MXCSR mode) is only
// for hosts without FMA3 and is not exercised on the development machine.
const bool kHostHasFma = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("fma") != 0;
}();

__m128 fma_ss(__m128 a, __m128 b, __m128 c) {
  if (kHostHasFma) return fma_ss_hw(a, b, c);
  return _mm_set_ss(std::fmaf(_mm_cvtss_f32(a), _mm_cvtss_f32(b), _mm_cvtss_f32(c)));
}
__m128d fma_sd(__m128d a, __m128d b, __m128d c) {
  if (kHostHasFma) return fma_sd_hw(a, b, c);
  return _mm_set_sd(std::fma(_mm_cvtsd_f64(a), _mm_cvtsd_f64(b), _mm_cvtsd_f64(c)));
}

// Common tail of the rounded arithmetic ops: canonical NaN, flags, and the RMM fix-up. exact()
// returns the operation in double under RNE; when that double is exact (no PE) it is the exact
// value, and only then can the binary32 result be a tie (an inexact double is not a tie: RMM
// then equals RNE).
template <class Exact>
Result finish(__m128 r, uint32_t mx, unsigned rm, Exact exact) {
  uint32_t v = f_bits(r);
  uint32_t flags = map_flags(mx);
  if (is_nan(v)) return {kCanonicalNaN, flags};
  if (rm == kRMM && (flags & kNX)) {
    uint32_t dmx;
    const __m128d d = run(kRNE, &dmx, exact);
    if (!(dmx & 0x20)) return round_double(d_val(d), kRMM);
  }
  return {v, flags};
}

}  // namespace

Result add(uint32_t a, uint32_t b, unsigned rm) {
  uint32_t mx;
  const __m128 r = run(rm, &mx, [&] { return _mm_add_ss(f_vec(a), f_vec(b)); });
  return finish(r, mx, rm, [&] { return _mm_add_sd(d_vec(a), d_vec(b)); });
}

Result sub(uint32_t a, uint32_t b, unsigned rm) {
  uint32_t mx;
  const __m128 r = run(rm, &mx, [&] { return _mm_sub_ss(f_vec(a), f_vec(b)); });
  return finish(r, mx, rm, [&] { return _mm_sub_sd(d_vec(a), d_vec(b)); });
}

Result mul(uint32_t a, uint32_t b, unsigned rm) {
  uint32_t mx;
  const __m128 r = run(rm, &mx, [&] { return _mm_mul_ss(f_vec(a), f_vec(b)); });
  return finish(r, mx, rm, [&] { return _mm_mul_sd(d_vec(a), d_vec(b)); });
}

Result div(uint32_t a, uint32_t b, unsigned rm) {
  uint32_t mx;
  const __m128 r = run(rm, &mx, [&] { return _mm_div_ss(f_vec(a), f_vec(b)); });
  return finish(r, mx, rm, [&] { return _mm_div_sd(d_vec(a), d_vec(b)); });
}

Result sqrt(uint32_t a, unsigned rm) {
  uint32_t mx;
  // A square root is never a tie (its square would need more than 24 bits), so RMM = RNE.
  const __m128 r = run(rm, &mx, [&] { return _mm_sqrt_ss(f_vec(a)); });
  const uint32_t v = f_bits(r);
  return {is_nan(v) ? kCanonicalNaN : v, map_flags(mx)};
}

Result madd(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  uint32_t mx;
  const __m128 r = run(rm, &mx, [&] { return fma_ss(f_vec(a), f_vec(b), f_vec(c)); });
  Result res = finish(r, mx, rm, [&] { return fma_sd(d_vec(a), d_vec(b), d_vec(c)); });
  // RISC-V: inf*0 is invalid even when c is a quiet NaN (IEEE leaves that case open).
  if ((is_inf(a) && is_zero(b)) || (is_zero(a) && is_inf(b))) res.flags |= kNV;
  return res;
}

Result msub(uint32_t a, uint32_t b, uint32_t c, unsigned rm) { return madd(a, b, c ^ kSign, rm); }
Result nmsub(uint32_t a, uint32_t b, uint32_t c, unsigned rm) { return madd(a ^ kSign, b, c, rm); }
Result nmadd(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  return madd(a ^ kSign, b, c ^ kSign, rm);
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
bool num_eq(uint32_t a, uint32_t b) { return a == b || (is_zero(a) && is_zero(b)); }

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
    case kRNE: up = rest > half || (rest == half && (kept & 1)); break;
    case kRTZ: up = false; break;
    case kRDN: up = sign; break;
    case kRUP: up = !sign; break;
    default: up = rest >= half; break;
  }
  return kept + (up ? 1 : 0);
}

// Int-to-float conversion of an exactly known integer value.
Result int_to_float(int64_t x, unsigned rm) {
  if (rm == kRMM) return round_double(static_cast<double>(x), kRMM);  // exact in double
  uint32_t mx;
  const __m128 r = run(rm, &mx, [&] {
    int64_t v = x;
    asm volatile("" : "+r"(v));
    return _mm_cvtsi64_ss(_mm_setzero_ps(), v);
  });
  return {f_bits(r), map_flags(mx)};
}

}  // namespace

Result min(uint32_t a, uint32_t b) { return min_max(a, b, false); }
Result max(uint32_t a, uint32_t b) { return min_max(a, b, true); }

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
  return int_to_float(static_cast<int32_t>(a), rm);
}

Result cvt_s_wu(uint32_t a, unsigned rm) { return int_to_float(static_cast<int64_t>(a), rm); }

uint32_t sgnj(uint32_t a, uint32_t b) { return (a & ~kSign) | (b & kSign); }
uint32_t sgnjn(uint32_t a, uint32_t b) { return (a & ~kSign) | (~b & kSign); }
uint32_t sgnjx(uint32_t a, uint32_t b) { return a ^ (b & kSign); }

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
