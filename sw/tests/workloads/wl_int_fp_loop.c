/* Lockstep workload: one context, an integer + FP loop (LCG, shifts, multiplies, loads/stores,
 * float multiply-add and conversions). Self-checks the integer part against a closed form.
 * Prints the checksums so a divergence between devices also shows on the console. */
#include <stdint.h>

#include "tessera/tile.h"

#define N 64

static uint32_t table[N];
static float ftable[N];

int main(void) {
  uint32_t x = 12345u;
  for (int i = 0; i < N; ++i) {
    x = x * 1664525u + 1013904223u; /* Numerical Recipes LCG */
    table[i] = x;
    ftable[i] = (float)(x >> 8) * (1.0f / 16777216.0f); /* in [0, 1) exactly */
  }
  uint32_t isum = 0;
  float facc = 0.0f;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < N; ++i) {
      uint32_t v = table[i];
      isum += (v ^ (v >> 7)) + (uint32_t)((int32_t)v >> 3) * 3u;
      facc = facc * 0.5f + ftable[i] * ftable[(i + round) % N];
      table[i] = v + (uint32_t)i;
    }
  }
  /* Integer self-check: the LCG has a closed form for its 64th value; recompute it by squaring. */
  uint32_t a = 1664525u, c = 1013904223u, am = 1u, cm = 0u;
  for (int i = 0; i < N; ++i) { /* (am, cm) = composition of N steps */
    cm = cm * a + c;
    am = am * a;
  }
  uint32_t x64 = am * 12345u + cm;
  tessera_puts("wl_int_fp_loop ");
  tessera_print_hex(isum);
  tessera_putc(' ');
  tessera_print_int((int32_t)(facc * 1000000.0f));
  tessera_putc('\n');
  return (x64 == x) && facc >= 0.0f && facc < 2.0f ? 0 : 1;
}
