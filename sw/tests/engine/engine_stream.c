/* Engine streams (host/engine/tests/engine_test.cpp; packed with engine_stream.json). The same ELF
 * runs on every tile t of T. The host writes the tensor "weights" (w[i], every tile) before the
 * run; then for each of ENGINE_BATCHES minibatches b = 0, 1, ...:
 *   host sync 1: the host copies the next ENGINE_N words of stream "minibatch" into in[] of each
 *                tile, tiles in order;
 *   compute:     out[i] = in[i] * w[i] + (t << 24) + b;  acc[i] += out[i]   (all mod 2^32);
 *   host sync 2: the host copies out[] of each tile, tiles in order, to stream "result".
 * Then every tile exits 0; the host reads the tensor "acc". These formulas are the test's
 * specification: the host test computes the same values on its own. */
#include <stdint.h>

#include "tessera/tile.h"

#define ENGINE_N 16
#define ENGINE_BATCHES 6

/* In .data, not .bss: crt0 zeroes .bss when the tile starts, which would wipe what the host wrote
 * before the run (docs/executable-format.md, "Tensors"). Without a host write, w[i] = 2i + 1, so
 * that every output word depends on its input word (a lost input changes the result). */
uint32_t weights[ENGINE_N] = {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31};
uint32_t in[ENGINE_N];
uint32_t out[ENGINE_N];
uint32_t acc[ENGINE_N];

int main(void) {
  const uint32_t t = tessera_tile_id();
  for (uint32_t b = 0; b < ENGINE_BATCHES; ++b) {
    tessera_host_sync(1);
    for (uint32_t i = 0; i < ENGINE_N; ++i) {
      out[i] = in[i] * weights[i] + (t << 24) + b;
      acc[i] += out[i];
    }
    tessera_host_sync(2);
  }
  tessera_exit(0);
}
