/* Illegal instruction: a dynamic-rm FP op while frm holds the reserved value 7 (storing 7 is
 * allowed; using it traps). fadd.s f3, f1, f2, dyn = 0000000 00010 00001 111 00011 1010011
 * = 0x0020f1d3. */
#include "trap_test.h"
TRAP_EXPECT(TESS_CAUSE_ILLEGAL_INSN, trap_pc, 0x0020f1d3)
TRAP_BEGIN
  csrwi frm, 7
trap_pc:
  fadd.s f3, f1, f2, dyn
TRAP_END
