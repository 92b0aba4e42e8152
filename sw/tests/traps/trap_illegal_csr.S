/* Illegal instruction: CSRRW always writes, and cycle (0xC00) is read-only.
 * csrrw x0, cycle, x1 = csr 0xc00, rs1 1, funct3 001, rd 0, opcode 1110011 = 0xc0009073. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_ILLEGAL_INSN, trap_pc, 0xc0009073)
TRAP_BEGIN
trap_pc:
  csrrw x0, cycle, x1
TRAP_END
