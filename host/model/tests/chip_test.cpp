// The chip around the tiles (docs/chip.md): sync release timing, exchange data and timing,
// multicast, host syncs, SYNC_BREAK, T_ENABLE, control registers, every chip error, a trap on
// one tile stopping all tiles at its cycle, reset after an error, and threads vs one thread.
// Expected cycles are worked out from docs/chip.md in the comments next to each check.
#include <gtest/gtest.h>

#include <map>

#include "chip_harness.hpp"

namespace tessera::model::test {
namespace {

using namespace rv;

constexpr uint32_t kCsrCycle = 0xc00;
constexpr int32_t kXchgOff = static_cast<int32_t>(TESS_MMIO_XCHG_PROG - TESS_MMIO_BASE);

// Supervisor: name the exchange program at 0x300 (or none), SYNC 0, read cycle and XCHG_PROG,
// EXIT 0. Issue cycles: 0, 6, 12, 18 (SYNC, arrival 21), then from the resume slot.
std::vector<uint32_t> exchangeThenExit(bool withProgram) {
  return {kMmio, addi(a0, zero, withProgram ? 0x300 : 0), xchgProgFrom(a0), syncWith(zero),
          csrr(a1, kCsrCycle), lw(a2, t0, kXchgOff), exitWith(zero)};
}

TEST(Chip, SyncReleasesEveryTileOnTheSameCycle) {
  ChipHarness h(2);
  h.place(0, 0, {kMmio, syncWith(zero), csrr(a1, kCsrCycle), exitWith(zero)});  // SYNC at 6
  h.place(1, 0, {kMmio, addi(a2, zero, 1), addi(a2, zero, 2), syncWith(zero),      // SYNC at 18
                 csrr(a1, kCsrCycle), exitWith(zero)});
  h.dev.reset();
  const RunResult r = h.dev.run(100000);
  ASSERT_EQ(r.reason, StopReason::Halted);
  // a_0 = 9, a_1 = 21, A = 21, R = A + SYNC_LATENCY = 25; both resume at slot 30, EXIT at 36.
  EXPECT_EQ(h.dev.tile(0).xreg(0, a1), 30u);
  EXPECT_EQ(h.dev.tile(1).xreg(0, a1), 30u);
  EXPECT_EQ(r.cycles, 37u);
  EXPECT_EQ(h.dev.stats(0).syncWaitCycles, 25u - 9u);
  EXPECT_EQ(h.dev.stats(1).syncWaitCycles, 25u - 21u);
  EXPECT_EQ(h.dev.stats(0).exchangeCycles, 0u);
  EXPECT_EQ(h.dev.stats(0).idleSlots, 37u - 4u);
  EXPECT_EQ(h.dev.stats(1).idleSlots, 37u - 6u);
  EXPECT_TRUE(h.dev.stats(1).halted);
}

// Both tiles: SYNC with descriptor a0 at 18 (arrival 21, R = 25), then EXIT with mem[0x200].
std::vector<uint32_t> syncThenExitWithWord(uint32_t desc) {
  return {kMmio, lui(a0, desc >> 12), addi(a0, a0, static_cast<int32_t>(desc & 0x7ff)),
          syncWith(a0), lw(a1, zero, 0x200), exitWith(a1)};
}

TEST(Chip, HostSyncStopsWithNoCyclesPassingAndSeesHostWrites) {
  ChipHarness h(2);
  for (unsigned t = 0; t < 2; ++t) h.place(t, 0, syncThenExitWithWord(TESS_SYNC_HOST_BIT | 5));
  h.dev.reset();
  RunResult r = h.dev.run(100000);
  ASSERT_EQ(r.reason, StopReason::HostSync);
  EXPECT_EQ(r.hostSyncId, 5u);
  EXPECT_EQ(r.cycles, 25u);
  EXPECT_EQ(h.dev.readControl(TESS_CR_STATUS), TESS_ST_HOST_SYNC | 1u << 4 | 5u << 16);
  EXPECT_EQ(h.dev.readControl(TESS_CR_CYCLE_LO), 25u);
  h.dev.writeControl(TESS_CR_TILE_SEL, 1);
  EXPECT_EQ(h.dev.readControl(TESS_CR_T_STATE), 2u);  // arrived
  EXPECT_EQ(h.dev.stats(0).syncWaitCycles, 4u);
  h.place(0, 0x200, {40});
  h.place(1, 0x200, {41});
  r = h.dev.run(100000);
  ASSERT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.cycles, 37u);  // resume at slot 30, EXIT at 36: as if no time had passed
  EXPECT_EQ(r.exitCode, 40u);
  EXPECT_EQ(h.dev.stats(1).exitCode, 41u);
  EXPECT_EQ(h.dev.stats(0).syncWaitCycles, 4u);
  EXPECT_EQ(h.dev.readControl(TESS_CR_STATUS), TESS_ST_HALTED);
}

TEST(Chip, HostReleaseThroughCtrl) {
  ChipHarness h(1);
  h.place(0, 0, syncThenExitWithWord(TESS_SYNC_HOST_BIT | 1));
  h.dev.reset();
  ASSERT_EQ(h.dev.run(1000).reason, StopReason::HostSync);
  h.dev.writeControl(TESS_CR_CTRL, 4);  // RELEASE
  EXPECT_EQ(h.dev.readControl(TESS_CR_STATUS), TESS_ST_RUNNING);
  EXPECT_EQ(h.dev.run(1000).reason, StopReason::Halted);
}

TEST(Chip, SyncBreakStopsAtInternalSyncsWithoutChangingCycles) {
  for (bool brk : {false, true}) {
    ChipHarness h(2);
    for (unsigned t = 0; t < 2; ++t) h.place(t, 0, syncThenExitWithWord(7));
    h.dev.reset();
    h.dev.setSyncBreak(brk);
    EXPECT_EQ(h.dev.readControl(TESS_CR_SYNC_BREAK), brk ? 1u : 0u);
    RunResult r = h.dev.run(100000);
    if (brk) {
      ASSERT_EQ(r.reason, StopReason::SyncBreak);
      EXPECT_EQ(r.hostSyncId, 7u);
      EXPECT_EQ(r.cycles, 25u);
      EXPECT_EQ(h.dev.readControl(TESS_CR_STATUS), TESS_ST_HOST_SYNC | 7u << 16);  // bit 4 clear
      r = h.dev.run(100000);
    }
    ASSERT_EQ(r.reason, StopReason::Halted);
    EXPECT_EQ(r.cycles, 37u);
  }
}

TEST(Chip, ExchangeMovesWordsWithExactTiming) {
  ChipHarness h(2);
  h.place(0, 0, exchangeThenExit(true));
  h.place(1, 0, exchangeThenExit(true));
  h.place(0, 0x300, xc::prog({xc::send(8, 0x400), {xc::end()}}));
  h.place(1, 0x300, xc::prog({{xc::delay(2)}, xc::recv(10, 0, 0x800), {xc::end()}}));
  for (uint32_t i = 0; i < 8; ++i) h.place(0, 0x400 + 4 * i, {0x1000 + i});
  for (uint32_t i = 0; i < 11; ++i) h.place(1, 0x800 + 4 * i, {0xdeadbeef});
  h.dev.reset();
  const RunResult r = h.dev.run(100000);
  ASSERT_EQ(r.reason, StopReason::Halted) << "cause " << r.trap.cause;
  // R = 25. Tile 0: SEND reads its words at 25, 26 and drives word i at 27 + i; END at 35, X = 36.
  // Tile 1: DELAY 2 at 25, RECV words at 28, 29, receive i at 30 + i takes bus 0 of 27 + i;
  // words 8 and 9 come from cycles 35 and 36, when tile 0 sends nothing (0). END at 40, X = 41.
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(h.word(1, 0x800 + 4 * i), 0x1000 + i) << i;
  EXPECT_EQ(h.word(1, 0x820), 0u);
  EXPECT_EQ(h.word(1, 0x824), 0u);
  EXPECT_EQ(h.word(1, 0x828), 0xdeadbeefu);
  EXPECT_EQ(h.dev.tile(0).xreg(0, a1), 36u);  // first supervisor slot >= 36
  EXPECT_EQ(h.dev.tile(1).xreg(0, a1), 42u);  // first supervisor slot >= 41
  EXPECT_EQ(h.dev.tile(0).xreg(0, a2), 0u);   // XCHG_PROG cleared at the release
  EXPECT_EQ(h.dev.stats(0).exchangeCycles, 11u);
  EXPECT_EQ(h.dev.stats(1).exchangeCycles, 16u);
  EXPECT_EQ(h.dev.stats(1).syncWaitCycles, 4u);
  EXPECT_EQ(r.cycles, 42u + 12 + 1);
}

TEST(Chip, MulticastAndReceivesBeforeTheReleaseGiveZero) {
  ChipHarness h(3);
  for (unsigned t = 0; t < 3; ++t) h.place(t, 0, exchangeThenExit(true));
  h.place(0, 0x300, xc::prog({xc::send(4, 0x400), {xc::end()}}));
  h.place(1, 0x300, xc::prog({{xc::delay(2)}, xc::recv(4, 0, 0x800), {xc::end()}}));
  h.place(2, 0x300, xc::prog({xc::recv(4, 0, 0x800), {xc::end()}}));
  h.place(0, 0x400, {11, 22, 33, 44});
  h.place(2, 0x800, {0xbad0, 0xbad1, 0xbad2, 0xbad3});
  h.dev.reset();
  ASSERT_EQ(h.dev.run(100000).reason, StopReason::Halted);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(h.word(1, 0x800 + 4 * i), 11u * (i + 1));
  // Tile 2 receives i at R+2+i the bus of R-1+i: before R (0), R and R+1 (tile 0 still reading
  // its instruction: 0), then word 0.
  EXPECT_EQ(h.word(2, 0x800), 0u);
  EXPECT_EQ(h.word(2, 0x804), 0u);
  EXPECT_EQ(h.word(2, 0x808), 0u);
  EXPECT_EQ(h.word(2, 0x80c), 11u);
}

TEST(Chip, SendsReadAtTheStartAndReceivesWriteAtTheEndOfACycle) {
  ChipHarness h(1);
  h.place(0, 0, exchangeThenExit(true));
  // SENDRECV on its own bus, receiving one word above what it sends.
  h.place(0, 0x300, xc::prog({xc::sendrecv(4, 0x400, 0, 0x404), {xc::end()}}));
  h.place(0, 0x400, {0x11, 0x22, 0x33, 0x44, 0x55});
  h.dev.reset();
  ASSERT_EQ(h.dev.run(100000).reason, StopReason::Halted);
  // Transfer i at R+3+i: receives 0 for i < 3 (bus of R..R+2), which the next send reads back;
  // i = 3 receives the word sent at R+3, read before any receive wrote.
  EXPECT_EQ(h.word(0, 0x400), 0x11u);
  EXPECT_EQ(h.word(0, 0x404), 0u);
  EXPECT_EQ(h.word(0, 0x408), 0u);
  EXPECT_EQ(h.word(0, 0x40c), 0u);
  EXPECT_EQ(h.word(0, 0x410), 0x11u);
  EXPECT_EQ(h.dev.stats(0).exchangeCycles, 3u + 4 + 1);
}

TEST(Chip, DisabledTilesCountAsHaltedAndSkipSyncs) {
  ChipHarness h(4);
  h.place(0, 0, {kMmio, lui(a0, 0x80000), addi(a0, a0, 9), syncWith(a0), addi(a1, zero, 3),
                 exitWith(a1)});
  h.dev.reset();
  for (unsigned t = 1; t < 4; ++t) h.dev.setTileEnabled(t, false);
  RunResult r = h.dev.run(100000);
  ASSERT_EQ(r.reason, StopReason::HostSync);
  EXPECT_EQ(r.hostSyncId, 9u);
  EXPECT_EQ(r.cycles, 25u);
  r = h.dev.run(100000);
  ASSERT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.cycles, 37u);
  EXPECT_EQ(r.exitCode, 3u);
  const TileStats s = h.dev.stats(2);
  EXPECT_TRUE(s.halted);
  EXPECT_EQ(s.exitCode, 0u);
  EXPECT_EQ(s.instructions, 0u);
  h.dev.writeControl(TESS_CR_TILE_SEL, 2);
  EXPECT_EQ(h.dev.readControl(TESS_CR_T_ENABLE), 0u);
  EXPECT_EQ(h.dev.readControl(TESS_CR_T_STATE), 1u);
  EXPECT_THROW(h.dev.setTileEnabled(2, true), Error);  // only between reset and run
  h.dev.reset();
  EXPECT_EQ(h.dev.readControl(TESS_CR_T_ENABLE), 1u);  // reset value
}

