// Chip suite: errors stop every tile and report the tile, context, pc, cause and value: traps, sync
// mismatches, halted tiles at a sync, exchange program errors, host accesses out of range.
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

// ---- errors ---------------------------------------------------------------------------------

TEST_P(ChipSuite, TrapOnOneTileStopsEveryTile) {
  // Tiles 0, 1, 3 count forever; tile 2 executes an illegal word 0 at e = 6. Every tile stops at
  // e: what the others issue at e (their jal) still happens, nothing later; the count is 7.
  loadAll(0, {rv::addi(5, 5, 1), rv::jal(0, -4)});
  load(2, 4, {0});
  const RunResult r = device_->run(kMaxCycles);
  expectTrap(r, 7u,
             {.tile = 2u,
              .context = 0u,
              .pc = 4u,
              .cause = static_cast<unsigned>(TESS_CAUSE_ILLEGAL_INSN),
              .value = 0u});
  EXPECT_EQ(device_->readControl(TESS_CR_STATUS), TESS_ST_ERROR);
  for (unsigned t = 0; t < 4; ++t) {
    EXPECT_EQ(device_->stats(t).instructions, t == 2 ? 1u : 2u) << "tile " << t;
    EXPECT_EQ(device_->stats(t).cycles, 7u) << "tile " << t;
  }
  expectRecovers();
}

TEST_P(ChipSuite, SyncDescriptorMismatch) {
  // Tiles sync at 12 (a = 15 = A) with descriptor 3, tile 2 with 4: error at A = 15 on tile 2,
  // pc of its SYNC (8), value 4; count 16.
  for (unsigned t = 0; t < 4; ++t) {
    load(t, 0,
         {rv::lui(1, kMmio), rv::addi(2, 0, t == 2 ? 4 : 3), rv::sw(2, 1, kSync), rv::sw(0, 1, 0)});
  }
  const RunResult r = device_->run(kMaxCycles);
  expectTrap(r, 16u,
             {.tile = 2u,
              .context = 0u,
              .pc = 8u,
              .cause = static_cast<unsigned>(TESS_CAUSE_SYNC_MISMATCH),
              .value = 4u});
  expectRecovers();
}

TEST_P(ChipSuite, HaltedTileAtSync) {
  // Tiles 0..2 sync at 12 (a = 15); tile 3 exits at h = 6 (halted from h+1 = 7). Detected at
  // max(15, 7) = 15 on tile 0 (lowest arrived), pc 8, value 3 (lowest halted); count 16.
  loadAll(0, {rv::lui(1, kMmio), rv::addi(2, 0, 3), rv::sw(2, 1, kSync), rv::sw(0, 1, 0)});
  load(3, 4, {rv::sw(0, 1, 0)});
  const RunResult r = device_->run(kMaxCycles);
  expectTrap(r, 16u,
             {.tile = 0u,
              .context = 0u,
              .pc = 8u,
              .cause = static_cast<unsigned>(TESS_CAUSE_SYNC_HALTED),
              .value = 3u});
  expectRecovers();
}

TEST_P(ChipSuite, HaltedTileDetectedAfterTheArrivals) {
  // Tiles 0..2 sync at 12 (a = 15); tile 3 runs 4 instructions then exits at h = 30:
  // detected at max(15, 31) = 31 -> count 32, on tile 0, value 3.
  loadAll(0, {rv::lui(1, kMmio), rv::addi(2, 0, 3), rv::sw(2, 1, kSync), rv::sw(0, 1, 0)});
  load(3, 4,
       {rv::addi(4, 0, 1), rv::addi(4, 0, 1), rv::addi(4, 0, 1), rv::addi(4, 0, 1),
        rv::sw(0, 1, 0)});
  const RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.cycles, 32u);
  EXPECT_EQ(r.trap.tile, 0u);
  EXPECT_EQ(r.trap.cause, static_cast<unsigned>(TESS_CAUSE_SYNC_HALTED));
  EXPECT_EQ(r.trap.value, 3u);
  expectRecovers();
}

