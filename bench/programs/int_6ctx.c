/* Benchmark kernel: speed_kernels.c's int_loop (an FNV-style hash over a 256-word buffer, loads,
 * stores, adds, xors, multiplies, a branch) on all six contexts at once, each over its own
 * buffer: the supervisor and five workers, every slot of the barrel busy with integer code. The
 * program exits 0 when every context's hash is the one int_loop produces. */
#include <stdint.h>

#include "tessera/tile.h"

#define INT_REPS 20000u

static volatile uint32_t int_buf[6][256];
static uint32_t hashes[6];

static void kernel(void* arg) {
  const unsigned k = (unsigned)(uintptr_t)arg;
  volatile uint32_t* buf = int_buf[k];
  uint32_t h = 2166136261u;
  for (uint32_t r = 0; r < INT_REPS; ++r) {
    for (uint32_t i = 0; i < 256; ++i) {
      const uint32_t v = buf[i] + (i ^ r);
      buf[i] = v;
      h = (h ^ v) * 16777619u;
    }
  }
  hashes[k] = h;
}

int main(void) {
  for (unsigned w = 1; w < 6; ++w) tessera_run_worker(w, kernel, (void*)(uintptr_t)w);
  kernel((void*)0);
  tessera_wait_workers();
  for (unsigned k = 0; k < 6; ++k) {
    if (hashes[k] != 0xea9c7dc5u) return 1 + (int)k;
  }
  return 0;
}
