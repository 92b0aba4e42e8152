/* Misaligned load: LW from an address 2 mod 4 inside SRAM -> cause 4, value = the address. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_LOAD_MISALIGNED, trap_pc, 0x00000102)
TRAP_BEGIN
  li a1, 0x100
trap_pc:
  lw a0, 2(a1)
TRAP_END
