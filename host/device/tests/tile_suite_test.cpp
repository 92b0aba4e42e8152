// Chip suite, one tile: instruction timing, long ops, workers, traps, host access, cycle limits and
// floating point on tile 0 of the default chip (the other tiles disabled).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "chip_programs.hpp"
#include "chip_suite.hpp"

namespace tessera::chipsuite {
namespace {

// ---- one tile: instruction timing, long ops, workers, traps ----------------------------------

TEST_P(TileSuite, ExitCodeAndThreeInstructionTiming) {
  load(0, {rv::lui(1, kMmio), rv::addi(2, 0, 42), rv::sw(2, 1, 0)});
  const RunResult r = run();
  EXPECT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.exitCode, 42u);
  // Context 0 issues at 0, 6, 12; the EXIT store issued at h = 12 gives h + 1 cycles.
  EXPECT_EQ(r.cycles, 13u);
  const TileStats s = device_->stats(0);
  EXPECT_EQ(s.cycles, 13u);
  EXPECT_EQ(s.instructions, 3u);
  EXPECT_EQ(s.contextInstructions[0], 3u);
  EXPECT_EQ(s.idleSlots, 10u);  // 13 slots, 3 issued
  ASSERT_EQ(retired_.size(), 3u);
  EXPECT_EQ(retired_[0],
            (RetireRecord{0, 0, 0, 0, rv::lui(1, kMmio), DestKind::X, 1, 0x80000000u}));
  EXPECT_EQ(retired_[1], (RetireRecord{6, 0, 0, 4, rv::addi(2, 0, 42), DestKind::X, 2, 42}));
  EXPECT_EQ(retired_[2], (RetireRecord{12, 0, 0, 8, rv::sw(2, 1, 0), DestKind::None, 0, 0}));
}

TEST_P(TileSuite, ConsoleBytes) {
  load(0, {rv::lui(1, kMmio), rv::addi(2, 0, 'H'), rv::sw(2, 1, 4), rv::addi(2, 0, 'i'),
           rv::sw(2, 1, 4), rv::addi(2, 0, '\n'), rv::sw(2, 1, 4), rv::sw(0, 1, 0)});
  const RunResult r = run(false);
  EXPECT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.exitCode, 0u);
  EXPECT_EQ(r.cycles, 6u * 7 + 1);
  EXPECT_EQ(device_->console(0), "Hi\n");
}

TEST_P(TileSuite, LoopCycleCount) {
  // x6 += 3 ten times: 2 + 10 * 3 + 1 = 33 instructions on context 0 -> 6 * 32 + 1 cycles.
  load(0, {rv::lui(1, kMmio), rv::addi(5, 0, 10), rv::addi(6, 6, 3), rv::addi(5, 5, -1),
           rv::bne(5, 0, -8), rv::sw(6, 1, 0)});
  const RunResult r = run(false);
  EXPECT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.exitCode, 30u);
  EXPECT_EQ(r.cycles, 193u);
  EXPECT_EQ(device_->stats(0).instructions, 33u);
}

