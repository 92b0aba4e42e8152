/* RV32I loads and stores: every width at every aligned byte/half position, sign and zero
 * extension, negative and positive offsets, and that stores write only their bytes
 * (little-endian). Expected values are worked by hand from the little-endian byte layout. */
#include "isa_test.h"

  .data
  .p2align 2
mem_src:
  .word 0x8180ff7f      /* bytes: 7f ff 80 81 */
  .word 0x00017ffe      /* bytes: fe 7f 01 00; halves: 7ffe 0001 */
  .word 0x80008001      /* halves: 8001 8000 */
mem_dst:
  .word 0, 0, 0, 0

TEST_BEGIN
  la s0, mem_src
  /* LB sign-extends, LBU zero-extends; byte k of the word is bits 8k+7..8k */
  li gp, 1
  lb a0, 0(s0)
  CHECK_EQ(a0, 0x0000007f)
  li gp, 2
  lb a0, 1(s0)
  CHECK_EQ(a0, 0xffffffff)
  li gp, 3
  lb a0, 2(s0)
  CHECK_EQ(a0, 0xffffff80)
  li gp, 4
  lb a0, 3(s0)
  CHECK_EQ(a0, 0xffffff81)
  li gp, 5
  lbu a0, 0(s0)
  CHECK_EQ(a0, 0x7f)
  li gp, 6
  lbu a0, 1(s0)
  CHECK_EQ(a0, 0xff)
  li gp, 7
  lbu a0, 2(s0)
  CHECK_EQ(a0, 0x80)
  li gp, 8
  lbu a0, 3(s0)
  CHECK_EQ(a0, 0x81)
  /* LH / LHU at offsets 0 and 2 */
  li gp, 9
  lh a0, 4(s0)
  CHECK_EQ(a0, 0x00007ffe)
  li gp, 10
  lh a0, 6(s0)
  CHECK_EQ(a0, 0x00000001)
  li gp, 11
  lh a0, 8(s0)
  CHECK_EQ(a0, 0xffff8001)
  li gp, 12
  lh a0, 10(s0)
  CHECK_EQ(a0, 0xffff8000)
  li gp, 13
  lhu a0, 8(s0)
  CHECK_EQ(a0, 0x8001)
  li gp, 14
  lhu a0, 10(s0)
  CHECK_EQ(a0, 0x8000)
  li gp, 15
  lhu a0, 0(s0)
  CHECK_EQ(a0, 0xff7f)
  /* LW */
  li gp, 16
  lw a0, 0(s0)
  CHECK_EQ(a0, 0x8180ff7f)
  li gp, 17
  lw a0, 8(s0)
  CHECK_EQ(a0, 0x80008001)
  /* negative offset */
  li gp, 18
  addi s1, s0, 12
  lw a0, -8(s1)
  CHECK_EQ(a0, 0x00017ffe)
  li gp, 19
  lbu a0, -9(s1)
  CHECK_EQ(a0, 0x81)

  la s2, mem_dst
  /* SW then SB into each byte: only the addressed byte changes */
  li gp, 20
  li a1, 0x11223344
  sw a1, 0(s2)
  li a2, 0xaaaaaa55
  sb a2, 0(s2)
  lw a0, 0(s2)
  CHECK_EQ(a0, 0x11223355)
  li gp, 21
  sb a2, 1(s2)
  lw a0, 0(s2)
  CHECK_EQ(a0, 0x11225555)
  li gp, 22
  sb a2, 2(s2)
  lw a0, 0(s2)
  CHECK_EQ(a0, 0x11555555)
  li gp, 23
  sb a2, 3(s2)
  lw a0, 0(s2)
  CHECK_EQ(a0, 0x55555555)
  /* SH into each half */
  li gp, 24
  li a1, 0x01020304
  sw a1, 4(s2)
  li a2, 0xdeadbeef
  sh a2, 4(s2)
  lw a0, 4(s2)
  CHECK_EQ(a0, 0x0102beef)
  li gp, 25
  sh a2, 6(s2)
  lw a0, 4(s2)
  CHECK_EQ(a0, 0xbeefbeef)
  /* neighbours untouched */
  li gp, 26
  lw a0, 0(s2)
  CHECK_EQ(a0, 0x55555555)
  li gp, 27
  lw a0, 8(s2)
  CHECK_EQ(a0, 0)
  /* store with negative offset, load back through another base */
  li gp, 28
  addi s3, s2, 16
  li a1, 0xcafef00d
  sw a1, -4(s3)
  lw a0, 12(s2)
  CHECK_EQ(a0, 0xcafef00d)
  li gp, 29
  lh a0, 14(s2)
  CHECK_EQ(a0, 0xffffcafe)
  li gp, 30
  lb a0, 12(s2)
  CHECK_EQ(a0, 0x0000000d)
  /* A load into x0 is performed (no trap) but x0 stays 0 */
  li gp, 31
  lw x0, 0(s0)
  mv a0, x0
  CHECK_EQ(a0, 0)
  /* load directly after a store to the same address sees the new value */
  li gp, 32
  li a1, 0x600dbeef
  sw a1, 8(s2)
  lw a0, 8(s2)
  CHECK_EQ(a0, 0x600dbeef)
TEST_END