TEST(Chip, ControlRegisters) {
  ChipHarness h(4, 16384);
  for (unsigned t = 0; t < 4; ++t) {
    h.place(t, 0, {kMmio, addi(a1, zero, 1), addi(a1, zero, 2), exitWith(zero)});
  }
  h.dev.reset();
  EXPECT_EQ(h.dev.readControl(TESS_CR_ID), 0x7E550001u);
  EXPECT_EQ(h.dev.readControl(TESS_CR_TILES), 4u);
  EXPECT_EQ(h.dev.readControl(TESS_CR_MEM_BYTES), 16384u);
  EXPECT_EQ(h.dev.readControl(TESS_CR_CONTEXTS), 6u);
  EXPECT_EQ(h.dev.readControl(TESS_CR_STATUS), TESS_ST_RESET);
  ASSERT_EQ(h.dev.run(10).reason, StopReason::MaxCycles);
  EXPECT_EQ(h.dev.readControl(TESS_CR_STATUS), TESS_ST_RUNNING);
  EXPECT_EQ(h.dev.readControl(TESS_CR_CYCLE_LO), 10u);
  EXPECT_EQ(h.dev.readControl(TESS_CR_CYCLE_HI), 0u);
  h.dev.writeControl(TESS_CR_TILE_SEL, 0);
  EXPECT_EQ(h.dev.readControl(TESS_CR_T_INSTR_LO), 2u);  // issued at 0 and 6
  EXPECT_EQ(h.dev.readControl(TESS_CR_T_IDLE_LO), 8u);
  EXPECT_THROW(h.dev.writeControl(TESS_CR_TILE_SEL, 4), Error);
  EXPECT_THROW(h.dev.readControl(0x100), Error);
  EXPECT_THROW(h.dev.writeControl(TESS_CR_ID, 1), Error);
  h.dev.writeControl(TESS_CR_CTRL, 1);  // RESET: registers and counters, memory kept
  EXPECT_EQ(h.dev.readControl(TESS_CR_STATUS), TESS_ST_RESET);
  EXPECT_EQ(h.dev.readControl(TESS_CR_CYCLE_LO), 0u);
  EXPECT_EQ(h.dev.readControl(TESS_CR_T_INSTR_LO), 0u);
  h.dev.writeControl(TESS_CR_CTRL, 2);  // RUN
  EXPECT_EQ(h.dev.readControl(TESS_CR_STATUS), TESS_ST_RUNNING);
  const RunResult r = h.dev.run(1000);
  ASSERT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.cycles, 19u);
  h.dev.writeControl(TESS_CR_TILE_SEL, 3);
  EXPECT_EQ(h.dev.readControl(TESS_CR_T_STATE), 1u);  // halted
  EXPECT_EQ(h.dev.readControl(TESS_CR_T_INSTR_LO), 4u);
}

