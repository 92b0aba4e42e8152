// Traps per docs/tile.md "Halting and traps": every cause, its value, the priority order, and
// the halt cycle (cycle count h + 1, the trapping instruction does not retire).
#include <gtest/gtest.h>

#include "tile_harness.hpp"

namespace tessera::model::test {
namespace {

using namespace rv;

struct TrapCase {
  const char* name;
  std::vector<uint32_t> prog;  // at 0; the last instruction traps
  uint32_t cause;
  uint32_t value;
  uint32_t pc;  // 0 = the last instruction of prog
};

void PrintTo(const TrapCase& c, std::ostream* os) {
  *os << c.name;
}

class TrapTest : public ::testing::TestWithParam<TrapCase> {};

TEST_P(TrapTest, RecordsCauseValueAndHaltCycle) {
  const TrapCase& tc = GetParam();
  TileHarness h;
  h.place(0, tc.prog);
  ASSERT_EQ(h.run(), TileState::Trapped);
  const uint32_t pc = tc.pc ? tc.pc : 4 * static_cast<uint32_t>(tc.prog.size() - 1);
  const TrapInfo& t = h.tile.trap();
  EXPECT_EQ(t.context, 0u);
  EXPECT_EQ(t.pc, pc);
  EXPECT_EQ(t.cause, tc.cause);
  EXPECT_EQ(t.value, tc.value);
  // Straight-line programs: the trapping instruction issues at 6 * (its index) and retires not.
  const uint64_t issued = tc.pc ? h.records.size() : tc.prog.size() - 1;
  EXPECT_EQ(h.tile.cycles(), 6 * issued + 1);
  EXPECT_EQ(h.tile.stats().instructions, issued);
  EXPECT_EQ(h.records.size(), issued);
}

const uint32_t kIllegalCsrWrite = csrrw(zero, kCycle, a0);

INSTANTIATE_TEST_SUITE_P(
    Causes, TrapTest,
    ::testing::Values(
        TrapCase{"JalMisaligned", {addi(a0, zero, 1), jal(ra, 6)}, 0, 4 + 6, 0},
        TrapCase{"BranchMisaligned", {beq(zero, zero, 2)}, 0, 2, 0},
        TrapCase{"BranchNotTakenIsFine", {bne(zero, zero, 2), ebreak()}, 3, 4, 0},
        TrapCase{"JalrMisaligned", {addi(a0, zero, 0x102), jalr(ra, a0, 0)}, 0, 0x102, 0},
        TrapCase{"FetchPastEnd", {lui(a0, 0x10), jalr(zero, a0, 0)}, 1, 0x10000, 0x10000},
        TrapCase{
            "FetchFromMmio", {lui(a0, 0x80000), jalr(zero, a0, 0)}, 1, 0x80000000u, 0x80000000u},
        TrapCase{"IllegalAllOnes", {0xffffffffu}, 2, 0xffffffffu, 0},
        TrapCase{"IllegalZero", {0x00000000u}, 2, 0, 0},
        // custom-0 with funct3 111 and the reserved conversion 111: illegal with the unit too
        // (0x0000000b is AMP.LW there, 0x0000700b AMP.CVTHS).
        TrapCase{"IllegalCustom0", {0x0e00700bu}, 2, 0x0e00700bu, 0},
        TrapCase{"IllegalCustom1", {0x0000002bu}, 2, 0x0000002bu, 0},
        TrapCase{"IllegalMret", {0x30200073u}, 2, 0x30200073u, 0},
        TrapCase{"IllegalWfi", {0x10500073u}, 2, 0x10500073u, 0},
        TrapCase{"IllegalTimeCsr", {csrr(a0, kTime)}, 2, csrr(a0, kTime), 0},
        TrapCase{"IllegalCsrWriteReadOnly", {kIllegalCsrWrite}, 2, kIllegalCsrWrite, 0},
        TrapCase{"IllegalCsrSetReadOnly", {csrrsi(a0, kInstret, 1)}, 2, csrrsi(a0, kInstret, 1), 0},
        TrapCase{"IllegalStaticRm5", {fadd(1, 2, 3, 5)}, 2, fadd(1, 2, 3, 5), 0},
        TrapCase{"IllegalStaticRm6", {fmul(1, 2, 3, 6)}, 2, fmul(1, 2, 3, 6), 0},
        TrapCase{"IllegalDynamicRm", {csrrwi(zero, kFrm, 5), fadd(1, 2, 3)}, 2, fadd(1, 2, 3), 0},
        TrapCase{
            "IllegalDynamicRmLongOp", {csrrwi(zero, kFrm, 7), fdiv(1, 2, 3)}, 2, fdiv(1, 2, 3), 0},
        TrapCase{"IllegalFld", {i(0, a0, 3, 1, 0x07)}, 2, i(0, a0, 3, 1, 0x07), 0},
        TrapCase{"IllegalFaddD", {fop(0x01, 1, 2, 3, 0)}, 2, fop(0x01, 1, 2, 3, 0), 0},
        TrapCase{
            "IllegalSlliBit25", {slli(a0, a0, 1) | 1u << 25}, 2, slli(a0, a0, 1) | 1u << 25, 0},
        TrapCase{"Ebreak", {addi(a0, zero, 1), ebreak()}, 3, 4, 0},
        TrapCase{"Ecall", {ecall()}, 11, 0, 0},
        TrapCase{"LoadWordMisaligned", {lw(a0, zero, 2)}, 4, 2, 0},
        TrapCase{"LoadHalfMisaligned", {lh(a0, zero, 1)}, 4, 1, 0},
        TrapCase{
            "LoadMisalignedBeatsAccessFault", {kLoadMmioBase, lhu(a0, t0, 1)}, 4, 0x80000001u, 0},
        TrapCase{"LoadPastEnd", {lui(a0, 0x10), lw(a1, a0, 0)}, 5, 0x10000, 0},
        TrapCase{
            "LoadByteLastValid", {lui(a0, 0x10), lb(a1, a0, -1), lb(a1, a0, 0)}, 5, 0x10000, 0},
        TrapCase{"LoadNegative", {lw(a1, zero, -4)}, 5, 0xfffffffcu, 0},
        TrapCase{"LoadByteMmio", {kLoadMmioBase, lb(a0, t0, 0x10)}, 5, 0x80000010u, 0},
        TrapCase{"LoadWriteOnlyMmio", {kLoadMmioBase, lw(a0, t0, 0)}, 5, 0x80000000u, 0},
        TrapCase{"LoadUnmappedMmio", {kLoadMmioBase, lw(a0, t0, 0x100)}, 5, 0x80000100u, 0},
        TrapCase{"LoadAfterMmioPage", {lui(t0, 0x80001), lw(a0, t0, 0)}, 5, 0x80001000u, 0},
        TrapCase{"StoreWordMisaligned", {sw(a0, zero, 6)}, 6, 6, 0},
        TrapCase{"StoreHalfMisaligned", {sh(a0, zero, 3)}, 6, 3, 0},
        TrapCase{"StorePastEnd", {lui(a0, 0x10), sh(a1, a0, 0)}, 7, 0x10000, 0},
        TrapCase{"StoreByteMmio", {kLoadMmioBase, sb(a0, t0, 4)}, 7, 0x80000004u, 0},
        TrapCase{"StoreReadOnlyMmio", {kLoadMmioBase, sw(a0, t0, 0x38)}, 7, 0x80000038u, 0},
        TrapCase{"StoreUnmappedMmio", {kLoadMmioBase, sw(a0, t0, 0x34)}, 7, 0x80000034u, 0},
        TrapCase{"FswPastEnd", {lui(a0, 0x10), fsw(1, a0, 0)}, 7, 0x10000, 0},
        TrapCase{"DoneBySupervisor", {kLoadMmioBase, sw(zero, t0, 0xc)}, 24, 0x8000000cu, 0}),
    [](const ::testing::TestParamInfo<TrapCase>& info) { return std::string(info.param.name); });

TEST(Trap, RunWithUnalignedPcTrapsAtTheWorkersFirstFetch) {
  // RUN of worker 1 issues at cycle 12; the RUN store itself is fine. Worker 1's first slot at or
  // after 15 is 19, where its fetch from 0x102 traps (cause 0, value = pc). The supervisor's jal
  // at 18 still retires; the cycle count is 19 + 1.
  TileHarness h;
  h.place(0, {kLoadMmioBase, addi(a0, zero, 0x102), sw(a0, t0, 0x20), jal(zero, 0)});
  ASSERT_EQ(h.run(), TileState::Trapped);
  const TrapInfo& t = h.tile.trap();
  EXPECT_EQ(t.context, 1u);
  EXPECT_EQ(t.pc, 0x102u);
  EXPECT_EQ(t.cause, 0u);
  EXPECT_EQ(t.value, 0x102u);
  EXPECT_EQ(h.tile.cycles(), 20u);
  EXPECT_EQ(h.tile.stats().instructions, 4u);
}

// Runs {first, second, bad} on a tile of the given configuration and checks that the third word
// traps as an illegal instruction (cause 2, value = the word) in its EX, after the two before it.
void expectIllegalThirdWord(TileModel& tile, uint32_t first, uint32_t second, uint32_t bad) {
  const std::vector<uint32_t> prog{first, second, bad};
  std::vector<uint8_t> bytes(prog.size() * 4);
  std::memcpy(bytes.data(), prog.data(), bytes.size());
  tile.writeMemory(0, bytes);
  ASSERT_EQ(tile.run(100000), TileState::Trapped) << std::hex << bad;
  EXPECT_EQ(tile.trap().cause, uint32_t{TESS_CAUSE_ILLEGAL_INSN});
  EXPECT_EQ(tile.trap().pc, 8u);
  EXPECT_EQ(tile.trap().value, bad);
  EXPECT_EQ(tile.cycles(), 6u * 2 + 1);
  EXPECT_EQ(tile.stats().instructions, 2u);
}

// A tile without the F extension, so without the matrix unit either (it needs the FPU).
TileConfig integerOnly() {
  TileConfig config{0, 1, 4096, false};
  config.hasMatrixUnit = false;
  return config;
}

TEST(Trap, IntegerOnlyTileTrapsOnFInstructions) {
  // HAS_FPU = 0: an F instruction or an fcsr access traps as an illegal instruction (cause 2,
  // value = the word) in its EX, exactly where any other illegal word would.
  for (const uint32_t bad : {flw(1, a0, 0), fadd(1, 2, 3), fmadd(1, 2, 3, 4), fsqrt(1, 2),
                             csrr(a1, kFcsr), csrrwi(zero, kFrm, 1)}) {
    TileModel tile{integerOnly()};
    expectIllegalThirdWord(tile, addi(a0, zero, 0x100), addi(a1, zero, 1), bad);
  }
}

TEST(Trap, TileWithoutMTrapsOnMInstructions) {
  // HAS_MULDIV = 0: an M instruction traps as an illegal instruction (cause 2, value = the word)
  // in its EX, on its first pass: a divide is no long op there.
  for (const uint32_t bad :
       {mul(a2, a0, a1), mulh(a2, a0, a1), mulhsu(a2, a0, a1), mulhu(a2, a0, a1), div(a2, a0, a1),
        divu(a2, a0, a1), rem(a2, a0, a1), remu(a2, a0, a1)}) {
    for (const bool fpu : {true, false}) {
      TileConfig config = fpu ? TileConfig{0, 1, 4096, true} : integerOnly();
      config.hasMulDiv = false;
      TileModel tile{config};
      expectIllegalThirdWord(tile, addi(a0, zero, 100), addi(a1, zero, 7), bad);
      EXPECT_EQ(tile.xreg(0, a2), 0u);
    }
  }
}

TEST(Trap, IntegerOnlyTileRunsIntegerCodeWithTheSameCycles) {
  // Same program, same cycles and registers with and without the F extension (a divide makes
  // a long op, a CSR read the cycle counter).
  const std::vector<uint32_t> prog{addi(a0, zero, 100),
                                   addi(a1, zero, 7),
                                   div(a2, a0, a1),
                                   mul(a3, a2, a1),
                                   csrr(a4, kCycle),
                                   kLoadMmioBase,
                                   kExit};
  std::vector<uint8_t> bytes(prog.size() * 4);
  std::memcpy(bytes.data(), prog.data(), bytes.size());
  TileModel withFpu{TileConfig{0, 1, 4096, true}};
  TileModel intOnly{integerOnly()};
  withFpu.writeMemory(0, bytes);
  intOnly.writeMemory(0, bytes);
  ASSERT_EQ(withFpu.run(100000), TileState::Halted);
  ASSERT_EQ(intOnly.run(100000), TileState::Halted);
  EXPECT_EQ(intOnly.cycles(), withFpu.cycles());
  EXPECT_EQ(intOnly.xreg(0, a2), 14u);
  EXPECT_EQ(intOnly.xreg(0, a3), 98u);
  EXPECT_EQ(intOnly.xreg(0, a4), withFpu.xreg(0, a4));
}

TEST(Trap, FetchFaultWinsOverEverything) {
  // Running off the end of memory: the word after the last one does not exist.
  TileHarness h;
  h.place(0, {lui(a0, 0x10), addi(a0, a0, -4), jalr(zero, a0, 0)});
  h.place(0xfffc, {addi(a1, zero, 1)});
  ASSERT_EQ(h.run(), TileState::Trapped);
  EXPECT_EQ(h.tile.trap().cause, 1u);
  EXPECT_EQ(h.tile.trap().pc, 0x10000u);
  EXPECT_EQ(h.tile.trap().value, 0x10000u);
  EXPECT_EQ(h.tile.xreg(0, a1), 1u);
}

TEST(Trap, WorkerTrapReportsItsContext) {
  TileHarness h;
  h.place(0, {kLoadMmioBase, addi(t1, zero, 0x100), sw(t1, t0, 0x20 + 4 * 2),  // RUN 3 at 12
              sw(zero, t0, 0x8)});
  h.place(0x100, {addi(a0, zero, 1), ecall()});
  ASSERT_EQ(h.run(), TileState::Trapped);
  EXPECT_EQ(h.tile.trap().context, 3u);
  EXPECT_EQ(h.tile.trap().pc, 0x104u);
  EXPECT_EQ(h.tile.trap().cause, 11u);
  // Worker 3 first issues at 15, ecall at 21.
  EXPECT_EQ(h.tile.cycles(), 22u);
}

}  // namespace
}  // namespace tessera::model::test
