/* Illegal instruction: the matrix unit's words (docs/tile.md, "Matrix unit"), written with the
 * tessera/amp.h macros, on a tile without the unit (the iCE40 configuration, MATRIX_UNIT = 0)
 * trap with cause 2 and value = the instruction bits. TRAP_AMP_FORM (0..15) picks the instruction;
 * 6 is a custom-1 word, reserved on every tile; 7..12 are AMP.H and the fp16 conversions, 13 and
 * 14 the row addressing, 15 AMP.S of an accumulator row past 3. */
/* clang-format off */
#include "trap_test.h"
#include "tessera/amp.h"

#define A0 10
#define A1 11
#define F1 1
#define AMP_WORD(f3, f7, rd, rs1) \
  (TESS_AMP_OPCODE | (f3) << 12 | (rd) << 7 | (rs1) << 15 | (f7) << 25)

#if TRAP_AMP_FORM == 0
#define TRAP_INSN AMP_LW(a0, a0, 1, 3)
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_LW, TESSERA_AMP_FUNCT7(0, 0, 1, 3), A0, A0)
#elif TRAP_AMP_FORM == 1
#define TRAP_INSN AMP_S(a0, a0, 1, 2)
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_S, TESSERA_AMP_FUNCT7(0, 0, 1, 2), A0, A0)
#elif TRAP_AMP_FORM == 2
#define TRAP_INSN AMP_LA(a1, a1, 1)
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_LA, TESSERA_AMP_FUNCT7(0, 0, 0, 1), A1, A1)
#elif TRAP_AMP_FORM == 3
#define TRAP_INSN AMP_SA(a1, a1, 3, 1)
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_SA, TESSERA_AMP_FUNCT7(1, 0, 0, 3), A1, A1)
#elif TRAP_AMP_FORM == 4
#define TRAP_INSN AMP_RD(f1, 2, 3)
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_RD, TESSERA_AMP_FUNCT7(0, 3, 0, 2), F1, 0)
#elif TRAP_AMP_FORM == 5
#define TRAP_INSN AMP_CLR
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_CLR, 0, 0, 0)
#elif TRAP_AMP_FORM == 7
#define TRAP_INSN AMP_H(a0, a0, 1, 1)
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_H, TESSERA_AMP_FUNCT7(0, 0, 1, 1), A0, A0)
#elif TRAP_AMP_FORM == 8
#define TRAP_INSN AMP_CVTHS(a0, a0, a1)
#define TRAP_WORD (AMP_WORD(TESS_AMP_F3_CVT, TESS_AMP_CVT_HS, A0, A0) | A1 << 20)
#elif TRAP_AMP_FORM == 9
#define TRAP_INSN AMP_CVTHS_SR(a1, a0, a1)
#define TRAP_WORD (AMP_WORD(TESS_AMP_F3_CVT, TESS_AMP_CVT_HS_SR, A1, A0) | A1 << 20)
#elif TRAP_AMP_FORM == 10
#define TRAP_INSN AMP_CVTSH_LO(f1, a0)
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_CVT, TESS_AMP_CVT_SH_LO, F1, A0)
#elif TRAP_AMP_FORM == 11
#define TRAP_INSN AMP_CVTSH_HI(f1, a1)
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_CVT, TESS_AMP_CVT_SH_HI, F1, A1)
#elif TRAP_AMP_FORM == 12
#define TRAP_INSN AMP_SEED(a0)
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_CVT, TESS_AMP_CVT_SEED, 0, A0)
#elif TRAP_AMP_FORM == 13
#define TRAP_INSN AMP_STRIDE(a0, a1)
#define TRAP_WORD (AMP_WORD(TESS_AMP_F3_CVT, TESS_AMP_CVT_STRIDE, 0, A0) | A1 << 20)
#elif TRAP_AMP_FORM == 14
#define TRAP_INSN AMP_ROWS(a1)
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_CVT, TESS_AMP_CVT_ROWS, 0, A1)
#elif TRAP_AMP_FORM == 15
#define TRAP_INSN AMP_S(a0, a0, 0, 6)
#define TRAP_WORD AMP_WORD(TESS_AMP_F3_S, TESSERA_AMP_FUNCT7(0, 0, 0, 6), A0, A0)
#else
#define TRAP_INSN .insn r TESS_AMP_RESERVED_OPCODE, 0, 0, x0, x0, x0
#define TRAP_WORD TESS_AMP_RESERVED_OPCODE
#endif

TRAP_EXPECT(TESS_CAUSE_ILLEGAL_INSN, trap_pc, TRAP_WORD)
TRAP_BEGIN
  li a0, 0x100
  li a1, 0x200
trap_pc:
  TRAP_INSN
TRAP_END
/* clang-format on */