struct ErrorCase {
  const char* name;
  std::vector<uint32_t> program;  // tile 1's exchange program at 0x300 (tile 0 has none)
  uint64_t cycle;                 // e
  uint32_t cause;
  uint32_t value;
};

class ExchangeError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ExchangeError, StopsTheChipWithContext6) {
  const ErrorCase& c = GetParam();
  ChipHarness h(2);
  h.place(0, 0, exchangeThenExit(false));
  h.place(1, 0, exchangeThenExit(true));
  h.place(1, 0x300, c.program);
  h.dev.reset();
  const RunResult r = h.dev.run(100000);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.cycles, c.cycle + 1);
  EXPECT_EQ(r.trap.tile, 1u);
  EXPECT_EQ(r.trap.context, uint32_t{TESS_EXCHANGE_CONTEXT});
  EXPECT_EQ(r.trap.pc, 0x300u);
  EXPECT_EQ(r.trap.cause, c.cause);
  EXPECT_EQ(r.trap.value, c.value);
  EXPECT_EQ(h.dev.readControl(TESS_CR_STATUS), TESS_ST_ERROR);
  EXPECT_EQ(h.dev.readControl(TESS_CR_ERR_TILE), 1u);
  EXPECT_EQ(h.dev.readControl(TESS_CR_ERR_CONTEXT), 6u);
  EXPECT_EQ(h.dev.readControl(TESS_CR_ERR_PC), 0x300u);
  EXPECT_EQ(h.dev.readControl(TESS_CR_ERR_CAUSE), c.cause);
  EXPECT_EQ(h.dev.readControl(TESS_CR_ERR_VALUE), c.value);
  // The host can reset and go on: a run without the exchange program completes.
  h.place(1, 0, exchangeThenExit(false));
  h.dev.reset();
  EXPECT_EQ(h.dev.run(100000).reason, StopReason::Halted);
}

