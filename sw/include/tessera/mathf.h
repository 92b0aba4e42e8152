/* expf, logf, expm1f, tanhf, erff, sqrtf and powf for tiles, which have no C library, written with
 * IEEE basic operations and explicit fused multiply-adds only: the host compiles the same functions
 * to the same bits, so host references of codelets that use them (softmax, normalisations, GELU)
 * are bit-exact (docs/library.md). Accuracy against the host's libm, checked in sw/library/tests:
 * expf and logf within 2 ulp, expm1f within 4, tanhf and erff within 3, for normal results; no
 * errno, NaN in gives NaN out. */
#ifndef TESSERA_MATHF_H
#define TESSERA_MATHF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline float tessera_fmaf_(float a, float b, float c) {
  return __builtin_fmaf(a, b, c);
}

static inline float tessera_bits_to_float_(uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

static inline uint32_t tessera_float_to_bits_(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}

/** e^x. */
static inline float tessera_expf(float x) {
  if (x != x) return x;
  if (x > 88.72283f) return tessera_bits_to_float_(0x7f800000u);
  if (x < -103.97208f) return 0.0f;
  /* x = n ln2 + r, |r| <= ln2/2, with ln2 split in two for an exact n ln2. */
  /* n = x / ln2 rounded half away from zero (a conversion truncates on every target). */
  const float t = x * 1.44269504f;
  const float n = (float)(int32_t)(t + (t >= 0.0f ? 0.5f : -0.5f));
  float r = tessera_fmaf_(-n, 0.693145752f, x);
  r = tessera_fmaf_(-n, 1.42860677e-6f, r);
  /* e^r by its Taylor polynomial to degree 7 (Horner, fused). */
  float p = 1.98412698e-4f;
  p = tessera_fmaf_(p, r, 1.38888889e-3f);
  p = tessera_fmaf_(p, r, 8.33333333e-3f);
  p = tessera_fmaf_(p, r, 4.16666667e-2f);
  p = tessera_fmaf_(p, r, 1.66666667e-1f);
  p = tessera_fmaf_(p, r, 0.5f);
  p = tessera_fmaf_(p, r, 1.0f);
  p = tessera_fmaf_(p, r, 1.0f);
  /* times 2^n in two steps, so that subnormal results round once at the end. */
  int32_t e = (int32_t)n;
  if (e < -126) {
    p = p * tessera_bits_to_float_((uint32_t)(e + 126 + 127) << 23);
    return p * tessera_bits_to_float_(1u << 23); /* 2^-126 */
  }
  if (e > 127) return p * 2.0f * tessera_bits_to_float_((uint32_t)(e - 1 + 127) << 23);
  return p * tessera_bits_to_float_((uint32_t)(e + 127) << 23);
}

/** Natural logarithm: -inf for 0, NaN for negative inputs, +inf for +inf. */
static inline float tessera_logf(float x) {
  uint32_t u = tessera_float_to_bits_(x);
  if (x != x) return x;
  if (x < 0.0f) return tessera_bits_to_float_(0x7fc00000u);
  if (x == 0.0f) return tessera_bits_to_float_(0xff800000u);
  if (u == 0x7f800000u) return x;
  int32_t e = 0;
  if (u < 0x00800000u) { /* subnormal: scale up by 2^23 */
    x = x * 8388608.0f;
    u = tessera_float_to_bits_(x);
    e = -23;
  }
  e += (int32_t)(u >> 23) - 127;
  float m = tessera_bits_to_float_((u & 0x007fffffu) | 0x3f800000u); /* [1, 2) */
  if (m > 1.41421356f) {
    m = m * 0.5f;
    e += 1;
  }
  /* log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716. */
  const float s = (m - 1.0f) / (m + 1.0f);
  const float s2 = s * s;
  float p = 0.111111111f;
  p = tessera_fmaf_(p, s2, 0.142857143f);
  p = tessera_fmaf_(p, s2, 0.2f);
  p = tessera_fmaf_(p, s2, 0.333333333f);
  p = tessera_fmaf_(p, s2, 1.0f);
  const float lm = 2.0f * s * p;
  /* e ln2 + log m, with ln2 split in two. */
  const float fe = (float)e;
  return tessera_fmaf_(fe, 0.693145752f, tessera_fmaf_(fe, 1.42860677e-6f, lm));
}

/** Square root, correctly rounded (FSQRT.S on the tiles: the codelets build with -fno-math-errno).
 */
static inline float tessera_sqrtf(float x) {
  return __builtin_sqrtf(x);
}

/** e^x - 1, without the cancellation of expf(x) - 1 near 0 (tanh needs it). */
static inline float tessera_expm1f(float x) {
  if (x != x) return x;
  if (x > -0.346573591f && x < 0.346573591f) {
    /* |x| < ln2/2: x + x^2 (1/2 + x/3! + ... + x^7/9!), Taylor, truncation below 2^-36 relative. */
    float p = 2.75573192e-6f;
    p = tessera_fmaf_(p, x, 2.48015873e-5f);
    p = tessera_fmaf_(p, x, 1.98412698e-4f);
    p = tessera_fmaf_(p, x, 1.38888889e-3f);
    p = tessera_fmaf_(p, x, 8.33333333e-3f);
    p = tessera_fmaf_(p, x, 4.16666667e-2f);
    p = tessera_fmaf_(p, x, 1.66666667e-1f);
    p = tessera_fmaf_(p, x, 0.5f);
    return tessera_fmaf_(p * x, x, x);
  }
  return tessera_expf(x) - 1.0f;
}

/** Hyperbolic tangent: e / (e + 2) with e = expm1(2|x|), odd; +-1 beyond |x| = 9.01, where
 * 1 - tanh(x) is below half an ulp of 1. */
static inline float tessera_tanhf(float x) {
  if (x != x) return x;
  const float a = x < 0.0f ? -x : x;
  float t = 1.0f;
  if (a < 9.01f) {
    const float e = tessera_expm1f(2.0f * a);
    t = e / (e + 2.0f);
  }
  return x < 0.0f ? -t : t;
}

/** Error function, odd. |x| < 1: x times its Taylor series in x^2 to degree 11 (truncation below
 * 1e-10); 1 <= |x| < 4: 1 - e^(-x^2) erfcx(x), erfcx by a degree-12 Chebyshev fit on [1, 4]
 * (relative error 1e-7, fitted for this file) and x^2 split in two (x^2 = hi + lo) so that its
 * rounding does not reach the exponential; |x| >= 4: +-1 (erfc(4) < half an ulp of 1). */
static inline float tessera_erff(float x) {
  if (x != x) return x;
  const float a = x < 0.0f ? -x : x;
  if (a < 1.0f) {
    const float z = x * x;
    float p = -1.22905552e-9f;
    p = tessera_fmaf_(p, z, 1.48071928e-8f);
    p = tessera_fmaf_(p, z, -1.63658441e-7f);
    p = tessera_fmaf_(p, z, 1.64621144e-6f);
    p = tessera_fmaf_(p, z, -1.49256502e-5f);
    p = tessera_fmaf_(p, z, 1.20553326e-4f);
    p = tessera_fmaf_(p, z, -8.54832702e-4f);
    p = tessera_fmaf_(p, z, 5.22397785e-3f);
    p = tessera_fmaf_(p, z, -2.68661715e-2f);
    p = tessera_fmaf_(p, z, 1.12837918e-1f);
    p = tessera_fmaf_(p, z, -3.76126379e-1f);
    p = tessera_fmaf_(p, z, 1.12837923f);
    return x * p;
  }
  float r = 1.0f;
  if (a < 4.0f) {
    const float u = (a - 2.5f) * 0.666666667f; /* [1, 4] onto [-1, 1] */
    float q = 1.33658359e-5f;
    q = tessera_fmaf_(q, u, -3.68889123e-5f);
    q = tessera_fmaf_(q, u, 5.63035755e-5f);
    q = tessera_fmaf_(q, u, -1.44057791e-4f);
    q = tessera_fmaf_(q, u, 4.12986934e-4f);
    q = tessera_fmaf_(q, u, -1.01700891e-3f);
    q = tessera_fmaf_(q, u, 2.40248744e-3f);
    q = tessera_fmaf_(q, u, -5.56738023e-3f);
    q = tessera_fmaf_(q, u, 1.24895200e-2f);
    q = tessera_fmaf_(q, u, -2.70057172e-2f);
    q = tessera_fmaf_(q, u, 5.61104864e-2f);
    q = tessera_fmaf_(q, u, -1.11521006e-1f);
    q = tessera_fmaf_(q, u, 2.10806370e-1f);
    const float hi = a * a;
    const float lo = tessera_fmaf_(a, a, -hi);
    float e = tessera_expf(-hi);
    e = tessera_fmaf_(-e, lo, e); /* e^-(hi + lo) to first order in lo (|lo| < 2^-20) */
    r = tessera_fmaf_(-e, q, 1.0f);
  }
  return x < 0.0f ? -r : r;
}

/** a^b (ONNX's Pow, torch.pow on float32). The exponents for which PyTorch computes a power
 * exactly are exact here too: b = 0 gives 1, 1 gives a, 2 a*a, 3 (a*a)*a, 0.5 sqrtf(a), -1 1/a,
 * -2 1/(a*a), -0.5 1/sqrtf(a). Otherwise e^(b ln|a|) with this file's expf and logf (relative
 * error about |b ln a| x 2^-22 plus 4 ulp: within 1e-5 for |b ln a| < 40); a negative a takes the
 * sign of an odd integral b and gives NaN for a non-integral b; 0^b is +0 for b > 0 and +inf for
 * b < 0; +inf^b is +inf for b > 0 and +0 for b < 0. */
static inline float tessera_powf(float a, float b) {
  if (b == 0.0f) return 1.0f;
  if (b == 1.0f) return a;
  if (b == 2.0f) return a * a;
  if (b == 3.0f) return a * a * a;
  if (b == 0.5f) return tessera_sqrtf(a);
  if (b == -1.0f) return 1.0f / a;
  if (b == -2.0f) return 1.0f / (a * a);
  if (b == -0.5f) return 1.0f / tessera_sqrtf(a);
  if (a != a || b != b) return a + b;
  const float inf = tessera_bits_to_float_(0x7f800000u);
  float m = a < 0.0f ? -a : a;
  float sign = 1.0f;
  if (a < 0.0f) {
    const float bm = b < 0.0f ? -b : b;
    if (bm < 16777216.0f) { /* below 2^24 a float may have a fraction */
      const int32_t i = (int32_t)b;
      if ((float)i != b) return tessera_bits_to_float_(0x7fc00000u);
      if (i & 1) sign = -1.0f;
    }
  }
  if (m == 0.0f) return b > 0.0f ? 0.0f : inf;
  if (m == inf) return b > 0.0f ? sign * inf : 0.0f;
  return sign * tessera_expf(b * tessera_logf(m));
}

#ifdef __cplusplus
}
#endif

#endif
