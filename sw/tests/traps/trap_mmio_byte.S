/* Store access fault: a byte store to CONSOLE (MMIO takes word accesses only) -> cause 7. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_STORE_ACCESS, trap_pc, TESS_MMIO_CONSOLE)
TRAP_BEGIN
  li a1, TESS_MMIO_CONSOLE
trap_pc:
  sb a1, 0(a1)
TRAP_END
