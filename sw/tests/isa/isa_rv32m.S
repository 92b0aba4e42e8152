/* RV32M: MUL, MULH (signed x signed), MULHSU (signed x unsigned), MULHU, DIV, DIVU, REM, REMU,
 * including division by zero (quotient all ones, remainder = dividend) and INT_MIN / -1
 * (quotient INT_MIN, remainder 0), as the RISC-V M chapter defines.
 * Products worked by hand: e.g. 0x80000000 * 0x80000000 = 2^62 -> high word 0x40000000;
 * -1 * -1 = 1 -> MULH 0, MULHU of 0xffffffff^2 = 2^64 - 2^33 + 1 -> high 0xfffffffe;
 * MULHSU(-1, 0xffffffff) = -(2^32 - 1) -> 64-bit 0xffffffff_00000001 -> high 0xffffffff. */
#include "isa_test.h"

TEST_BEGIN
  TEST_RR(1, mul, 0x00000006, 2, 3)
  TEST_RR(2, mul, 0xfffffffa, 0xfffffffe, 3)             /* -2 * 3 = -6 */
  TEST_RR(3, mul, 0x00000001, 0xffffffff, 0xffffffff)
  TEST_RR(4, mul, 0x00000000, 0x80000000, 0x80000000)    /* 2^62 mod 2^32 */
  TEST_RR(5, mul, 0x89ab6618, 0x12345678, 0x0000abcd)    /* 0x12345678 * 0xabcd = 0xc37_89ab6618 */
  TEST_RR(6, mulh, 0x40000000, 0x80000000, 0x80000000)   /* (-2^31)^2 = 2^62 */
  TEST_RR(7, mulh, 0x00000000, 0xffffffff, 0xffffffff)   /* (-1)(-1) = 1 */
  TEST_RR(8, mulh, 0xffffffff, 0xffffffff, 0x00000001)   /* -1 -> high all ones */
  TEST_RR(9, mulh, 0xc0000000, 0x80000000, 0x7fffffff)   /* -2^31 (2^31-1) = -2^62 + 2^31 */
  TEST_RR(10, mulh, 0x00000000, 0x00010000, 0x00008000)  /* 2^31: high 0 */
  TEST_RR(11, mulhu, 0xfffffffe, 0xffffffff, 0xffffffff)
  TEST_RR(12, mulhu, 0x40000000, 0x80000000, 0x80000000)
  TEST_RR(13, mulhu, 0x00000000, 0x0000ffff, 0x0000ffff)
  TEST_RR(14, mulhu, 0x7fffffff, 0x80000000, 0xffffffff) /* 2^31 (2^32-1) = 2^63 - 2^31 */
  TEST_RR(15, mulhsu, 0xffffffff, 0xffffffff, 0xffffffff) /* -1 * (2^32-1) */
  TEST_RR(16, mulhsu, 0x80000000, 0x80000000, 0xffffffff) /* -2^31 (2^32-1) = -2^63 + 2^31 */
  TEST_RR(17, mulhsu, 0x7ffffffe, 0x7fffffff, 0xffffffff) /* (2^31-1)(2^32-1) = 2^63-2^32-2^31+1 */
  TEST_RR(18, mulhsu, 0x00000000, 0x00000001, 0x80000000)
  /* DIV rounds toward zero; REM takes the dividend's sign */
  TEST_RR(19, div, 3, 20, 6)
  TEST_RR(20, div, 0xfffffffd, 0xffffffec, 6)    /* -20 / 6 = -3 */
  TEST_RR(21, div, 0xfffffffd, 20, 0xfffffffa)   /* 20 / -6 = -3 */
  TEST_RR(22, div, 3, 0xffffffec, 0xfffffffa)    /* -20 / -6 = 3 */
  TEST_RR(23, rem, 2, 20, 6)
  TEST_RR(24, rem, 0xfffffffe, 0xffffffec, 6)    /* -20 % 6 = -2 */
  TEST_RR(25, rem, 2, 20, 0xfffffffa)
  TEST_RR(26, rem, 0xfffffffe, 0xffffffec, 0xfffffffa)
  TEST_RR(27, divu, 0x0aaaaaa9, 0xffffffec, 24)  /* 4294967276 = 24 * 178956969 + 20 */
  TEST_RR(28, remu, 20, 0xffffffec, 24)
  TEST_RR(29, divu, 0, 5, 0xffffffff)
  TEST_RR(30, remu, 5, 5, 0xffffffff)
  /* division by zero: DIV/DIVU -> all ones, REM/REMU -> dividend */
  TEST_RR(31, div, 0xffffffff, 20, 0)
  TEST_RR(32, div, 0xffffffff, 0x80000000, 0)
  TEST_RR(33, divu, 0xffffffff, 20, 0)
  TEST_RR(34, rem, 20, 20, 0)
  TEST_RR(35, rem, 0x80000000, 0x80000000, 0)
  TEST_RR(36, remu, 0xffffffec, 0xffffffec, 0)
  /* signed overflow: INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0 */
  TEST_RR(37, div, 0x80000000, 0x80000000, 0xffffffff)
  TEST_RR(38, rem, 0, 0x80000000, 0xffffffff)
  /* the same bits unsigned are ordinary */
  TEST_RR(39, divu, 0, 0x80000000, 0xffffffff)
  TEST_RR(40, remu, 0x80000000, 0x80000000, 0xffffffff)
  TEST_RR(41, div, 0xc0000000, 0x80000000, 2)
  /* destination equal to a source, for a long op */
  TEST_RR_SRC1_EQ_DEST(42, div, 7, 49, 7)
  TEST_RR_SRC1_EQ_DEST(43, remu, 1, 50, 7)
  TEST_RR_SRC1_EQ_DEST(44, mulhu, 0x00000001, 0x00010000, 0x00010000)
TEST_END
