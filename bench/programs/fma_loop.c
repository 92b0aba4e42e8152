/* Benchmark kernel: a chain of fused multiply-adds on BENCH_CONTEXTS contexts (1 = the supervisor
 * alone, 6 = the supervisor and all five workers), BENCH_ITERS iterations each. Measures issue
 * rate: with one context a tile issues at most every 6 cycles (IPC 1/6), with six it can issue
 * every cycle (IPC 1). Each iteration is 4 independent FMAs, an add and a branch; the result is
 * checked so the work cannot be optimised away, and the program exits 0 when every context's sum is
 * right. */
#include "tessera/tile.h"

#ifndef BENCH_CONTEXTS
#define BENCH_CONTEXTS 6
#endif
#ifndef BENCH_ITERS
#define BENCH_ITERS 20000
#endif

struct Acc {
  float a, b, c, d;
};

static struct Acc acc[6];

/* One FMADD.S (spelled out: a freestanding build may turn fmadd into a call to fmaf). */
static inline float fmadd(float x, float y, float z) {
  float r;
  __asm__("fmadd.s %0, %1, %2, %3" : "=f"(r) : "f"(x), "f"(y), "f"(z));
  return r;
}

static void kernel(void* arg) {
  struct Acc* s = (struct Acc*)arg;
  float a = 0.0f, b = 0.0f, c = 0.0f, d = 0.0f;
  const float x = 1.0f, y = 1.0f;
  for (unsigned i = 0; i < BENCH_ITERS; ++i) {
    a = fmadd(x, y, a);
    b = fmadd(x, y, b);
    c = fmadd(x, y, c);
    d = fmadd(x, y, d);
  }
  s->a = a;
  s->b = b;
  s->c = c;
  s->d = d;
}

int main(void) {
  for (unsigned w = 1; w < BENCH_CONTEXTS; ++w) tessera_run_worker(w, kernel, &acc[w]);
  kernel(&acc[0]);
  tessera_wait_workers();
  /* Every partial sum counts iterations exactly (BENCH_ITERS < 2^24 is exact in binary32). */
  for (unsigned k = 0; k < BENCH_CONTEXTS; ++k) {
    if (acc[k].a != (float)BENCH_ITERS || acc[k].d != (float)BENCH_ITERS) return 1 + k;
  }
  return 0;
}
