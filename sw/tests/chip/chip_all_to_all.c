/* All-to-all: every tile sends a distinct block of B words to every other tile, in T-1 rounds;
 * two supersteps with different block sizes.
 *
 * Schedule: in round j = 1..T-1, tile t sends its block for tile (t+j) mod T and receives from tile
 * (t-j) mod T, which in the same round sends its block for t. Every tile runs the same
 * instruction sequence, so round j starts on the same cycle everywhere:
 *   SENDRECV B+3, out[t+j], bus = t-j, in[t-j].guard      starts at R + (j-1)*(B+6)
 * (3 words, then B+3 transfers). As in chip_ring_shift, the receive of transfer i takes the word
 * the source's bus carried 3 cycles earlier: i < 3 land in the slot's 3 guard words and must be 0
 * (the source is reading its instruction words, so it sends nothing), i >= 3 carry block word i-3.
 * The 3 extra words each round sends are not received (the next round starts with 3 word reads).
 * Data: tile s's block for tile d, word i = hash(superstep, s, d << 16 | i), recomputed by the
 * receiver. Exit codes: 40 wrong word, 41 guard not 0, 42 own slot written, 43 builder error. */
#include "chip_test.h"

#define BMAX 16

uint32_t out[CHIP_MAX_TILES * BMAX + 3];
uint32_t in[CHIP_MAX_TILES * (BMAX + 3)];
uint32_t prog[3 * CHIP_MAX_TILES + 1];

static void superstep(uint32_t step, uint32_t b) {
  const uint32_t t = tessera_tile_id();
  const uint32_t tiles = tessera_num_tiles();
  for (uint32_t d = 0; d < tiles; ++d) {
    for (uint32_t i = 0; i < b; ++i) out[d * b + i] = chip_hash(step, t, d << 16 | i);
  }
  for (uint32_t i = 0; i < tiles * (b + 3); ++i) in[i] = CHIP_UNTOUCHED;

  tessera_xprog p;
  tessera_xprog_init(&p, prog, sizeof prog / 4);
  for (uint32_t j = 1; j < tiles; ++j) {
    const uint32_t dest = (t + j) % tiles, src = (t + tiles - j) % tiles;
    tessera_xprog_sendrecv(&p, 3 + (j - 1) * (b + 6), b + 3, &out[dest * b], src,
                           &in[src * (b + 3)]);
  }
  tessera_xprog_end(&p);
  CHIP_CHECK(!p.error, 43);
  tessera_set_exchange(prog);
  tessera_sync(step);

  for (uint32_t s = 0; s < tiles; ++s) {
    const uint32_t* slot = &in[s * (b + 3)];
    if (s == t) {
      for (uint32_t i = 0; i < b + 3; ++i) CHIP_CHECK(slot[i] == CHIP_UNTOUCHED, 42);
      continue;
    }
    for (uint32_t i = 0; i < 3; ++i) CHIP_CHECK(slot[i] == 0, 41);
    for (uint32_t i = 0; i < b; ++i) CHIP_CHECK(slot[3 + i] == chip_hash(step, s, t << 16 | i), 40);
  }
}

int main(void) {
  superstep(1, BMAX);
  superstep(2, 5);
  chip_pass();
}
