/* Self-checking ISA test macros (assembly, after the riscv-tests pattern).
 *
 * Register use: gp (x3) holds the number of the running check, t5/t6 (x30/x31) are scratch for the
 * macros, a0/a1 receive results; sp is left alone (the failure report calls C). Every check that
 * fails jumps to `fail`, which prints "<program> FAIL check <n>" and exits with n (n > 0, unique in
 * the program). Passing every check prints "<program> ok" and exits 0.
 *
 * Expected values are written in each test file next to the check, with how they were obtained. */
/* Assembler macros: clang-format would break them (".section.tess", "8889 :"). */
/* clang-format off */
#ifndef TESSERA_ISA_TEST_H
#define TESSERA_ISA_TEST_H

#include "tessera/chip_params.h"

/* Rounding-mode and flag encodings of the RISC-V F extension (fcsr.frm, fcsr.fflags). */
#define RM_RNE 0
#define RM_RTZ 1
#define RM_RDN 2
#define RM_RUP 3
#define RM_RMM 4
#define FL_NX 0x01
#define FL_UF 0x02
#define FL_OF 0x04
#define FL_DZ 0x08
#define FL_NV 0x10

/* Canonical NaN and a few constants used across the F tests. */
#define F_QNAN 0x7fc00000
#define F_SNAN 0x7f800001
#define F_PINF 0x7f800000
#define F_NINF 0xff800000
#define F_MAXF 0x7f7fffff
#define F_MINSUB 0x00000001
#define F_MINNORM 0x00800000

#define TEST_BEGIN \
  .text;           \
  .globl main;     \
  .p2align 2;      \
  main:

/* Both reported through C helpers in isa_support.c; neither returns. */
#define TEST_END       \
  call isa_pass;       \
  fail:                \
  mv a0, gp;           \
  call isa_fail;

/* Compare register reg with the constant val; on mismatch go to fail. */
#define CHECK_EQ(reg, val) \
  li t5, val;              \
  beq reg, t5, 8888f;      \
  j fail;                  \
  8888:

/* Compare two registers. */
#define CHECK_REG(reg, reg2) \
  beq reg, reg2, 8887f;      \
  j fail;                    \
  8887:

/* -------- integer -------- */
#define TEST_RR(n, inst, result, v1, v2) \
  li gp, n;                              \
  li a1, v1;                             \
  li a2, v2;                             \
  inst a0, a1, a2;                       \
  CHECK_EQ(a0, result)

#define TEST_IMM(n, inst, result, v1, imm) \
  li gp, n;                                \
  li a1, v1;                               \
  inst a0, a1, imm;                        \
  CHECK_EQ(a0, result)

/* Destination equal to a source: the source must be read before it is written. */
#define TEST_RR_SRC1_EQ_DEST(n, inst, result, v1, v2) \
  li gp, n;                                           \
  li a1, v1;                                          \
  li a2, v2;                                          \
  inst a1, a1, a2;                                    \
  CHECK_EQ(a1, result)

/* Branch taken / not taken. */
#define TEST_BR_TAKEN(n, inst, v1, v2) \
  li gp, n;                            \
  li a1, v1;                           \
  li a2, v2;                           \
  inst a1, a2, 8886f;                  \
  j fail;                              \
  8886:

#define TEST_BR_NOT_TAKEN(n, inst, v1, v2) \
  li gp, n;                                \
  li a1, v1;                               \
  li a2, v2;                               \
  inst a1, a2, 8885f;                      \
  j 8884f;                                 \
  8885:                                    \
  j fail;                                  \
  8884:

/* -------- floating point --------
 * Operands and results are given as bit patterns; fflags is cleared before the operation and must
 * equal `flags` after it. rm is an assembler rounding-mode operand: rne rtz rdn rup rmm dyn. */
#define FP_LOAD(freg, bits) \
  li t5, bits;              \
  fmv.w.x freg, t5

#define CHECK_FLAGS(flags) \
  frflags a1;              \
  CHECK_EQ(a1, flags)

#define TEST_FP_OP2(n, inst, rm, flags, result, a, b) \
  li gp, n;                                           \
  FP_LOAD(f1, a);                                     \
  FP_LOAD(f2, b);                                     \
  fsflags x0;                                         \
  inst f3, f1, f2, rm;                                \
  CHECK_FLAGS(flags);                                 \
  fmv.x.w a0, f3;                                     \
  CHECK_EQ(a0, result)

/* Two-operand FP instructions without a rounding mode (fmin/fmax, fsgnj*). */
#define TEST_FP_OP2_NORM(n, inst, flags, result, a, b) \
  li gp, n;                                            \
  FP_LOAD(f1, a);                                      \
  FP_LOAD(f2, b);                                      \
  fsflags x0;                                          \
  inst f3, f1, f2;                                     \
  CHECK_FLAGS(flags);                                  \
  fmv.x.w a0, f3;                                      \
  CHECK_EQ(a0, result)

#define TEST_FP_OP1(n, inst, rm, flags, result, a) \
  li gp, n;                                        \
  FP_LOAD(f1, a);                                  \
  fsflags x0;                                      \
  inst f3, f1, rm;                                 \
  CHECK_FLAGS(flags);                              \
  fmv.x.w a0, f3;                                  \
  CHECK_EQ(a0, result)

#define TEST_FP_OP3(n, inst, rm, flags, result, a, b, c) \
  li gp, n;                                              \
  FP_LOAD(f1, a);                                        \
  FP_LOAD(f2, b);                                        \
  FP_LOAD(f4, c);                                        \
  fsflags x0;                                            \
  inst f3, f1, f2, f4, rm;                               \
  CHECK_FLAGS(flags);                                    \
  fmv.x.w a0, f3;                                        \
  CHECK_EQ(a0, result)

/* FP compare: integer result. */
#define TEST_FP_CMP(n, inst, flags, result, a, b) \
  li gp, n;                                       \
  FP_LOAD(f1, a);                                 \
  FP_LOAD(f2, b);                                 \
  fsflags x0;                                     \
  inst a0, f1, f2;                                \
  CHECK_FLAGS(flags);                             \
  CHECK_EQ(a0, result)

/* float -> integer conversion. */
#define TEST_FP_TO_INT(n, inst, rm, flags, result, a) \
  li gp, n;                                           \
  FP_LOAD(f1, a);                                     \
  fsflags x0;                                         \
  inst a0, f1, rm;                                    \
  CHECK_FLAGS(flags);                                 \
  CHECK_EQ(a0, result)

/* integer -> float conversion. */
#define TEST_INT_TO_FP(n, inst, rm, flags, result, a) \
  li gp, n;                                           \
  li a2, a;                                           \
  fsflags x0;                                         \
  inst f3, a2, rm;                                    \
  CHECK_FLAGS(flags);                                 \
  fmv.x.w a0, f3;                                     \
  CHECK_EQ(a0, result)

/* fclass: integer result, never flags. */
#define TEST_FCLASS(n, result, a) \
  li gp, n;                       \
  FP_LOAD(f1, a);                 \
  fsflags x0;                     \
  fclass.s a0, f1;                \
  CHECK_FLAGS(0);                 \
  CHECK_EQ(a0, result)

#endif
/* clang-format on */
