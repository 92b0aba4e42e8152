/* F extension arithmetic: FADD/FSUB/FMUL/FDIV/FSQRT and the four fused ops, checking the result
 * bits AND fflags of every operation, in each static rounding mode and with the dynamic mode.
 * Covered: exact and inexact results, round-to-even ties, directed rounding on both signs,
 * overflow per rounding mode, signed zeros (x - x is -0 only in RDN), subnormal inputs and
 * outputs, tininess detected after rounding (007fffff * (1 + 2^-23) rounds to 2^-126: NX only,
 * while 00ffffff * 0.5 rounds to 2^-126 from a tiny rounded value: UF|NX), infinities, invalid
 * operations (inf - inf, 0 * inf, 0/0, inf/inf, sqrt(-x), fma(inf, 0, c)), division by zero, NaN
 * inputs (quiet: no flag; signalling: NV) and the canonical NaN 0x7fc00000 as every NaN result.
 *
 * How the expected values were obtained: checks 1-89 were computed with the independent host
 * reference tools/fpref.c (x86-64 SSE/FMA under fesetround; x86 also detects tininess after
 * rounding; NaN results replaced by the canonical NaN as the RISC-V spec requires), and the
 * special cases above were re-derived by hand. Checks from 90 on are worked by hand: RMM (which
 * the host lacks), fma(inf, 0, qNaN) (NV in RISC-V, not on x86), and the dynamic rounding mode. */
#include "isa_test.h"

