/* RV32I control transfer: all six branches taken and not taken (signed/unsigned edge values),
 * JAL and JALR link values, JALR target = (rs1 + imm) with bit 0 cleared, rd = rs1 on JALR.
 * Expected outcomes are worked by hand from the RV32I definitions. */
#include "isa_test.h"

TEST_BEGIN
  TEST_BR_TAKEN(1, beq, 0, 0)
  TEST_BR_TAKEN(2, beq, 0xffffffff, 0xffffffff)
  TEST_BR_NOT_TAKEN(3, beq, 0, 1)
  TEST_BR_NOT_TAKEN(4, beq, 0x80000000, 0)
  TEST_BR_TAKEN(5, bne, 0, 1)
  TEST_BR_TAKEN(6, bne, 0x80000000, 0)
  TEST_BR_NOT_TAKEN(7, bne, 5, 5)
  TEST_BR_NOT_TAKEN(8, bne, 0xffffffff, 0xffffffff)
  TEST_BR_TAKEN(9, blt, 0xffffffff, 0)     /* -1 < 0 */
  TEST_BR_TAKEN(10, blt, 0x80000000, 0x7fffffff)
  TEST_BR_NOT_TAKEN(11, blt, 0, 0xffffffff)
  TEST_BR_NOT_TAKEN(12, blt, 7, 7)
  TEST_BR_TAKEN(13, bge, 0, 0xffffffff)
  TEST_BR_TAKEN(14, bge, 7, 7)
  TEST_BR_NOT_TAKEN(15, bge, 0x80000000, 0x7fffffff)
  TEST_BR_NOT_TAKEN(16, bge, 0xffffffff, 0)
  TEST_BR_TAKEN(17, bltu, 0, 0xffffffff)
  TEST_BR_TAKEN(18, bltu, 0x7fffffff, 0x80000000)
  TEST_BR_NOT_TAKEN(19, bltu, 0xffffffff, 0)
  TEST_BR_NOT_TAKEN(20, bltu, 3, 3)
  TEST_BR_TAKEN(21, bgeu, 0xffffffff, 0)
  TEST_BR_TAKEN(22, bgeu, 3, 3)
  TEST_BR_NOT_TAKEN(23, bgeu, 0, 0xffffffff)
  TEST_BR_NOT_TAKEN(24, bgeu, 0x7fffffff, 0x80000000)

  /* Backward taken branch: a loop that runs exactly 5 times */
  li gp, 25
  li a0, 0
  li a1, 5
1:
  addi a0, a0, 1
  bne a0, a1, 1b
  CHECK_EQ(a0, 5)

  /* JAL: rd = pc + 4, jumps forward */
  li gp, 26
jal_a:
  jal a0, 2f
  j fail
2:
  la a1, jal_a
  addi a1, a1, 4
  CHECK_REG(a0, a1)

  /* JAL backward with rd = x0 (J): the skipped instruction must not run */
  li gp, 27
  li a0, 0
  j 4f
3:
  addi a0, a0, 100
  j 5f
4:
  addi a0, a0, 1
  j 3b
  addi a0, a0, 1000    /* never executed */
5:
  CHECK_EQ(a0, 101)

  /* JALR: target = rs1 + imm, link = pc + 4 */
  li gp, 28
  la a1, jalr_target - 8
jalr_a:
  jalr a0, 8(a1)
  j fail
jalr_target:
  la a2, jalr_a
  addi a2, a2, 4
  CHECK_REG(a0, a2)

  /* JALR clears bit 0 of the target: rs1 + imm is odd, the jump lands on the even address */
  li gp, 29
  la a1, jalr_odd_target
  addi a1, a1, 1
  jalr a0, 0(a1)
  j fail
jalr_odd_target:
  /* ... and a negative immediate that makes the sum odd */
  li gp, 30
  la a1, jalr_odd_target2
  addi a1, a1, 2
  jalr a0, -1(a1)
  j fail
jalr_odd_target2:
  /* JALR with rd = rs1: the target uses the old rs1 value */
  li gp, 31
  la a0, jalr_same
jalr_same_src:
  jalr a0, 0(a0)
  j fail
jalr_same:
  la a1, jalr_same_src
  addi a1, a1, 4
  CHECK_REG(a0, a1)

  /* Call and return through ra, as compiled code does */
  li gp, 32
  li a0, 20
  call add_22
  CHECK_EQ(a0, 42)
TEST_END

add_22:
  addi a0, a0, 22
  ret
