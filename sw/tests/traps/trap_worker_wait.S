/* Context misuse by a worker: WAIT written by worker 2 -> cause 24, value = WAIT address,
 * context 2, pc = the worker's store. The supervisor itself waits (it would wait forever). */
#include "trap_test.h"
TRAP_EXPECT_CONTEXT(TESS_CAUSE_CONTEXT_MISUSE, trap_pc, TESS_MMIO_WAIT, 2)
TRAP_BEGIN
  la a2, worker
  li a1, TESS_MMIO_RUN_BASE + 4
  sw a2, 0(a1)
  li a1, TESS_MMIO_WAIT
  sw zero, 0(a1)
TRAP_END
worker:
  li a1, TESS_MMIO_WAIT
trap_pc:
  sw zero, 0(a1)
1:
  j 1b
