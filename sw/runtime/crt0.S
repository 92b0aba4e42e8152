/* Tile start-up (docs/tile.md): the supervisor starts here at pc 0 with every register 0.
 * It sets its stack, zeroes .bss, runs C++ static constructors, calls main(0, 0) and writes main's
 * return value to EXIT, which halts the tile. Workers enter through _tess_worker_entry. */
#include "tessera/chip_params.h"

  .section .text.start, "ax"
  .globl _start
  .type _start, @function
_start:
  la    sp, __tess_sup_stack_top
  la    t0, __bss_start
  la    t1, __bss_end
1:
  bgeu  t0, t1, 2f
  sw    zero, 0(t0)
  addi  t0, t0, 4
  j     1b
2:
  la    s0, __init_array_start
  la    s1, __init_array_end
3:
  bgeu  s0, s1, 4f
  lw    t0, 0(s0)
  jalr  t0
  addi  s0, s0, 4
  j     3b
4:
  li    a0, 0
  li    a1, 0
  call  main
  li    t0, TESS_MMIO_EXIT
  sw    a0, 0(t0)
  /* EXIT halts the tile at this store; nothing after it issues. */
5:
  j     5b
  .size _start, . - _start

/* Worker trampoline. tessera_run_worker() stored the function in tess_worker_fn[w] and started
 * worker w here with a0 = its argument (RUN_ARG). Worker w's stack top is
 * __tess_worker_stack_top - (w - 1) * __tess_worker_stack_size (see link.ld). When the function
 * returns the worker writes DONE; it is idle from 3 cycles later, so its next slot never issues. */
  .text
  .globl _tess_worker_entry
  .type _tess_worker_entry, @function
  .p2align 2
_tess_worker_entry:
  csrr  t0, TESS_CSR_CONTEXT_ID
  addi  t1, t0, -1
  lui   t2, %hi(__tess_worker_stack_size)
  addi  t2, t2, %lo(__tess_worker_stack_size)
#ifdef __riscv_mul
  mul   t1, t1, t2
#else
  /* Built without M (-march=rv32i, the iCE40 board's tile): (w - 1) * size by repeated
   * addition, at most 4 rounds. */
  mv    t3, zero
7:
  beqz  t1, 8f
  add   t3, t3, t2
  addi  t1, t1, -1
  j     7b
8:
  mv    t1, t3
#endif
  la    sp, __tess_worker_stack_top
  sub   sp, sp, t1
  la    t1, tess_worker_fn
  slli  t2, t0, 2
  add   t1, t1, t2
  lw    t1, 0(t1)
  jalr  t1
  li    t0, TESS_MMIO_DONE
  sw    zero, 0(t0)
6:
  j     6b
  .size _tess_worker_entry, . - _tess_worker_entry
