/* A tile halts while the others sync (cause 26): tile 3 exits at once (code 0x33), tile 2 after a
 * loop (code 0x22); every other tile arrives at sync 1. Reported when every tile has arrived or
 * halted, on the lowest arrived tile (0), pc = its SYNC store, value = the lowest halted tile (2). */
#include "chip_expect.h"
CHIP_EXPECT(0, 0, TESS_CAUSE_SYNC_HALTED, sync_pc, 2)
  .text
  .globl main
  .p2align 2
main:
  csrr  s0, TESS_CSR_TILE_ID
  li    t2, TESS_MMIO_EXIT
  li    t0, 3
  bne   s0, t0, 1f
  li    a0, 0x33
  sw    a0, 0(t2)
1:
  li    t0, 2
  bne   s0, t0, 3f
  li    t3, 200
2:
  addi  t3, t3, -1
  bnez  t3, 2b
  li    a0, 0x22
  sw    a0, 0(t2)
3:
  li    t1, TESS_MMIO_SYNC
  li    a1, 1
sync_pc:
  sw    a1, 0(t1)
  NO_ERROR
