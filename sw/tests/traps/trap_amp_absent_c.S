/* Illegal instruction: the C forms of tessera/amp.h (TESSERA_AMP_S, TESSERA_AMP_RD,
 * TESSERA_AMP_CLR, in trap_amp_absent_c.c) on a tile without the matrix unit. The C function
 * pins its operands to a0 and ft0, so the expected word is known here; TRAP_AMP_C_FORM picks
 * the form (0..2). */
/* clang-format off */
#include "trap_test.h"
#include "tessera/amp.h"

#define AMP_WORD(f3, f7, rd, rs1) \
  (TESS_AMP_OPCODE | (f3) << 12 | (rd) << 7 | (rs1) << 15 | (f7) << 25)

#if TRAP_AMP_C_FORM == 0
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_S, TESSERA_AMP_FUNCT7(0, 0, 1, 2), 10, 10)
#elif TRAP_AMP_C_FORM == 1
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_RD, TESSERA_AMP_FUNCT7(0, 3, 0, 1), 0, 0)
#else
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_CLR, 0, 0, 0)
#endif

TRAP_EXPECT(TESS_CAUSE_ILLEGAL_INSN, trap_pc, TRAP_WORD)
TRAP_BEGIN
  li a0, 0x100
  call amp_c_form
TRAP_END
/* clang-format on */
