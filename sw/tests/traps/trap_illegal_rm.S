/* Illegal instruction: FADD.S with the reserved static rounding mode 5.
 * Encoding: funct7 0000000, rs2 f2, rs1 f1, rm 101, rd f3, opcode 1010011:
 * 0000000 00010 00001 101 00011 1010011 = 0x0020d1d3. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_ILLEGAL_INSN, trap_pc, 0x0020d1d3)
TRAP_BEGIN
trap_pc:
  .word 0x0020d1d3
TRAP_END
