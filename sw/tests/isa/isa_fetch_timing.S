/* Cross-context self-modifying code (docs/tile.md, "Order of effects"): an instruction fetched at
 * cycle t sees stores issued at cycles <= t-3 and not those issued at t-1 or t-2, because the RTL
 * fetches in IF (issue cycle) and stores in EX (issue + 2).
 *
 * For worker w = 1, 2, 3 the supervisor issues RUN w at cycle c, one no-op at c+6 and at s = c+12 a
 * store that rewrites the worker's "addi a1, zero, 1" (0x00100593) into "addi a1, zero, 2"
 * (0x00200593). Worker w's first slot is the first cycle >= c+3 that is = w mod 6 (c = 0 mod 6):
 * c+7, c+8, c+3 for w = 1, 2, 3, and its i-th instruction issues 6i later. The patched instruction
 * is the worker's instruction 1 for w = 1, 2 (fetched at c+13 = s+1 and c+14 = s+2: the old word,
 * a1 = 1) and instruction 2 for w = 3 (fetched at c+15 = s+3: the new word, a1 = 2). */
#include "isa_test.h"

#define OLD_INSN 0x00100593  /* addi a1, zero, 1: imm 1 << 20 | rd 11 << 7 | opcode 0x13 */
#define NEW_INSN 0x00200593  /* addi a1, zero, 2 */

/* One round: worker W runs code at WCODE whose word at PATCH the supervisor rewrites; the worker
 * stores a1 to `result`; check N expects EXPECT. Every supervisor instruction between the RUN and
 * the patching store is spelled out so that the store is exactly two instructions after the RUN. */
#define FETCH_ROUND(n, w, wcode, patch, expect) \
  li gp, n;                                     \
  la a0, result;                                \
  sw zero, 0(a0);                               \
  li t1, TESS_MMIO_RUN_ARG;                     \
  sw a0, 0(t1);                                 \
  la s3, wcode;                                 \
  la s4, patch;                                 \
  li a2, NEW_INSN;                              \
  li t0, TESS_MMIO_RUN_BASE + 4 * ((w) - 1);    \
  sw s3, 0(t0);                                 \
  addi zero, zero, 0;                           \
  sw a2, 0(s4);                                 \
  li t1, TESS_MMIO_WAIT;                        \
  sw zero, 0(t1);                               \
  la a0, result;                                \
  lw a0, 0(a0);                                 \
  CHECK_EQ(a0, expect)

TEST_BEGIN
  FETCH_ROUND(1, 1, wcode1, wpatch1, 1)
  FETCH_ROUND(2, 2, wcode2, wpatch2, 1)
  FETCH_ROUND(3, 3, wcode3, wpatch3, 2)
TEST_END

/* Worker bodies: a0 = &result (RUN_ARG). */
#define WORKER_TAIL     \
  sw a1, 0(a0);         \
  li t1, TESS_MMIO_DONE; \
  sw zero, 0(t1);

  .p2align 2
wcode1:
  addi zero, zero, 0
wpatch1:
  .word OLD_INSN
  WORKER_TAIL
wcode2:
  addi zero, zero, 0
wpatch2:
  .word OLD_INSN
  WORKER_TAIL
wcode3:
  addi zero, zero, 0
  addi zero, zero, 0
wpatch3:
  .word OLD_INSN
  WORKER_TAIL

  .data
  .p2align 2
result:
  .word 0