TEST_P(TileSuite, LongOpsTakeEightRounds) {
  // Issue cycles: lui 0, addi 6, addi 12, div 18 (retires 18 + 42 = 60), rem 66 (retires 108),
  // divu 114 (retires 156), rem 162 (retires 204), EXIT 210 -> 211 cycles.
  load(0, {rv::lui(1, kMmio), rv::addi(2, 0, -7), rv::addi(3, 0, 2), rv::div(4, 2, 3),
           rv::rem(5, 2, 3), rv::divu(7, 2, 0), rv::rem(8, 2, 0), rv::sw(4, 1, 0)});
  const RunResult r = run();
  EXPECT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.cycles, 211u);
  EXPECT_EQ(r.exitCode, static_cast<uint32_t>(-3));  // -7 / 2 truncates toward zero
  ASSERT_EQ(retired_.size(), 8u);
  EXPECT_EQ(retired_[3], (RetireRecord{60, 0, 0, 12, rv::div(4, 2, 3), DestKind::X, 4,
                                       static_cast<uint32_t>(-3)}));
  EXPECT_EQ(retired_[4], (RetireRecord{108, 0, 0, 16, rv::rem(5, 2, 3), DestKind::X, 5,
                                       static_cast<uint32_t>(-1)}));
  // Division by zero: quotient all ones, remainder the dividend.
  EXPECT_EQ(retired_[5],
            (RetireRecord{156, 0, 0, 20, rv::divu(7, 2, 0), DestKind::X, 7, 0xffffffffu}));
  EXPECT_EQ(retired_[6], (RetireRecord{204, 0, 0, 24, rv::rem(8, 2, 0), DestKind::X, 8,
                                       static_cast<uint32_t>(-7)}));
  // 4 ordinary instructions + 4 long ops x 8 passes occupy 36 of 211 slots.
  EXPECT_EQ(device_->stats(0).idleSlots, 211u - 36u);
}

TEST_P(TileSuite, DivisionEdgeCases) {
  // INT_MIN / -1 = INT_MIN, rem 0 (RISC-V overflow rule); DIVU/REMU of large values.
  load(0, {rv::lui(2, 0x80000), rv::addi(3, 0, -1), rv::div(4, 2, 3), rv::rem(5, 2, 3),
           rv::divu(6, 3, 2), rv::remu(7, 3, 2), rv::lui(1, kMmio), rv::sw(0, 1, 0)});
  ASSERT_EQ(run().reason, StopReason::Halted);
  ASSERT_EQ(retired_.size(), 8u);
  EXPECT_EQ(retired_[2].value, 0x80000000u);
  EXPECT_EQ(retired_[3].value, 0u);
  EXPECT_EQ(retired_[4].value, 1u);           // 0xffffffff / 0x80000000
  EXPECT_EQ(retired_[5].value, 0x7fffffffu);  // 0xffffffff % 0x80000000
}

TEST_P(TileSuite, MultiplyAndSubwordMemory) {
  // mul/mulh of -3 * 0x40000001; a byte store then sign- and zero-extending loads.
  load(0, {rv::addi(2, 0, -3), rv::lui(3, 0x40000), rv::addi(3, 3, 1), rv::mul(4, 2, 3),
           rv::mulh(5, 2, 3), rv::addi(6, 0, 0x80), rv::sb(6, 0, 0x301), rv::lb(7, 0, 0x301),
           rv::lhu(8, 0, 0x300), rv::lui(1, kMmio), rv::sw(0, 1, 0)});
  load(0x300, {0x11223344u});
  ASSERT_EQ(run().reason, StopReason::Halted);
  ASSERT_EQ(retired_.size(), 11u);
  // -3 * 0x40000001 = -0xC0000003 = 0xFFFFFFFF_3FFFFFFD
  EXPECT_EQ(retired_[3].value, 0x3ffffffdu);
  EXPECT_EQ(retired_[4].value, 0xffffffffu);
  EXPECT_EQ(retired_[7].value, 0xffffff80u);
  EXPECT_EQ(retired_[8].value, 0x8044u);
  std::vector<uint8_t> word(4);
  device_->readMemory(0, 0x300, word);
  EXPECT_EQ(word, (std::vector<uint8_t>{0x44, 0x80, 0x22, 0x11}));
}

