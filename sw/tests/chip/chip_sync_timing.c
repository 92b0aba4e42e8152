/* Unequal compute before a sync, and the exact sync timing of docs/chip.md, checked on the chip.
 *
 * Superstep A: tile t computes for a tile-dependent time (supervisor and one worker), then arrives
 * with no exchange program, measuring the cycle c_t its SYNC issued and the cycle its next
 * instruction issued. Contract: arrival a_t = c_t + 3, release R = max a_t + SYNC_LATENCY, and
 * every supervisor resumes in the first supervisor slot (cycle = 0 mod 6) >= R -- the same cycle
 * on every tile, however unequal the compute.
 * Superstep B: every tile t > 0 sends its two measurements to tile 0 (gather), scheduled with
 * tessera_xprog exactly as in chip_random (sender SEND, tile 0 RECV 3 cycles later, one sender
 * after the other). Each tile knows its program's length E_t (cycle after its END, from R), so
 * it resumes in the first supervisor slot >= R_B + E_t; it measures this sync too.
 * Superstep C: the same gather for superstep B's measurements and E_t.
 * Tile 0 then checks both rules with the measurements of every tile.
 * Exit codes: 60 resume cycles differ in A, 61 resume != slot(R_A), 62 resume != slot(R_B + E_t),
 * 63 builder error. */
#include "chip_test.h"

#define WORDS 3

uint32_t report[WORDS];
uint32_t gathered[CHIP_MAX_TILES][WORDS];
uint32_t prog[4 * CHIP_MAX_TILES + 2];
volatile uint32_t sink;

static void spin(void* arg) {
  uint32_t acc = 1;
  for (uint32_t i = (uint32_t)(uintptr_t)arg; i; --i) acc = acc * 5 + i;
  sink = acc;
}

/** Gather report[0..WORDS) of every tile into gathered[] on tile 0; returns this tile's E_t. */
static uint32_t gather_program(void) {
  const uint32_t t = tessera_tile_id();
  const uint32_t tiles = tessera_num_tiles();
  static tessera_xprog P[CHIP_MAX_TILES];
  for (uint32_t r = 0; r < tiles; ++r)
    tessera_xprog_init(&P[r], r == t ? prog : 0, sizeof prog / 4);
  for (uint32_t s = 1; s < tiles; ++s) {
    uint32_t x = 0;
    for (;;) {
      uint32_t y = tessera_xprog_earliest(&P[s], TESSERA_XWORDS_SEND, x);
      const uint32_t a =
          tessera_xprog_earliest(&P[0], TESSERA_XWORDS_RECV, y + TESS_EXCHANGE_LATENCY) -
          TESS_EXCHANGE_LATENCY;
      if (a > y) y = a;
      if (y == x) break;
      x = y;
    }
    tessera_xprog_send(&P[s], x, WORDS, report);
    tessera_xprog_recv(&P[0], x, WORDS, s, gathered[s]);
  }
  uint32_t mine = 0;
  for (uint32_t r = 0; r < tiles; ++r) {
    const uint32_t e = tessera_xprog_end(&P[r]);
    if (r == t) mine = e;
  }
  CHIP_CHECK(!P[t].error, 63);
  return mine;
}

int main(void) {
  const uint32_t t = tessera_tile_id();
  const uint32_t tiles = tessera_num_tiles();
  const uint32_t latency = 3 + TESS_SYNC_LATENCY; /* SYNC issue -> arrival (3) -> release */

  /* Superstep A: unequal compute. */
  tessera_run_worker(1, spin, (void*)(uintptr_t)(40 + 97 * ((t * 7) % tiles)));
  spin((void*)(uintptr_t)(10 + 23 * t));
  tessera_wait_workers();
  uint32_t c_a, r_a;
  chip_timed_sync(1, &c_a, &r_a);

  /* Superstep B: gather A's measurements. */
  report[0] = c_a;
  report[1] = r_a;
  report[2] = 0;
  const uint32_t e_b = gather_program();
  tessera_set_exchange(prog);
  uint32_t c_b, r_b;
  chip_timed_sync(2, &c_b, &r_b);
  uint32_t a_issue[CHIP_MAX_TILES], a_resume[CHIP_MAX_TILES];
  for (uint32_t s = 1; s < tiles; ++s) {
    a_issue[s] = gathered[s][0];
    a_resume[s] = gathered[s][1];
  }

  /* Superstep C: gather B's measurements. */
  report[0] = c_b;
  report[1] = r_b;
  report[2] = e_b;
  gather_program();
  tessera_set_exchange(prog);
  tessera_sync(3);

  if (t == 0) {
    a_issue[0] = c_a;
    a_resume[0] = r_a;
    gathered[0][0] = c_b;
    gathered[0][1] = r_b;
    gathered[0][2] = e_b;
    uint32_t last_a = 0, last_b = 0;
    for (uint32_t s = 0; s < tiles; ++s) {
      if (a_issue[s] > last_a) last_a = a_issue[s];
      if (gathered[s][0] > last_b) last_b = gathered[s][0];
    }
    for (uint32_t s = 0; s < tiles; ++s) CHIP_CHECK(a_resume[s] == r_a, 60);
    CHIP_CHECK(r_a == chip_sup_slot(last_a + latency), 61);
    for (uint32_t s = 0; s < tiles; ++s) {
      CHIP_CHECK(gathered[s][1] == chip_sup_slot(last_b + latency + gathered[s][2]), 62);
    }
  }
  chip_pass();
}
