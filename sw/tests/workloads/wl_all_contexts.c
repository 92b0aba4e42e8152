/* Lockstep workload: all six contexts busy. Five workers run float multiply-add chains on their
 * own vectors while the supervisor runs its own chain, then waits and combines. Every product and
 * sum is a small integer, so the expected totals are exact in binary32 and checked. */
#include <stdint.h>

#include "tessera/tile.h"

#define LEN 48
#define STEPS 3

struct job {
  float x[LEN];
  float y[LEN];
  float result;
};

static struct job jobs[TESS_NUM_CONTEXTS];

/* sum over i of x[i] * y[i], STEPS times (fmadd chain) */
static float dot_steps(const struct job* j) {
  float acc = 0.0f;
  for (int s = 0; s < STEPS; ++s) {
    for (int i = 0; i < LEN; ++i) acc = __builtin_fmaf(j->x[i], j->y[i], acc);
  }
  return acc;
}

static void worker(void* arg) {
  struct job* j = (struct job*)arg;
  j->result = dot_steps(j);
}

int main(void) {
  for (uint32_t c = 0; c < TESS_NUM_CONTEXTS; ++c) {
    for (int i = 0; i < LEN; ++i) {
      jobs[c].x[i] = (float)(i % 7);
      jobs[c].y[i] = (float)(c + 1);
    }
  }
  for (uint32_t w = 1; w <= TESSERA_NUM_WORKERS; ++w) tessera_run_worker(w, worker, &jobs[w]);
  jobs[0].result = dot_steps(&jobs[0]);
  tessera_wait_workers();

  /* sum of (i % 7) for i < 48: six full cycles (21 each) + 0..5 (15) = 141 */
  float total = 0.0f;
  int ok = 1;
  for (uint32_t c = 0; c < TESS_NUM_CONTEXTS; ++c) {
    float expect = 141.0f * (float)STEPS * (float)(c + 1);
    if (jobs[c].result != expect) ok = 0;
    total += jobs[c].result;
  }
  tessera_puts("wl_all_contexts ");
  tessera_print_int((int32_t)total); /* 141 * 3 * (1 + ... + 6) = 8883 */
  tessera_putc('\n');
  return ok && total == 8883.0f ? 0 : 1;
}
