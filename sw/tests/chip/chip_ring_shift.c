/* Ring shift over repeated supersteps: in each superstep every tile sends its buffer to the right
 * neighbour and receives the left neighbour's; between supersteps the five workers transform the
 * received words (buf[i] = in[i] + K*s at superstep s) and the supervisor checks them.
 *
 * Schedule (one instruction on every tile, all starting at the release R):
 *   SENDRECV N+3, buf, bus = left, in.guard
 *   words read at R..R+2; at R+3+i the tile sends buf[i] and receives the word the left tile's
 *   bus carried at R+i (EXCHANGE_LATENCY 3). For i < 3 that is 0 (nobody sends while reading
 *   instruction words), so the 3 guard words in front of in.data must read 0; for i >= 3 it is
 *   the left tile's buf[i-3]. buf has 3 pad words for the 3 sends nobody receives.
 * Expected values, computed from the closed form and not from what was sent:
 *   buf on tile t after s supersteps = hash(7, (t - s) mod T, i) + K * s(s+1)/2.
 * Exit codes: 30 guard not 0, 31 wrong word, 32 builder error. */
#include "chip_test.h"

#define N 40
#define STEPS 6
#define K 0x01000193u

uint32_t buf[N + 3];
struct {
  uint32_t guard[3];
  uint32_t data[N];
} in;
uint32_t prog[8];

/** What one worker transforms. */
struct slice {
  uint32_t first, count, add;
};
static struct slice slices[TESSERA_NUM_WORKERS];

static void transform(void* arg) {
  const struct slice* s = (const struct slice*)arg;
  for (uint32_t i = s->first; i < s->first + s->count; ++i) buf[i] = in.data[i] + s->add;
}

int main(void) {
  const uint32_t t = tessera_tile_id();
  const uint32_t tiles = tessera_num_tiles();
  const uint32_t left = (t + tiles - 1) % tiles;
  for (uint32_t i = 0; i < N; ++i) buf[i] = chip_hash(7, t, i);
  for (uint32_t i = N; i < N + 3; ++i) buf[i] = CHIP_UNTOUCHED;

  tessera_xprog p;
  tessera_xprog_init(&p, prog, sizeof prog / 4);
  tessera_xprog_sendrecv(&p, 3, N + 3, buf, left, in.guard);
  tessera_xprog_end(&p);
  CHIP_CHECK(!p.error, 32);

  void* args[TESSERA_NUM_WORKERS];
  for (uint32_t s = 1; s <= STEPS; ++s) {
    for (uint32_t i = 0; i < 3; ++i) in.guard[i] = CHIP_UNTOUCHED;
    tessera_set_exchange(prog);
    tessera_sync(s);
    for (uint32_t i = 0; i < 3; ++i) CHIP_CHECK(in.guard[i] == 0, 30);
    const uint32_t from = (t + tiles * STEPS - s) % tiles;
    for (uint32_t i = 0; i < N; ++i) {
      CHIP_CHECK(in.data[i] == chip_hash(7, from, i) + K * ((s - 1) * s / 2), 31);
    }
    for (uint32_t w = 0; w < TESSERA_NUM_WORKERS; ++w) {
      slices[w] = (struct slice){w * (N / TESSERA_NUM_WORKERS), N / TESSERA_NUM_WORKERS, K * s};
      args[w] = &slices[w];
    }
    chip_run_workers(transform, args);
    tessera_wait_workers();
  }
  const uint32_t from = (t + tiles * STEPS - STEPS) % tiles;
  for (uint32_t i = 0; i < N; ++i) {
    CHIP_CHECK(buf[i] == chip_hash(7, from, i) + K * (STEPS * (STEPS + 1) / 2), 31);
  }
  chip_pass();
}
