/* ECALL: cause 11, value = pc (there is no handler; the tile halts). */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_ECALL, trap_pc, trap_pc)
TRAP_BEGIN
  li a7, 93
trap_pc:
  ecall
TRAP_END
