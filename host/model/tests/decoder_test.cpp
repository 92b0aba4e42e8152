// decodeInsn(): fields and immediates of each format, against hand encodings (rv_encode.hpp).
#include <gtest/gtest.h>

#include "insn_decoder.hpp"
#include "rv_encode.hpp"
#include "tessera/chip_params.h"

namespace tessera::model {
namespace {

TEST(Decoder, ImmediatesOfEachFormat) {
  EXPECT_EQ(decodeInsn(rv::addi(1, 2, -2048)).imm, -2048);
  EXPECT_EQ(decodeInsn(rv::sw(3, 4, -1)).imm, -1);
  EXPECT_EQ(decodeInsn(rv::sw(3, 4, 2047)).imm, 2047);
  EXPECT_EQ(decodeInsn(rv::beq(1, 2, -4096)).imm, -4096);
  EXPECT_EQ(decodeInsn(rv::bne(1, 2, 4094)).imm, 4094);
  EXPECT_EQ(decodeInsn(rv::jal(1, -1048576)).imm, -1048576);
  EXPECT_EQ(decodeInsn(rv::jal(1, 1048574)).imm, 1048574);
  EXPECT_EQ(decodeInsn(rv::lui(1, 0xfffff)).imm, static_cast<int32_t>(0xfffff000u));
}

TEST(Decoder, RegistersAndDestinations) {
  const DecodedInsn d = decodeInsn(rv::fmadd(31, 1, 2, 3, 4));
  EXPECT_EQ(d.op, Op::Fmadd);
  EXPECT_EQ(d.rd, 31);
  EXPECT_EQ(d.rs1, 1);
  EXPECT_EQ(d.rs2, 2);
  EXPECT_EQ(d.rs3, 3);
  EXPECT_EQ(d.rm, 4);
  EXPECT_EQ(d.dest, Dest::F);
  EXPECT_EQ(decodeInsn(rv::addi(0, 1, 1)).dest, Dest::None);
  EXPECT_EQ(decodeInsn(rv::feq(5, 1, 2)).dest, Dest::X);
  EXPECT_EQ(decodeInsn(rv::fsw(1, 2, 0)).dest, Dest::None);
}

TEST(Decoder, LongOps) {
  EXPECT_TRUE(decodeInsn(rv::div(1, 2, 3)).longOp);
  EXPECT_TRUE(decodeInsn(rv::remu(1, 2, 3)).longOp);
  EXPECT_TRUE(decodeInsn(rv::fdiv(1, 2, 3)).longOp);
  EXPECT_TRUE(decodeInsn(rv::fsqrt(1, 2)).longOp);
  EXPECT_FALSE(decodeInsn(rv::mulhu(1, 2, 3)).longOp);
  EXPECT_FALSE(decodeInsn(rv::fmul(1, 2, 3)).longOp);
}

TEST(Decoder, IllegalEncodings) {
  EXPECT_EQ(decodeInsn(rv::fsqrt(1, 2) | 1u << 20).op, Op::Illegal);           // rs2 must be 0
  EXPECT_EQ(decodeInsn(rv::fmadd(1, 2, 3, 4, 0) | 1u << 25).op, Op::Illegal);  // fmt D
  EXPECT_EQ(decodeInsn(rv::jalr(1, 2, 0) | 1u << 12).op, Op::Illegal);
  EXPECT_EQ(decodeInsn(rv::csrrw(1, 0x7c0, 2)).op, Op::Illegal);  // no such CSR
  EXPECT_EQ(decodeInsn(rv::fence()).op, Op::Fence);
  EXPECT_EQ(decodeInsn(0x0000100fu).op, Op::Fence);  // fence.i
  EXPECT_EQ(decodeInsn(0x0000200fu).op, Op::Illegal);
}

// w decodes alike on the full tile and on one without F (hasFpu) or M (hasMulDiv), and legally.
void expectUnchangedWithout(uint32_t w, bool hasFpu, bool hasMulDiv) {
  const DecodedInsn with = decodeInsn(w, true, true);
  const DecodedInsn without = decodeInsn(w, hasFpu, hasMulDiv);
  EXPECT_NE(without.op, Op::Illegal) << std::hex << w;
  EXPECT_EQ(without.op, with.op) << std::hex << w;
  EXPECT_EQ(without.imm, with.imm) << std::hex << w;
  EXPECT_EQ(without.longOp, with.longOp) << std::hex << w;
}

TEST(Decoder, IntegerOnlyTileRejectsEveryFInstruction) {
  // rtl/params.json HAS_FPU = 0 (the ICE40 configuration): tess_decoder's HasFpu = 0.
  using namespace rv;
  const uint32_t fInsns[] = {flw(1, 2, 4),        fsw(1, 2, 4),         fadd(1, 2, 3),
                             fmul(1, 2, 3, 0),    fdiv(1, 2, 3),        fsqrt(1, 2),
                             fmadd(1, 2, 3, 4),   fcvt_w_s(1, 2),       fcvt_s_w(1, 2),
                             fmv_x_w(1, 2),       fmv_w_x(1, 2),        feq(1, 2, 3),
                             fclass(1, 2),        csrr(1, kFflags),     csrrw(1, kFrm, 2),
                             csrrsi(1, kFcsr, 1), csrrci(0, kFflags, 0)};
  for (const uint32_t w : fInsns) {
    EXPECT_NE(decodeInsn(w, true, true).op, Op::Illegal) << std::hex << w;
    EXPECT_EQ(decodeInsn(w, false, true).op, Op::Illegal) << std::hex << w;
  }
  // The integer ISA and the other CSRs are unchanged.
  const uint32_t intInsns[] = {
      addi(1, 2, 3), lw(1, 2, 4),     sw(1, 2, 4),       mulhu(1, 2, 3),
      div(1, 2, 3),  csrr(1, kCycle), csrr(1, kInstret), csrr(1, TESS_CSR_TILE_ID),
      ebreak()};
  for (const uint32_t w : intInsns) expectUnchangedWithout(w, false, true);
}

TEST(Decoder, TileWithoutMRejectsEveryMInstruction) {
  // rtl/params.json HAS_MULDIV = 0 (the ICE40 configuration): tess_decoder's HasMulDiv = 0.
  // Every OP word with funct7 0000001 is illegal, whatever its registers; with or without F.
  using namespace rv;
  const uint32_t mInsns[] = {mul(1, 2, 3), mulh(4, 5, 6), mulhsu(7, 8, 9), mulhu(31, 30, 29),
                             div(1, 2, 3), divu(0, 2, 3), rem(10, 11, 12), remu(1, 0, 0)};
  for (const uint32_t w : mInsns) {
    for (const bool fpu : {true, false}) {
      EXPECT_NE(decodeInsn(w, fpu, true).op, Op::Illegal) << std::hex << w;
      const DecodedInsn d = decodeInsn(w, fpu, false);
      EXPECT_EQ(d.op, Op::Illegal) << std::hex << w;
      EXPECT_FALSE(d.longOp) << std::hex << w;
    }
  }
  // The rest of OP (funct7 0000000 and 0100000), the F instructions and the CSRs are unchanged.
  const uint32_t others[] = {add(1, 2, 3),  sub(1, 2, 3), sra(1, 2, 3),     sltu(1, 2, 3),
                             fdiv(1, 2, 3), fsqrt(1, 2),  csrr(1, kFflags), csrr(1, kCycle)};
  for (const uint32_t w : others) expectUnchangedWithout(w, true, false);
  // Undefined funct7 values of OP stay illegal either way.
  EXPECT_EQ(decodeInsn(add(1, 2, 3) | 0x04000000u, true, true).op, Op::Illegal);
  EXPECT_EQ(decodeInsn(add(1, 2, 3) | 0x04000000u, true, false).op, Op::Illegal);
}

}  // namespace
}  // namespace tessera::model
