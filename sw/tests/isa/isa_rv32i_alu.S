/* RV32I register-register and immediate arithmetic, logic, shifts, compares, LUI/AUIPC, x0.
 * Expected values are worked by hand from the RV32I definitions (two's complement, 32-bit wrap,
 * shift amounts taken from the low 5 bits, SRA/SRAI replicate bit 31). */
#include "isa_test.h"

TEST_BEGIN
  /* ADD / ADDI: wrap at 2^32 */
  TEST_RR(1, add, 0x00000003, 1, 2)
  TEST_RR(2, add, 0x00000000, 0xffffffff, 1)
  TEST_RR(3, add, 0x80000000, 0x7fffffff, 1)
  TEST_RR(4, add, 0xfffffffe, 0x7fffffff, 0x7fffffff)
  TEST_IMM(5, addi, 0xfffff801, 1, -2048)
  TEST_IMM(6, addi, 0x000007fe, -1, 2047)
  TEST_IMM(7, addi, 0x7fffffff, 0x80000000, -1)
  /* SUB */
  TEST_RR(8, sub, 0xffffffff, 0, 1)
  TEST_RR(9, sub, 0x7fffffff, 0x80000000, 1)
  TEST_RR(10, sub, 0x00000000, 0x12345678, 0x12345678)
  /* AND / OR / XOR and immediates (immediate sign-extended from 12 bits) */
  TEST_RR(11, and, 0x0f000f00, 0xff00ff00, 0x0f0f0f0f)
  TEST_RR(12, or, 0xff0fff0f, 0xff00ff00, 0x0f0f0f0f)
  TEST_RR(13, xor, 0xf00ff00f, 0xff00ff00, 0x0f0f0f0f)
  TEST_IMM(14, andi, 0xff00ff00, 0xff00ff00, -1)      /* imm 0xfff -> 0xffffffff */
  TEST_IMM(15, andi, 0x00000700, 0xff00ff00, 0x70f)
  TEST_IMM(16, ori, 0xfffff80f, 0x0000000f, -2048)  /* imm 0x800 -> 0xfffff800 */
  TEST_IMM(17, xori, 0x00ff00ff, 0xff00ff00, -1)
  TEST_IMM(18, xori, 0xff00f800, 0xff00ff0f, 0x70f)
  /* SLL / SRL / SRA: only rs2[4:0] counts */
  TEST_RR(19, sll, 0x80000000, 1, 31)
  TEST_RR(20, sll, 0x00000002, 1, 33)                 /* 33 & 31 = 1 */
  TEST_RR(21, sll, 0x21212121, 0x21212121, 0xffffffe0) /* low bits 0 */
  TEST_RR(22, srl, 0x00000001, 0x80000000, 31)
  TEST_RR(23, srl, 0x01000000, 0x80000000, 7)
  TEST_RR(24, srl, 0x40000000, 0x80000000, 0xffffffe1)
  TEST_RR(25, sra, 0xffffffff, 0x80000000, 31)
  TEST_RR(26, sra, 0xff000000, 0x80000000, 7)
  TEST_RR(27, sra, 0x00ffffff, 0x7fffffff, 7)
  TEST_RR(28, sra, 0xc0000000, 0x80000000, 0xffffffe1)
  TEST_IMM(29, slli, 0x00000080, 1, 7)
  TEST_IMM(30, slli, 0x80000000, 0xffffffff, 31)
  TEST_IMM(31, srli, 0x0001ffff, 0xffffffff, 15)
  TEST_IMM(32, srli, 0x00000001, 0x80000001, 31)
  TEST_IMM(33, srai, 0xfffe0000, 0x80000000, 14)
  TEST_IMM(34, srai, 0x00000000, 0x7fffffff, 31)
  TEST_IMM(35, srai, 0x81818181, 0x81818181, 0)
  /* SLT / SLTU / SLTI / SLTIU (SLTIU sign-extends the immediate, then compares unsigned) */
  TEST_RR(36, slt, 1, 0x80000000, 0)
  TEST_RR(37, slt, 0, 0, 0x80000000)
  TEST_RR(38, slt, 0, 5, 5)
  TEST_RR(39, slt, 1, 0xffffffff, 0)
  TEST_RR(40, sltu, 0, 0x80000000, 0)
  TEST_RR(41, sltu, 1, 0, 0x80000000)
  TEST_RR(42, sltu, 1, 0, 1)
  TEST_RR(43, sltu, 0, 0xffffffff, 0xffffffff)
  TEST_IMM(44, slti, 1, 0xfffffffe, -1)
  TEST_IMM(45, slti, 0, 0, -1)
  TEST_IMM(46, slti, 1, 0x80000000, 0)
  TEST_IMM(47, sltiu, 1, 0, -1)                       /* 0 < 0xffffffff */
  TEST_IMM(48, sltiu, 0, 0xffffffff, -1)
  TEST_IMM(49, sltiu, 1, 0x7fffffff, -2048)
  TEST_IMM(50, sltiu, 0, 1, 1)
  /* Destination equal to a source */
  TEST_RR_SRC1_EQ_DEST(51, add, 24, 13, 11)
  TEST_RR_SRC1_EQ_DEST(52, sub, 2, 13, 11)
  TEST_RR_SRC1_EQ_DEST(53, sll, 0x80, 1, 7)

  /* LUI: imm << 12, low bits 0 */
  li gp, 54
  lui a0, 0xfffff
  CHECK_EQ(a0, 0xfffff000)
  li gp, 55
  lui a0, 0x80000
  srai a0, a0, 12
  CHECK_EQ(a0, 0xfff80000)
  li gp, 56
  lui a0, 0
  CHECK_EQ(a0, 0)

  /* AUIPC: pc of the AUIPC + (imm << 12). The label marks the AUIPC's own address. */
  li gp, 57
auipc_a:
  auipc a0, 0
  la a1, auipc_a
  CHECK_REG(a0, a1)
  li gp, 58
auipc_b:
  auipc a0, 1
  la a1, auipc_b
  li t6, 0x1000
  add a1, a1, t6
  CHECK_REG(a0, a1)
  li gp, 59
auipc_c:
  auipc a0, 0xfffff
  la a1, auipc_c
  li t6, 0xfffff000
  add a1, a1, t6
  CHECK_REG(a0, a1)

  /* x0 is hard-wired to 0: writes are discarded, reads give 0 */
  li gp, 60
  li a1, 1234
  add x0, a1, a1
  addi x0, x0, 5
  lui x0, 0x12345
  mv a0, x0
  CHECK_EQ(a0, 0)
  li gp, 61
  li a1, 77
  add a0, a1, x0
  sub a0, x0, a0
  CHECK_EQ(a0, -77)

  /* FENCE and FENCE.I execute as no-ops: registers unchanged, execution continues in order */
  li gp, 62
  li a0, 42
  fence
  fence rw, rw
  fence.i
  addi a0, a0, 1
  CHECK_EQ(a0, 43)
  /* NOP is ADDI x0, x0, 0 */
  nop
TEST_END
