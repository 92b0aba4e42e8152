/* Illegal instruction: the custom-0 opcode (0001011) belongs to the matrix unit, which the iCE40
 * configuration does not have (docs/tile.md, "Matrix unit"), so there it traps with cause 2 and
 * value = the instruction bits (built as trap_illegal_custom0_ice40). With the unit this word is
 * AMP.LW from address 0 and does not trap. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_ILLEGAL_INSN, trap_pc, 0x0000000b)
TRAP_BEGIN
trap_pc:
  .word 0x0000000b
TRAP_END