TEST_P(ChipSuite, SyncWhileAWorkerRunsIsContextMisuse) {
  // Tile 0 starts worker 1 (an endless loop at 0x100) at 12, then SYNCs at 18: cause 24 at
  // e = 18, value = the SYNC address; count 19. Tiles 1..3 are disabled.
  for (unsigned t = 1; t < 4; ++t) device_->setTileEnabled(t, false);
  load(0, 0, {rv::lui(1, kMmio), rv::addi(2, 0, 0x100), rv::sw(2, 1, 0x20), rv::sw(0, 1, kSync)});
  load(0, 0x100, {rv::jal(0, 0)});
  const RunResult r = device_->run(kMaxCycles);
  expectTrap(r, 19u,
             {.tile = 0u,
              .context = 0u,
              .pc = 12u,
              .cause = static_cast<unsigned>(TESS_CAUSE_CONTEXT_MISUSE),
              .value = 0x80000044u});
  expectRecovers();
}

struct XchgErrorCase {
  const char* name;
  std::vector<uint32_t> program;  // tile 1's exchange program at 0x600
  uint64_t cycles;                // e + 1 with R = 25
  uint32_t pc;
  uint32_t cause;
  uint32_t value;
};

// Test names show the case's name, not its bytes.
void PrintTo(const XchgErrorCase& c, std::ostream* os) {
  *os << c.name;
}

class ExchangeErrorSuite : public DeviceHelpers,
                           public ::testing::TestWithParam<std::tuple<std::string, XchgErrorCase>> {
 protected:
  void SetUp() override { openUnlessExcluded(std::get<0>(GetParam())); }
};

TEST_P(ExchangeErrorSuite, StopsTheChipAndWritesNothing) {
  const XchgErrorCase& c = std::get<1>(GetParam());
  loadAll(0, exchangeSupervisor());
  loadAll(0x600, {xEnd()});
  load(1, 0x600, c.program);
  load(1, 0xfffc, {0x5a5a5a5au});
  load(1, 0x0ffc, {0x5a5a5a5au});
  const RunResult r = device_->run(kMaxCycles);
  expectTrap(r, c.cycles,
             {.tile = 1u,
              .context = static_cast<unsigned>(TESS_EXCHANGE_CONTEXT),
              .pc = c.pc,
              .cause = c.cause,
              .value = c.value});
  EXPECT_EQ(device_->readControl(TESS_CR_STATUS), TESS_ST_ERROR);
  EXPECT_EQ(device_->readControl(TESS_CR_ERR_TILE), 1u);
  EXPECT_EQ(device_->readControl(TESS_CR_ERR_CONTEXT), 6u);
  EXPECT_EQ(device_->readControl(TESS_CR_ERR_PC), c.pc);
  EXPECT_EQ(device_->readControl(TESS_CR_ERR_CAUSE), c.cause);
  EXPECT_EQ(device_->readControl(TESS_CR_ERR_VALUE), c.value);
  // Never a silent write elsewhere (e.g. a wrapped address).
  EXPECT_EQ(read(1, 0xfffc, 1)[0], 0x5a5a5a5au);
  EXPECT_EQ(read(1, 0x0ffc, 1)[0], 0x5a5a5a5au);
  expectRecovers();
}

