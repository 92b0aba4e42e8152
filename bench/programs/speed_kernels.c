/* Speed kernels of scripts/bench.sh (docs/benchmarks.md), one per build, chosen by BENCH_KERNEL:
 *   1  int_loop     integer loop: loads, stores, adds, xors, multiplies, a branch (FNV-style hash
 *                   over a 256-word buffer), checked against the hash it must produce;
 *   2  fma_inexact  four independent FMADD.S chains a <- x a + y whose every result is inexact,
 *                   checked against their fixed points y / (1 - x);
 *   3  matmul       32x32 fp32 matmul C = A B, fractional values in [-0.5, 0.5), repeated,
 *                   checked: the sum of C equals sum_k colsum(A)_k rowsum(B)_k within 1e-3.
 * The same file runs on a tile (main, through the tile runtime), under qemu-riscv32 as a Linux
 * user program (bench/programs/linux_start.c) and natively (host cc); bench_kernel() returns 0
 * when its result is right. The work is one thread, the supervisor context only. */
#include <stdint.h>

#ifndef BENCH_KERNEL
#define BENCH_KERNEL 1
#endif

#if defined(__riscv)
/* One FMADD.S (spelled out: a freestanding build may turn fmaf into a call). */
static inline float fmadd(float x, float y, float z) {
  float r;
  __asm__ volatile("fmadd.s %0, %1, %2, %3" : "=f"(r) : "f"(x), "f"(y), "f"(z));
  return r;
}
#else
static inline float fmadd(float x, float y, float z) {
  return __builtin_fmaf(x, y, z);
}
#endif

static float fabs_(float x) {
  return x < 0 ? -x : x;
}

#if BENCH_KERNEL == 1
#define INT_REPS 20000u
static volatile uint32_t int_buf[256];

int bench_kernel(void) {
  uint32_t h = 2166136261u;
  for (uint32_t r = 0; r < INT_REPS; ++r) {
    for (uint32_t i = 0; i < 256; ++i) {
      const uint32_t v = int_buf[i] + (i ^ r);
      int_buf[i] = v;
      h = (h ^ v) * 16777619u;
    }
  }
  /* The hash of this exact sequence (the same on rv32 and the host: all arithmetic mod 2^32). */
  return h == 0xea9c7dc5u ? 0 : 1;
}
#elif BENCH_KERNEL == 2
#define FMA_ITERS 2000000u

int bench_kernel(void) {
  /* a <- x a + y converges to y / (1 - x); on the way (and at the fixed point) every product and
   * sum needs rounding, so every FMA is inexact. */
  volatile float v[8] = {0.9f, 0.1f, 0.7f, 0.3f, 0.55f, 1.7f, 0.3f, 0.11f};
  const float xa = v[0], ya = v[1], xb = v[2], yb = v[3], xc = v[4], yc = v[5], xd = v[6],
              yd = v[7];
  float a = 0.0f, b = 0.0f, c = 0.0f, d = 0.0f;
  for (uint32_t i = 0; i < FMA_ITERS; ++i) {
    a = fmadd(xa, a, ya);
    b = fmadd(xb, b, yb);
    c = fmadd(xc, c, yc);
    d = fmadd(xd, d, yd);
  }
  const float want[4] = {ya / (1.0f - xa), yb / (1.0f - xb), yc / (1.0f - xc), yd / (1.0f - xd)};
  const float got[4] = {a, b, c, d};
  for (int k = 0; k < 4; ++k) {
    if (fabs_(got[k] - want[k]) > 1e-5f * want[k]) return 1 + k;
  }
  return 0;
}
#elif BENCH_KERNEL == 3
#define MM_N 32
#define MM_REPS 200
static float mm_a[MM_N][MM_N], mm_b[MM_N][MM_N], mm_c[MM_N][MM_N];

int bench_kernel(void) {
  for (int i = 0; i < MM_N; ++i) {
    for (int j = 0; j < MM_N; ++j) {
      mm_a[i][j] =
          (float)((i * 31 + j * 17) % 64) * (1.0f / 64.0f) - 0.5f + 0.0137f * (float)(j & 3);
      mm_b[i][j] =
          (float)((i * 13 + j * 29) % 48) * (1.0f / 48.0f) - 0.5f + 0.0071f * (float)(i & 7);
    }
  }
  for (int rep = 0; rep < MM_REPS; ++rep) {
    __asm__ volatile("" : : : "memory"); /* every repetition computes C again (also natively) */
    for (int i = 0; i < MM_N; ++i) {
      for (int j = 0; j < MM_N; ++j) {
        float s = 0.0f;
        for (int k = 0; k < MM_N; ++k) s = fmadd(mm_a[i][k], mm_b[k][j], s);
        mm_c[i][j] = s;
      }
    }
  }
  float total = 0.0f, want = 0.0f, scale = 0.0f;
  for (int k = 0; k < MM_N; ++k) {
    float ca = 0.0f, rb = 0.0f;
    for (int i = 0; i < MM_N; ++i) ca += mm_a[i][k];
    for (int j = 0; j < MM_N; ++j) rb += mm_b[k][j];
    want += ca * rb;
    scale += fabs_(ca * rb);
  }
  for (int i = 0; i < MM_N; ++i) {
    for (int j = 0; j < MM_N; ++j) total += mm_c[i][j];
  }
  return fabs_(total - want) <= 1e-3f * scale ? 0 : 1;
}
#else
#error "BENCH_KERNEL must be 1, 2 or 3"
#endif

#if defined(BENCH_TILE) || defined(BENCH_NATIVE)
int main(void) {
  return bench_kernel();
}
#endif
