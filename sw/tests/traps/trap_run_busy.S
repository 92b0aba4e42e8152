/* Context misuse: RUN of worker 1 while it is still running -> cause 24, value = RUN address. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_CONTEXT_MISUSE, trap_pc, TESS_MMIO_RUN_BASE)
TRAP_BEGIN
  la a2, spin
  li a1, TESS_MMIO_RUN_BASE
  sw a2, 0(a1)
trap_pc:
  sw a2, 0(a1)
TRAP_END
spin:
  j spin
