// Chip suite: the control registers, sync and exchange (timing, multicast, host syncs, sync break),
// on the default 4-tile chip and on 16 tiles.
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

// ---- control registers, sync, exchange ------------------------------------------------------

TEST_P(ChipSuite, ControlRegistersAfterReset) {
  EXPECT_EQ(device_->readControl(TESS_CR_ID), 0x7E550001u);
  EXPECT_EQ(device_->readControl(TESS_CR_TILES), 4u);
  EXPECT_EQ(device_->readControl(TESS_CR_MEM_BYTES), 65536u);
  EXPECT_EQ(device_->readControl(TESS_CR_CONTEXTS), 6u);
  EXPECT_EQ(device_->readControl(TESS_CR_STATUS), TESS_ST_RESET);
  EXPECT_EQ(device_->readControl(TESS_CR_CYCLE_LO), 0u);
  EXPECT_EQ(device_->readControl(TESS_CR_CYCLE_HI), 0u);
  EXPECT_EQ(device_->readControl(TESS_CR_SYNC_BREAK), 0u);
  EXPECT_EQ(device_->readControl(TESS_CR_TILE_SEL), 0u);
  for (unsigned t = 0; t < 4; ++t) {
    device_->writeControl(TESS_CR_TILE_SEL, t);
    EXPECT_EQ(device_->readControl(TESS_CR_TILE_SEL), t);
    EXPECT_EQ(device_->readControl(TESS_CR_T_ENABLE), 1u);
    EXPECT_EQ(device_->readControl(TESS_CR_T_STATE), 0u);
    EXPECT_EQ(device_->readControl(TESS_CR_T_INSTR_LO), 0u);
  }
  device_->writeControl(TESS_CR_SYNC_BREAK, 1);
  EXPECT_EQ(device_->readControl(TESS_CR_SYNC_BREAK), 1u);
  device_->writeControl(TESS_CR_T_ENABLE, 0);  // tile 3
  EXPECT_EQ(device_->readControl(TESS_CR_T_ENABLE), 0u);
  EXPECT_EQ(device_->readControl(TESS_CR_T_STATE), 1u);  // a disabled tile counts as halted
  // CTRL.RESET: registers back to their reset values, memory kept.
  load(0, 0x100, {0x12345678u});
  device_->writeControl(TESS_CR_CTRL, 1);
  EXPECT_EQ(device_->readControl(TESS_CR_SYNC_BREAK), 0u);
  EXPECT_EQ(device_->readControl(TESS_CR_TILE_SEL), 0u);
  device_->writeControl(TESS_CR_TILE_SEL, 3);
  EXPECT_EQ(device_->readControl(TESS_CR_T_ENABLE), 1u);
  EXPECT_EQ(read(0, 0x100, 1)[0], 0x12345678u);
}

TEST_P(ChipSuite, CountersAndStatusThroughTheRegisters) {
  // Tile t prints one byte and exits with code t: lui, addi, sw CONSOLE, addi, EXIT at h = 24.
  for (unsigned t = 0; t < 4; ++t) {
    load(t, 0,
         {rv::lui(1, kMmio), rv::addi(2, 0, static_cast<int32_t>('a' + t)), rv::sw(2, 1, 4),
          rv::addi(2, 0, static_cast<int32_t>(t)), rv::sw(2, 1, 0)});
  }
  device_->writeControl(TESS_CR_CTRL, 2);  // RUN by hand; run() then just clocks
  EXPECT_EQ(device_->readControl(TESS_CR_STATUS), TESS_ST_RUNNING);
  const RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.cycles, 25u);
  EXPECT_EQ(device_->readControl(TESS_CR_STATUS), TESS_ST_HALTED);
  EXPECT_EQ(device_->readControl(TESS_CR_CYCLE_LO), 25u);
  for (unsigned t = 0; t < 4; ++t) {
    device_->writeControl(TESS_CR_TILE_SEL, t);
    EXPECT_EQ(device_->readControl(TESS_CR_T_STATE), 1u);
    EXPECT_EQ(device_->readControl(TESS_CR_T_EXIT), t);
    EXPECT_EQ(device_->readControl(TESS_CR_T_INSTR_LO), 5u);
    EXPECT_EQ(device_->readControl(TESS_CR_T_IDLE_LO), 20u);  // 25 slots, 5 issued
    EXPECT_EQ(device_->readControl(TESS_CR_T_SYNCWAIT_LO), 0u);
    EXPECT_EQ(device_->readControl(TESS_CR_T_EXCH_LO), 0u);
    EXPECT_EQ(device_->console(t), std::string(1, static_cast<char>('a' + t)));
    const TileStats s = device_->stats(t);
    EXPECT_TRUE(s.halted);
    EXPECT_EQ(s.exitCode, t);
    EXPECT_EQ(s.cycles, 25u);
  }
  // CTRL.RESET clears the consoles and counters.
  device_->writeControl(TESS_CR_CTRL, 1);
  EXPECT_EQ(device_->console(2), "");
  EXPECT_EQ(device_->readControl(TESS_CR_CYCLE_LO), 0u);
  EXPECT_EQ(device_->stats(1).instructions, 0u);
}

