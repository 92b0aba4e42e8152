// tessera::fp::host, the host reference of the rounded binary32 operations: each op runs once on
// the x86-64 SSE unit with MXCSR set to the requested rounding mode and its exception flags
// cleared (then restored); RISC-V fix-ups follow in software. It is the oracle of the software
// implementation (fp32.cpp, checked by host/fp/tests/soft_vs_host_test.cpp); it costs a few
// hundred cycles per op when the caller's MXCSR flags differ, which is why the model does not use
// it.
// RMM (absent on x86) recomputes the exact value in double and rounds it with round_double().
// This file is compiled with -frounding-math; the asm barriers below keep the compiler from
// moving arithmetic across the MXCSR accesses.
#include "host_fp32.hpp"

#include <immintrin.h>

#include <cmath>

#include "round.hpp"

namespace tessera::fp::host {
namespace {

constexpr uint32_t kSign = 0x80000000u;
constexpr uint32_t kMxcsrMasks = 0x1f80;  // all exceptions masked, DAZ/FTZ off

bool is_nan(uint32_t a) {
  return (a & 0x7fffffffu) > 0x7f800000u;
}
bool is_inf(uint32_t a) {
  return (a & 0x7fffffffu) == 0x7f800000u;
}
bool is_zero(uint32_t a) {
  return (a & 0x7fffffffu) == 0;
}

// MXCSR rounding-control field for RISC-V rm 0..3 (RMM runs as RNE, then is fixed up).
uint32_t rc_bits(unsigned rm) {
  switch (rm) {
    case kRTZ:
      return 3u << 13;
    case kRDN:
      return 1u << 13;
    case kRUP:
      return 2u << 13;
    default:
      return 0;
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
inline uint32_t f_bits(__m128 v) {
  return static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_castps_si128(v)));
}
inline __m128d d_vec(uint32_t a) {
  __m128d v = _mm_cvtss_sd(_mm_setzero_pd(), f_vec(a));  // exact; no flag matters here
  barrier(v);
  return v;
}
inline double d_val(__m128d v) {
  return _mm_cvtsd_f64(v);
}

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

Result msub(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  return madd(a, b, c ^ kSign, rm);
}
Result nmsub(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  return madd(a ^ kSign, b, c, rm);
}
Result nmadd(uint32_t a, uint32_t b, uint32_t c, unsigned rm) {
  return madd(a ^ kSign, b, c ^ kSign, rm);
}

namespace {

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

Result cvt_s_w(uint32_t a, unsigned rm) {
  return int_to_float(static_cast<int32_t>(a), rm);
}

Result cvt_s_wu(uint32_t a, unsigned rm) {
  return int_to_float(static_cast<int64_t>(a), rm);
}

}  // namespace tessera::fp::host