TEST_P(TileSuite, WorkerStartedByRunAndAwaitedByWait) {
  // Supervisor: RUN_ARG = 5 (12), RUN 1 at 0x100 (24), WAIT (30), then load the worker's result.
  load(0, {rv::lui(1, kMmio), rv::addi(2, 0, 5), rv::sw(2, 1, 0x10), rv::addi(3, 0, 0x100),
           rv::sw(3, 1, 0x20), rv::sw(0, 1, 0x08), rv::lw(4, 0, 0x200), rv::sw(4, 1, 0)});
  // Worker 1: first slot at or after 24 + 3 is 31; issues 31, 37, 43, 49, DONE at 55.
  load(0x100, {rv::lui(1, kMmio), rv::add(5, 10, 10), rv::add(5, 5, 10), rv::sw(5, 0, 0x200),
               rv::sw(0, 1, 0x0c)});
  const RunResult r = run();
  EXPECT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.exitCode, 15u);
  // DONE at 55 -> idle from 58; supervisor slots 36..54 are lost, lw at 60, EXIT at 66.
  EXPECT_EQ(r.cycles, 67u);
  const TileStats s = device_->stats(0);
  EXPECT_EQ(s.contextInstructions[0], 8u);
  EXPECT_EQ(s.contextInstructions[1], 5u);
  EXPECT_EQ(s.idleSlots, 67u - 13u);
  ASSERT_FALSE(retired_.empty());
  EXPECT_EQ(retired_[3].cycle, 18u);
  bool sawWorkerStart = false;
  for (const RetireRecord& rec : retired_) {
    if (rec.context == 1 && rec.pc == 0x100) {
      EXPECT_EQ(rec.cycle, 31u);
      sawWorkerStart = true;
    }
    if (rec.context == 0 && rec.pc == 24) {
      EXPECT_EQ(rec.cycle, 60u);
    }
  }
  EXPECT_TRUE(sawWorkerStart);
}

struct TrapCase {
  const char* name;
  std::vector<uint32_t> program;
  uint32_t pc;
  uint32_t cause;
  uint32_t value;
  unsigned before;  ///< instructions context 0 issues before the trapping one
};

void PrintTo(const TrapCase& c, std::ostream* os) {
  *os << c.name;
}

class TrapSuite : public DeviceHelpers,
                  public ::testing::TestWithParam<std::tuple<std::string, TrapCase>> {
 protected:
  void SetUp() override {
    if (!openUnlessExcluded(std::get<0>(GetParam()))) return;
    for (unsigned t = 1; t < tiles(); ++t) device_->setTileEnabled(t, false);
  }
};

TEST_P(TrapSuite, RecordsContextPcCauseValue) {
  const TrapCase& t = std::get<1>(GetParam());
  load(0, 0, t.program);
  const RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.trap.tile, 0u);
  EXPECT_EQ(r.trap.context, 0u);
  EXPECT_EQ(r.trap.pc, t.pc);
  EXPECT_EQ(r.trap.cause, t.cause);
  EXPECT_EQ(r.trap.value, t.value);
  // The trapping instruction issued at h = 6 * before does not retire; all before it do.
  EXPECT_EQ(r.cycles, 6u * t.before + 1);
  EXPECT_EQ(device_->stats(0).instructions, t.before);
  // A second run of a halted tile reports the same stop.
  EXPECT_EQ(device_->run(10).reason, StopReason::Trap);
}

