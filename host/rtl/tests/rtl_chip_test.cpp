// Chip-level tests of the rtl backend: sync, exchange, host syncs, SYNC_BREAK, T_ENABLE, the
// control registers and the error paths, with hand-assembled programs and exchange programs.
// Every expected value is worked out from docs/chip.md and docs/tile.md in the comments:
// the supervisor's k-th instruction (k = 0, 1, ...) issues at 6k while it is not blocked;
// SYNC issued at c arrives at a = c+3; release R = max(a) + SYNC_LATENCY (4); an exchange
// instruction of k words starting at t transfers at t+k .. t+k+n-1; a receive at r takes the bus
// of r - EXCHANGE_LATENCY (3); END at t gives X = t+1; the supervisor resumes in its first slot
// (a multiple of 6) >= R, or >= X with an exchange program.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "exchange_encoding.hpp"
#include "rtl_device.hpp"
#include "rv_encode.hpp"
#include "tessera/chip_params.h"

namespace tessera {
namespace {

// Options of an rtl device: tile count (0 = default), memory per tile (0 = default), preset.
DeviceOptions chipOptions(unsigned tiles, uint32_t memBytes, const char* preset) {
  DeviceOptions o;
  o.tiles = tiles;
  o.tileMemBytes = memBytes;
  o.preset = preset;
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

class RtlChipTest : public ::testing::Test {
 protected:
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

  std::unique_ptr<Device> device_ = makeRtlDevice(chipOptions(0, 0, ""));
};

// The common supervisor of the exchange tests: names the exchange program at 0x600, syncs with
// descriptor 0 at c = 18 (a = 21, R = 25), stores its resume cycle at 0x300, exits with 0.
std::vector<uint32_t> exchangeSupervisor() {
  return {rv::lui(1, kMmio), rv::addi(2, 0, 0x600), rv::sw(2, 1, kXchgProg), rv::sw(0, 1, kSync),
          rv::csrrs(3, kCycleCsr, 0), rv::sw(3, 0, 0x300), rv::sw(0, 1, 0)};
}

TEST_F(RtlChipTest, ControlRegistersAfterReset) {
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

TEST_F(RtlChipTest, CountersAndStatusThroughTheRegisters) {
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

TEST_F(RtlChipTest, DisabledTilesCountAsHaltedFromCycleZero) {
  for (unsigned t = 0; t < 4; ++t) device_->setTileEnabled(t, false);
  const RunResult r = device_->run(kMaxCycles);
  EXPECT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.cycles, 0u);
  EXPECT_EQ(r.exitCode, 0u);
  const TileStats s = device_->stats(2);
  EXPECT_TRUE(s.halted);
  EXPECT_EQ(s.instructions, 0u);
}

TEST_F(RtlChipTest, SyncReleasesEveryTileOnTheSameCycle) {
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
  }
}

TEST_F(RtlChipTest, ExchangeTimingMulticastAndResume) {
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

TEST_F(RtlChipTest, SendReadsWhatAnEarlierReceiveWrote) {
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

TEST_F(RtlChipTest, HostSyncStopsTheChipUntilReleased) {
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
}

TEST_F(RtlChipTest, SyncBreakStopsAtAnInternalSyncWithoutChangingCycles) {
  // As above with descriptor 3 (not a host sync): SYNC_BREAK stops at R = 25 with STATUS bit 4
  // clear; the run then ends at 37 cycles exactly as without the break.
  loadAll(0, {rv::lui(1, kMmio), rv::addi(2, 0, 3), rv::addi(0, 0, 0), rv::sw(2, 1, kSync),
              rv::lw(3, 0, 0x400), rv::sw(3, 1, 0)});
  loadAll(0x400, {9});
  device_->setSyncBreak(true);
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
  r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.cycles, 37u);
}

TEST_F(RtlChipTest, RepeatedSuperstepsWithACycleLimitInBetween) {
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

TEST_F(RtlChipTest, TrapOnOneTileStopsEveryTile) {
  // Tiles 0, 1, 3 count forever; tile 2 executes an illegal word 0 at e = 6. Every tile stops at
  // e: what the others issue at e (their jal) still happens, nothing later; the count is 7.
  loadAll(0, {rv::addi(5, 5, 1), rv::jal(0, -4)});
  load(2, 4, {0});
  const RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.cycles, 7u);
  EXPECT_EQ(r.trap.tile, 2u);
  EXPECT_EQ(r.trap.context, 0u);
  EXPECT_EQ(r.trap.pc, 4u);
  EXPECT_EQ(r.trap.cause, static_cast<unsigned>(TESS_CAUSE_ILLEGAL_INSN));
  EXPECT_EQ(r.trap.value, 0u);
  EXPECT_EQ(device_->readControl(TESS_CR_STATUS), TESS_ST_ERROR);
  for (unsigned t = 0; t < 4; ++t) {
    EXPECT_EQ(device_->stats(t).instructions, t == 2 ? 1u : 2u) << "tile " << t;
    EXPECT_EQ(device_->stats(t).cycles, 7u) << "tile " << t;
  }
  expectRecovers();
}

TEST_F(RtlChipTest, SyncDescriptorMismatch) {
  // Tiles sync at 12 (a = 15 = A) with descriptor 3, tile 2 with 4: error at A = 15 on tile 2,
  // pc of its SYNC (8), value 4; count 16.
  for (unsigned t = 0; t < 4; ++t) {
    load(t, 0, {rv::lui(1, kMmio), rv::addi(2, 0, t == 2 ? 4 : 3), rv::sw(2, 1, kSync),
                rv::sw(0, 1, 0)});
  }
  const RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.cycles, 16u);
  EXPECT_EQ(r.trap.tile, 2u);
  EXPECT_EQ(r.trap.context, 0u);
  EXPECT_EQ(r.trap.pc, 8u);
  EXPECT_EQ(r.trap.cause, static_cast<unsigned>(TESS_CAUSE_SYNC_MISMATCH));
  EXPECT_EQ(r.trap.value, 4u);
  expectRecovers();
}

TEST_F(RtlChipTest, HaltedTileAtSync) {
  // Tiles 0..2 sync at 12 (a = 15); tile 3 exits at h = 6 (halted from h+1 = 7). Detected at
  // max(15, 7) = 15 on tile 0 (lowest arrived), pc 8, value 3 (lowest halted); count 16.
  loadAll(0, {rv::lui(1, kMmio), rv::addi(2, 0, 3), rv::sw(2, 1, kSync), rv::sw(0, 1, 0)});
  load(3, 4, {rv::sw(0, 1, 0)});
  const RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.cycles, 16u);
  EXPECT_EQ(r.trap.tile, 0u);
  EXPECT_EQ(r.trap.context, 0u);
  EXPECT_EQ(r.trap.pc, 8u);
  EXPECT_EQ(r.trap.cause, static_cast<unsigned>(TESS_CAUSE_SYNC_HALTED));
  EXPECT_EQ(r.trap.value, 3u);
  expectRecovers();
}

TEST_F(RtlChipTest, HaltedTileDetectedAfterTheArrivals) {
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

TEST_F(RtlChipTest, SyncWhileAWorkerRunsIsContextMisuse) {
  // Tile 0 starts worker 1 (an endless loop at 0x100) at 12, then SYNCs at 18: cause 24 at
  // e = 18, value = the SYNC address; count 19. Tiles 1..3 are disabled.
  for (unsigned t = 1; t < 4; ++t) device_->setTileEnabled(t, false);
  load(0, 0, {rv::lui(1, kMmio), rv::addi(2, 0, 0x100), rv::sw(2, 1, 0x20), rv::sw(0, 1, kSync)});
  load(0, 0x100, {rv::jal(0, 0)});
  const RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.cycles, 19u);
  EXPECT_EQ(r.trap.tile, 0u);
  EXPECT_EQ(r.trap.context, 0u);
  EXPECT_EQ(r.trap.pc, 12u);
  EXPECT_EQ(r.trap.cause, static_cast<unsigned>(TESS_CAUSE_CONTEXT_MISUSE));
  EXPECT_EQ(r.trap.value, 0x80000044u);
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

class RtlExchangeErrorTest : public RtlChipTest,
                             public ::testing::WithParamInterface<XchgErrorCase> {};

TEST_P(RtlExchangeErrorTest, StopsTheChipAndWritesNothing) {
  const XchgErrorCase& c = GetParam();
  loadAll(0, exchangeSupervisor());
  loadAll(0x600, {xEnd()});
  load(1, 0x600, c.program);
  load(1, 0xfffc, {0x5a5a5a5au});
  load(1, 0x0ffc, {0x5a5a5a5au});
  const RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.cycles, c.cycles);
  EXPECT_EQ(r.trap.tile, 1u);
  EXPECT_EQ(r.trap.context, static_cast<unsigned>(TESS_EXCHANGE_CONTEXT));
  EXPECT_EQ(r.trap.pc, c.pc);
  EXPECT_EQ(r.trap.cause, c.cause);
  EXPECT_EQ(r.trap.value, c.value);
  // Never a silent write elsewhere (e.g. a wrapped address).
  EXPECT_EQ(read(1, 0xfffc, 1)[0], 0x5a5a5a5au);
  EXPECT_EQ(read(1, 0x0ffc, 1)[0], 0x5a5a5a5au);
  expectRecovers();
}

INSTANTIATE_TEST_SUITE_P(
    Errors, RtlExchangeErrorTest,
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
                      30, 0x604, TESS_CAUSE_XCHG_ACCESS, 0x10000}),
    [](const ::testing::TestParamInfo<XchgErrorCase>& info) { return std::string(info.param.name); });

