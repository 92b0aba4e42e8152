/* Context misuse: DONE written by the supervisor -> cause 24, value = the DONE address. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_CONTEXT_MISUSE, trap_pc, TESS_MMIO_DONE)
TRAP_BEGIN
  li a1, TESS_MMIO_DONE
trap_pc:
  sw zero, 0(a1)
TRAP_END
