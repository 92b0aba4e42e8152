/* The matrix unit's instructions (docs/tile.md, "Matrix unit") for device code in C, C++ and
 * assembly. Every field comes from tessera/chip_params.h, which scripts/gen_params.py generates
 * from rtl/params.json, the source the RTL decoder and the model's decoder use too.
 *
 * Every configuration has the unit (TESS_MATRIX_UNIT is 1) but the iCE40 board's, where these
 * words trap as illegal instructions (sw/tests/traps, trap_amp_absent*_ice40); ChipInfo and the
 * link's INFO say which a device is (hasMatrixUnit).
 *
 * Assembly: AMP_LW(rd, rs1, b, r), AMP_S(rd, rs1, b, r), AMP_H(rd, rs1, b, r), AMP_LA(rd, rs1, r),
 * AMP_SA(rd, rs1, r, c), AMP_RD(fd, r, j), AMP_CLR, and the fp16 conversions AMP_CVTHS(rd, rs1,
 * rs2), AMP_CVTHS_SR(rd, rs1, rs2), AMP_CVTSH_LO(fd, rs1), AMP_CVTSH_HI(fd, rs1), AMP_SEED(rs1),
 * and the row addressing AMP_STRIDE(rs1, rs2), AMP_ROWS(rs1) expand to `.insn r` directives
 * (rd = rs1 steps a pointer by 16).
 * C: TESSERA_AMP_*(ptr, ...) step `ptr` (an lvalue pointer) by 16 bytes (TESSERA_AMP_LW_BANKS: both
 * banks, 128 bytes; TESSERA_AMP_EIGHT_ROWS:
 * one instruction on each of rows 0..7, the last stepping); b, r, j, c must be constants. The
 * conversions take and give bit patterns (uint32_t), or a float for CVTSH. */
/* clang-format off */
/* Not TESSERA_AMP_H: that is the C macro of AMP.H below. */
#ifndef TESSERA_AMP_H_INCLUDED
#define TESSERA_AMP_H_INCLUDED

#include "tessera/chip_params.h"

/** funct7 of a unit instruction: C, column j, bank b and row r, 0..7 (docs/tile.md, "Encoding":
 * r[1:0] and r[2] in separate fields). */
#define TESSERA_AMP_FUNCT7(c, j, b, r)                                                       \
  (((c) << (TESS_AMP_CLEAR_BIT - 25)) | ((j) << (TESS_AMP_COL_LSB - 25)) |                   \
   ((b) << (TESS_AMP_BANK_BIT - 25)) | (((r) & 3) << (TESS_AMP_ROW_LSB - 25)) |              \
   (((r) >> 2) << (TESS_AMP_ROW_HI_BIT - 25)))

#ifdef __ASSEMBLER__

