// Integer ISA results per the RISC-V unprivileged spec (RV32I, M), loads/stores, self-modifying
// code, and what the retirement records hold.
#include <gtest/gtest.h>

#include "tile_harness.hpp"

namespace tessera::model::test {
namespace {

using namespace rv;

// Runs prog (followed by an exit) on the supervisor and returns the tile.
TileHarness runProgram(std::vector<uint32_t> prog) {
  prog.push_back(kLoadMmioBase);
  prog.push_back(kExit);
  TileHarness h;
  h.place(0, prog);
  EXPECT_EQ(h.run(), TileState::Halted);
  return h;
}

TEST(Isa, ArithmeticAndShifts) {
  TileHarness h =
      runProgram({addi(a0, zero, -5), addi(a1, zero, 3), sub(a2, a1, a0), sra(a3, a0, a1),
                  srli(a4, a0, 28), srai(a5, a0, 1), slli(a6, a1, 31), slt(a7, a0, a1),
                  sltu(s0, a0, a1), slti(s1, a0, -4), sltiu(t1, a1, -1), xori(t2, a0, -1)});
  EXPECT_EQ(h.tile.xreg(0, a2), 8u);
  EXPECT_EQ(h.tile.xreg(0, a3), 0xffffffffu);
  EXPECT_EQ(h.tile.xreg(0, a4), 0xfu);
  EXPECT_EQ(h.tile.xreg(0, a5), 0xfffffffdu);
  EXPECT_EQ(h.tile.xreg(0, a6), 0x80000000u);
  EXPECT_EQ(h.tile.xreg(0, a7), 1u);
  EXPECT_EQ(h.tile.xreg(0, s0), 0u);
  EXPECT_EQ(h.tile.xreg(0, s1), 1u);
  EXPECT_EQ(h.tile.xreg(0, t1), 1u);
  EXPECT_EQ(h.tile.xreg(0, t2), 4u);
}

TEST(Isa, MultiplyAndDivideCornerCases) {
  // a0 = INT_MIN, a1 = -1, a2 = 0, a3 = 7, a4 = -2
  TileHarness h =
      runProgram({lui(a0, 0x80000), addi(a1, zero, -1), addi(a3, zero, 7), addi(a4, zero, -2),
                  div(s0, a0, a1), rem(s1, a0, a1), div(t1, a3, a2), divu(t2, a3, a2),
                  rem(a5, a3, a2), remu(a6, a3, a2), div(a7, a3, a4), rem(gp, a3, a4),
                  mulh(tp, a0, a0), mulhu(sp, a1, a1), mulhsu(ra, a4, a1), mul(a2, a4, a3)});
  EXPECT_EQ(h.tile.xreg(0, s0), 0x80000000u);  // overflow: quotient = dividend
  EXPECT_EQ(h.tile.xreg(0, s1), 0u);           // overflow: remainder 0
  EXPECT_EQ(h.tile.xreg(0, t1), 0xffffffffu);  // /0: all ones
  EXPECT_EQ(h.tile.xreg(0, t2), 0xffffffffu);
  EXPECT_EQ(h.tile.xreg(0, a5), 7u);  // %0: dividend
  EXPECT_EQ(h.tile.xreg(0, a6), 7u);
  EXPECT_EQ(h.tile.xreg(0, a7), static_cast<uint32_t>(-3));  // rounds toward zero
  EXPECT_EQ(h.tile.xreg(0, gp), 1u);                         // sign of the dividend
  EXPECT_EQ(h.tile.xreg(0, tp), 0x40000000u);                // 2^62 >> 32
  EXPECT_EQ(h.tile.xreg(0, sp), 0xfffffffeu);                // (2^32-1)^2 >> 32
  EXPECT_EQ(h.tile.xreg(0, ra), 0xfffffffeu);                // -2 * (2^32-1) >> 32
  EXPECT_EQ(h.tile.xreg(0, a2), static_cast<uint32_t>(-14));
}

TEST(Isa, LoadsAndStoresAreLittleEndianAndSignExtend) {
  TileHarness h = runProgram({lui(a0, 0x87654), addi(a0, a0, 0x321), sw(a0, zero, 0x400),
                              lb(a1, zero, 0x400), lbu(a2, zero, 0x403), lh(a3, zero, 0x402),
                              lhu(a4, zero, 0x402), addi(a5, zero, -1), sb(a5, zero, 0x404),
                              sh(a5, zero, 0x406), lw(a6, zero, 0x404)});
  EXPECT_EQ(h.word(0x400), 0x87654321u);
  EXPECT_EQ(h.tile.xreg(0, a1), 0x21u);
  EXPECT_EQ(h.tile.xreg(0, a2), 0x87u);
  EXPECT_EQ(h.tile.xreg(0, a3), 0xffff8765u);
  EXPECT_EQ(h.tile.xreg(0, a4), 0x8765u);
  EXPECT_EQ(h.tile.xreg(0, a6), 0xffff00ffu);
}

TEST(Isa, JumpsLinkAndX0StaysZero) {
  TileHarness h =
      runProgram({jal(ra, 8), addi(a0, zero, 1), auipc(a1, 1), addi(zero, zero, 5),
                  addi(t1, zero, 28), jalr(a2, t1, 0), addi(a3, zero, 1), addi(a4, zero, 2)});
  EXPECT_EQ(h.tile.xreg(0, ra), 4u);
  EXPECT_EQ(h.tile.xreg(0, a0), 0u);
  EXPECT_EQ(h.tile.xreg(0, a1), 0x1008u);
  EXPECT_EQ(h.tile.xreg(0, zero), 0u);
  EXPECT_EQ(h.tile.xreg(0, a2), 24u);
  EXPECT_EQ(h.tile.xreg(0, a3), 0u);
  EXPECT_EQ(h.tile.xreg(0, a4), 2u);
}

TEST(Isa, LoopCountsDown) {
  TileHarness h =
      runProgram({addi(a0, zero, 10), addi(a1, a1, 3), addi(a0, a0, -1), bne(a0, zero, -8)});
  EXPECT_EQ(h.tile.xreg(0, a1), 30u);
  EXPECT_EQ(h.tile.stats().contextInstructions[0], 1u + 30 + 2);
}

TEST(Isa, StoreIntoCodeIsExecuted) {
  // Execute the word at 12 once (addi a0, a0, 1), then overwrite it with addi a0, a0, 16 and
  // execute it again: the new instruction must run.
  const uint32_t patched = addi(a0, a0, 16);
  TileHarness h;
  h.place(0, {lui(a1, patched >> 12), addi(a1, a1, static_cast<int32_t>(patched & 0xfff)),
              jal(zero, 4), addi(a0, a0, 1), bne(a2, zero, 16), addi(a2, zero, 1), sw(a1, zero, 12),
              jal(zero, -16), kLoadMmioBase, kExit});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(0, a0), 17u);
}

TEST(Isa, RecordsHoldDestinationOrNone) {
  TileHarness h = runProgram({addi(a0, zero, 9), addi(zero, a0, 1), sw(a0, zero, 0x100),
                              fmv_w_x(3, a0), beq(zero, zero, 4), feq(a1, 3, 3)});
  ASSERT_EQ(h.records.size(), 8u);
  EXPECT_EQ(h.records[0], (RetireRecord{0, 0, 0, 0, addi(a0, zero, 9), DestKind::X, a0, 9}));
  EXPECT_EQ(h.records[1], (RetireRecord{6, 0, 0, 4, addi(zero, a0, 1), DestKind::None, 0, 0}));
  EXPECT_EQ(h.records[2], (RetireRecord{12, 0, 0, 8, sw(a0, zero, 0x100), DestKind::None, 0, 0}));
  EXPECT_EQ(h.records[3], (RetireRecord{18, 0, 0, 12, fmv_w_x(3, a0), DestKind::F, 3, 9}));
  EXPECT_EQ(h.records[4], (RetireRecord{24, 0, 0, 16, beq(zero, zero, 4), DestKind::None, 0, 0}));
  EXPECT_EQ(h.records[5], (RetireRecord{30, 0, 0, 20, feq(a1, 3, 3), DestKind::X, a1, 1}));
}

TEST(Isa, ResetKeepsMemoryAndClearsState) {
  TileHarness h = runProgram({addi(a0, zero, 'A'), lui(t0, 0x80000), sw(a0, t0, 4)});
  EXPECT_EQ(h.tile.console(), "A");
  h.reset();
  EXPECT_EQ(h.tile.console(), "");
  EXPECT_EQ(h.tile.cycles(), 0u);
  EXPECT_EQ(h.tile.xreg(0, a0), 0u);
  EXPECT_EQ(h.tile.stats().instructions, 0u);
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.console(), "A");
}