// R = 25 in every case; one-word instructions fail at R, two-word ones at R + 1.
INSTANTIATE_TEST_SUITE_P(
    Chip, ExchangeError,
    ::testing::Values(
        ErrorCase{"unknown_opcode", {0x50000000u}, 25, TESS_CAUSE_XCHG_INSN, 0x50000000u},
        ErrorCase{"end_reserved_bits", {0x00000001u}, 25, TESS_CAUSE_XCHG_INSN, 1u},
        ErrorCase{"zero_count", xc::send(0, 0x400), 26, TESS_CAUSE_XCHG_INSN, 0x20000000u},
        ErrorCase{"reserved_bits", {0x11000001u}, 25, TESS_CAUSE_XCHG_INSN, 0x11000001u},
        ErrorCase{"bus_out_of_range", xc::recv(1, 2, 0x800), 26, TESS_CAUSE_XCHG_INSN,
                  2u << 20 | 0x800},
        ErrorCase{"recv_outside_sram", xc::recv(1, 0, 0xffff0), 26, TESS_CAUSE_XCHG_ACCESS,
                  0xffff0u},
        ErrorCase{"recv_runs_past_sram", xc::recv(8, 0, 0xfff0), 26, TESS_CAUSE_XCHG_ACCESS,
                  0xfff0u},
        ErrorCase{"send_unaligned", xc::send(1, 0x402), 26, TESS_CAUSE_XCHG_ACCESS, 0x402u},
        ErrorCase{"send_outside_sram", xc::send(1, 0x10000), 26, TESS_CAUSE_XCHG_ACCESS,
                  0x10000u}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Chip, ProgramAddressOutsideSramIsAnAccessFault) {
  ChipHarness h(1);
  h.place(0, 0, {kMmio, lui(a0, 0x10), xchgProgFrom(a0), syncWith(zero), exitWith(zero)});
  h.dev.reset();
  const RunResult r = h.dev.run(1000);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.cycles, 26u);  // fails at R = 25 reading word 0
  EXPECT_EQ(r.trap.cause, uint32_t{TESS_CAUSE_XCHG_ACCESS});
  EXPECT_EQ(r.trap.value, 0x10000u);
  EXPECT_EQ(r.trap.pc, 0x10000u);
}

