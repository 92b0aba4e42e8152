// Chip suite: scenarios first written for the model, on 2 or 3 tiles of the default chip (the
// others disabled): host release through CTRL, exchange timing, descriptors, rings, pauses.
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

// ---- scenarios first written for the model (2 or 3 tiles: the others disabled) --------------
// Register-named encodings: t0 holds the MMIO base. A program records what it computed in its
// exit code or in memory; disabled tiles count as halted and skip syncs, so a 4-tile chip with
// tiles disabled times exactly like a smaller one (docs/chip.md, T_ENABLE).
namespace m {
using namespace rv;
using chipprog::exitWith;
using chipprog::syncWith;
using chipprog::xchgProgFrom;
using chipprog::xc::prog;
using chipprog::xc::recv;
using chipprog::xc::send;
using chipprog::xc::sendrecv;
constexpr uint32_t kMmioT0 = chipprog::kMmio;
constexpr int32_t kXchgOff = static_cast<int32_t>(TESS_MMIO_XCHG_PROG - TESS_MMIO_BASE);
// Supervisor: name the exchange program at 0x300 (or none), SYNC 0, read cycle and XCHG_PROG,
// EXIT with XCHG_PROG. Issue cycles: 0, 6, 12, 18 (SYNC, arrival 21), then from the resume slot
// r: csrr at r, lw at r + 6, EXIT at r + 12, so the tile's cycle count is r + 13.
std::vector<uint32_t> exchangeThenExit(bool withProgram) {
  return {kMmioT0,
          addi(a0, zero, withProgram ? 0x300 : 0),
          xchgProgFrom(a0),
          syncWith(zero),
          csrr(a1, kCycleCsr),
          lw(a2, t0, kXchgOff),
          exitWith(a2)};
}
// SYNC with descriptor desc at 18 (arrival 21, R = 25), then EXIT with mem[0x200].
std::vector<uint32_t> syncThenExitWithWord(uint32_t desc) {
  return {kMmioT0,      lui(a0, desc >> 12), addi(a0, a0, static_cast<int32_t>(desc & 0x7ff)),
          syncWith(a0), lw(a1, zero, 0x200), exitWith(a1)};
}
}  // namespace m

// Reset the chip and leave only tiles 0 .. n-1 enabled.
void useTiles(Device& d, unsigned n) {
  d.reset();
  for (unsigned t = n; t < d.info().tiles; ++t) d.setTileEnabled(t, false);
}

TEST_P(ChipSuite, HostReleaseThroughCtrl) {
  using namespace m;
  load(0, 0, syncThenExitWithWord(TESS_SYNC_HOST_BIT | 1));
  useTiles(*device_, 1);
  ASSERT_EQ(device_->run(1000).reason, StopReason::HostSync);
  device_->writeControl(TESS_CR_CTRL, 4);  // RELEASE
  EXPECT_EQ(device_->readControl(TESS_CR_STATUS), TESS_ST_RUNNING);
  EXPECT_EQ(device_->run(1000).reason, StopReason::Halted);
}

TEST_P(ChipSuite, ExchangeMovesWordsWithExactTiming) {
  using namespace m;
  load(0, 0, exchangeThenExit(true));
  load(1, 0, exchangeThenExit(true));
  load(0, 0x300, prog({send(8, 0x400), {xEnd()}}));
  load(1, 0x300, prog({{xDelay(2)}, recv(10, 0, 0x800), {xEnd()}}));
  for (uint32_t i = 0; i < 8; ++i) load(0, 0x400 + 4 * i, {0x1000 + i});
  for (uint32_t i = 0; i < 11; ++i) load(1, 0x800 + 4 * i, {0xdeadbeef});
  useTiles(*device_, 2);
  const RunResult r = device_->run(100000);
  ASSERT_EQ(r.reason, StopReason::Halted) << trapText(r.trap);
  // R = 25. Tile 0: SEND reads its words at 25, 26 and drives word i at 27 + i; END at 35, X = 36.
  // Tile 1: DELAY 2 at 25, RECV words at 28, 29, receive i at 30 + i takes bus 0 of 27 + i;
  // words 8 and 9 come from cycles 35 and 36, when tile 0 sends nothing (0). END at 40, X = 41.
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(read(1, 0x800 + 4 * i, 1)[0], 0x1000 + i) << i;
  EXPECT_EQ(read(1, 0x820, 1)[0], 0u);
  EXPECT_EQ(read(1, 0x824, 1)[0], 0u);
  EXPECT_EQ(read(1, 0x828, 1)[0], 0xdeadbeefu);
  EXPECT_EQ(device_->stats(0).cycles, 36u + 13);  // resumes at the first supervisor slot >= 36
  EXPECT_EQ(device_->stats(1).cycles, 42u + 13);  // first supervisor slot >= 41
  EXPECT_EQ(device_->stats(0).exitCode, 0u);      // XCHG_PROG (0x300) cleared at the release
  EXPECT_EQ(device_->stats(1).exitCode, 0u);
  EXPECT_EQ(device_->stats(0).exchangeCycles, 11u);
  EXPECT_EQ(device_->stats(1).exchangeCycles, 16u);
  EXPECT_EQ(device_->stats(1).syncWaitCycles, 4u);
  EXPECT_EQ(r.cycles, 42u + 12 + 1);
}