TEST_P(ChipSuite, DisabledTilesCountAsHaltedFromCycleZero) {
  for (unsigned t = 0; t < 4; ++t) device_->setTileEnabled(t, false);
  const RunResult r = device_->run(kMaxCycles);
  EXPECT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.cycles, 0u);
  EXPECT_EQ(r.exitCode, 0u);
  const TileStats s = device_->stats(2);
  EXPECT_TRUE(s.halted);
  EXPECT_EQ(s.instructions, 0u);
}

TEST_P(ChipSuite, SyncReleasesEveryTileOnTheSameCycle) {
  // Tile t runs t extra instructions first: its SYNC (descriptor 7) issues at c = 6(2+t), it
  // arrives at 15+6t; A = 33 (tile 3), R = 37; every supervisor resumes at 42 and reads cycle 42.
  for (unsigned t = 0; t < 4; ++t) {
    std::vector<uint32_t> p{rv::lui(1, kMmio)};
    for (unsigned k = 0; k < t; ++k) p.push_back(rv::addi(4, 4, 1));
    for (uint32_t w : {rv::addi(2, 0, 7), rv::sw(2, 1, kSync), rv::csrrs(3, kCycleCsr, 0),
                       rv::sw(3, 0, 0x300), rv::sw(0, 1, 0)}) {
      p.push_back(w);
    }
    load(t, 0, p);
  }
  const RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Halted) << trapText(r.trap);
  EXPECT_EQ(r.cycles, 55u);  // csrr 42, sw 48, EXIT 54
  for (unsigned t = 0; t < 4; ++t) {
    EXPECT_EQ(read(t, 0x300, 1)[0], 42u) << "tile " << t;
    const TileStats s = device_->stats(t);
    EXPECT_EQ(s.syncWaitCycles, 37u - (15 + 6 * t)) << "tile " << t;
    EXPECT_EQ(s.exchangeCycles, 0u);
    EXPECT_EQ(s.instructions, 6u + t);
    EXPECT_EQ(s.idleSlots, 55u - (6 + t));
    EXPECT_TRUE(s.halted);
  }
}

TEST_P(ChipSuite, ExchangeTimingMulticastAndResume) {
  // R = 25 (see exchangeSupervisor). Tile 0: SEND 4 from 0x1000: words at 25, 26, sends at
  // 27..30, END at 31 -> X = 32, exchange 7 cycles, resumes at 36.
  // Tiles 1 and 2 receive bus 0 at 30..33 (bus of 27..30) into 0x2000: DELAY 2 (25, idle 26-27),
  // RECV words 28, 29, receives 30..33. Tile 1: END at 34, X = 35 (10 cycles), resumes at 36.
  // Tile 2: DELAY 2 at 34 (idle 35-36), END at 37, X = 38 (13 cycles), resumes at 42.
  // Tile 3 receives one cycle early: DELAY 1 (25, idle 26), RECV words 27, 28, receives 29..32 =
  // bus of 26..29 = {0, s0, s1, s2}; END at 33, X = 34 (9 cycles), resumes at 36.
  const std::vector<uint32_t> sent{0x11111111u, 0x22222222u, 0x33333333u, 0x44444444u};
  loadAll(0, exchangeSupervisor());
  load(0, 0x1000, sent);
  for (unsigned t = 1; t < 4; ++t) {
    load(t, 0x2000, {0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu});
  }
  load(0, 0x600, {xSend(4), 0x1000, xEnd()});
  load(1, 0x600, {xDelay(2), xRecv(4), xBus(0, 0x2000), xEnd()});
  load(2, 0x600, {xDelay(2), xRecv(4), xBus(0, 0x2000), xDelay(2), xEnd()});
  load(3, 0x600, {xDelay(1), xRecv(4), xBus(0, 0x2000), xEnd()});
  const RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Halted) << trapText(r.trap);
  EXPECT_EQ(r.cycles, 55u);  // tile 2: csrr 42, sw 48, EXIT 54
  const unsigned resume[4] = {36, 36, 42, 36};
  const uint64_t exch[4] = {7, 10, 13, 9};
  for (unsigned t = 0; t < 4; ++t) {
    EXPECT_EQ(read(t, 0x300, 1)[0], resume[t]) << "tile " << t;
    const TileStats s = device_->stats(t);
    EXPECT_EQ(s.exchangeCycles, exch[t]) << "tile " << t;
    EXPECT_EQ(s.syncWaitCycles, 4u);
    EXPECT_EQ(s.cycles, resume[t] + 13u);
  }
  EXPECT_EQ(read(1, 0x2000, 5),
            (std::vector<uint32_t>{sent[0], sent[1], sent[2], sent[3], 0xdeadbeefu}));
  EXPECT_EQ(read(2, 0x2000, 5),
            (std::vector<uint32_t>{sent[0], sent[1], sent[2], sent[3], 0xdeadbeefu}));
  EXPECT_EQ(read(3, 0x2000, 5), (std::vector<uint32_t>{0, sent[0], sent[1], sent[2], 0xdeadbeefu}));
}

