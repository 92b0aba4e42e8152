/* Repeated supersteps with worker compute in between: a 1-D periodic integer stencil distributed
 * over the tiles (M cells each). Each superstep exchanges halo cells with both neighbours, then
 * the five workers compute the new cells (next[i] = 3*left + 5*mid + 7*right + step, mod 2^32).
 * Every tile also runs the whole computation serially on the global array and compares its part,
 * so the distributed result is checked against an independent computation.
 *
 * Schedule (same two instructions on every tile, from the release R):
 *   SENDRECV 4, &cells[0],   bus = right, hr   at R:    transfers R+3..R+6
 *   SENDRECV 4, &cells[M-1], bus = left,  hl   at R+7:  transfers R+10..R+13
 * In the first, tile t sends cells[0] (then 3 words nobody uses) and receives, 3 cycles later, what
 * the right neighbour sent: its cells[0] lands after 3 guard words (hr = {0, 0, 0, halo}); the
 * guards are 0 because nothing is on the bus while the neighbour reads its instruction words.
 * The second sends cells[M-1] leftwards the same way (cells has 3 pad words after it).
 * Exit codes: 70 cell differs from the serial reference, 71 guard not 0, 72 builder error. */
#include "chip_test.h"

#define M 20
#define STEPS 8

uint32_t cells[M + 3];
uint32_t next[M];
uint32_t hr[4], hl[4];
uint32_t prog[8];
uint32_t global_ref[CHIP_MAX_TILES * M];
uint32_t global_tmp[CHIP_MAX_TILES * M];
static uint32_t step_now;

static uint32_t stencil(uint32_t l, uint32_t m, uint32_t r, uint32_t step) {
  return 3u * l + 5u * m + 7u * r + step;
}

static void compute(void* arg) {
  const uint32_t w = (uint32_t)(uintptr_t)arg;
  for (uint32_t i = w; i < M; i += TESSERA_NUM_WORKERS) {
    const uint32_t l = i == 0 ? hl[3] : cells[i - 1];
    const uint32_t r = i == M - 1 ? hr[3] : cells[i + 1];
    next[i] = stencil(l, cells[i], r, step_now);
  }
}

int main(void) {
  const uint32_t t = tessera_tile_id();
  const uint32_t tiles = tessera_num_tiles();
  const uint32_t n = tiles * M;
  for (uint32_t i = 0; i < M; ++i) cells[i] = chip_hash(9, t * M + i, 0);
  for (uint32_t i = M; i < M + 3; ++i) cells[i] = CHIP_UNTOUCHED;

  tessera_xprog p;
  tessera_xprog_init(&p, prog, sizeof prog / 4);
  tessera_xprog_sendrecv(&p, 3, 4, &cells[0], (t + 1) % tiles, hr);
  tessera_xprog_sendrecv(&p, 10, 4, &cells[M - 1], (t + tiles - 1) % tiles, hl);
  tessera_xprog_end(&p);
  CHIP_CHECK(!p.error, 72);

  void* args[TESSERA_NUM_WORKERS];
  for (uint32_t w = 0; w < TESSERA_NUM_WORKERS; ++w) args[w] = (void*)(uintptr_t)w;
  for (uint32_t step = 1; step <= STEPS; ++step) {
    tessera_set_exchange(prog);
    tessera_sync(step);
    for (uint32_t i = 0; i < 3; ++i) CHIP_CHECK(hr[i] == 0 && hl[i] == 0, 71);
    step_now = step;
    chip_run_workers(compute, args);
    tessera_wait_workers();
    for (uint32_t i = 0; i < M; ++i) cells[i] = next[i];
  }

  /* Serial reference over the whole ring. */
  for (uint32_t g = 0; g < n; ++g) global_ref[g] = chip_hash(9, g, 0);
  for (uint32_t step = 1; step <= STEPS; ++step) {
    for (uint32_t g = 0; g < n; ++g) {
      global_tmp[g] =
          stencil(global_ref[(g + n - 1) % n], global_ref[g], global_ref[(g + 1) % n], step);
    }
    for (uint32_t g = 0; g < n; ++g) global_ref[g] = global_tmp[g];
  }
  for (uint32_t i = 0; i < M; ++i) CHIP_CHECK(cells[i] == global_ref[t * M + i], 70);
  chip_pass();
}