TEST_F(RtlChipTest, ExchangeProgramRunningOffTheEndOfMemory) {
  // Tile 1's program starts at 0xfff8: DELAY 1 at R = 25 (idle 26), then a SEND whose first
  // word (0xfffc) is fine and whose second (0x10000) lies outside SRAM: error at 28 -> 29.
  loadAll(0, {rv::lui(1, kMmio), rv::lui(2, 0x10), rv::addi(2, 2, -8), rv::sw(2, 1, kXchgProg),
              rv::sw(0, 1, kSync), rv::sw(0, 1, 0)});
  // Tile 1 only: the others have no program. SYNC at 24 -> a = 27, R = 31.
  for (unsigned t : {0u, 2u, 3u}) load(t, 12, {rv::addi(0, 0, 0)});
  load(1, 0xfff8, {xDelay(1), xSend(1)});
  const RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.cycles, 35u);  // R = 31: DELAY 31, idle 32, SEND words 33, 34 -> e = 34
  EXPECT_EQ(r.trap.tile, 1u);
  EXPECT_EQ(r.trap.context, 6u);
  EXPECT_EQ(r.trap.pc, 0xfffcu);
  EXPECT_EQ(r.trap.cause, static_cast<unsigned>(TESS_CAUSE_XCHG_ACCESS));
  EXPECT_EQ(r.trap.value, 0x10000u);
  expectRecovers();
}