/** AMP.LW b, r: W[b][r][0..3] <- 16 bytes at rs1; rd <- rs1 + 16. */
#define AMP_LW(rd, rs1, bank, row) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_LW, TESSERA_AMP_FUNCT7(0, 0, bank, row), rd, rs1, x0
/** AMP.S b, r: acc[r][j] <- fma chain of the 4 floats at rs1 with W[b]; rd <- rs1 + 16. */
#define AMP_S(rd, rs1, bank, row) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_S, TESSERA_AMP_FUNCT7(0, 0, bank, row), rd, rs1, x0
/** AMP.H b, r: acc[r][j] <- fma chain of the 8 halves at rs1 with W16[b]; rd <- rs1 + 16. */
#define AMP_H(rd, rs1, bank, row) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_H, TESSERA_AMP_FUNCT7(0, 0, bank, row), rd, rs1, x0
/** AMP.LA r: acc[r][0..3] <- 16 bytes at rs1; rd <- rs1 + 16. */
#define AMP_LA(rd, rs1, row) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_LA, TESSERA_AMP_FUNCT7(0, 0, 0, row), rd, rs1, x0
/** AMP.SA r, c: 16 bytes at rs1 <- acc[r][0..3], cleared if c; rd <- rs1 + 16. */
#define AMP_SA(rd, rs1, row, clear) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_SA, TESSERA_AMP_FUNCT7(clear, 0, 0, row), rd, rs1, x0
/** AMP.RD r, j: fd <- acc[r][j]. */
#define AMP_RD(fd, row, col) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_RD, TESSERA_AMP_FUNCT7(0, col, 0, row), fd, x0, x0
/** AMP.CLR: every accumulator of the context <- +0. */
#define AMP_CLR .insn r TESS_AMP_OPCODE, TESS_AMP_F3_CLR, 0, x0, x0, x0
/** AMP.CVTHS: rd <- {h(rs2), h(rs1)}, binary32 bits to binary16, nearest-even. */
#define AMP_CVTHS(rd, rs1, rs2) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_CVT, TESS_AMP_CVT_HS, rd, rs1, rs2
/** AMP.CVTHS.SR: as AMP_CVTHS with stochastic rounding (steps the context's generator). */
#define AMP_CVTHS_SR(rd, rs1, rs2) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_CVT, TESS_AMP_CVT_HS_SR, rd, rs1, rs2
/** AMP.CVTSH.LO: fd <- binary32 of the low half of rs1. */
#define AMP_CVTSH_LO(fd, rs1) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_CVT, TESS_AMP_CVT_SH_LO, fd, rs1, x0
/** AMP.CVTSH.HI: fd <- binary32 of the high half of rs1. */
#define AMP_CVTSH_HI(fd, rs1) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_CVT, TESS_AMP_CVT_SH_HI, fd, rs1, x0
/** AMP.SEED: the context's generator <- rs1 (AMP_SR_SEED0 if 0). */
#define AMP_SEED(rs1) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_CVT, TESS_AMP_CVT_SEED, x0, rs1, x0
/** AMP.STRIDE: the context's row strides <- rs1 (AMP.S/AMP.H inputs), rs2 (AMP.LA/AMP.SA). */
#define AMP_STRIDE(rs1, rs2) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_CVT, TESS_AMP_CVT_STRIDE, x0, rs1, rs2
/** AMP.ROWS: the context's row limit <- min(rs1, AMP_ACC_ROWS). */
#define AMP_ROWS(rs1) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_CVT, TESS_AMP_CVT_ROWS, x0, rs1, x0

#else

/* One pointer-stepping instruction: ptr is read as rs1 and written back as rd. */
#define TESSERA_AMP_PTR_(funct3, funct7, ptr)                                                \
  __asm__ volatile(".insn r %[op], %[f3], %[f7], %[p], %[p], x0"                            \
                   : [p] "+r"(ptr)                                                          \
                   : [op] "i"(TESS_AMP_OPCODE), [f3] "i"(funct3), [f7] "i"(funct7)          \
                   : "memory")

/** AMP.LW b, r from ptr; ptr += 16 bytes. */
#define TESSERA_AMP_LW(ptr, b, r) TESSERA_AMP_PTR_(TESS_AMP_F3_LW, TESSERA_AMP_FUNCT7(0, 0, b, r), ptr)
/** AMP.S b, r with the 4 floats at ptr; ptr += 16 bytes. */
#define TESSERA_AMP_S(ptr, b, r) TESSERA_AMP_PTR_(TESS_AMP_F3_S, TESSERA_AMP_FUNCT7(0, 0, b, r), ptr)
/** AMP.H b, r with the 8 halves at ptr; ptr += 16 bytes. */
#define TESSERA_AMP_H(ptr, b, r) TESSERA_AMP_PTR_(TESS_AMP_F3_H, TESSERA_AMP_FUNCT7(0, 0, b, r), ptr)
/** AMP.LA r from ptr; ptr += 16 bytes. */
#define TESSERA_AMP_LA(ptr, r) TESSERA_AMP_PTR_(TESS_AMP_F3_LA, TESSERA_AMP_FUNCT7(0, 0, 0, r), ptr)
/** AMP.SA r, c to ptr; ptr += 16 bytes. */
#define TESSERA_AMP_SA(ptr, r, c) TESSERA_AMP_PTR_(TESS_AMP_F3_SA, TESSERA_AMP_FUNCT7(c, 0, 0, r), ptr)
/** Both weight banks from ptr, bank 0's four rows then bank 1's (32 words: a [2][4][4] array of
 * floats, or [2][8][4] of halves); ptr += 128 bytes. */
