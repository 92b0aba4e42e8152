/* Load access fault: LW from 0x40000000, neither SRAM nor MMIO -> cause 5, value = address. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_LOAD_ACCESS, trap_pc, 0x40000000)
TRAP_BEGIN
  li a1, 0x40000000
trap_pc:
  lw a0, 0(a1)
TRAP_END
