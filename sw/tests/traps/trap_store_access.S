/* Store access fault: SW to an unmapped word of the MMIO page -> cause 7, value = address. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_STORE_ACCESS, trap_pc, 0x80000100)
TRAP_BEGIN
  li a1, 0x80000100
trap_pc:
  sw a1, 0(a1)
TRAP_END