TEST(Chip, DescriptorMismatch) {
  ChipHarness h(2);
  h.place(0, 0, {kMmio, addi(a0, zero, 1), syncWith(a0), exitWith(zero)});  // SYNC at 12
  h.place(1, 0, {kMmio, addi(a0, zero, 2), addi(a1, zero, 0), syncWith(a0), exitWith(zero)});
  h.dev.reset();
  const RunResult r = h.dev.run(1000);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.cycles, 22u);  // A = 18 + 3
  EXPECT_EQ(r.trap.tile, 1u);
  EXPECT_EQ(r.trap.context, 0u);
  EXPECT_EQ(r.trap.pc, 12u);
  EXPECT_EQ(r.trap.cause, uint32_t{TESS_CAUSE_SYNC_MISMATCH});
  EXPECT_EQ(r.trap.value, 2u);
}

TEST(Chip, SyncWithAHaltedTile) {
  ChipHarness h(3);
  h.place(0, 0, {kMmio, addi(a1, zero, 0), exitWith(zero)});              // halts at 12
  h.place(1, 0, {kMmio, syncWith(zero), exitWith(zero)});                 // arrives at 9
  h.place(2, 0, {kMmio, addi(a1, zero, 0), addi(a1, zero, 0), addi(a1, zero, 0),
                 addi(a1, zero, 0), exitWith(zero)});                     // halts at 30
  h.dev.reset();
  const RunResult r = h.dev.run(1000);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.cycles, 32u);  // detected at max(9, 12 + 1, 30 + 1) = 31
  EXPECT_EQ(r.trap.tile, 1u);
  EXPECT_EQ(r.trap.pc, 4u);
  EXPECT_EQ(r.trap.cause, uint32_t{TESS_CAUSE_SYNC_HALTED});
  EXPECT_EQ(r.trap.value, 0u);  // lowest halted tile
}

