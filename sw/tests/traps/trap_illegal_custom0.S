/* Illegal instruction: the custom-0 opcode (0001011) is kept free for a matrix unit, so it traps
 * with cause 2 and value = the instruction bits. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_ILLEGAL_INSN, trap_pc, 0x0000000b)
TRAP_BEGIN
trap_pc:
  .word 0x0000000b
TRAP_END