INSTANTIATE_TEST_SUITE_P(
    Traps, TrapSuite,
    ::testing::Combine(
        ::testing::ValuesIn(backends::names()),
        ::testing::Values(
            // The conversion 111 of custom-0's funct3 111 is reserved (docs/tile.md, "Matrix
            // unit"): illegal with or without the unit (0x0000000b is AMP.LW on a tile with it).
            TrapCase{"IllegalCustom0",
                     {rv::addi(1, 0, 1), 0x0e00700bu},
                     4,
                     TESS_CAUSE_ILLEGAL_INSN,
                     0x0e00700bu,
                     1},
            TrapCase{"Ecall",
                     {rv::addi(1, 0, 1), rv::addi(1, 0, 2), rv::ecall()},
                     8,
                     TESS_CAUSE_ECALL,
                     8,
                     2},
            TrapCase{"WriteReadOnlyCsr",
                     {rv::csrrw(1, 0xc00, 1)},
                     0,
                     TESS_CAUSE_ILLEGAL_INSN,
                     rv::csrrw(1, 0xc00, 1),
                     0},
            TrapCase{"LoadMisaligned",
                     {rv::addi(2, 0, 0x102), rv::lw(3, 2, 0)},
                     4,
                     TESS_CAUSE_LOAD_MISALIGNED,
                     0x102,
                     1},
            TrapCase{"StoreOutsideMemory",
                     {rv::lui(2, 0x10), rv::sw(0, 2, 0)},
                     4,
                     TESS_CAUSE_STORE_ACCESS,
                     0x10000,
                     1},
            TrapCase{"JumpMisaligned", {rv::jal(0, 6)}, 0, TESS_CAUSE_INSN_MISALIGNED, 6, 0},
            TrapCase{"FetchOutsideMemory",
                     {rv::lui(2, 0x10), rv::i(0, 2, 0, 0, 0x67)},
                     0x10000,
                     TESS_CAUSE_INSN_ACCESS,
                     0x10000,
                     2},
            TrapCase{"DoneBySupervisor",
                     {rv::lui(1, kMmio), rv::sw(0, 1, 0x0c)},
                     4,
                     TESS_CAUSE_CONTEXT_MISUSE,
                     0x8000000cu,
                     1})),
    [](const auto& info) {
      return std::get<0>(info.param) + "_" + std::string(std::get<1>(info.param).name);
    });

TEST_P(TileSuite, HostAccessOutsideMemoryThrows) {
  std::vector<uint8_t> four(4);
  EXPECT_THROW(device_->writeMemory(0, TESS_TILE_MEM_BYTES - 2, four), Error);
  EXPECT_THROW(device_->readMemory(0, TESS_TILE_MEM_BYTES, four), Error);
  EXPECT_THROW(device_->readMemory(4, 0, four), Error);
  try {
    device_->writeMemory(0, 0xfffffffeu, four);
    FAIL() << "expected tessera::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tile 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0xfffffffe"), std::string::npos) << e.what();
  }
}

TEST_P(TileSuite, PartialWordHostWritesKeepNeighbours) {
  load(0x40, {0xaaaaaaaau, 0xbbbbbbbbu, 0xccccccccu});
  const std::vector<uint8_t> bytes{1, 2, 3, 4, 5};
  device_->writeMemory(0, 0x43, bytes);
  std::vector<uint8_t> back(12);
  device_->readMemory(0, 0x40, back);
  EXPECT_EQ(back, (std::vector<uint8_t>{0xaa, 0xaa, 0xaa, 1, 2, 3, 4, 5, 0xcc, 0xcc, 0xcc, 0xcc}));
}

TEST_P(TileSuite, RunStopsAtTheCycleLimitAndResumes) {
  // An endless loop until the supervisor counts to 100, interrupted every 50 cycles.
  load(0, {rv::lui(1, kMmio), rv::addi(5, 5, 1), rv::addi(6, 0, 100), rv::bne(5, 6, -8),
           rv::sw(5, 1, 0)});
  RunResult r = device_->run(50);
  EXPECT_EQ(r.reason, StopReason::MaxCycles);
  EXPECT_EQ(r.cycles, 50u);
  std::vector<uint8_t> word(4);
  device_->readMemory(0, 0, word);  // the host port works while paused
  while (r.reason == StopReason::MaxCycles) r = device_->run(50);
  EXPECT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.exitCode, 100u);
  // 1 + 100 * 3 + 1 = 302 instructions -> 6 * 301 + 1 cycles, pauses included.
  EXPECT_EQ(r.cycles, 1807u);
}

