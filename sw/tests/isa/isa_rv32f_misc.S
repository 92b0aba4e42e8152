/* F extension, non-arithmetic: FLW/FSW, FMV.X.W/FMV.W.X, FSGNJ/FSGNJN/FSGNJX, FMIN/FMAX, FEQ/FLT/FLE,
 * FCVT.W.S/FCVT.WU.S/FCVT.S.W/FCVT.S.WU in every rounding mode with saturation, FCLASS of all ten
 * classes. Every expected value here is worked by hand from docs/tile.md "Floating point" and the
 * RISC-V F chapter (bit patterns: 1.0 = 3f800000, 1.5 = 3fc00000, 2.5 = 40200000,
 * 2^31 = 4f000000, 2^32 = 4f800000, 2^24 = 4b800000, 0.4 = 3ecccccd, 0.6 = 3f19999a). */
#include "isa_test.h"

  .data
  .p2align 2
fmem:
  .word 0x7f800001, 0x3fc00000, 0, 0

TEST_BEGIN
  /* FLW/FSW move bits unchanged, a signalling NaN included (no flags, no quieting) */
  la s0, fmem
  li gp, 1
  fsflags x0
  flw f1, 0(s0)
  fsw f1, 8(s0)
  lw a0, 8(s0)
  CHECK_EQ(a0, 0x7f800001)
  li gp, 2
  CHECK_FLAGS(0)
  li gp, 3
  flw f2, 4(s0)
  fsw f2, 12(s0)
  lw a0, 12(s0)
  CHECK_EQ(a0, 0x3fc00000)
  li gp, 4
  addi s1, s0, 16
  flw f3, -12(s1)
  fmv.x.w a0, f3
  CHECK_EQ(a0, 0x3fc00000)
  /* FMV.W.X / FMV.X.W: raw bits both ways, NaN payloads kept */
  li gp, 5
  li a1, 0xffc12345
  fmv.w.x f4, a1
  fmv.x.w a0, f4
  CHECK_EQ(a0, 0xffc12345)
  li gp, 6
  CHECK_FLAGS(0)

  /* FSGNJ: magnitude of rs1, sign from rs2 (N: inverted, X: xor); NaN payloads kept, no flags */
  TEST_FP_OP2_NORM(7, fsgnj.s, 0, 0xbf800000, 0x3f800000, 0xc0000000)
  TEST_FP_OP2_NORM(8, fsgnj.s, 0, 0x3f800000, 0xbf800000, 0x40000000)
  TEST_FP_OP2_NORM(9, fsgnjn.s, 0, 0x3f800000, 0x3f800000, 0xc0000000)
  TEST_FP_OP2_NORM(10, fsgnjn.s, 0, 0xbf800000, 0x3f800000, 0x40000000)
  TEST_FP_OP2_NORM(11, fsgnjx.s, 0, 0x3f800000, 0xbf800000, 0xc0000000)
  TEST_FP_OP2_NORM(12, fsgnjx.s, 0, 0xbf800000, 0xbf800000, 0x40000000)
  TEST_FP_OP2_NORM(13, fsgnj.s, 0, 0xff800001, 0x7f800001, 0x80000000)
  TEST_FP_OP2_NORM(14, fsgnjx.s, 0, 0x7fc12345, 0xffc12345, 0xbf800000)

  /* FMIN/FMAX: -0 < +0; one NaN -> the other operand; both NaN -> canonical; NV only for sNaN */
  TEST_FP_OP2_NORM(15, fmin.s, 0, 0x3f800000, 0x3f800000, 0x40000000)
  TEST_FP_OP2_NORM(16, fmax.s, 0, 0x40000000, 0x3f800000, 0x40000000)
  TEST_FP_OP2_NORM(17, fmin.s, 0, 0xc0000000, 0x3f800000, 0xc0000000)
  TEST_FP_OP2_NORM(18, fmin.s, 0, 0x80000000, 0x00000000, 0x80000000)
  TEST_FP_OP2_NORM(19, fmin.s, 0, 0x80000000, 0x80000000, 0x00000000)
  TEST_FP_OP2_NORM(20, fmax.s, 0, 0x00000000, 0x80000000, 0x00000000)
  TEST_FP_OP2_NORM(21, fmax.s, 0, 0x00000000, 0x00000000, 0x80000000)
  TEST_FP_OP2_NORM(22, fmin.s, 0, 0x3f800000, 0x7fc00000, 0x3f800000)
  TEST_FP_OP2_NORM(23, fmax.s, 0, 0x3f800000, 0x3f800000, 0xffc00000)
  TEST_FP_OP2_NORM(24, fmin.s, 0x10, 0x3f800000, 0x7f800001, 0x3f800000)
  TEST_FP_OP2_NORM(25, fmax.s, 0x10, 0x3f800000, 0x3f800000, 0x7f800001)
  TEST_FP_OP2_NORM(26, fmin.s, 0, 0x7fc00000, 0x7fc12345, 0xffc00000)
  TEST_FP_OP2_NORM(27, fmax.s, 0x10, 0x7fc00000, 0x7f800001, 0x7fc00000)
  TEST_FP_OP2_NORM(28, fmin.s, 0, 0xff800000, 0xff800000, 0x3f800000)
  TEST_FP_OP2_NORM(29, fmax.s, 0, 0x7f800000, 0x7f7fffff, 0x7f800000)
  TEST_FP_OP2_NORM(30, fmin.s, 0, 0x00000001, 0x00000001, 0x00000002)

  /* Compares: FEQ is quiet (NV only for sNaN), FLT/FLE signal on any NaN; NaN compares false */
  TEST_FP_CMP(31, feq.s, 0, 1, 0x3f800000, 0x3f800000)
  TEST_FP_CMP(32, feq.s, 0, 0, 0x3f800000, 0x40000000)
  TEST_FP_CMP(33, feq.s, 0, 1, 0x80000000, 0x00000000)
  TEST_FP_CMP(34, feq.s, 0, 0, 0x7fc00000, 0x7fc00000)
  TEST_FP_CMP(35, feq.s, 0, 0, 0x7fc00000, 0x3f800000)
  TEST_FP_CMP(36, feq.s, 0x10, 0, 0x7f800001, 0x3f800000)
  TEST_FP_CMP(37, flt.s, 0, 1, 0x3f800000, 0x40000000)
  TEST_FP_CMP(38, flt.s, 0, 0, 0x40000000, 0x40000000)
  TEST_FP_CMP(39, flt.s, 0, 0, 0x80000000, 0x00000000)
  TEST_FP_CMP(40, flt.s, 0, 1, 0xff800000, 0x7f800000)
  TEST_FP_CMP(41, flt.s, 0, 1, 0xc0000000, 0xbf800000)
  TEST_FP_CMP(42, flt.s, 0x10, 0, 0x7fc00000, 0x3f800000)
  TEST_FP_CMP(43, flt.s, 0x10, 0, 0x3f800000, 0x7f800001)
  TEST_FP_CMP(44, fle.s, 0, 1, 0x40000000, 0x40000000)
  TEST_FP_CMP(45, fle.s, 0, 1, 0x80000000, 0x00000000)
  TEST_FP_CMP(46, fle.s, 0, 0, 0x40000000, 0x3f800000)
  TEST_FP_CMP(47, fle.s, 0x10, 0, 0x3f800000, 0xffc00000)
  TEST_FP_CMP(48, flt.s, 0, 1, 0x00000001, 0x00000002)

  /* FCVT.W.S: round per rm; NaN/too large -> 0x7fffffff, too negative -> 0x80000000, with NV only */
  TEST_FP_TO_INT(49, fcvt.w.s, rne, 0x01, 2, 0x3fc00000)             /* 1.5 -> 2 (tie, even) */
  TEST_FP_TO_INT(50, fcvt.w.s, rne, 0x01, 2, 0x40200000)             /* 2.5 -> 2 (tie, even) */
  TEST_FP_TO_INT(51, fcvt.w.s, rmm, 0x01, 3, 0x40200000)             /* 2.5 -> 3 (tie, away) */
  TEST_FP_TO_INT(52, fcvt.w.s, rmm, 0x01, 0xfffffffd, 0xc0200000)    /* -2.5 -> -3 */
  TEST_FP_TO_INT(53, fcvt.w.s, rtz, 0x01, 0xffffffff, 0xbfc00000)    /* -1.5 -> -1 */
  TEST_FP_TO_INT(54, fcvt.w.s, rdn, 0x01, 0xfffffffe, 0xbfc00000)    /* -1.5 -> -2 */
  TEST_FP_TO_INT(55, fcvt.w.s, rup, 0x01, 0xffffffff, 0xbfc00000)    /* -1.5 -> -1 */
  TEST_FP_TO_INT(56, fcvt.w.s, rup, 0x01, 1, 0x3ecccccd)             /* 0.4 -> 1 */
  TEST_FP_TO_INT(57, fcvt.w.s, rne, 0x01, 0, 0x3ecccccd)             /* 0.4 -> 0 */
  TEST_FP_TO_INT(58, fcvt.w.s, rne, 0x00, 0, 0x80000000)             /* -0 -> 0, exact */
  TEST_FP_TO_INT(59, fcvt.w.s, rne, 0x00, 0x7fffff80, 0x4effffff)    /* 2^31 - 128, exact */
  TEST_FP_TO_INT(60, fcvt.w.s, rne, 0x10, 0x7fffffff, 0x4f000000)    /* 2^31: too large */
  TEST_FP_TO_INT(61, fcvt.w.s, rne, 0x00, 0x80000000, 0xcf000000)    /* -2^31: exact */
  TEST_FP_TO_INT(62, fcvt.w.s, rne, 0x10, 0x80000000, 0xcf000001)    /* below -2^31 */
  TEST_FP_TO_INT(63, fcvt.w.s, rne, 0x10, 0x7fffffff, 0x7fc00000)    /* qNaN */
  TEST_FP_TO_INT(64, fcvt.w.s, rne, 0x10, 0x7fffffff, 0xffc00000)    /* negative NaN: still max */
  TEST_FP_TO_INT(65, fcvt.w.s, rne, 0x10, 0x7fffffff, 0x7f800000)    /* +inf */
  TEST_FP_TO_INT(66, fcvt.w.s, rne, 0x10, 0x80000000, 0xff800000)    /* -inf */
  TEST_FP_TO_INT(67, fcvt.w.s, rtz, 0x01, 0, 0x00000001)             /* tiny subnormal -> 0 */
  TEST_FP_TO_INT(68, fcvt.w.s, rup, 0x01, 1, 0x00000001)             /* ... or 1 rounding up */
  /* FCVT.WU.S: negative that rounds to 0 is not invalid (NX); below that saturates to 0 with NV */
  TEST_FP_TO_INT(69, fcvt.wu.s, rne, 0x01, 2, 0x3fc00000)
  TEST_FP_TO_INT(70, fcvt.wu.s, rne, 0x10, 0, 0xbf800000)            /* -1 */
  TEST_FP_TO_INT(71, fcvt.wu.s, rne, 0x01, 0, 0xbecccccd)            /* -0.4 -> -0: NX */
  TEST_FP_TO_INT(72, fcvt.wu.s, rtz, 0x01, 0, 0xbf19999a)            /* -0.6 -> 0 toward zero */
  TEST_FP_TO_INT(73, fcvt.wu.s, rne, 0x10, 0, 0xbf19999a)            /* -0.6 -> -1: invalid */
  TEST_FP_TO_INT(74, fcvt.wu.s, rne, 0x00, 0xffffff00, 0x4f7fffff)   /* 2^32 - 256, exact */
  TEST_FP_TO_INT(75, fcvt.wu.s, rne, 0x10, 0xffffffff, 0x4f800000)   /* 2^32: too large */
  TEST_FP_TO_INT(76, fcvt.wu.s, rne, 0x10, 0xffffffff, 0x7fc00000)
  TEST_FP_TO_INT(77, fcvt.wu.s, rne, 0x10, 0xffffffff, 0x7f800000)
  TEST_FP_TO_INT(78, fcvt.wu.s, rne, 0x10, 0, 0xff800000)
  TEST_FP_TO_INT(79, fcvt.wu.s, rne, 0x00, 0x80000000, 0x4f000000)   /* 2^31 fits unsigned */
  TEST_FP_TO_INT(80, fcvt.wu.s, rmm, 0x01, 3, 0x40200000)
  TEST_FP_TO_INT(81, fcvt.wu.s, rdn, 0x10, 0, 0xbecccccd)            /* -0.4 -> -1 in RDN: NV */

  /* FCVT.S.W / FCVT.S.WU: 2^24 + 1 is a tie between 2^24 and 2^24 + 2 */
  TEST_INT_TO_FP(82, fcvt.s.w, rne, 0, 0x3f800000, 1)
  TEST_INT_TO_FP(83, fcvt.s.w, rne, 0, 0xbf800000, -1)
  TEST_INT_TO_FP(84, fcvt.s.w, rne, 0, 0x00000000, 0)
  TEST_INT_TO_FP(85, fcvt.s.w, rne, 0, 0xcf000000, 0x80000000)
  TEST_INT_TO_FP(86, fcvt.s.w, rne, 0x01, 0x4f000000, 0x7fffffff)  /* 2^31 - 1 -> 2^31 */
  TEST_INT_TO_FP(87, fcvt.s.w, rtz, 0x01, 0x4effffff, 0x7fffffff)  /* -> 2^31 - 128 */
  TEST_INT_TO_FP(88, fcvt.s.w, rne, 0x01, 0x4b800000, 16777217)
  TEST_INT_TO_FP(89, fcvt.s.w, rmm, 0x01, 0x4b800001, 16777217)
  TEST_INT_TO_FP(90, fcvt.s.w, rup, 0x01, 0x4b800001, 16777217)
  TEST_INT_TO_FP(91, fcvt.s.w, rdn, 0x01, 0xcb800001, -16777217)
  TEST_INT_TO_FP(92, fcvt.s.w, rup, 0x01, 0xcb800000, -16777217)
  TEST_INT_TO_FP(93, fcvt.s.wu, rne, 0x01, 0x4f800000, 0xffffffff)  /* -> 2^32 */
  TEST_INT_TO_FP(94, fcvt.s.wu, rtz, 0x01, 0x4f7fffff, 0xffffffff)  /* -> 2^32 - 256 */
  TEST_INT_TO_FP(95, fcvt.s.wu, rne, 0, 0x4f000000, 0x80000000)
  TEST_INT_TO_FP(96, fcvt.s.wu, rne, 0, 0x3f800000, 1)

  /* FCLASS: one bit per class, bit 0 = -inf ... bit 9 = quiet NaN; never flags */
  TEST_FCLASS(97, 0x001, 0xff800000)    /* -inf */
  TEST_FCLASS(98, 0x002, 0xbf800000)    /* negative normal */
  TEST_FCLASS(99, 0x004, 0x807fffff)    /* negative subnormal */
  TEST_FCLASS(100, 0x008, 0x80000000)   /* -0 */
  TEST_FCLASS(101, 0x010, 0x00000000)   /* +0 */
  TEST_FCLASS(102, 0x020, 0x00000001)   /* positive subnormal */
  TEST_FCLASS(103, 0x040, 0x7f7fffff)   /* positive normal */
  TEST_FCLASS(104, 0x080, 0x7f800000)   /* +inf */
  TEST_FCLASS(105, 0x100, 0x7f800001)   /* signalling NaN */
  TEST_FCLASS(106, 0x200, 0x7fc00000)   /* quiet NaN */
  TEST_FCLASS(107, 0x100, 0xffbfffff)   /* negative signalling NaN */
  TEST_FCLASS(108, 0x200, 0xffc00001)   /* negative quiet NaN */
  TEST_FCLASS(109, 0x040, 0x00800000)   /* smallest normal */
TEST_END
