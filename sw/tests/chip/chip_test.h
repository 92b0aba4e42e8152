/* Helpers shared by the multi-tile programs (sw/tests/chip/). Every program is one ELF loaded on
 * every tile; it branches on the tile id, checks everything it receives and exits 0 when all is
 * right, or with a distinct nonzero code naming the failed check (see each program's table).
 * Tile 0 prints "<name> ok" on success. */
#ifndef TESSERA_CHIP_TEST_H
#define TESSERA_CHIP_TEST_H

#include <stdint.h>

#include "tessera/exchange.h"
#include "tessera/tile.h"

/** Largest chip the programs are sized for (buffers indexed by tile). */
#define CHIP_MAX_TILES 16

/** A well-mixed 32-bit function of three words (murmur3 finalizer on a combination): the data
 * every test sends. Senders and receivers each compute it themselves, so a received word is
 * checked against a value computed independently of the exchange. */
static inline uint32_t chip_hash(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u) * 0x85ebca6bu ^ (c + 0x165667b1u) * 0xc2b2ae35u;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

/** Deterministic pseudo-random sequence (xorshift32); every tile runs the same one. */
static inline uint32_t chip_rand(uint32_t* state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *state = x;
  return x;
}

/** Exit with code if cond is false (prints the code on the console first). */
#define CHIP_CHECK(cond, code)                        \
  do {                                                \
    if (!(cond)) {                                    \
      tessera_puts(TESS_PROGRAM_NAME " FAIL check "); \
      tessera_print_uint(code);                       \
      tessera_putc('\n');                             \
      tessera_exit(code);                             \
    }                                                 \
  } while (0)

/** Tile 0 prints "<name> ok"; every tile exits 0. */
static inline __attribute__((noreturn)) void chip_pass(void) {
  if (tessera_tile_id() == 0) tessera_puts(TESS_PROGRAM_NAME " ok\n");
  tessera_exit(0);
}

/** Value words that were never written hold (the receive areas are filled with it first). */
#define CHIP_UNTOUCHED 0xdeadbeefu

/** Start fn(arg_w) on every worker w = 1..5 (the supervisor WAITs later, in tessera_sync). */
static inline void chip_run_workers(tessera_worker_fn fn, void* const* args) {
  for (uint32_t w = 1; w <= TESSERA_NUM_WORKERS; ++w) tessera_run_worker(w, fn, args[w - 1]);
}

/** Arrive at an internal sync and measure it: *issue = cycle the SYNC store issued, *resume =
 * cycle the supervisor's next instruction issued. The CSR read, the store and the second CSR read
 * are consecutive supervisor instructions, so the store issues 6 cycles after the first read
 * (docs/tile.md: one issue per 6 cycles, nothing stalls a plain store). Workers must be idle. */
static inline void chip_timed_sync(uint32_t id, uint32_t* issue, uint32_t* resume) {
  uint32_t c0, c1;
  TESSERA_MEMORY_BARRIER();
  __asm__ volatile(
      "csrr %0, 0xC00\n\t"
      "sw %2, 0(%3)\n\t"
      "csrr %1, 0xC00"
      : "=&r"(c0), "=r"(c1)
      : "r"(id & 0xffffu), "r"(TESS_MMIO_SYNC)
      : "memory");
  *issue = c0 + TESS_ROUND_CYCLES;
  *resume = c1;
}

/** First supervisor slot (cycle = 0 mod 6) at or after cycle c. */
static inline uint32_t chip_sup_slot(uint32_t c) {
  return (c + TESS_ROUND_CYCLES - 1u) / TESS_ROUND_CYCLES * TESS_ROUND_CYCLES;
}

#endif
