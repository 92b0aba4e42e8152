/* Multicast: one tile sends, every other tile receives the same words on the same cycles.
 *
 * Superstep 1 (static programs from the exchange.h macros), root tile 0, N words:
 *   root:      SEND N at R      -> words read at R, R+1; bus carries src[i] at R+2+i
 *   receivers: DELAY 2 at R     -> next instruction at R+1+2 = R+3
 *              RECV N at R+3    -> words read at R+3, R+4; receive i at R+5+i = (R+2+i) + 3,
 *                                  i.e. exactly src[i] (EXCHANGE_LATENCY = 3)
 * Superstep 2 (run-time program from tessera_xprog), root tile T-1, which also receives its own
 * bus: root:      SENDRECV N+3 at R -> words at R..R+2, transfers at R+3+i for i = 0..N+2: it sends
 *              src2[i] and receives the word its own bus carried at R+i: 0 for i < 3 (nothing is
 *              sent during the instruction read), src2[i-3] after. So 3 guard words in front of
 *              the data receive 0 and the data receive src2 (src2 has 3 pad words for the tail).
 *   others:    receive what the root sends at R+3.. : RECV must transfer at R+6, so it starts at
 *              R+4 after DELAY 3 (1 + 3 cycles) -- the builder derives this.
 * Exit codes: 10 data, 11 canaries, 12 root received in superstep 1, 20 data, 21 root guard not 0,
 * 22 receiver guard written, 23 canary, 24 program builder error. */
#include "chip_test.h"

#define N 64

struct inbox {
  uint32_t guard[3];
  uint32_t data[N];
  uint32_t after;
};

uint32_t src[N];
uint32_t src2[N + 3];
struct inbox dst, dst2;
uint32_t prog2[8];

static const uint32_t prog_root[] = {XSEND(N, src), XEND};
static const uint32_t prog_recv[] = {XDELAY(2), XRECV(N, 0, dst.data), XEND};

static void fill_untouched(struct inbox* b) {
  uint32_t* w = (uint32_t*)b;
  for (uint32_t i = 0; i < sizeof *b / 4; ++i) w[i] = CHIP_UNTOUCHED;
}

int main(void) {
  const uint32_t tile = tessera_tile_id();
  const uint32_t tiles = tessera_num_tiles();
  fill_untouched(&dst);
  fill_untouched(&dst2);

  /* Superstep 1 */
  if (tile == 0) {
    for (uint32_t i = 0; i < N; ++i) src[i] = chip_hash(1, 0, i);
    tessera_set_exchange(prog_root);
  } else {
    tessera_set_exchange(prog_recv);
  }
  tessera_sync(1);
  if (tile == 0) {
    for (uint32_t i = 0; i < sizeof dst / 4; ++i)
      CHIP_CHECK(((uint32_t*)&dst)[i] == CHIP_UNTOUCHED, 12);
  } else {
    for (uint32_t i = 0; i < N; ++i) CHIP_CHECK(dst.data[i] == chip_hash(1, 0, i), 10);
    CHIP_CHECK(dst.guard[2] == CHIP_UNTOUCHED && dst.after == CHIP_UNTOUCHED, 11);
  }

  /* Superstep 2 */
  const uint32_t root = tiles - 1;
  tessera_xprog p;
  tessera_xprog_init(&p, prog2, sizeof prog2 / 4);
  if (tile == root) {
    for (uint32_t i = 0; i < N + 3; ++i) src2[i] = chip_hash(2, root, i);
    tessera_xprog_sendrecv(&p, 3, N + 3, src2, root, dst2.guard);
  } else {
    tessera_xprog_recv(&p, 3, N, root, dst2.data);
  }
  tessera_xprog_end(&p);
  CHIP_CHECK(!p.error, 24);
  tessera_set_exchange(prog2);
  tessera_sync(2);
  for (uint32_t i = 0; i < N; ++i) CHIP_CHECK(dst2.data[i] == chip_hash(2, root, i), 20);
  for (uint32_t i = 0; i < 3; ++i) {
    if (tile == root) {
      CHIP_CHECK(dst2.guard[i] == 0, 21);
    } else {
      CHIP_CHECK(dst2.guard[i] == CHIP_UNTOUCHED, 22);
    }
  }
  CHIP_CHECK(dst2.after == CHIP_UNTOUCHED, 23);
  chip_pass();
}
