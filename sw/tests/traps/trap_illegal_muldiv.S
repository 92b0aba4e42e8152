/* Illegal instruction on a tile without the M extension (rtl/params.json HAS_MULDIV = 0, the
 * iCE40 board's configuration): an OP word with funct7 0000001 traps with cause 2 and value = the
 * instruction bits. TRAP_M_FUNCT3 picks the instruction: 0 MUL, 1 MULH, 2 MULHSU, 3 MULHU, 4 DIV,
 * 5 DIVU, 6 REM, 7 REMU (sw/tests/traps/CMakeLists.txt builds one program per instruction). The
 * word is given as data: the program is assembled for rv32i, whose assembler has no M mnemonics.
 * On a tile with M it does not trap and the program exits with NO_TRAP_EXIT. */
#include "trap_test.h"
/* a0 = a1 <op> a2: rd 10, rs1 11, rs2 12. */
#define M_WORD (0x02000033 | (TRAP_M_FUNCT3 << 12) | (10 << 7) | (11 << 15) | (12 << 20))
TRAP_EXPECT(TESS_CAUSE_ILLEGAL_INSN, trap_pc, M_WORD)
TRAP_BEGIN
  li a1, 1000
  li a2, 7
trap_pc:
  .word M_WORD
TRAP_END