// A cycle limit at or past the end of a run gives the end itself, on every backend (docs/tile.md,
// "Stopping at a cycle limit"): the RTL finds a halt or error two cycles after it and a sync stop
// due at the limit one cycle after it, and looks ahead rather than pausing. Limits below the end
// pause with the count at the limit; the next run reaches the same end.
TEST_P(ChipSuite, LimitsAroundTheEndGiveTheEndItself) {
  struct Case {
    const char* what;
    std::vector<uint32_t> program;  // on every tile
    StopReason reason;
    uint64_t end;
  };
  const std::vector<Case> cases = {
      // EXIT issued at h = 12: count 13 (ExitCodeAndThreeInstructionTiming).
      {"halt", {rv::lui(1, kMmio), rv::addi(2, 0, 42), rv::sw(2, 1, 0)}, StopReason::Halted, 13},
      // Illegal word 0 at e = 6: count 7 (TrapOnOneTileStopsEveryTile).
      {"trap", {rv::addi(5, 5, 1), 0}, StopReason::Trap, 7},
      // Host sync released at R = 25 (HostSyncStopsTheChipUntilReleased).
      {"host sync",
       {rv::lui(1, kMmio), rv::lui(2, 0x80000), rv::addi(2, 2, 5), rv::sw(2, 1, kSync),
        rv::sw(0, 1, 0)},
       StopReason::HostSync,
       25},
  };
  for (const Case& c : cases) {
    for (uint64_t limit = c.end - 2; limit <= c.end + 2; ++limit) {
      SCOPED_TRACE(std::string(c.what) + ", limit " + std::to_string(limit));
      device_->reset();
      loadAll(0, c.program);
      std::vector<RetireRecord> records;
      device_->setRetireSink([&](const RetireRecord& r) { records.push_back(r); });
      RunResult r = device_->run(limit);
      if (limit < c.end) {
        EXPECT_EQ(r.reason, StopReason::MaxCycles);
        EXPECT_EQ(r.cycles, limit);
        r = device_->run(kMaxCycles);
      }
      EXPECT_EQ(r.reason, c.reason) << trapText(r.trap);
      EXPECT_EQ(r.cycles, c.end);
      EXPECT_EQ(device_->readControl(TESS_CR_CYCLE_LO), c.end);
      if (c.reason == StopReason::Halted) {
        EXPECT_EQ(r.exitCode, 42u);
        EXPECT_EQ(records.size(), 3u * tiles());  // every retirement reported once
      }
      device_->setRetireSink({});
    }
  }
}

TEST_P(TileSuite, FloatingPointAddConvertAndFlags) {
  // 1.5 + 2.25 = 3.75 exactly; FCVT.W.S with RNE gives 4 and raises NX only.
  load(0, {rv::lui(2, 0x3fc00), rv::fmv_w_x(1, 2), rv::lui(3, 0x40100), rv::fmv_w_x(2, 3),
           rv::fadd(3, 1, 2, 0), rv::fcvt_w_s(4, 3, 0), rv::csrrs(5, 0x001, 0),
           rv::fdiv(4, 1, 2, 7), rv::fmv_x_w(6, 4), rv::lui(1, kMmio), rv::sw(4, 1, 0)});
  const RunResult r = run();
  ASSERT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.exitCode, 4u);
  ASSERT_EQ(retired_.size(), 11u);
  EXPECT_EQ(retired_[4],
            (RetireRecord{24, 0, 0, 16, rv::fadd(3, 1, 2, 0), DestKind::F, 3, 0x40700000u}));
  EXPECT_EQ(retired_[5].value, 4u);
  EXPECT_EQ(retired_[6].value, 1u);  // fflags = NX
  // fdiv issued at 42 retires at 84: 1.5 / 2.25 = 2/3 rounded to nearest = 0x3f2aaaab.
  EXPECT_EQ(retired_[7],
            (RetireRecord{84, 0, 0, 28, rv::fdiv(4, 1, 2, 7), DestKind::F, 4, 0x3f2aaaabu}));
  EXPECT_EQ(retired_[8].value, 0x3f2aaaabu);
  EXPECT_EQ(r.cycles, 6u * 10 + 42 + 1);
}

}  // namespace
}  // namespace tessera::chipsuite
