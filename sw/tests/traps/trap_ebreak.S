/* EBREAK: cause 3, value = pc. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_BREAKPOINT, trap_pc, trap_pc)
TRAP_BEGIN
  nop
trap_pc:
  ebreak
TRAP_END