TEST_P(ChipSuite, MulticastAndReceivesBeforeTheReleaseGiveZero) {
  using namespace m;
  for (unsigned t = 0; t < 3; ++t) load(t, 0, exchangeThenExit(true));
  load(0, 0x300, prog({send(4, 0x400), {xEnd()}}));
  load(1, 0x300, prog({{xDelay(2)}, recv(4, 0, 0x800), {xEnd()}}));
  load(2, 0x300, prog({recv(4, 0, 0x800), {xEnd()}}));
  load(0, 0x400, {11, 22, 33, 44});
  load(2, 0x800, {0xbad0, 0xbad1, 0xbad2, 0xbad3});
  useTiles(*device_, 3);
  ASSERT_EQ(device_->run(100000).reason, StopReason::Halted);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(read(1, 0x800 + 4 * i, 1)[0], 11u * (i + 1));
  // Tile 2 receives i at R+2+i the bus of R-1+i: before R (0), R and R+1 (tile 0 still reading
  // its instruction: 0), then word 0.
  EXPECT_EQ(read(2, 0x800, 4), (std::vector<uint32_t>{0, 0, 0, 11}));
}

TEST_P(ChipSuite, SendsReadAtTheStartAndReceivesWriteAtTheEndOfACycle) {
  using namespace m;
  load(0, 0, exchangeThenExit(true));
  // SENDRECV on its own bus, receiving one word above what it sends.
  load(0, 0x300, prog({sendrecv(4, 0x400, 0, 0x404), {xEnd()}}));
  load(0, 0x400, {0x11, 0x22, 0x33, 0x44, 0x55});
  useTiles(*device_, 1);
  ASSERT_EQ(device_->run(100000).reason, StopReason::Halted);
  // Transfer i at R+3+i: receives 0 for i < 3 (bus of R..R+2), which the next send reads back;
  // i = 3 receives the word sent at R+3, read before any receive wrote.
  EXPECT_EQ(read(0, 0x400, 5), (std::vector<uint32_t>{0x11, 0, 0, 0, 0x11}));
  EXPECT_EQ(device_->stats(0).exchangeCycles, 3u + 4 + 1);
}

TEST_P(ChipSuite, DisabledTilesCountAsHaltedAndSkipSyncs) {
  using namespace m;
  load(0, 0,
       {kMmioT0, lui(a0, 0x80000), addi(a0, a0, 9), syncWith(a0), addi(a1, zero, 3), exitWith(a1)});
  useTiles(*device_, 1);
  RunResult r = device_->run(100000);
  ASSERT_EQ(r.reason, StopReason::HostSync);
  EXPECT_EQ(r.hostSyncId, 9u);
  EXPECT_EQ(r.cycles, 25u);
  r = device_->run(100000);
  ASSERT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.cycles, 37u);
  EXPECT_EQ(r.exitCode, 3u);
  const TileStats s = device_->stats(2);
  EXPECT_TRUE(s.halted);
  EXPECT_EQ(s.exitCode, 0u);
  EXPECT_EQ(s.instructions, 0u);
  device_->writeControl(TESS_CR_TILE_SEL, 2);
  EXPECT_EQ(device_->readControl(TESS_CR_T_ENABLE), 0u);
  EXPECT_EQ(device_->readControl(TESS_CR_T_STATE), 1u);
  EXPECT_THROW(device_->setTileEnabled(2, true), Error);  // only between reset and run
  device_->reset();
  EXPECT_EQ(device_->readControl(TESS_CR_T_ENABLE), 1u);  // reset value
}