#define TESSERA_AMP_LW_BANKS(ptr)                                                             \
  do {                                                                                       \
    TESSERA_AMP_LW(ptr, 0, 0);                                                               \
    TESSERA_AMP_LW(ptr, 0, 1);                                                               \
    TESSERA_AMP_LW(ptr, 0, 2);                                                               \
    TESSERA_AMP_LW(ptr, 0, 3);                                                               \
    TESSERA_AMP_LW(ptr, 1, 0);                                                               \
    TESSERA_AMP_LW(ptr, 1, 1);                                                               \
    TESSERA_AMP_LW(ptr, 1, 2);                                                               \
    TESSERA_AMP_LW(ptr, 1, 3);                                                               \
  } while (0)
/** AMP.RD r, j into the float lvalue out. */
#define TESSERA_AMP_RD(out, r, j)                                                            \
  __asm__ volatile(".insn r %[op], %[f3], %[f7], %[fd], x0, x0"                             \
                   : [fd] "=f"(out)                                                         \
                   : [op] "i"(TESS_AMP_OPCODE), [f3] "i"(TESS_AMP_F3_RD),                   \
                     [f7] "i"(TESSERA_AMP_FUNCT7(0, j, 0, r)))
/** AMP.CLR. */
#define TESSERA_AMP_CLR()                                                                    \
  __asm__ volatile(".insn r %[op], %[f3], 0, x0, x0, x0"                                    \
                   :                                                                        \
                   : [op] "i"(TESS_AMP_OPCODE), [f3] "i"(TESS_AMP_F3_CLR))
/* A pack: out (uint32_t lvalue) <- {h(b), h(a)} from the binary32 bit patterns a and b. */
#define TESSERA_AMP_PACK_(cvt, out, a, b)                                                    \
  __asm__ volatile(".insn r %[op], %[f3], %[f7], %[rd], %[ra], %[rb]"                       \
                   : [rd] "=r"(out)                                                         \
                   : [op] "i"(TESS_AMP_OPCODE), [f3] "i"(TESS_AMP_F3_CVT), [f7] "i"(cvt),   \
                     [ra] "r"(a), [rb] "r"(b))
/** AMP.CVTHS: out <- two halves, nearest-even, from the float bit patterns a (low) and b. */
#define TESSERA_AMP_CVTHS(out, a, b) TESSERA_AMP_PACK_(TESS_AMP_CVT_HS, out, a, b)
/** AMP.CVTHS.SR: as TESSERA_AMP_CVTHS, stochastic rounding. */
#define TESSERA_AMP_CVTHS_SR(out, a, b) TESSERA_AMP_PACK_(TESS_AMP_CVT_HS_SR, out, a, b)
/* A widening: out (float lvalue) <- the half of the uint32_t h that cvt names. */
#define TESSERA_AMP_WIDEN_(cvt, out, h)                                                      \
  __asm__ volatile(".insn r %[op], %[f3], %[f7], %[fd], %[rh], x0"                          \
                   : [fd] "=f"(out)                                                         \
                   : [op] "i"(TESS_AMP_OPCODE), [f3] "i"(TESS_AMP_F3_CVT), [f7] "i"(cvt),   \
                     [rh] "r"(h))
/** AMP.CVTSH.LO: out <- the binary32 of h's low half. */
#define TESSERA_AMP_CVTSH_LO(out, h) TESSERA_AMP_WIDEN_(TESS_AMP_CVT_SH_LO, out, h)
/** AMP.CVTSH.HI: out <- the binary32 of h's high half. */
#define TESSERA_AMP_CVTSH_HI(out, h) TESSERA_AMP_WIDEN_(TESS_AMP_CVT_SH_HI, out, h)
/** AMP.SEED: the context's generator <- seed (a uint32_t; AMP_SR_SEED0 if 0). */
#define TESSERA_AMP_SEED(seed)                                                               \
  __asm__ volatile(".insn r %[op], %[f3], %[f7], x0, %[rs], x0"                             \
                   :                                                                        \
                   : [op] "i"(TESS_AMP_OPCODE), [f3] "i"(TESS_AMP_F3_CVT),                  \
                     [f7] "i"(TESS_AMP_CVT_SEED), [rs] "r"(seed))
