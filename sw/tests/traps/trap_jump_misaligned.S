/* Instruction address misaligned: JALR to an address 2 mod 4 (JALR clears only bit 0). The jump
 * traps (not the fetch): cause 0, pc = the JALR, value = the target. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_INSN_MISALIGNED, trap_pc, target + 2)
TRAP_BEGIN
  la a1, target
trap_pc:
  jalr ra, 2(a1)
target:
  nop
  nop
TRAP_END