TEST_BEGIN
  TEST_FP_OP2(1, fadd.s, rne, 0x00, 0x40400000, 0x3f800000, 0x40000000)
  TEST_FP_OP2(2, fadd.s, rne, 0x01, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP2(3, fadd.s, rne, 0x01, 0x3f800002, 0x3f800001, 0x33800000)
  TEST_FP_OP2(4, fadd.s, rne, 0x01, 0x3f800001, 0x3f800000, 0x33c00000)
  TEST_FP_OP2(5, fadd.s, rtz, 0x01, 0x3f800000, 0x3f800000, 0x33c00000)
  TEST_FP_OP2(6, fadd.s, rdn, 0x01, 0x3f800000, 0x3f800000, 0x33c00000)
  TEST_FP_OP2(7, fadd.s, rup, 0x01, 0x3f800001, 0x3f800000, 0x33c00000)
  TEST_FP_OP2(8, fadd.s, rne, 0x01, 0xbf800001, 0xbf800000, 0xb3c00000)
  TEST_FP_OP2(9, fadd.s, rtz, 0x01, 0xbf800000, 0xbf800000, 0xb3c00000)
  TEST_FP_OP2(10, fadd.s, rdn, 0x01, 0xbf800001, 0xbf800000, 0xb3c00000)
  TEST_FP_OP2(11, fadd.s, rup, 0x01, 0xbf800000, 0xbf800000, 0xb3c00000)
  TEST_FP_OP2(12, fadd.s, rne, 0x05, 0x7f800000, 0x7f7fffff, 0x7f7fffff)
  TEST_FP_OP2(13, fadd.s, rtz, 0x05, 0x7f7fffff, 0x7f7fffff, 0x7f7fffff)
  TEST_FP_OP2(14, fadd.s, rdn, 0x05, 0x7f7fffff, 0x7f7fffff, 0x7f7fffff)
  TEST_FP_OP2(15, fadd.s, rup, 0x05, 0x7f800000, 0x7f7fffff, 0x7f7fffff)
  TEST_FP_OP2(16, fadd.s, rdn, 0x05, 0xff800000, 0xff7fffff, 0xff7fffff)
  TEST_FP_OP2(17, fadd.s, rup, 0x05, 0xff7fffff, 0xff7fffff, 0xff7fffff)
  TEST_FP_OP2(18, fadd.s, rne, 0x10, 0x7fc00000, 0x7f800000, 0xff800000)
  TEST_FP_OP2(19, fadd.s, rne, 0x00, 0x7f800000, 0x7f800000, 0x3f800000)
  TEST_FP_OP2(20, fadd.s, rne, 0x00, 0x00000000, 0x00000000, 0x80000000)
  TEST_FP_OP2(21, fadd.s, rdn, 0x00, 0x80000000, 0x00000000, 0x80000000)
  TEST_FP_OP2(22, fadd.s, rne, 0x00, 0x80000000, 0x80000000, 0x80000000)
  TEST_FP_OP2(23, fadd.s, rne, 0x00, 0x00000002, 0x00000001, 0x00000001)
  TEST_FP_OP2(24, fadd.s, rne, 0x00, 0x7fc00000, 0x7fc00001, 0x3f800000)
  TEST_FP_OP2(25, fadd.s, rne, 0x10, 0x7fc00000, 0x7f800001, 0x3f800000)
  TEST_FP_OP2(26, fadd.s, rne, 0x00, 0x7fc00000, 0xffc00000, 0x3f800000)
  TEST_FP_OP2(27, fsub.s, rne, 0x00, 0x40000000, 0x40400000, 0x3f800000)
  TEST_FP_OP2(28, fsub.s, rne, 0x00, 0x3f7fffff, 0x3f800000, 0x33800000)
  TEST_FP_OP2(29, fsub.s, rne, 0x01, 0x3f800000, 0x3f800000, 0x33000000)
  TEST_FP_OP2(30, fsub.s, rne, 0x00, 0x00000000, 0x3f800000, 0x3f800000)
  TEST_FP_OP2(31, fsub.s, rdn, 0x00, 0x80000000, 0x3f800000, 0x3f800000)
  TEST_FP_OP2(32, fsub.s, rne, 0x00, 0x007fffff, 0x00800000, 0x00000001)
  TEST_FP_OP2(33, fsub.s, rne, 0x10, 0x7fc00000, 0x7f800000, 0x7f800000)
  TEST_FP_OP2(34, fmul.s, rne, 0x00, 0x3fc00000, 0x40400000, 0x3f000000)
  TEST_FP_OP2(35, fmul.s, rne, 0x00, 0x00400000, 0x00800000, 0x3f000000)
  TEST_FP_OP2(36, fmul.s, rne, 0x03, 0x00000000, 0x00000001, 0x3f000000)
  TEST_FP_OP2(37, fmul.s, rup, 0x03, 0x00000001, 0x00000001, 0x3f000000)
  TEST_FP_OP2(38, fmul.s, rdn, 0x03, 0x80000001, 0x80000001, 0x3f000000)
  TEST_FP_OP2(39, fmul.s, rne, 0x01, 0x00800000, 0x007fffff, 0x3f800001)
  TEST_FP_OP2(40, fmul.s, rne, 0x03, 0x00800000, 0x00ffffff, 0x3f000000)
  TEST_FP_OP2(41, fmul.s, rne, 0x10, 0x7fc00000, 0x7f800000, 0x00000000)
  TEST_FP_OP2(42, fmul.s, rne, 0x00, 0x80000000, 0xc0000000, 0x00000000)
  TEST_FP_OP2(43, fmul.s, rne, 0x05, 0x7f800000, 0x7f7fffff, 0x40000000)
  TEST_FP_OP2(44, fmul.s, rtz, 0x05, 0x7f7fffff, 0x7f7fffff, 0x40000000)
  TEST_FP_OP2(45, fmul.s, rne, 0x01, 0x3c23d70b, 0x3dcccccd, 0x3dcccccd)
  TEST_FP_OP2(46, fdiv.s, rne, 0x01, 0x3eaaaaab, 0x3f800000, 0x40400000)
  TEST_FP_OP2(47, fdiv.s, rtz, 0x01, 0x3eaaaaaa, 0x3f800000, 0x40400000)
  TEST_FP_OP2(48, fdiv.s, rdn, 0x01, 0x3eaaaaaa, 0x3f800000, 0x40400000)
  TEST_FP_OP2(49, fdiv.s, rup, 0x01, 0x3eaaaaab, 0x3f800000, 0x40400000)
  TEST_FP_OP2(50, fdiv.s, rne, 0x08, 0x7f800000, 0x3f800000, 0x00000000)
  TEST_FP_OP2(51, fdiv.s, rne, 0x08, 0xff800000, 0xbf800000, 0x00000000)
  TEST_FP_OP2(52, fdiv.s, rne, 0x10, 0x7fc00000, 0x00000000, 0x00000000)
  TEST_FP_OP2(53, fdiv.s, rne, 0x10, 0x7fc00000, 0x7f800000, 0x7f800000)
  TEST_FP_OP2(54, fdiv.s, rne, 0x00, 0x00000000, 0x00000000, 0x3f800000)
  TEST_FP_OP2(55, fdiv.s, rne, 0x00, 0x00000000, 0x3f800000, 0x7f800000)
  TEST_FP_OP2(56, fdiv.s, rne, 0x00, 0x40000000, 0x40c00000, 0x40400000)
  TEST_FP_OP2(57, fdiv.s, rne, 0x00, 0x00400000, 0x00800000, 0x40000000)
  TEST_FP_OP2(58, fdiv.s, rne, 0x05, 0x7f800000, 0x7f7fffff, 0x3f000000)
  TEST_FP_OP2(59, fdiv.s, rne, 0x10, 0x7fc00000, 0x7f800001, 0x3f800000)
  TEST_FP_OP1(60, fsqrt.s, rne, 0x00, 0x40000000, 0x40800000)
  TEST_FP_OP1(61, fsqrt.s, rne, 0x01, 0x3fb504f3, 0x40000000)
  TEST_FP_OP1(62, fsqrt.s, rtz, 0x01, 0x3fb504f3, 0x40000000)
  TEST_FP_OP1(63, fsqrt.s, rup, 0x01, 0x3fb504f4, 0x40000000)
  TEST_FP_OP1(64, fsqrt.s, rne, 0x10, 0x7fc00000, 0xbf800000)
  TEST_FP_OP1(65, fsqrt.s, rne, 0x00, 0x80000000, 0x80000000)
  TEST_FP_OP1(66, fsqrt.s, rne, 0x00, 0x7f800000, 0x7f800000)
  TEST_FP_OP1(67, fsqrt.s, rne, 0x10, 0x7fc00000, 0xff800000)
  TEST_FP_OP1(68, fsqrt.s, rne, 0x01, 0x1a3504f3, 0x00000001)
  TEST_FP_OP1(69, fsqrt.s, rne, 0x00, 0x7fc00000, 0x7fc00000)
  TEST_FP_OP1(70, fsqrt.s, rne, 0x10, 0x7fc00000, 0x7f800001)
  TEST_FP_OP3(71, fmadd.s, rne, 0x00, 0x40a00000, 0x3f800000, 0x40000000, 0x40400000)
  TEST_FP_OP3(72, fmadd.s, rne, 0x00, 0x3a000400, 0x3f800800, 0x3f800800, 0xbf800000)
  TEST_FP_OP2(73, fmul.s, rne, 0x01, 0x3f801000, 0x3f800800, 0x3f800800)
  TEST_FP_OP3(74, fmadd.s, rne, 0x10, 0x7fc00000, 0x7f800000, 0x00000000, 0x3f800000)
  TEST_FP_OP3(75, fmadd.s, rne, 0x10, 0x7fc00000, 0x7f800000, 0x3f800000, 0xff800000)
  TEST_FP_OP3(76, fmadd.s, rne, 0x00, 0x7fc00000, 0x7fc00000, 0x3f800000, 0x3f800000)
  TEST_FP_OP3(77, fmadd.s, rne, 0x00, 0x00000000, 0x3f800000, 0x80000000, 0x00000000)
  TEST_FP_OP3(78, fmadd.s, rdn, 0x00, 0x80000000, 0x3f800000, 0x80000000, 0x00000000)
  TEST_FP_OP3(79, fmadd.s, rne, 0x00, 0x7f7fffff, 0x7f7fffff, 0x40000000, 0xff7fffff)
  TEST_FP_OP3(80, fmadd.s, rup, 0x01, 0x3f800001, 0x3f800000, 0x3f800000, 0x33c00000)
  TEST_FP_OP3(81, fmsub.s, rne, 0x00, 0x40a00000, 0x40000000, 0x40400000, 0x3f800000)
  TEST_FP_OP3(82, fnmsub.s, rne, 0x00, 0xc0a00000, 0x40000000, 0x40400000, 0x3f800000)
  TEST_FP_OP3(83, fnmadd.s, rne, 0x00, 0xc0e00000, 0x40000000, 0x40400000, 0x3f800000)
  TEST_FP_OP3(84, fnmadd.s, rne, 0x00, 0x80000000, 0x3f800000, 0x00000000, 0x00000000)
  TEST_FP_OP3(85, fnmsub.s, rne, 0x00, 0x00000000, 0x3f800000, 0x00000000, 0x00000000)
  TEST_FP_OP3(86, fmsub.s, rne, 0x00, 0x00000000, 0x3f800000, 0x00000000, 0x00000000)
  TEST_FP_OP3(87, fmsub.s, rtz, 0x00, 0x3a000400, 0x3f800800, 0x3f800800, 0x3f800000)
  TEST_FP_OP3(88, fnmadd.s, rdn, 0x01, 0xc0000801, 0x3f800800, 0x3f800800, 0x3f800000)
  TEST_FP_OP3(89, fmadd.s, rne, 0x00, 0x803fffff, 0x00800000, 0xbf000000, 0x00000001)

  /* RMM, worked by hand: it differs from RNE only on exact ties, which it rounds away from 0.
   * 1 + 2^-24 is halfway between 1 and 1 + 2^-23. */
  TEST_FP_OP2(90, fadd.s, rmm, 0x01, 0x3f800001, 0x3f800000, 0x33800000)
  TEST_FP_OP2(91, fadd.s, rmm, 0x01, 0xbf800001, 0xbf800000, 0xb3800000)
  TEST_FP_OP2(92, fadd.s, rmm, 0x01, 0x3f800001, 0x3f800000, 0x33c00000)  /* 0.75 ulp: not a tie */
  TEST_FP_OP2(93, fadd.s, rmm, 0x05, 0x7f800000, 0x7f7fffff, 0x7f7fffff)  /* overflows to inf */
  TEST_FP_OP2(94, fmul.s, rmm, 0x03, 0x00000001, 0x00000001, 0x3f000000)  /* 2^-150: tie -> 2^-149 */
  TEST_FP_OP2(95, fdiv.s, rmm, 0x01, 0x3eaaaaab, 0x3f800000, 0x40400000)  /* 1/3: not a tie */
  TEST_FP_OP1(96, fsqrt.s, rmm, 0x01, 0x3fb504f3, 0x40000000)
  /* 1.5 * (1 + 2^-23) = 1.5 + 1.5 * 2^-23: ulp at 1.5 is 2^-23, the extra 0.5 ulp is a tie;
   * RMM rounds up to 0x3fc00002, RNE to even 0x3fc00002 as well (0x3fc00001 is odd). */
  TEST_FP_OP2(97, fmul.s, rmm, 0x01, 0x3fc00002, 0x3fc00000, 0x3f800001)
  /* fma(1, 1, 2^-24) = 1 + 2^-24: tie; RMM -> 1 + 2^-23, RNE -> 1 */
  TEST_FP_OP3(98, fmadd.s, rmm, 0x01, 0x3f800001, 0x3f800000, 0x3f800000, 0x33800000)
  TEST_FP_OP3(99, fmadd.s, rne, 0x01, 0x3f800000, 0x3f800000, 0x3f800000, 0x33800000)

  /* fma(inf, 0, qNaN) is invalid in RISC-V (the product is invalid whatever the addend) */
  TEST_FP_OP3(100, fmadd.s, rne, 0x10, 0x7fc00000, 0x7f800000, 0x00000000, 0x7fc00000)
  /* fma(1, 1, sNaN): NV from the signalling addend */
  TEST_FP_OP3(101, fmadd.s, rne, 0x10, 0x7fc00000, 0x3f800000, 0x3f800000, 0x7f800001)
  /* NaN payloads are never propagated: a quiet NaN with payload gives the canonical NaN */
  TEST_FP_OP2(102, fmul.s, rne, 0x00, 0x7fc00000, 0xffc12345, 0x3f800000)

  /* Dynamic rounding mode (rm = dyn uses frm), on the same operands as checks 4-11 and 2/90 */
  li gp, 103
  fsrmi RM_RTZ
  FP_LOAD(f1, 0x3f800000)
  FP_LOAD(f2, 0x33c00000)
  fadd.s f3, f1, f2, dyn
  fmv.x.w a0, f3
  CHECK_EQ(a0, 0x3f800000)
  li gp, 104
  fsrmi RM_RUP
  fadd.s f3, f1, f2, dyn
  fmv.x.w a0, f3
  CHECK_EQ(a0, 0x3f800001)
  li gp, 105
  fsrmi RM_RDN
  fneg.s f4, f1
  fneg.s f5, f2
  fadd.s f3, f4, f5, dyn
  fmv.x.w a0, f3
  CHECK_EQ(a0, 0xbf800001)
  li gp, 106
  fsrmi RM_RMM
  FP_LOAD(f2, 0x33800000)
  fadd.s f3, f1, f2, dyn
  fmv.x.w a0, f3
  CHECK_EQ(a0, 0x3f800001)
  li gp, 107
  fsrmi RM_RNE
  fadd.s f3, f1, f2, dyn
  fmv.x.w a0, f3
  CHECK_EQ(a0, 0x3f800000)
  /* The assembler's default for an omitted rm is dyn: with frm = RUP, 1/3 rounds up */
  li gp, 108
  fsrmi RM_RUP
  FP_LOAD(f1, 0x3f800000)
  FP_LOAD(f2, 0x40400000)
  fdiv.s f3, f1, f2
  fmv.x.w a0, f3
  CHECK_EQ(a0, 0x3eaaaaab)
  li gp, 109
  fsrmi RM_RDN
  fdiv.s f3, f1, f2, dyn
  fmv.x.w a0, f3
  CHECK_EQ(a0, 0x3eaaaaaa)
  /* a static rm overrides frm */
  li gp, 110
  fdiv.s f3, f1, f2, rup
  fmv.x.w a0, f3
  CHECK_EQ(a0, 0x3eaaaaab)
  /* dynamic RDN also gives -0 for x - x */
  li gp, 111
  fsub.s f3, f1, f1, dyn
  fmv.x.w a0, f3
  CHECK_EQ(a0, 0x80000000)
  fsrmi RM_RNE

  /* Flags accrue across operations until cleared: DZ then NX -> 0x09 */
  li gp, 112
  fsflags x0
  FP_LOAD(f1, 0x3f800000)
  FP_LOAD(f2, 0x00000000)
  FP_LOAD(f4, 0x40400000)
  fdiv.s f3, f1, f2, rne
  fdiv.s f3, f1, f4, rne
  CHECK_FLAGS(0x09)
  /* an exact operation leaves accrued flags alone */
  li gp, 113
  fadd.s f3, f1, f1, rne
  CHECK_FLAGS(0x09)
  /* register aliasing: destination equal to sources */
  li gp, 114
  FP_LOAD(f6, 0x40400000)
  fmul.s f6, f6, f6, rne
  fmv.x.w a0, f6
  CHECK_EQ(a0, 0x41100000)   /* 3 * 3 = 9 */
  li gp, 115
  fmadd.s f6, f6, f6, f6, rne
  fmv.x.w a0, f6
  CHECK_EQ(a0, 0x42b40000)   /* 9 * 9 + 9 = 90 */
TEST_END