TEST(Isa, HostWritesIntoRunCodeAreExecuted) {
  // The decode cache keeps the decodings of words a host write leaves unchanged: a program
  // written again runs as before, and a changed word (in an image of the whole memory, or one
  // byte of a short write) runs as changed, after a reset and without one.
  std::vector<uint32_t> prog{addi(a0, a0, 1), addi(a1, a1, 2), kLoadMmioBase, kExit};
  TileHarness h;
  h.place(0, prog);
  ASSERT_EQ(h.run(), TileState::Halted);
  ASSERT_EQ(h.tile.xreg(0, a0), 1u);
  h.place(0, prog);  // the same words: the decodings stay
  h.reset();
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(0, a0), 1u);
  EXPECT_EQ(h.tile.xreg(0, a1), 2u);
  // The whole 64 KiB again, with the first word changed.
  std::vector<uint32_t> image(65536 / 4, 0);
  image[0] = addi(a0, a0, 5);
  for (size_t i = 1; i < prog.size(); ++i) image[i] = prog[i];
  h.place(0, image);
  h.reset();
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(0, a0), 5u);
  // One byte of the second word: addi a1, a1, 2 becomes addi a1, a1, 7 (imm[3:0] in bits
  // 23..20).
  const uint8_t byte = static_cast<uint8_t>(addi(a1, a1, 7) >> 16);
  h.tile.writeMemory(6, std::span<const uint8_t>(&byte, 1));
  h.jitTwin.writeMemory(6, std::span<const uint8_t>(&byte, 1));
  h.reset();
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(0, a1), 7u);
}

}  // namespace
}  // namespace tessera::model::test