TEST(Chip, ContextMisuseOfSyncAndXchgProg) {
  {  // a worker writes SYNC
    ChipHarness h(1);
    h.place(0, 0, {kMmio, addi(t1, zero, 0x100), sw(t1, t0, 0x20), sw(zero, t0, 0x8)});
    h.place(0, 0x100, {kMmio, syncWith(zero)});
    h.dev.reset();
    const RunResult r = h.dev.run(1000);
    ASSERT_EQ(r.reason, StopReason::Trap);
    EXPECT_EQ(r.trap.context, 1u);
    EXPECT_EQ(r.trap.cause, uint32_t{TESS_CAUSE_CONTEXT_MISUSE});
    EXPECT_EQ(r.trap.value, uint32_t{TESS_MMIO_SYNC});
  }
  {  // a worker writes XCHG_PROG
    ChipHarness h(1);
    h.place(0, 0, {kMmio, addi(t1, zero, 0x100), sw(t1, t0, 0x20), sw(zero, t0, 0x8)});
    h.place(0, 0x100, {kMmio, xchgProgFrom(zero)});
    h.dev.reset();
    const RunResult r = h.dev.run(1000);
    ASSERT_EQ(r.reason, StopReason::Trap);
    EXPECT_EQ(r.trap.value, uint32_t{TESS_MMIO_XCHG_PROG});
  }
  {  // SYNC while a worker runs
    ChipHarness h(1);
    h.place(0, 0, {kMmio, addi(t1, zero, 0x100), sw(t1, t0, 0x20), syncWith(zero)});
    h.place(0, 0x100, {jal(zero, 0)});
    h.dev.reset();
    const RunResult r = h.dev.run(1000);
    ASSERT_EQ(r.reason, StopReason::Trap);
    EXPECT_EQ(r.trap.context, 0u);
    EXPECT_EQ(r.trap.pc, 12u);
    EXPECT_EQ(r.trap.cause, uint32_t{TESS_CAUSE_CONTEXT_MISUSE});
    EXPECT_EQ(r.cycles, 19u);
  }
}

TEST(Chip, TrapOnOneTileStopsEveryTileAtItsCycle) {
  for (unsigned threads : {1u, 3u}) {
    ChipHarness h(8, 65536, threads);
    // Tile 5 counts 10000 down (lui/addi at 0, 6; loop at 12 + 12j, 18 + 12j), EBREAK at 120012.
    // Every other tile: addi a0 at 12j, jal at 6 + 12j, forever.
    for (unsigned t = 0; t < 8; ++t) {
      if (t == 5) {
        h.place(t, 0, {lui(a1, 2), addi(a1, a1, 0x710), addi(a1, a1, -1), bne(a1, zero, -4),
                       ebreak()});
      } else {
        h.place(t, 0, {addi(a0, a0, 1), jal(zero, -4)});
      }
    }
    h.dev.reset();
    std::map<unsigned, uint64_t> count, last;
    h.dev.setRetireSink([&](const RetireRecord& rec) {
      count[rec.tile]++;
      last[rec.tile] = std::max(last[rec.tile], rec.cycle);
    });
    const RunResult r = h.dev.run(1'000'000);
    ASSERT_EQ(r.reason, StopReason::Trap);
    EXPECT_EQ(r.cycles, 120013u);
    EXPECT_EQ(r.trap.tile, 5u);
    EXPECT_EQ(r.trap.pc, 16u);
    EXPECT_EQ(r.trap.cause, uint32_t{TESS_CAUSE_BREAKPOINT});
    // Everything up to and including cycle e happens on the other tiles, nothing after.
    EXPECT_EQ(h.dev.tile(0).xreg(0, a0), 10002u);  // addi at 12j <= 120012
    EXPECT_EQ(h.dev.tile(7).xreg(0, a0), 10002u);
    EXPECT_EQ(count[0], 20003u);  // one instruction per 6 cycles, 0..120012
    EXPECT_EQ(last[0], 120012u);
    EXPECT_EQ(h.dev.stats(3).instructions, 20003u);
    EXPECT_EQ(h.dev.stats(3).cycles, 120013u);
    // Reset after the error: counters cleared, memory kept, the same run again.
    h.dev.reset();
    EXPECT_EQ(h.dev.stats(0).instructions, 0u);
    EXPECT_EQ(h.dev.run(1'000'000).cycles, 120013u);
  }
}