TEST_P(ChipSuite, ControlRegisters) {
  using namespace m;
  for (unsigned t = 0; t < 4; ++t)
    load(t, 0, {kMmioT0, addi(a1, zero, 1), addi(a1, zero, 2), exitWith(zero)});
  device_->reset();
  EXPECT_EQ(device_->readControl(TESS_CR_MEM_BYTES), 65536u);
  ASSERT_EQ(device_->run(10).reason, StopReason::MaxCycles);
  EXPECT_EQ(device_->readControl(TESS_CR_STATUS), TESS_ST_RUNNING);
  EXPECT_EQ(device_->readControl(TESS_CR_CYCLE_LO), 10u);
  EXPECT_EQ(device_->readControl(TESS_CR_CYCLE_HI), 0u);
  device_->writeControl(TESS_CR_TILE_SEL, 0);
  // T_INSTR_LO at a pause is exact on the model only (docs/tile.md, "Stopping at a cycle limit":
  // the RTL's counters may trail by its pipeline); checked in model Chip.InstructionCountAtAPause.
  EXPECT_EQ(device_->readControl(TESS_CR_T_IDLE_LO), 8u);
  EXPECT_THROW(device_->writeControl(TESS_CR_TILE_SEL, 4), Error);
  EXPECT_THROW(device_->readControl(0x100), Error);
  EXPECT_THROW(device_->writeControl(TESS_CR_ID, 1), Error);
  device_->writeControl(TESS_CR_CTRL, 1);  // RESET: registers and counters, memory kept
  EXPECT_EQ(device_->readControl(TESS_CR_STATUS), TESS_ST_RESET);
  EXPECT_EQ(device_->readControl(TESS_CR_CYCLE_LO), 0u);
  EXPECT_EQ(device_->readControl(TESS_CR_T_INSTR_LO), 0u);
  device_->writeControl(TESS_CR_CTRL, 2);  // RUN
  EXPECT_EQ(device_->readControl(TESS_CR_STATUS), TESS_ST_RUNNING);
  const RunResult r = device_->run(1000);
  ASSERT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.cycles, 19u);
  device_->writeControl(TESS_CR_TILE_SEL, 3);
  EXPECT_EQ(device_->readControl(TESS_CR_T_STATE), 1u);  // halted
  EXPECT_EQ(device_->readControl(TESS_CR_T_INSTR_LO), 4u);
}

TEST_P(ChipSuite, ProgramAddressOutsideSramIsAnAccessFault) {
  using namespace m;
  load(0, 0, {kMmioT0, lui(a0, 0x10), xchgProgFrom(a0), syncWith(zero), exitWith(zero)});
  useTiles(*device_, 1);
  const RunResult r = device_->run(1000);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.cycles, 26u);  // fails at R = 25 reading word 0
  EXPECT_EQ(r.trap.cause, uint32_t{TESS_CAUSE_XCHG_ACCESS});
  EXPECT_EQ(r.trap.value, 0x10000u);
  EXPECT_EQ(r.trap.pc, 0x10000u);
}

TEST_P(ChipSuite, DescriptorMismatchOnTwoTiles) {
  using namespace m;
  load(0, 0, {kMmioT0, addi(a0, zero, 1), syncWith(a0), exitWith(zero)});  // SYNC at 12
  load(1, 0, {kMmioT0, addi(a0, zero, 2), addi(a1, zero, 0), syncWith(a0), exitWith(zero)});
  useTiles(*device_, 2);
  const RunResult r = device_->run(1000);
  // A = 18 + 3
  expectTrap(r, 22u,
             {.tile = 1u,
              .context = 0u,
              .pc = 12u,
              .cause = uint32_t{TESS_CAUSE_SYNC_MISMATCH},
              .value = 2u});
}

TEST_P(ChipSuite, DescriptorKeepsHostBitAndId) {
  // docs/chip.md: only bit 31 and bits 15..0 of a descriptor are kept. Sync 1: 5 and 0x7ffe0005
  // are the same sync; sync 2: 7 and 0x12340006 differ in the kept bits, reported as 6.
  using namespace m;
  load(0, 0,
       {kMmioT0, addi(a0, zero, 5), syncWith(a0), addi(a0, zero, 7), syncWith(a0), exitWith(zero)});
  load(1, 0,
       {kMmioT0, lui(a0, 0x7ffe0), addi(a0, a0, 5), syncWith(a0), lui(a0, 0x12340), addi(a0, a0, 6),
        syncWith(a0), exitWith(zero)});
  useTiles(*device_, 2);
  const RunResult r = device_->run(1000);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.trap.tile, 1u);
  EXPECT_EQ(r.cycles, 46u);   // R1 = 21 + 4, both resume at 30; A2 = 42 + 3 = e
  EXPECT_EQ(r.trap.pc, 24u);  // tile 1's second SYNC
  EXPECT_EQ(r.trap.cause, uint32_t{TESS_CAUSE_SYNC_MISMATCH});
  EXPECT_EQ(r.trap.value, 6u);
}

