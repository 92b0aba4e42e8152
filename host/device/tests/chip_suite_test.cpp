// One chip test suite for every in-process backend: each scenario runs on "model" and "rtl"
// through the public tessera::Device interface (openDevice) with the same expected values, so the
// two implementations of the spec are held to one set of numbers. Programs are hand-assembled;
// every expected value is worked out from docs/chip.md and docs/tile.md in the comments:
// the supervisor's k-th instruction (k = 0, 1, ...) issues at 6k while it is not blocked;
// SYNC issued at c arrives at a = c+3; release R = max(a) + SYNC_LATENCY (4); an exchange
// instruction of k words starting at t transfers at t+k .. t+k+n-1; a receive at r takes the bus
// of r - EXCHANGE_LATENCY (3); END at t gives X = t+1; the supervisor resumes in its first slot
// (a multiple of 6) >= R, or >= X with an exchange program. Results the program computes are
// stored to memory and read back by the host, which works on every backend at any stop.
// Backend-specific tests stay beside their backend (host/model/tests, host/rtl/tests).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "chip_programs.hpp"
#include "exchange_encoding.hpp"
#include "rv_encode.hpp"
#include "tessera/chip_params.h"
#include "tessera/device.hpp"

namespace tessera {
namespace {

// The backends every scenario runs on.
const auto kBackends = ::testing::Values(std::string("model"), std::string("rtl"));

// Options of a device: tile count (0 = default, 4), memory per tile (0 = default).
DeviceOptions chipOptions(unsigned tiles, uint32_t memBytes) {
  DeviceOptions o;
  o.tiles = tiles;
  o.tileMemBytes = memBytes;
  return o;
}

constexpr uint32_t kMmio = 0x80000;  // lui immediate of the MMIO page
constexpr int32_t kXchgProg = 0x40;  // offsets in the MMIO page
constexpr int32_t kSync = 0x44;
constexpr uint64_t kMaxCycles = 100000;
constexpr uint32_t kCycleCsr = 0xc00;

static_assert(TESS_SYNC_LATENCY == 4 && TESS_EXCHANGE_LATENCY == 3,
              "the expected cycles below assume these latencies");

// Exchange instructions (docs/chip.md, "Exchange programs").
constexpr uint32_t xEnd() { return xchg::word0(TESS_XOP_END, 0); }
constexpr uint32_t xDelay(uint32_t n) { return xchg::word0(TESS_XOP_DELAY, n); }
constexpr uint32_t xSend(uint32_t n) { return xchg::word0(TESS_XOP_SEND, n); }
constexpr uint32_t xRecv(uint32_t n) { return xchg::word0(TESS_XOP_RECV, n); }
constexpr uint32_t xSendRecv(uint32_t n) { return xchg::word0(TESS_XOP_SENDRECV, n); }
constexpr uint32_t xBus(uint32_t bus, uint32_t addr) { return xchg::busAddr(bus, addr); }

// The error a failed run reports, for assertion messages.
std::string trapText(const TrapInfo& t) {
  return "tile " + std::to_string(t.tile) + " context " + std::to_string(t.context) + " pc " +
         std::to_string(t.pc) + " cause " + std::to_string(t.cause) + " value " +
         std::to_string(t.value);
}

// A chip error: the stop, its chip cycle count and every field of the trap.
void expectTrap(const RunResult& r, uint64_t cycles, const TrapInfo& want) {
  ASSERT_EQ(r.reason, StopReason::Trap) << trapText(r.trap);
  EXPECT_EQ(r.cycles, cycles);
  EXPECT_EQ(r.trap.tile, want.tile);
  EXPECT_EQ(r.trap.context, want.context);
  EXPECT_EQ(r.trap.pc, want.pc);
  EXPECT_EQ(r.trap.cause, want.cause);
  EXPECT_EQ(r.trap.value, want.value);
}

// A device of the backend under test and the host-side helpers every scenario uses.
class DeviceHelpers {
 protected:
  void open(const std::string& backend, unsigned tiles = 0) {
    device_ = openDevice(backend, chipOptions(tiles, 0));
  }
  void load(unsigned tile, uint32_t addr, const std::vector<uint32_t>& words) {
    std::vector<uint8_t> bytes;
    for (uint32_t w : words) {
      for (unsigned k = 0; k < 4; ++k) bytes.push_back(static_cast<uint8_t>(w >> (8 * k)));
    }
    device_->writeMemory(tile, addr, bytes);
  }
  void loadAll(uint32_t addr, const std::vector<uint32_t>& words) {
    for (unsigned t = 0; t < tiles(); ++t) load(t, addr, words);
  }
  std::vector<uint32_t> read(unsigned tile, uint32_t addr, size_t words) {
    std::vector<uint8_t> bytes(4 * words);
    device_->readMemory(tile, addr, bytes);
    std::vector<uint32_t> out(words);
    for (size_t i = 0; i < words; ++i) {
      for (unsigned k = 0; k < 4; ++k) out[i] |= static_cast<uint32_t>(bytes[4 * i + k]) << (8 * k);
    }
    return out;
  }
  unsigned tiles() const { return device_->info().tiles; }

