/* Sync descriptor mismatch (cause 25): tiles 0 and 1 arrive at sync 5, every tile t >= 2 at sync
 * 4 + t. Reported on the lowest tile whose descriptor differs from tile 0's (tile 2), pc = its
 * SYNC store, value = its descriptor (6). Tiles arrive at different times (a tile-dependent loop). */
#include "chip_expect.h"
CHIP_EXPECT(2, 0, TESS_CAUSE_SYNC_MISMATCH, sync_pc, 6)
  .text
  .globl main
  .p2align 2
main:
  csrr  s0, TESS_CSR_TILE_ID
  slli  t3, s0, 3
  addi  t3, t3, 1
1:
  addi  t3, t3, -1
  bnez  t3, 1b
  li    a1, 5
  li    t0, 2
  bltu  s0, t0, 2f
  addi  a1, s0, 4
2:
  li    t1, TESS_MMIO_SYNC
sync_pc:
  sw    a1, 0(t1)
  NO_ERROR