/** One instruction of funct3 F3_ (AMP.S, AMP.H, AMP.LA or AMP.SA) on each row 0..7 at the pointer
 * lvalue P_ (the row strides place the rows; rows past the limit are skipped); the last writes
 * P_ + 16 into P_. C_ and B_ as in TESSERA_AMP_FUNCT7 (clear, bank); all four constants. */
#define TESSERA_AMP_EIGHT_ROWS(F3_, C_, B_, P_)                                                 \
  __asm__ volatile(".insn r %[op], %[f3], %[r0], x0, %[p], x0\n"                              \
                   ".insn r %[op], %[f3], %[r1], x0, %[p], x0\n"                              \
                   ".insn r %[op], %[f3], %[r2], x0, %[p], x0\n"                              \
                   ".insn r %[op], %[f3], %[r3], x0, %[p], x0\n"                              \
                   ".insn r %[op], %[f3], %[r4], x0, %[p], x0\n"                              \
                   ".insn r %[op], %[f3], %[r5], x0, %[p], x0\n"                              \
                   ".insn r %[op], %[f3], %[r6], x0, %[p], x0\n"                              \
                   ".insn r %[op], %[f3], %[r7], %[p], %[p], x0\n"                            \
                   : [p] "+r"(P_)                                                               \
                   : [op] "i"(TESS_AMP_OPCODE), [f3] "i"(F3_),                                  \
                     [r0] "i"(TESSERA_AMP_FUNCT7(C_, 0, B_, 0)),                                \
                     [r1] "i"(TESSERA_AMP_FUNCT7(C_, 0, B_, 1)),                                \
                     [r2] "i"(TESSERA_AMP_FUNCT7(C_, 0, B_, 2)),                                \
                     [r3] "i"(TESSERA_AMP_FUNCT7(C_, 0, B_, 3)),                                \
                     [r4] "i"(TESSERA_AMP_FUNCT7(C_, 0, B_, 4)),                                \
                     [r5] "i"(TESSERA_AMP_FUNCT7(C_, 0, B_, 5)),                                \
                     [r6] "i"(TESSERA_AMP_FUNCT7(C_, 0, B_, 6)),                                \
                     [r7] "i"(TESSERA_AMP_FUNCT7(C_, 0, B_, 7))                                 \
                   : "memory")
/** AMP.STRIDE: the context's row strides (bytes, uint32_t) of AMP.S/AMP.H inputs and of
 * AMP.LA/AMP.SA: row r is at rs1 + r * stride. */
#define TESSERA_AMP_STRIDE(inputs, accs)                                                     \
  __asm__ volatile(".insn r %[op], %[f3], %[f7], x0, %[ra], %[rb]"                          \
                   :                                                                        \
                   : [op] "i"(TESS_AMP_OPCODE), [f3] "i"(TESS_AMP_F3_CVT),                  \
                     [f7] "i"(TESS_AMP_CVT_STRIDE), [ra] "r"(inputs), [rb] "r"(accs))
/** AMP.ROWS: the context's row limit <- min(n, AMP_ACC_ROWS); rows at or past it are skipped. */
#define TESSERA_AMP_ROWS(n)                                                                  \
  __asm__ volatile(".insn r %[op], %[f3], %[f7], x0, %[rs], x0"                             \
                   :                                                                        \
                   : [op] "i"(TESS_AMP_OPCODE), [f3] "i"(TESS_AMP_F3_CVT),                  \
                     [f7] "i"(TESS_AMP_CVT_ROWS), [rs] "r"(n))

#endif

#endif
/* clang-format on */
