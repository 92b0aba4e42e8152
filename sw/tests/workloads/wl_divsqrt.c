/* Lockstep workload: long ops (DIV/DIVU/REM/REMU, FDIV.S, FSQRT.S) interleaved across the
 * supervisor and three workers, so several contexts sit in 8-round long ops at once. Perfect
 * squares and exact quotients keep the expected results exact. */
#include <stdint.h>

#include "tessera/tile.h"

#define N 24

typedef float fp_sum_t;

struct part {
  uint32_t seed;
  uint32_t isum;
  fp_sum_t fsum;
};

static struct part parts[4];

static void divsqrt(struct part* p) {
  uint32_t isum = 0;
  fp_sum_t fsum = 0;
  for (uint32_t i = 1; i <= N; ++i) {
    uint32_t n = i * (p->seed + i);
    volatile uint32_t d = i; /* keep the division a real DIVU */
    isum += n / d + n % d;   /* = seed + i, remainder 0 */
    volatile int32_t sn = -(int32_t)n;
    isum += (uint32_t)(sn / (int32_t)d) + (uint32_t)(sn % (int32_t)d); /* -(seed + i) */
    float sq = (float)(i * i);
    fsum += __builtin_sqrtf(sq) / (float)i; /* exactly 1 */
  }
  p->isum = isum;
  p->fsum = fsum;
}

static void worker(void* arg) {
  divsqrt((struct part*)arg);
}

int main(void) {
  for (uint32_t k = 0; k < 4; ++k) parts[k].seed = 1000u * (k + 1);
  for (uint32_t w = 1; w <= 3; ++w) tessera_run_worker(w, worker, &parts[w]);
  divsqrt(&parts[0]);
  tessera_wait_workers();
  int ok = 1;
  for (uint32_t k = 0; k < 4; ++k) {
    if (parts[k].isum != 0u || parts[k].fsum != (fp_sum_t)N) ok = 0;
  }
  tessera_puts(ok ? "wl_divsqrt ok\n" : "wl_divsqrt FAIL\n");
  return ok ? 0 : 1;
}