TEST_P(ChipSuite, SendReadsWhatAnEarlierReceiveWrote) {
  // A send at s reads memory as at the start of s: it sees receives at s-1 and s-2.
  // Tile 0: SEND 4 from 0x1000 (v0..v3): words 25, 26, sends 27..30; then RECV 3 from bus 3
  //   into 0x3000: words 31, 32, receives 33..35 (bus 3 of 30..32).
  // Tile 1: DELAY 1 (25, idle 26); SENDRECV 3 sending from 0x1ffc, receiving bus 0 into 0x2000:
  //   words 27..29, transfers 30..32: receives v0..v2; sends mem[0x1ffc] = X, then at 31 the v0
  //   received at 30, at 32 the v1 received at 31.
  // Tile 3: the same sending from 0x1ff8: sends Y, Z, then at 32 the v0 received at 30.
  // Tile 2: DELAY 5 (25, idle 26..30); RECV 3 from bus 1 into 0x2000: words 31, 32, receives
  //   33..35 (bus 1 of 30..32).
  constexpr uint32_t X = 0x77777777u, Y = 0x88888888u, Z = 0x99999999u;
  const uint32_t v[4] = {0xcafef00du, 0x0badf00du, 0xfeedfaceu, 0x12345678u};
  loadAll(0, exchangeSupervisor());
  load(0, 0x1000, {v[0], v[1], v[2], v[3]});
  load(1, 0x1ffc, {X});
  load(3, 0x1ff8, {Y, Z});
  load(0, 0x600, {xSend(4), 0x1000, xRecv(3), xBus(3, 0x3000), xEnd()});
  load(1, 0x600, {xDelay(1), xSendRecv(3), 0x1ffc, xBus(0, 0x2000), xEnd()});
  load(3, 0x600, {xDelay(1), xSendRecv(3), 0x1ff8, xBus(0, 0x2000), xEnd()});
  load(2, 0x600, {xDelay(5), xRecv(3), xBus(1, 0x2000), xEnd()});
  const RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Halted) << trapText(r.trap);
  EXPECT_EQ(read(1, 0x2000, 3), (std::vector<uint32_t>{v[0], v[1], v[2]}));
  EXPECT_EQ(read(3, 0x2000, 3), (std::vector<uint32_t>{v[0], v[1], v[2]}));
  EXPECT_EQ(read(2, 0x2000, 3), (std::vector<uint32_t>{X, v[0], v[1]}));
  EXPECT_EQ(read(0, 0x3000, 3), (std::vector<uint32_t>{Y, Z, v[0]}));
}

TEST_P(ChipSuite, HostSyncStopsTheChipUntilReleased) {
  // Every tile: SYNC with descriptor host|5 at 18 -> a = 21, R = 25: the chip stops with 25
  // cycles. The host writes 100+t at 0x400; after the release the supervisor resumes at 30,
  // loads it and exits with it at 36 -> 37 cycles, as if no time had passed.
  loadAll(0, {rv::lui(1, kMmio), rv::lui(2, 0x80000), rv::addi(2, 2, 5), rv::sw(2, 1, kSync),
              rv::lw(3, 0, 0x400), rv::sw(3, 1, 0)});
  RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::HostSync) << trapText(r.trap);
  EXPECT_EQ(r.hostSyncId, 5u);
  EXPECT_EQ(r.cycles, 25u);
  EXPECT_EQ(device_->readControl(TESS_CR_STATUS), (5u << 16) | 0x10u | TESS_ST_HOST_SYNC);
  EXPECT_EQ(device_->readControl(TESS_CR_CYCLE_LO), 25u);
  EXPECT_EQ(device_->stats(0).syncWaitCycles, 4u);
  for (unsigned t = 0; t < 4; ++t) {
    device_->writeControl(TESS_CR_TILE_SEL, t);
    EXPECT_EQ(device_->readControl(TESS_CR_T_STATE), 2u);  // arrived
    load(t, 0x400, {100 + t});
  }
  r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Halted) << trapText(r.trap);
  EXPECT_EQ(r.cycles, 37u);
  EXPECT_EQ(r.exitCode, 100u);
  for (unsigned t = 0; t < 4; ++t) {
    EXPECT_EQ(device_->stats(t).exitCode, 100u + t);
    EXPECT_EQ(device_->stats(t).syncWaitCycles, 4u);
  }
  EXPECT_EQ(device_->readControl(TESS_CR_STATUS), TESS_ST_HALTED);
}