TEST_P(ChipSuite, SyncWithAHaltedTile) {
  using namespace m;
  load(0, 0, {kMmioT0, addi(a1, zero, 0), exitWith(zero)});  // halts at 12
  load(1, 0, {kMmioT0, syncWith(zero), exitWith(zero)});     // arrives at 9
  load(2, 0,
       {kMmioT0, addi(a1, zero, 0), addi(a1, zero, 0), addi(a1, zero, 0), addi(a1, zero, 0),
        exitWith(zero)});  // halts at 30
  useTiles(*device_, 3);
  const RunResult r = device_->run(1000);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.cycles, 32u);  // detected at max(9, 12 + 1, 30 + 1) = 31
  EXPECT_EQ(r.trap.tile, 1u);
  EXPECT_EQ(r.trap.pc, 4u);
  EXPECT_EQ(r.trap.cause, uint32_t{TESS_CAUSE_SYNC_HALTED});
  EXPECT_EQ(r.trap.value, 0u);  // lowest halted tile
}

TEST_P(ChipSuite, WorkerWritingSyncOrXchgProgIsContextMisuse) {
  using namespace m;
  for (uint32_t reg : {uint32_t{TESS_MMIO_SYNC}, uint32_t{TESS_MMIO_XCHG_PROG}}) {
    load(0, 0, {kMmioT0, addi(t1, zero, 0x100), sw(t1, t0, 0x20), sw(zero, t0, 0x8)});
    load(0, 0x100, {kMmioT0, reg == TESS_MMIO_SYNC ? syncWith(zero) : xchgProgFrom(zero)});
    useTiles(*device_, 1);
    const RunResult r = device_->run(1000);
    ASSERT_EQ(r.reason, StopReason::Trap);
    EXPECT_EQ(r.trap.context, 1u);
    EXPECT_EQ(r.trap.cause, uint32_t{TESS_CAUSE_CONTEXT_MISUSE});
    EXPECT_EQ(r.trap.value, reg);
  }
}

TEST_P(ChipSuite, RingOfSuperstepsGivesTheComputedSums) {
  constexpr unsigned kTiles = 4;
  chipprog::placeRing(*device_);
  device_->reset();
  ASSERT_EQ(device_->run(10'000'000).reason, StopReason::Halted);
  // Reference: acc_t += sum_{k=1..4(t+1)} k, then acc_t += acc_{t-1} as sent at the release.
  std::vector<uint64_t> acc(kTiles, 0);
  for (int step = 0; step < 5; ++step) {
    for (unsigned t = 0; t < kTiles; ++t) {
      const uint64_t n = 4 * (t + 1);
      acc[t] += n * (n + 1) / 2;
    }
    const std::vector<uint64_t> sent = acc;
    for (unsigned t = 0; t < kTiles; ++t) acc[t] += sent[(t + kTiles - 1) % kTiles];
  }
  for (unsigned t = 0; t < kTiles; ++t) {
    EXPECT_EQ(device_->stats(t).exitCode, static_cast<uint32_t>(acc[t])) << "tile " << t;
    EXPECT_GT(device_->stats(t).exchangeCycles, 0u);
  }
  // Tile 3 computes longest, so it never waits; the others do.
  EXPECT_EQ(device_->stats(3).syncWaitCycles, 5u * TESS_SYNC_LATENCY);
  EXPECT_GT(device_->stats(0).syncWaitCycles, device_->stats(3).syncWaitCycles);
}

TEST_P(ChipSuite, PausesAtACycleLimitContinueExactly) {
  constexpr unsigned kTiles = 4;
  const backends::Opened opened = backends::open(GetParam(), chipOptions(kTiles, 0));
  Device* const whole = opened.device.get();
  chipprog::placeRing(*whole);
  chipprog::placeRing(*device_);
  whole->reset();
  device_->reset();
  const RunResult w = whole->run(10'000'000);
  RunResult p;
  do p = device_->run(7);
  while (p.reason == StopReason::MaxCycles);
  EXPECT_EQ(p.reason, w.reason);
  EXPECT_EQ(p.cycles, w.cycles);
  for (unsigned t = 0; t < kTiles; ++t) {
    EXPECT_EQ(device_->stats(t).exitCode, whole->stats(t).exitCode);
    EXPECT_EQ(device_->stats(t).idleSlots, whole->stats(t).idleSlots);
    EXPECT_EQ(device_->stats(t).syncWaitCycles, whole->stats(t).syncWaitCycles);
    EXPECT_EQ(device_->stats(t).exchangeCycles, whole->stats(t).exchangeCycles);
  }
}

// The tiles' counters past their low word (docs/tile.md, "Counters"), for a backend and a counter
// width: 64 on every backend (the RTL's verilated chips have 64-bit counters), 32 on the model (the

}  // namespace
}  // namespace tessera::chipsuite
