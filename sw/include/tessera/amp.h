/* The matrix unit's instructions (docs/tile.md, "Matrix unit") for device code in C, C++ and
 * assembly. Every field comes from tessera/chip_params.h, which scripts/gen_params.py generates
 * from rtl/params.json, the source the RTL decoder and the model's decoder use too.
 *
 * Every configuration has the unit (TESS_MATRIX_UNIT is 1) but the iCE40 board's, where these
 * words trap as illegal instructions (sw/tests/traps, trap_amp_absent*_ice40); ChipInfo and the
 * link's INFO say which a device is (hasMatrixUnit).
 *
 * Assembly: AMP_LW(rd, rs1, b, r), AMP_S(rd, rs1, b, r), AMP_LA(rd, rs1, r), AMP_SA(rd, rs1, r, c),
 * AMP_RD(fd, r, j), AMP_CLR expand to `.insn r` directives (rd = rs1 steps a pointer by 16).
 * C: TESSERA_AMP_*(ptr, ...) step `ptr` (an lvalue pointer) by 16 bytes; b, r, j, c must be
 * constants. */
/* clang-format off */
#ifndef TESSERA_AMP_H
#define TESSERA_AMP_H

#include "tessera/chip_params.h"

/** funct7 of a unit instruction: C, column j, bank b and row r (docs/tile.md, "Encoding"). */
#define TESSERA_AMP_FUNCT7(c, j, b, r)                                                       \
  (((c) << (TESS_AMP_CLEAR_BIT - 25)) | ((j) << (TESS_AMP_COL_LSB - 25)) |                   \
   ((b) << (TESS_AMP_BANK_BIT - 25)) | ((r) << (TESS_AMP_ROW_LSB - 25)))

#ifdef __ASSEMBLER__

/** AMP.LW b, r: W[b][r][0..3] <- 16 bytes at rs1; rd <- rs1 + 16. */
#define AMP_LW(rd, rs1, bank, row) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_LW, TESSERA_AMP_FUNCT7(0, 0, bank, row), rd, rs1, x0
/** AMP.S b, r: acc[r][j] <- fma chain of the 4 floats at rs1 with W[b]; rd <- rs1 + 16. */
#define AMP_S(rd, rs1, bank, row) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_S, TESSERA_AMP_FUNCT7(0, 0, bank, row), rd, rs1, x0
/** AMP.LA r: acc[r][0..3] <- 16 bytes at rs1; rd <- rs1 + 16. */
#define AMP_LA(rd, rs1, row) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_LA, TESSERA_AMP_FUNCT7(0, 0, 0, row), rd, rs1, x0
/** AMP.SA r, c: 16 bytes at rs1 <- acc[r][0..3], cleared if c; rd <- rs1 + 16. */
#define AMP_SA(rd, rs1, row, clear) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_SA, TESSERA_AMP_FUNCT7(clear, 0, 0, row), rd, rs1, x0
/** AMP.RD r, j: fd <- acc[r][j]. */
#define AMP_RD(fd, row, col) .insn r TESS_AMP_OPCODE, TESS_AMP_F3_RD, TESSERA_AMP_FUNCT7(0, col, 0, row), fd, x0, x0
/** AMP.CLR: every accumulator of the context <- +0. */
#define AMP_CLR .insn r TESS_AMP_OPCODE, TESS_AMP_F3_CLR, 0, x0, x0, x0

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
/** AMP.LA r from ptr; ptr += 16 bytes. */
#define TESSERA_AMP_LA(ptr, r) TESSERA_AMP_PTR_(TESS_AMP_F3_LA, TESSERA_AMP_FUNCT7(0, 0, 0, r), ptr)
/** AMP.SA r, c to ptr; ptr += 16 bytes. */
#define TESSERA_AMP_SA(ptr, r, c) TESSERA_AMP_PTR_(TESS_AMP_F3_SA, TESSERA_AMP_FUNCT7(c, 0, 0, r), ptr)
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

#endif

#endif
/* clang-format on */
