/* Misaligned store: SH to an odd address -> cause 6, value = the address. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_STORE_MISALIGNED, trap_pc, 0x00000201)
TRAP_BEGIN
  li a1, 0x200
trap_pc:
  sh a1, 1(a1)
TRAP_END
