/* Host syncs: the host reads and writes tile memory while the chip is stopped, around exchanges.
 * The harness (host/tests/chip_programs_test.cpp) finds the buffers by their symbols and uses the
 * same formulas, which are the test's specification:
 *   host sync 1: the host reads host_out[i] == 0xA5000000 + (t << 16) + i on every tile t,
 *                and writes host_in[i] = 0x5A000000 + (t << 16) + 3i.
 *   superstep 2: every tile computes res[i] = 3 * host_in[i] + t and ring-shifts it rightwards
 *                (SENDRECV HN+3 with 3 guard words, as in chip_ring_shift) into ring_in.
 *   host sync 3: the host reads ring_in[3 + i] == 3 * (0x5A000000 + (l << 16) + 3i) + l, l = t-1
 *                mod T, and writes token = 0x70000000 + t. The exchange named before host sync 3
 *                runs after the release, so it sees what the host wrote: tile 0 multicasts its
 *                token (SEND 1 at R; others DELAY 2, RECV 1, as in chip_multicast).
 * Exit codes: 80 host_in wrong, 81 token wrong, 82 multicast token wrong, 83 ring guard not 0,
 * 84 builder error. */
#include "chip_test.h"

#define HN 16

uint32_t host_out[HN];
uint32_t host_in[HN];
uint32_t res[HN + 3];
uint32_t ring_in[3 + HN];
uint32_t token;
uint32_t token_all;
uint32_t prog[8];

static const uint32_t prog_token_root[] = {XSEND(1, &token), XEND};
static const uint32_t prog_token_leaf[] = {XDELAY(2), XRECV(1, 0, &token_all), XEND};

int main(void) {
  const uint32_t t = tessera_tile_id();
  const uint32_t tiles = tessera_num_tiles();
  for (uint32_t i = 0; i < HN; ++i) host_out[i] = 0xA5000000u + (t << 16) + i;
  tessera_host_sync(1);
  for (uint32_t i = 0; i < HN; ++i) CHIP_CHECK(host_in[i] == 0x5A000000u + (t << 16) + 3 * i, 80);

  for (uint32_t i = 0; i < HN; ++i) res[i] = 3 * host_in[i] + t;
  tessera_xprog p;
  tessera_xprog_init(&p, prog, sizeof prog / 4);
  tessera_xprog_sendrecv(&p, 3, HN + 3, res, (t + tiles - 1) % tiles, ring_in);
  tessera_xprog_end(&p);
  CHIP_CHECK(!p.error, 84);
  tessera_set_exchange(prog);
  tessera_sync(2);
  for (uint32_t i = 0; i < 3; ++i) CHIP_CHECK(ring_in[i] == 0, 83);

  tessera_set_exchange(t == 0 ? prog_token_root : prog_token_leaf);
  tessera_host_sync(3);
  CHIP_CHECK(token == 0x70000000u + t, 81);
  if (t != 0) CHIP_CHECK(token_all == 0x70000000u, 82);
  chip_pass();
}
