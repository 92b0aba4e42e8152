/* Instruction access fault: a jump to 0x00100000, aligned but outside SRAM (1 MiB is above any
 * tile memory size in use). The jump itself is fine; the fetch at the target traps with
 * cause 1, pc = value = the target. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_INSN_ACCESS, 0x00100000, 0x00100000)
TRAP_BEGIN
  li a1, 0x00100000
  jr a1
TRAP_END