TEST_P(ChipSuite, SyncBreakStopsAtAnInternalSyncWithoutChangingCycles) {
  // As above with descriptor 3 (not a host sync): SYNC_BREAK stops at R = 25 with STATUS bit 4
  // clear; the run then ends at 37 cycles exactly as without the break.
  loadAll(0, {rv::lui(1, kMmio), rv::addi(2, 0, 3), rv::addi(0, 0, 0), rv::sw(2, 1, kSync),
              rv::lw(3, 0, 0x400), rv::sw(3, 1, 0)});
  loadAll(0x400, {9});
  device_->setSyncBreak(true);
  EXPECT_EQ(device_->readControl(TESS_CR_SYNC_BREAK), 1u);
  RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::SyncBreak) << trapText(r.trap);
  EXPECT_EQ(r.hostSyncId, 3u);
  EXPECT_EQ(r.cycles, 25u);
  EXPECT_EQ(device_->readControl(TESS_CR_STATUS), (3u << 16) | TESS_ST_HOST_SYNC);
  r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.cycles, 37u);
  EXPECT_EQ(r.exitCode, 9u);
  // Without the break: no stop, same count.
  device_->reset();
  EXPECT_EQ(device_->readControl(TESS_CR_SYNC_BREAK), 0u);
  r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.cycles, 37u);
}

TEST_P(ChipSuite, RepeatedSuperstepsWithACycleLimitInBetween) {
  // Three supersteps. Program: 0 lui; 4 addi x5 = 3; 8 SYNC; 12 addi x5 -= 1; 16 bne x5, 0, 8;
  // 20 EXIT. A SYNC at c arrives at c+3, R = c+7, the supervisor resumes at c+12 (addi) and
  // branches at c+18, so the SYNCs issue at 12, 36, 60; the last bne at 78 falls through and
  // EXIT issues at 84 -> 85 cycles; sync wait 4 per sync.
  loadAll(0, {rv::lui(1, kMmio), rv::addi(5, 0, 3), rv::sw(0, 1, kSync), rv::addi(5, 5, -1),
              rv::bne(5, 0, -8), rv::sw(0, 1, 0)});
  RunResult r = device_->run(30);
  EXPECT_EQ(r.reason, StopReason::MaxCycles);
  EXPECT_EQ(r.cycles, 30u);
  r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Halted) << trapText(r.trap);
  EXPECT_EQ(r.cycles, 85u);
  EXPECT_EQ(device_->stats(3).syncWaitCycles, 12u);
}

// ---- 16 tiles -------------------------------------------------------------------------------

TEST_P(ChipSuite, RingShiftOnSixteenTiles) {
  // Every tile: SENDRECV 5 from 0x1000, bus t-1 (mod 16), into 0x2000: words at 25..27,
  // transfers at 28..32 receiving the buses of 25..29; the previous tile sent its 0x1000 words
  // at 28, 29 -> received {0, 0, 0, s0, s1}. END at 33 -> X = 34, resume at 36.
  open(GetParam(), 16);
  ASSERT_EQ(tiles(), 16u);
  for (unsigned t = 0; t < 16; ++t) {
    load(t, 0, exchangeSupervisor());
    load(t, 0x600, {xSendRecv(5), 0x1000, xBus((t + 15) % 16, 0x2000), xEnd()});
    load(t, 0x1000, {0x100 * t + 1, 0x100 * t + 2, 0x100 * t + 3, 0x100 * t + 4, 0x100 * t + 5});
  }
  const RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Halted) << trapText(r.trap);
  EXPECT_EQ(r.cycles, 49u);
  for (unsigned t = 0; t < 16; ++t) {
    const unsigned p = (t + 15) % 16;
    EXPECT_EQ(read(t, 0x2000, 5), (std::vector<uint32_t>{0, 0, 0, 0x100 * p + 1, 0x100 * p + 2}))
        << "tile " << t;
    EXPECT_EQ(device_->stats(t).exchangeCycles, 9u);
  }
}

}  // namespace
}  // namespace tessera::chipsuite
