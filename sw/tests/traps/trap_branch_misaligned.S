/* Instruction address misaligned from a taken branch: a BEQ whose offset is 2 mod 4 (encoded by
 * hand, since the assembler only emits even offsets that suit compressed code).
 * beq x0, x0, +6: imm[12|10:5] = 0, imm[4:1|11] = 0011 0, rs2 0, rs1 0, funct3 000, opcode 1100011
 * -> 0x00000363. Target = trap_pc + 6: cause 0, value = target. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_INSN_MISALIGNED, trap_pc, trap_pc + 6)
TRAP_BEGIN
trap_pc:
  .word 0x00000363
  nop
  nop
TRAP_END