// Every tile: 5 supersteps of unequal compute (4(t+1) iterations), then a ring shift by
// SENDRECV, then EXIT with its accumulator. The exchange program names the left neighbour.
void placeRing(ChipHarness& h, unsigned tiles) {
  const std::vector<uint32_t> code{
      kMmio,                        // 0
      csrr(s0, TESS_CSR_TILE_ID),   // 4
      addi(s1, zero, 5),            // 8
      addi(a3, s0, 1),              // 12 outer
      slli(a3, a3, 2),              // 16
      lw(a4, zero, 0x400),          // 20 inner
      add(a4, a4, a3),              // 24
      sw(a4, zero, 0x400),          // 28
      addi(a3, a3, -1),             // 32
      bne(a3, zero, -16),           // 36 -> 20
      addi(a0, zero, 0x300),        // 40
      xchgProgFrom(a0),             // 44
      syncWith(zero),               // 48
      lw(a5, zero, 0x50c),          // 52
      lw(a4, zero, 0x400),          // 56
      add(a4, a4, a5),              // 60
      sw(a4, zero, 0x400),          // 64
      addi(s1, s1, -1),             // 68
      bne(s1, zero, -60),           // 72 -> 12
      lw(a4, zero, 0x400),          // 76
      exitWith(a4)};                // 80
  for (unsigned t = 0; t < tiles; ++t) {
    h.place(t, 0, code);
    h.place(t, 0x300, xc::prog({xc::sendrecv(4, 0x400, (t + tiles - 1) % tiles, 0x500),
                                {xc::end()}}));
  }
}

TEST(Chip, RingOfSuperstepsGivesTheComputedSums) {
  constexpr unsigned kTiles = 4;
  ChipHarness h(kTiles);
  placeRing(h, kTiles);
  h.dev.reset();
  ASSERT_EQ(h.dev.run(10'000'000).reason, StopReason::Halted);
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
    EXPECT_EQ(h.dev.stats(t).exitCode, static_cast<uint32_t>(acc[t])) << "tile " << t;
    EXPECT_GT(h.dev.stats(t).exchangeCycles, 0u);
  }
  // Tile 3 computes longest, so it never waits; the others do.
  EXPECT_EQ(h.dev.stats(3).syncWaitCycles, 5u * TESS_SYNC_LATENCY);
  EXPECT_GT(h.dev.stats(0).syncWaitCycles, h.dev.stats(3).syncWaitCycles);
}

TEST(Chip, ThreadsGiveTheSameRunAsOneThread) {
  constexpr unsigned kTiles = 48;
  struct Outcome {
    std::vector<RunResult> stops;
    std::map<unsigned, std::vector<RetireRecord>> records;
    std::vector<std::vector<uint8_t>> memory;
    std::vector<TileStats> stats;
  };
  auto runWith = [&](unsigned threads) {
    ChipHarness h(kTiles, 4096, threads);
    EXPECT_EQ(h.dev.threads(), threads);
    placeRing(h, kTiles);
    h.dev.reset();
    h.dev.setSyncBreak(true);
    Outcome o;
    h.dev.setRetireSink([&](const RetireRecord& r) { o.records[r.tile].push_back(r); });
    for (;;) {
      o.stops.push_back(h.dev.run(10'000'000));
      if (o.stops.back().reason != StopReason::SyncBreak) break;
    }
    for (unsigned t = 0; t < kTiles; ++t) {
      o.memory.emplace_back(4096);
      h.dev.readMemory(t, 0, o.memory.back());
      o.stats.push_back(h.dev.stats(t));
    }
    return o;
  };
  const Outcome one = runWith(1), many = runWith(4);
  ASSERT_EQ(one.stops.size(), 6u);  // 5 syncs, then the halt
  ASSERT_EQ(many.stops.size(), one.stops.size());
  for (size_t i = 0; i < one.stops.size(); ++i) {
    EXPECT_EQ(many.stops[i].reason, one.stops[i].reason);
    EXPECT_EQ(many.stops[i].cycles, one.stops[i].cycles);
  }
  EXPECT_EQ(one.stops.back().reason, StopReason::Halted);
  EXPECT_EQ(many.records, one.records);
  EXPECT_EQ(many.memory, one.memory);
  for (unsigned t = 0; t < kTiles; ++t) {
    EXPECT_EQ(many.stats[t].instructions, one.stats[t].instructions);
    EXPECT_EQ(many.stats[t].idleSlots, one.stats[t].idleSlots);
    EXPECT_EQ(many.stats[t].syncWaitCycles, one.stats[t].syncWaitCycles);
    EXPECT_EQ(many.stats[t].exchangeCycles, one.stats[t].exchangeCycles);
  }
}

