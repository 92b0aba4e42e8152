/* expf and logf for tiles, which have no C library, written with IEEE basic operations and
 * explicit fused multiply-adds only: the host compiles the same functions to the same bits, so host
 * references of codelets that use them (softmax cross-entropy) are bit-exact (docs/library.md).
 * Accuracy: within 2 ulp of the correctly rounded result for normal results (checked in
 * sw/library/tests against the host's expf/logf); no errno, NaN in gives NaN out. */
#ifndef TESSERA_MATHF_H
#define TESSERA_MATHF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline float tessera_fmaf_(float a, float b, float c) { return __builtin_fmaf(a, b, c); }

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

#ifdef __cplusplus
}
#endif

#endif