  // After an error: reset and run a short program on every tile to show the chip goes on.
  void expectRecovers() {
    device_->reset();
    for (unsigned t = 0; t < tiles(); ++t) {
      load(t, 0, {rv::lui(1, kMmio), rv::addi(2, 0, static_cast<int32_t>(10 + t)), rv::sw(2, 1, 0)});
    }
    const RunResult r = device_->run(kMaxCycles);
    ASSERT_EQ(r.reason, StopReason::Halted);
    EXPECT_EQ(r.cycles, 13u);
    EXPECT_EQ(r.exitCode, 10u);
    for (unsigned t = 0; t < tiles(); ++t) EXPECT_EQ(device_->stats(t).exitCode, 10u + t);
  }

  std::unique_ptr<Device> device_;
};

// Chip scenarios on the default 4-tile chip.
class ChipSuite : public DeviceHelpers, public ::testing::TestWithParam<std::string> {
 protected:
  ChipSuite() { open(GetParam()); }
};

// Single-tile scenarios: tile 0 of the default chip with tiles 1..3 disabled, which changes none
// of tile 0's cycle counts (docs/chip.md, T_ENABLE). run() records every retired instruction.
class TileSuite : public ChipSuite {
 protected:
  TileSuite() {
    for (unsigned t = 1; t < tiles(); ++t) device_->setTileEnabled(t, false);
  }
  using DeviceHelpers::load;
  void load(uint32_t addr, const std::vector<uint32_t>& words) { DeviceHelpers::load(0, addr, words); }
  RunResult run() {
    device_->setRetireSink([this](const RetireRecord& r) { retired_.push_back(r); });
    return device_->run(kMaxCycles);
  }
  std::vector<RetireRecord> retired_;
};

// The common supervisor of the exchange tests: names the exchange program at 0x600, syncs with
// descriptor 0 at c = 18 (a = 21, R = 25), stores its resume cycle at 0x300, exits with 0.
std::vector<uint32_t> exchangeSupervisor() {
  return {rv::lui(1, kMmio), rv::addi(2, 0, 0x600), rv::sw(2, 1, kXchgProg), rv::sw(0, 1, kSync),
          rv::csrrs(3, kCycleCsr, 0), rv::sw(3, 0, 0x300), rv::sw(0, 1, 0)};
}

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
    load(t, 0, {rv::lui(1, kMmio), rv::addi(2, 0, static_cast<int32_t>('a' + t)), rv::sw(2, 1, 4),
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
  EXPECT_EQ(read(1, 0x2000, 5), (std::vector<uint32_t>{sent[0], sent[1], sent[2], sent[3], 0xdeadbeefu}));
  EXPECT_EQ(read(2, 0x2000, 5), (std::vector<uint32_t>{sent[0], sent[1], sent[2], sent[3], 0xdeadbeefu}));
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
    load(t, 0, {rv::lui(1, kMmio), rv::addi(2, 0, t == 2 ? 4 : 3), rv::sw(2, 1, kSync),
                rv::sw(0, 1, 0)});
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
  load(3, 4, {rv::addi(4, 0, 1), rv::addi(4, 0, 1), rv::addi(4, 0, 1), rv::addi(4, 0, 1),
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
void PrintTo(const XchgErrorCase& c, std::ostream* os) { *os << c.name; }

class ExchangeErrorSuite : public DeviceHelpers,
                           public ::testing::TestWithParam<std::tuple<std::string, XchgErrorCase>> {
 protected:
  ExchangeErrorSuite() { open(std::get<0>(GetParam())); }
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
        kBackends,
        ::testing::Values(
            // One-word instructions fail at t (R = 25): count 26; two-word ones at t+1: 27.
            XchgErrorCase{"UnknownOpcode", {0x50000000u}, 26, 0x600, TESS_CAUSE_XCHG_INSN, 0x50000000u},
            XchgErrorCase{"DelayZero", {xDelay(0)}, 26, 0x600, TESS_CAUSE_XCHG_INSN, xDelay(0)},
            XchgErrorCase{"EndWithReservedBits", {0x00000001u}, 26, 0x600, TESS_CAUSE_XCHG_INSN, 1},
            XchgErrorCase{"SendReservedBits", {xSend(1) | 0x01000000u, 0x100}, 27, 0x600,
                          TESS_CAUSE_XCHG_INSN, xSend(1) | 0x01000000u},
            XchgErrorCase{"RecvBusOutOfRange", {xRecv(1), xBus(4, 0x100)}, 27, 0x600,
                          TESS_CAUSE_XCHG_INSN, xBus(4, 0x100)},
            XchgErrorCase{"SendPastTheEnd", {xSend(2), 0xfffc}, 27, 0x600, TESS_CAUSE_XCHG_ACCESS, 0xfffc},
            XchgErrorCase{"RecvPastTheEnd", {xRecv(2), xBus(0, 0xfffc)}, 27, 0x600,
                          TESS_CAUSE_XCHG_ACCESS, 0xfffc},
            XchgErrorCase{"RecvMisaligned", {xRecv(1), xBus(0, 0x0ffe)}, 27, 0x600,
                          TESS_CAUSE_XCHG_ACCESS, 0x0ffe},
            // After DELAY 1 (25, idle 26) a SENDRECV starts at 27 and fails at its third word (29).
            XchgErrorCase{"SendRecvSecondRangeBad", {xDelay(1), xSendRecv(1), 0x100, xBus(0, 0x10000)},
                          30, 0x604, TESS_CAUSE_XCHG_ACCESS, 0x10000},
            // Cases first written for the model.
            XchgErrorCase{"SendZeroCount", {xSend(0), 0x400}, 27, 0x600, TESS_CAUSE_XCHG_INSN, xSend(0)},
            XchgErrorCase{"ReservedBits", {0x11000001u}, 26, 0x600, TESS_CAUSE_XCHG_INSN, 0x11000001u},
            XchgErrorCase{"RecvOutsideSram", {xRecv(1), xBus(0, 0xffff0)}, 27, 0x600,
                          TESS_CAUSE_XCHG_ACCESS, 0xffff0},
            XchgErrorCase{"RecvRunsPastSram", {xRecv(8), xBus(0, 0xfff0)}, 27, 0x600,
                          TESS_CAUSE_XCHG_ACCESS, 0xfff0},
            XchgErrorCase{"SendUnaligned", {xSend(1), 0x402}, 27, 0x600, TESS_CAUSE_XCHG_ACCESS, 0x402},
            XchgErrorCase{"SendOutsideSram", {xSend(1), 0x10000}, 27, 0x600, TESS_CAUSE_XCHG_ACCESS,
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
  EXPECT_EQ(retired_[0], (RetireRecord{0, 0, 0, 0, rv::lui(1, kMmio), DestKind::X, 1, 0x80000000u}));
  EXPECT_EQ(retired_[1], (RetireRecord{6, 0, 0, 4, rv::addi(2, 0, 42), DestKind::X, 2, 42}));
  EXPECT_EQ(retired_[2], (RetireRecord{12, 0, 0, 8, rv::sw(2, 1, 0), DestKind::None, 0, 0}));
}

TEST_P(TileSuite, ConsoleBytes) {
  load(0, {rv::lui(1, kMmio), rv::addi(2, 0, 'H'), rv::sw(2, 1, 4), rv::addi(2, 0, 'i'),
           rv::sw(2, 1, 4), rv::addi(2, 0, '\n'), rv::sw(2, 1, 4), rv::sw(0, 1, 0)});
  const RunResult r = run();
  EXPECT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.exitCode, 0u);
  EXPECT_EQ(r.cycles, 6u * 7 + 1);
  EXPECT_EQ(device_->console(0), "Hi\n");
}

TEST_P(TileSuite, LoopCycleCount) {
  // x6 += 3 ten times: 2 + 10 * 3 + 1 = 33 instructions on context 0 -> 6 * 32 + 1 cycles.
  load(0, {rv::lui(1, kMmio), rv::addi(5, 0, 10), rv::addi(6, 6, 3), rv::addi(5, 5, -1),
           rv::bne(5, 0, -8), rv::sw(6, 1, 0)});
  const RunResult r = run();
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
  EXPECT_EQ(retired_[5], (RetireRecord{156, 0, 0, 20, rv::divu(7, 2, 0), DestKind::X, 7,
                                       0xffffffffu}));
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

void PrintTo(const TrapCase& c, std::ostream* os) { *os << c.name; }

class TrapSuite : public DeviceHelpers,
                  public ::testing::TestWithParam<std::tuple<std::string, TrapCase>> {
 protected:
  TrapSuite() {
    open(std::get<0>(GetParam()));
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
        kBackends,
        ::testing::Values(
            TrapCase{"IllegalCustom0", {rv::addi(1, 0, 1), 0x0000000bu}, 4, TESS_CAUSE_ILLEGAL_INSN, 0x0000000bu, 1},
            TrapCase{"Ecall", {rv::addi(1, 0, 1), rv::addi(1, 0, 2), rv::ecall()}, 8, TESS_CAUSE_ECALL, 8, 2},
            TrapCase{"WriteReadOnlyCsr", {rv::csrrw(1, 0xc00, 1)}, 0, TESS_CAUSE_ILLEGAL_INSN,
                     rv::csrrw(1, 0xc00, 1), 0},
            TrapCase{"LoadMisaligned", {rv::addi(2, 0, 0x102), rv::lw(3, 2, 0)}, 4, TESS_CAUSE_LOAD_MISALIGNED,
                     0x102, 1},
            TrapCase{"StoreOutsideMemory", {rv::lui(2, 0x10), rv::sw(0, 2, 0)}, 4, TESS_CAUSE_STORE_ACCESS,
                     0x10000, 1},
            TrapCase{"JumpMisaligned", {rv::jal(0, 6)}, 0, TESS_CAUSE_INSN_MISALIGNED, 6, 0},
            TrapCase{"FetchOutsideMemory", {rv::lui(2, 0x10), rv::i(0, 2, 0, 0, 0x67)}, 0x10000,
                     TESS_CAUSE_INSN_ACCESS, 0x10000, 2},
            TrapCase{"DoneBySupervisor", {rv::lui(1, kMmio), rv::sw(0, 1, 0x0c)}, 4, TESS_CAUSE_CONTEXT_MISUSE,
                     0x8000000cu, 1})),
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
       StopReason::HostSync, 25},
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
  EXPECT_EQ(retired_[4], (RetireRecord{24, 0, 0, 16, rv::fadd(3, 1, 2, 0), DestKind::F, 3, 0x40700000u}));
  EXPECT_EQ(retired_[5].value, 4u);
  EXPECT_EQ(retired_[6].value, 1u);  // fflags = NX
  // fdiv issued at 42 retires at 84: 1.5 / 2.25 = 2/3 rounded to nearest = 0x3f2aaaab.
  EXPECT_EQ(retired_[7], (RetireRecord{84, 0, 0, 28, rv::fdiv(4, 1, 2, 7), DestKind::F, 4, 0x3f2aaaabu}));
  EXPECT_EQ(retired_[8].value, 0x3f2aaaabu);
  EXPECT_EQ(r.cycles, 6u * 10 + 42 + 1);
}

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
  return {kMmioT0, addi(a0, zero, withProgram ? 0x300 : 0), xchgProgFrom(a0), syncWith(zero),
          csrr(a1, kCycleCsr), lw(a2, t0, kXchgOff), exitWith(a2)};
}
// SYNC with descriptor desc at 18 (arrival 21, R = 25), then EXIT with mem[0x200].
std::vector<uint32_t> syncThenExitWithWord(uint32_t desc) {
  return {kMmioT0, lui(a0, desc >> 12), addi(a0, a0, static_cast<int32_t>(desc & 0x7ff)),
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
  load(0, 0, {kMmioT0, lui(a0, 0x80000), addi(a0, a0, 9), syncWith(a0), addi(a1, zero, 3),
              exitWith(a1)});
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
  for (unsigned t = 0; t < 4; ++t) load(t, 0, {kMmioT0, addi(a1, zero, 1), addi(a1, zero, 2), exitWith(zero)});
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
  load(0, 0, {kMmioT0, addi(a0, zero, 5), syncWith(a0), addi(a0, zero, 7), syncWith(a0),
              exitWith(zero)});
  load(1, 0, {kMmioT0, lui(a0, 0x7ffe0), addi(a0, a0, 5), syncWith(a0), lui(a0, 0x12340),
              addi(a0, a0, 6), syncWith(a0), exitWith(zero)});
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
  load(0, 0, {kMmioT0, addi(a1, zero, 0), exitWith(zero)});              // halts at 12
  load(1, 0, {kMmioT0, syncWith(zero), exitWith(zero)});                 // arrives at 9
  load(2, 0, {kMmioT0, addi(a1, zero, 0), addi(a1, zero, 0), addi(a1, zero, 0),
              addi(a1, zero, 0), exitWith(zero)});                     // halts at 30
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
  auto whole = openDevice(GetParam(), chipOptions(kTiles, 0));
  chipprog::placeRing(*whole);
  chipprog::placeRing(*device_);
  whole->reset();
  device_->reset();
  const RunResult w = whole->run(10'000'000);
  RunResult p;
  do p = device_->run(7); while (p.reason == StopReason::MaxCycles);
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
// iCE40 board's width; the RTL's is checked on Icarus by rtl/tests/smoke/tess_tile_smoke_tb.sv).
class CounterSuite : public DeviceHelpers,
                     public ::testing::TestWithParam<std::tuple<std::string, unsigned>> {
 protected:
  CounterSuite() {
    DeviceOptions o = chipOptions(0, 0);
    o.counterBits = std::get<1>(GetParam());
    device_ = openDevice(std::get<0>(GetParam()), o);
    for (unsigned t = 1; t < tiles(); ++t) device_->setTileEnabled(t, false);
  }
  std::vector<RetireRecord> retired_;
};

TEST_P(CounterSuite, WrapModuloTheirWidthWhileTheChipCycleCounts) {
  // Tile 0: SYNC at 6 (descriptor 0: stops at R = 13 with SYNC_BREAK); there the host moves the
  // cycle counter to B, 12 to 17 below 2^33 (B = R mod 6: the slot phase is kept), context 0's
  // instret to P = 2^33 - 1, the idle and sync-wait counters to I and W, each by a low and a high
  // word. The supervisor resumes at S, B <= S < B + 6; three nops, then csrr cycle at
  // c0 = S + 18 > 2^33, cycleh, instret, instreth, four stores, EXIT at c0 + 48.
  // Every counter is read modulo 2^bits: at 32 bits the high-word writes are ignored and the
  // counters wrap (cycleh and instreth read 0); at 64 bits they carry (both read 2). The chip's
  // CYCLE counts in 64 bits at either width.
  using namespace rv;
  const unsigned bits = std::get<1>(GetParam());
  ASSERT_EQ(device_->info().counterBits, bits);
  const std::vector<uint32_t> prog{
      lui(1, kMmio),   sw(0, 1, kSync), addi(0, 0, 0),   addi(0, 0, 0),  addi(0, 0, 0),
      csrr(3, 0xc00),  csrr(4, 0xc80),  csrr(5, 0xc02),  csrr(6, 0xc82), sw(3, 0, 0x400),
      sw(4, 0, 0x404), sw(5, 0, 0x408), sw(6, 0, 0x40c), sw(0, 1, 0)};
  load(0, 0, prog);
  device_->setSyncBreak(true);
  device_->setRetireSink([this](const RetireRecord& r) { retired_.push_back(r); });
  RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::SyncBreak) << trapText(r.trap);
  ASSERT_EQ(r.cycles, 13u);
  uint64_t b = (uint64_t{1} << 33) - 12;
  b -= (b - 13) % 6;
  const uint64_t p = (uint64_t{1} << 33) - 1, i = (uint64_t{1} << 33) - 16,
                 w = (uint64_t{1} << 33) - 2;
  auto write64 = [this](uint32_t lo, uint32_t hi, uint64_t v) {
    device_->writeControl(lo, static_cast<uint32_t>(v));
    device_->writeControl(hi, static_cast<uint32_t>(v >> 32));
  };
  write64(TESS_CR_CYCLE_LO, TESS_CR_CYCLE_HI, b);
  device_->writeControl(TESS_CR_TILE_SEL, 0);
  device_->writeControl(TESS_CR_CTX_SEL, 0);
  write64(TESS_CR_C_INSTRET_LO, TESS_CR_C_INSTRET_HI, p);
  write64(TESS_CR_T_IDLE_LO, TESS_CR_T_IDLE_HI, i);
  write64(TESS_CR_T_SYNCWAIT_LO, TESS_CR_T_SYNCWAIT_HI, w);
  r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Halted) << trapText(r.trap);
  EXPECT_GT(r.cycles, uint64_t{1} << 33);
  EXPECT_LT(r.cycles, b + 100);
  EXPECT_EQ(device_->readControl(TESS_CR_CYCLE_LO) |
                uint64_t{device_->readControl(TESS_CR_CYCLE_HI)} << 32,
            r.cycles);
  const uint64_t c0 = r.cycles - 49;
  const std::vector<uint32_t> got = read(0, 0x400, 4);
  EXPECT_EQ(got[0], static_cast<uint32_t>(c0));
  EXPECT_EQ(got[1], wrapCounter(c0 + 6, bits) >> 32);
  EXPECT_EQ(got[2], static_cast<uint32_t>(p + 5));  // lui and SYNC were before the write
  EXPECT_EQ(got[3], wrapCounter(p + 6, bits) >> 32);
  // After the write: 3 nops, 4 csrr, 4 stores and EXIT retire; r.cycles - b slots, 12 issued.
  const TileStats s = device_->stats(0);
  EXPECT_EQ(s.cycles, wrapCounter(r.cycles, bits));
  EXPECT_EQ(s.contextInstructions[0], wrapCounter(p + 12, bits));
  EXPECT_EQ(s.instructions, wrapCounter(p + 12, bits));
  EXPECT_EQ(s.idleSlots, wrapCounter(i + (r.cycles - b) - 12, bits));
  EXPECT_EQ(s.syncWaitCycles, wrapCounter(w, bits));
  EXPECT_EQ(device_->readControl(TESS_CR_T_INSTR_HI), wrapCounter(p + 12, bits) >> 32);
  EXPECT_EQ(device_->readControl(TESS_CR_T_IDLE_HI), s.idleSlots >> 32);
  EXPECT_EQ(device_->readControl(TESS_CR_T_SYNCWAIT_HI), s.syncWaitCycles >> 32);
  EXPECT_EQ(device_->readControl(TESS_CR_C_INSTRET_HI), s.contextInstructions[0] >> 32);
  // The retirement trace's cycles are the tile's counter too: the csrr cycle retired at c0.
  const auto rec = std::find_if(retired_.begin(), retired_.end(),
                                [](const RetireRecord& x) { return x.pc == 20; });
  ASSERT_NE(rec, retired_.end());
  EXPECT_EQ(rec->cycle, wrapCounter(c0, bits));
  EXPECT_EQ(retired_.back().cycle, wrapCounter(c0 + 48, bits));
}

INSTANTIATE_TEST_SUITE_P(Widths, CounterSuite,
                         ::testing::Values(std::make_tuple(std::string("model"), 64u),
                                           std::make_tuple(std::string("rtl"), 64u),
                                           std::make_tuple(std::string("model"), 32u)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + std::to_string(std::get<1>(info.param));
                         });

INSTANTIATE_TEST_SUITE_P(Backends, ChipSuite, kBackends,
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Backends, TileSuite, kBackends,
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tessera
