/* Lockstep workload that ends in a trap: workers are busy in FP divides (long ops in flight)
 * when the supervisor executes EBREAK. Both devices must stop on the same cycle with the same
 * state: unfinished long ops discarded, older instructions of other contexts completed. */
#include <stdint.h>

#include "tessera/tile.h"

static volatile float sink[TESS_NUM_CONTEXTS];

static void worker(void* arg) {
  uint32_t w = (uint32_t)(uintptr_t)arg;
  float x = (float)(w + 2);
  for (;;) {
    x = 1.0f / x + 1.0f; /* converges to the golden ratio; never exits */
    sink[w] = x;
  }
}

int main(void) {
  for (uint32_t w = 1; w <= TESSERA_NUM_WORKERS; ++w) {
    tessera_run_worker(w, worker, (void*)(uintptr_t)w);
  }
  float acc = 0.0f;
  for (int i = 1; i <= 40; ++i) acc += 1.0f / (float)i;
  sink[0] = acc;
  tessera_puts("wl_trap_end\n");
  __asm__ volatile("ebreak");
  return 1; /* not reached */
}
