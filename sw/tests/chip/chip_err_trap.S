/* A trap on one tile while the others compute stops the whole chip with that trap:
 * worker 1 of tile 1 reaches EBREAK after a short loop; every other context of every tile is
 * still in a long loop (tile 2's supervisor would execute an illegal instruction afterwards: if
 * the chip did not stop, that trap or NO_ERROR_EXIT would be reported instead). */
#include "chip_expect.h"
CHIP_EXPECT(1, 1, TESS_CAUSE_BREAKPOINT, trap_pc, trap_pc)
  .text
  .globl main
  .p2align 2
main:
  csrr  s0, TESS_CSR_TILE_ID
  la    t1, spin_worker
  li    t0, 1
  bne   s0, t0, 1f
  la    t1, trap_worker
1:
  li    t2, TESS_MMIO_RUN_BASE
  sw    t1, 0(t2)
  li    t3, 20000
2:
  addi  t3, t3, -1
  bnez  t3, 2b
  li    t0, 2
  bne   s0, t0, 3f
  .word 0                       /* illegal instruction, never reached */
3:
  NO_ERROR

  .p2align 2
trap_worker:
  li    t4, 50
4:
  addi  t4, t4, -1
  bnez  t4, 4b
trap_pc:
  ebreak

  .p2align 2
spin_worker:
  li    t4, 100000
5:
  addi  t4, t4, -1
  bnez  t4, 5b
  li    t0, TESS_MMIO_DONE
  sw    zero, 0(t0)
6:
  j     6b
