/* RUN with a start pc that is not 4-byte aligned: the RUN store succeeds, and worker 1 traps at its
 * first fetch with cause 0 (instruction address misaligned), pc = value = the start pc. */
#include "trap_test.h"
TRAP_EXPECT_CONTEXT(TESS_CAUSE_INSN_MISALIGNED, target, target, 1)
TRAP_BEGIN
  la a2, target
  li a1, TESS_MMIO_RUN_BASE
  sw a2, 0(a1)
spin:
  j spin
TRAP_END
  .p2align 2
  .word 0
  .set target, . - 2
