/* Random transfers: in each of STEPS supersteps, a seeded pseudo-random list of transfers (random
 * sender, random receiver set -- sometimes all other tiles --, random size 1..24 words, random
 * source offset), scheduled and checked on the tiles, with unequal compute before each sync.
 *
 * Schedule ("compiler"): every tile draws the same sequence from SEED and schedules every
 * transfer of the chip, in order, keeping one tessera_xprog per tile (only its own has a buffer;
 * the others only keep time). A transfer of n words from tile s to set D is placed on the earliest
 * cycle x (from R) at which s can start putting words on its bus at x (SEND: 2 words read first)
 * and every receiver can start receiving at x + EXCHANGE_LATENCY (RECV: 2 words read first); a
 * tile that is idle until then gets a DELAY, and since the shortest DELAY lasts 2 cycles a start
 * one cycle after the tile's last instruction is impossible -- tessera_xprog_earliest skips it.
 * The placement is iterated to the smallest x that suits every tile of the transfer. Transfers of
 * disjoint tiles overlap in time; a tile is in at most one transfer at a time.
 * Each receiver puts its transfers one after the other into its inbox. Data: word w of tile s's
 * source buffer at superstep k is hash(100 + k, s, w), recomputed by the receiver.
 * Exit codes: 50 wrong word, 51 inbox written past the received data, 52 builder error. */
#include "chip_test.h"

#define SEED 0x2545f491u
#define STEPS 5
#define MAXX 12
#define MAXN 24
#define SRCW 64
#define INBOXW (MAXX * MAXN + 8)

uint32_t srcbuf[SRCW];
uint32_t inbox[INBOXW];
uint32_t prog[4 * MAXX + 2];

/** A transfer this tile receives. */
struct rx {
  uint32_t src, n, off, at;
};
static struct rx rxs[MAXX];
static uint32_t step_now;
volatile uint32_t sink;

static void fill(void* arg) {
  const uint32_t w = (uint32_t)(uintptr_t)arg;
  const uint32_t t = tessera_tile_id();
  for (uint32_t i = w; i < SRCW; i += TESSERA_NUM_WORKERS)
    srcbuf[i] = chip_hash(100 + step_now, t, i);
}

int main(void) {
  const uint32_t t = tessera_tile_id();
  const uint32_t tiles = tessera_num_tiles();
  const uint32_t all = tiles >= 32 ? 0xffffffffu : (1u << tiles) - 1u;
  uint32_t rng = SEED;
  static tessera_xprog P[CHIP_MAX_TILES];

  for (uint32_t step = 1; step <= STEPS; ++step) {
    step_now = step;
    void* args[TESSERA_NUM_WORKERS];
    for (uint32_t w = 0; w < TESSERA_NUM_WORKERS; ++w) args[w] = (void*)(uintptr_t)w;
    chip_run_workers(fill, args);
    for (uint32_t i = 0; i < INBOXW; ++i) inbox[i] = CHIP_UNTOUCHED;

    for (uint32_t r = 0; r < tiles; ++r)
      tessera_xprog_init(&P[r], r == t ? prog : 0, sizeof prog / 4);
    const uint32_t nx = 3 + chip_rand(&rng) % (MAXX - 2);
    uint32_t nrx = 0, cursor = 0;
    for (uint32_t k = 0; k < nx; ++k) {
      const uint32_t src = chip_rand(&rng) % tiles;
      uint32_t mask = chip_rand(&rng) % 4 == 0 ? all : chip_rand(&rng) & all;
      mask &= ~(1u << src);
      if (!mask) mask = 1u << ((src + 1) % tiles);
      const uint32_t n = 1 + chip_rand(&rng) % MAXN;
      const uint32_t off = chip_rand(&rng) % (SRCW - n + 1);
      uint32_t x = 0;
      for (;;) {
        uint32_t y = tessera_xprog_earliest(&P[src], TESSERA_XWORDS_SEND, x);
        for (uint32_t r = 0; r < tiles; ++r) {
          if (!(mask >> r & 1u)) continue;
          const uint32_t a =
              tessera_xprog_earliest(&P[r], TESSERA_XWORDS_RECV, y + TESS_EXCHANGE_LATENCY) -
              TESS_EXCHANGE_LATENCY;
          if (a > y) y = a;
        }
        if (y == x) break;
        x = y;
      }
      tessera_xprog_send(&P[src], x, n, &srcbuf[off]);
      for (uint32_t r = 0; r < tiles; ++r) {
        if (!(mask >> r & 1u)) continue;
        tessera_xprog_recv(&P[r], x, n, src, r == t ? &inbox[cursor] : 0);
        if (r == t) {
          rxs[nrx++] = (struct rx){src, n, off, cursor};
          cursor += n;
        }
      }
    }
    for (uint32_t r = 0; r < tiles; ++r) tessera_xprog_end(&P[r]);
    CHIP_CHECK(!P[t].error, 52);

    /* Unequal compute: each tile spins a different, pseudo-random number of iterations. */
    uint32_t acc = 0;
    for (uint32_t i = chip_hash(step, t, 99) & 1023u; i; --i) acc = acc * 3 + i;
    sink = acc;

    tessera_set_exchange(prog);
    tessera_sync(step);

    for (uint32_t k = 0; k < nrx; ++k) {
      for (uint32_t i = 0; i < rxs[k].n; ++i) {
        CHIP_CHECK(inbox[rxs[k].at + i] == chip_hash(100 + step, rxs[k].src, rxs[k].off + i), 50);
      }
    }
    for (uint32_t i = cursor; i < INBOXW; ++i) CHIP_CHECK(inbox[i] == CHIP_UNTOUCHED, 51);
  }
  chip_pass();
}