TEST(Chip, PausesAtACycleLimitContinueExactly) {
  constexpr unsigned kTiles = 4;
  ChipHarness whole(kTiles), pieces(kTiles);
  placeRing(whole, kTiles);
  placeRing(pieces, kTiles);
  whole.dev.reset();
  pieces.dev.reset();
  const RunResult w = whole.dev.run(10'000'000);
  RunResult p;
  do p = pieces.dev.run(7); while (p.reason == StopReason::MaxCycles);
  EXPECT_EQ(p.reason, w.reason);
  EXPECT_EQ(p.cycles, w.cycles);
  for (unsigned t = 0; t < kTiles; ++t) {
    EXPECT_EQ(pieces.dev.stats(t).exitCode, whole.dev.stats(t).exitCode);
    EXPECT_EQ(pieces.dev.stats(t).idleSlots, whole.dev.stats(t).idleSlots);
    EXPECT_EQ(pieces.dev.stats(t).syncWaitCycles, whole.dev.stats(t).syncWaitCycles);
    EXPECT_EQ(pieces.dev.stats(t).exchangeCycles, whole.dev.stats(t).exchangeCycles);
  }
}

TEST(Chip, HostAccessOutOfRangeIsAnErrorAndTheDeviceGoesOn) {
  ChipHarness h(2);
  uint8_t buf[8];
  EXPECT_THROW(h.dev.readMemory(2, 0, buf), Error);
  EXPECT_THROW(h.dev.readMemory(0, 65536 - 4, buf), Error);
  EXPECT_THROW(h.place(1, 65536, {1}), Error);
  h.place(0, 0, {kMmio, exitWith(zero)});
  h.place(1, 0, {kMmio, exitWith(zero)});
  h.dev.reset();
  EXPECT_EQ(h.dev.run(1000).reason, StopReason::Halted);
}

TEST(Chip, Mk2Preset) {
  DeviceOptions o;
  o.preset = "mk2";
  o.threads = 2;
  ModelDevice dev(o);
  EXPECT_EQ(dev.info().tiles, 1472u);
  EXPECT_EQ(dev.info().tileMemBytes, 638976u);
  // Every tile: SYNC, then EXIT with its tile id.
  const std::vector<uint32_t> code{kMmio, csrr(a1, TESS_CSR_TILE_ID), syncWith(zero),
                                   exitWith(a1)};
  std::vector<uint8_t> bytes(code.size() * 4);
  std::memcpy(bytes.data(), code.data(), bytes.size());
  for (unsigned t = 0; t < 1472; ++t) dev.writeMemory(t, 0, bytes);
  dev.reset();
  const RunResult r = dev.run(1000);
  ASSERT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.cycles, 25u);  // SYNC at 12, A = 15, R = 19, resume at slot 24 with the EXIT
  EXPECT_EQ(dev.stats(1471).exitCode, 1471u);
  o.preset = "mk3";
  EXPECT_THROW(ModelDevice{o}, Error);
}

TEST(Chip, Ice40Preset) {
  // The iCE40 board's configuration (rtl/params.json, configs: ICE40).
  DeviceOptions o;
  o.preset = "ice40";
  ModelDevice dev(o);
  EXPECT_EQ(dev.info().tiles, TESS_ICE40_NUM_TILES);
  EXPECT_EQ(dev.info().tileMemBytes, TESS_ICE40_TILE_MEM_BYTES);
  EXPECT_EQ(dev.info().hasFpu, TESS_ICE40_HAS_FPU != 0);
  EXPECT_EQ(dev.readControl(TESS_CR_MEM_BYTES), TESS_ICE40_TILE_MEM_BYTES);
  const std::vector<uint32_t> code{kMmio, fmv_w_x(1, zero), exitWith(zero)};
  std::vector<uint8_t> bytes(code.size() * 4);
  std::memcpy(bytes.data(), code.data(), bytes.size());
  dev.writeMemory(0, 0, bytes);
  dev.reset();
  const RunResult r = dev.run(1000);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.trap.cause, uint32_t{TESS_CAUSE_ILLEGAL_INSN});
  EXPECT_EQ(r.trap.pc, 4u);
  EXPECT_EQ(r.trap.value, fmv_w_x(1, zero));
  // A size other than the board's is refused rather than silently changed.
  o.tileMemBytes = 65536;
  EXPECT_THROW(ModelDevice{o}, Error);
  o.tileMemBytes = 0;
  o.tiles = 4;
  EXPECT_THROW(ModelDevice{o}, Error);
  // noFpu alone makes any chip integer-only.
  DeviceOptions n;
  n.tiles = 2;
  n.noFpu = true;
  EXPECT_FALSE(ModelDevice{n}.info().hasFpu);
}

}  // namespace
}  // namespace tessera::model::test