TEST_F(RtlChipTest, HostAccessOutOfRange) {
  std::vector<uint8_t> four(4);
  EXPECT_THROW(device_->readMemory(4, 0, four), Error);
  EXPECT_THROW(device_->writeMemory(0, 0x10000, four), Error);
  EXPECT_THROW(device_->writeMemory(3, 0xfffe, four), Error);
  expectRecovers();
}

// ---- 16 tiles -------------------------------------------------------------------------------

TEST(RtlChip16Test, RingShiftOnSixteenTiles) {
  // Every tile: SENDRECV 5 from 0x1000, bus t-1 (mod 16), into 0x2000: words at 25..27,
  // transfers at 28..32 receiving the buses of 25..29; the previous tile sent its 0x1000 words
  // at 28, 29 -> received {0, 0, 0, s0, s1}. END at 33 -> X = 34, resume at 36.
  auto device = makeRtlDevice(chipOptions(16, 0, ""));
  auto load = [&device](unsigned tile, uint32_t addr, const std::vector<uint32_t>& words) {
    std::vector<uint8_t> bytes;
    for (uint32_t w : words) {
      for (unsigned k = 0; k < 4; ++k) bytes.push_back(static_cast<uint8_t>(w >> (8 * k)));
    }
    device->writeMemory(tile, addr, bytes);
  };
  for (unsigned t = 0; t < 16; ++t) {
    load(t, 0, exchangeSupervisor());
    load(t, 0x600, {xSendRecv(5), 0x1000, xBus((t + 15) % 16, 0x2000), xEnd()});
    load(t, 0x1000, {0x100 * t + 1, 0x100 * t + 2, 0x100 * t + 3, 0x100 * t + 4, 0x100 * t + 5});
  }
  const RunResult r = device->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Halted) << trapText(r.trap);
  EXPECT_EQ(r.cycles, 49u);
  for (unsigned t = 0; t < 16; ++t) {
    const unsigned p = (t + 15) % 16;
    std::vector<uint8_t> bytes(20);
    device->readMemory(t, 0x2000, bytes);
    std::vector<uint32_t> got(5);
    for (size_t i = 0; i < 5; ++i) {
      for (unsigned k = 0; k < 4; ++k) got[i] |= static_cast<uint32_t>(bytes[4 * i + k]) << (8 * k);
    }
    EXPECT_EQ(got, (std::vector<uint32_t>{0, 0, 0, 0x100 * p + 1, 0x100 * p + 2})) << "tile " << t;
    EXPECT_EQ(device->stats(t).exchangeCycles, 9u);
  }
}

}  // namespace
}  // namespace tessera