INSTANTIATE_TEST_SUITE_P(
    Errors, ExchangeErrorSuite,
    ::testing::Combine(
        ::testing::ValuesIn(backends::names()),
        ::testing::Values(
            // One-word instructions fail at t (R = 25): count 26; two-word ones at t+1: 27.
            XchgErrorCase{
                "UnknownOpcode", {0x50000000u}, 26, 0x600, TESS_CAUSE_XCHG_INSN, 0x50000000u},
            XchgErrorCase{"DelayZero", {xDelay(0)}, 26, 0x600, TESS_CAUSE_XCHG_INSN, xDelay(0)},
            XchgErrorCase{"EndWithReservedBits", {0x00000001u}, 26, 0x600, TESS_CAUSE_XCHG_INSN, 1},
            XchgErrorCase{"SendReservedBits",
                          {xSend(1) | 0x01000000u, 0x100},
                          27,
                          0x600,
                          TESS_CAUSE_XCHG_INSN,
                          xSend(1) | 0x01000000u},
            XchgErrorCase{"RecvBusOutOfRange",
                          {xRecv(1), xBus(4, 0x100)},
                          27,
                          0x600,
                          TESS_CAUSE_XCHG_INSN,
                          xBus(4, 0x100)},
            XchgErrorCase{
                "SendPastTheEnd", {xSend(2), 0xfffc}, 27, 0x600, TESS_CAUSE_XCHG_ACCESS, 0xfffc},
            XchgErrorCase{"RecvPastTheEnd",
                          {xRecv(2), xBus(0, 0xfffc)},
                          27,
                          0x600,
                          TESS_CAUSE_XCHG_ACCESS,
                          0xfffc},
            XchgErrorCase{"RecvMisaligned",
                          {xRecv(1), xBus(0, 0x0ffe)},
                          27,
                          0x600,
                          TESS_CAUSE_XCHG_ACCESS,
                          0x0ffe},
            // After DELAY 1 (25, idle 26) a SENDRECV starts at 27 and fails at its third word (29).
            XchgErrorCase{"SendRecvSecondRangeBad",
                          {xDelay(1), xSendRecv(1), 0x100, xBus(0, 0x10000)},
                          30,
                          0x604,
                          TESS_CAUSE_XCHG_ACCESS,
                          0x10000},
            // Cases first written for the model.
            XchgErrorCase{
                "SendZeroCount", {xSend(0), 0x400}, 27, 0x600, TESS_CAUSE_XCHG_INSN, xSend(0)},
            XchgErrorCase{
                "ReservedBits", {0x11000001u}, 26, 0x600, TESS_CAUSE_XCHG_INSN, 0x11000001u},
            XchgErrorCase{"RecvOutsideSram",
                          {xRecv(1), xBus(0, 0xffff0)},
                          27,
                          0x600,
                          TESS_CAUSE_XCHG_ACCESS,
                          0xffff0},
            XchgErrorCase{"RecvRunsPastSram",
                          {xRecv(8), xBus(0, 0xfff0)},
                          27,
                          0x600,
                          TESS_CAUSE_XCHG_ACCESS,
                          0xfff0},
            XchgErrorCase{
                "SendUnaligned", {xSend(1), 0x402}, 27, 0x600, TESS_CAUSE_XCHG_ACCESS, 0x402},
            XchgErrorCase{"SendOutsideSram",
                          {xSend(1), 0x10000},
                          27,
                          0x600,
                          TESS_CAUSE_XCHG_ACCESS,
                          0x10000})),
    [](const auto& info) {
      return std::get<0>(info.param) + "_" + std::string(std::get<1>(info.param).name);
    });

TEST_P(ChipSuite, ExchangeProgramRunningOffTheEndOfMemory) {
  // Tile 1's program starts at 0xfff8: DELAY 1 at R = 25 (idle 26), then a SEND whose first
  // word (0xfffc) is fine and whose second (0x10000) lies outside SRAM: error at 28 -> 29.
  loadAll(0, {rv::lui(1, kMmio), rv::lui(2, 0x10), rv::addi(2, 2, -8), rv::sw(2, 1, kXchgProg),
              rv::sw(0, 1, kSync), rv::sw(0, 1, 0)});
  // Tile 1 only: the others have no program. SYNC at 24 -> a = 27, R = 31.
  for (unsigned t : {0u, 2u, 3u}) load(t, 12, {rv::addi(0, 0, 0)});
  load(1, 0xfff8, {xDelay(1), xSend(1)});
  const RunResult r = device_->run(kMaxCycles);
  // R = 31: DELAY 31, idle 32, SEND words 33, 34 -> e = 34
  expectTrap(r, 35u,
             {.tile = 1u,
              .context = 6u,
              .pc = 0xfffcu,
              .cause = static_cast<unsigned>(TESS_CAUSE_XCHG_ACCESS),
              .value = 0x10000u});
  expectRecovers();
}

TEST_P(ChipSuite, HostAccessOutOfRange) {
  std::vector<uint8_t> four(4);
  EXPECT_THROW(device_->readMemory(4, 0, four), Error);
  EXPECT_THROW(device_->writeMemory(0, 0x10000, four), Error);
  EXPECT_THROW(device_->writeMemory(3, 0xfffe, four), Error);
  std::vector<uint8_t> eight(8);
  EXPECT_THROW(device_->readMemory(0, 0x10000 - 4, eight), Error);
  expectRecovers();
}

}  // namespace
}  // namespace tessera::chipsuite
