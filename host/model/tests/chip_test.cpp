// What only the model's chip has: host threads (a trap on one tile of eight stopping all tiles at
// its cycle with 1 and 3 threads, read from the tiles' registers; 48 tiles on 1 and 4 threads
// giving the same run), and the mk2 and ice40 presets. Every scenario both backends share (sync,
// exchange, host syncs, SYNC_BREAK, T_ENABLE, control registers, chip errors) is in
// host/device/tests/chip_suite_test.cpp and runs on model and rtl alike.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "chip_harness.hpp"

namespace tessera::model::test {
namespace {

using namespace rv;

TEST(Chip, TrapOnOneTileStopsEveryTileAtItsCycle) {
  for (unsigned threads : {1u, 3u}) {
    ChipHarness h(8, 65536, threads);
    // Tile 5 counts 10000 down (lui/addi at 0, 6; loop at 12 + 12j, 18 + 12j), EBREAK at 120012.
    // Every other tile: addi a0 at 12j, jal at 6 + 12j, forever.
    for (unsigned t = 0; t < 8; ++t) {
      if (t == 5) {
        h.place(t, 0,
                {lui(a1, 2), addi(a1, a1, 0x710), addi(a1, a1, -1), bne(a1, zero, -4), ebreak()});
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
    placeRing(h.dev);
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

// T_INSTR_LO read at a cycle-limit pause: the model counts an instruction at its retire cycle.
// Model-only by the spec (docs/tile.md, "Stopping at a cycle limit"): at a pause the RTL's
// counters may trail by the instructions still in its pipeline (it reads 1 here). The rest of
// this scenario runs on both backends (chip_suite_test.cpp, ControlRegisters).
TEST(Chip, InstructionCountAtAPause) {
  ChipHarness h(4, 16384);
  for (unsigned t = 0; t < 4; ++t) {
    h.place(t, 0, {kMmio, addi(a1, zero, 1), addi(a1, zero, 2), exitWith(zero)});
  }
  h.dev.reset();
  EXPECT_EQ(h.dev.readControl(TESS_CR_MEM_BYTES), 16384u);
  ASSERT_EQ(h.dev.run(10).reason, StopReason::MaxCycles);
  h.dev.writeControl(TESS_CR_TILE_SEL, 0);
  EXPECT_EQ(h.dev.readControl(TESS_CR_T_INSTR_LO), 2u);  // issued at 0 and 6
  EXPECT_EQ(h.dev.readControl(TESS_CR_T_IDLE_LO), 8u);
}

TEST(Chip, Mk2Preset) {
  DeviceOptions o;
  o.preset = "mk2";
  o.threads = 2;
  ModelDevice dev(o);
  EXPECT_EQ(dev.info().tiles, 1472u);
  EXPECT_EQ(dev.info().tileMemBytes, 638976u);
  // Every tile: SYNC, then EXIT with its tile id.
  const std::vector<uint32_t> code{kMmio, csrr(a1, TESS_CSR_TILE_ID), syncWith(zero), exitWith(a1)};
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

// Runs {kMmio, bad, EXIT} on tile 0 of dev: bad must trap as an illegal instruction at pc 4.
void expectIllegalSecondWord(ModelDevice& dev, uint32_t bad) {
  chipprog::place(dev, 0, 0, {kMmio, bad, exitWith(zero)});
  dev.reset();
  const RunResult r = dev.run(1000);
  ASSERT_EQ(r.reason, StopReason::Trap) << std::hex << bad;
  EXPECT_EQ(r.trap.cause, uint32_t{TESS_CAUSE_ILLEGAL_INSN});
  EXPECT_EQ(r.trap.pc, 4u);
  EXPECT_EQ(r.trap.value, bad);
}

TEST(Chip, Ice40Preset) {
  // The iCE40 board's configuration (rtl/params.json, configs: ICE40).
  DeviceOptions o;
  o.preset = "ice40";
  ModelDevice dev(o);
  EXPECT_EQ(dev.info().tiles, TESS_ICE40_NUM_TILES);
  EXPECT_EQ(dev.info().tileMemBytes, TESS_ICE40_TILE_MEM_BYTES);
  EXPECT_EQ(dev.info().hasFpu, TESS_ICE40_HAS_FPU != 0);
  EXPECT_EQ(dev.info().hasMulDiv, TESS_ICE40_HAS_MULDIV != 0);
  EXPECT_EQ(dev.info().contexts, TESS_ICE40_NUM_CONTEXTS);
  EXPECT_EQ(dev.readControl(TESS_CR_MEM_BYTES), TESS_ICE40_TILE_MEM_BYTES);
  EXPECT_EQ(dev.readControl(TESS_CR_CONTEXTS), TESS_ICE40_NUM_CONTEXTS);
  expectIllegalSecondWord(dev, fmv_w_x(1, zero));
  expectIllegalSecondWord(dev, mul(1, 2, 3));
  // A size other than the board's is refused rather than silently changed.
  o.tileMemBytes = 65536;
  EXPECT_THROW(ModelDevice{o}, Error);
  o.tileMemBytes = 0;
  o.tiles = 4;
  EXPECT_THROW(ModelDevice{o}, Error);
  o.tiles = 0;
  o.contexts = TESS_ICE40_NUM_CONTEXTS + 1;
  EXPECT_THROW(ModelDevice{o}, Error);
  // contexts alone sets any chip's count, 2..6.
  DeviceOptions c;
  c.tiles = 1;
  c.contexts = 3;
  ModelDevice three{c};
  EXPECT_EQ(three.info().contexts, 3u);
  EXPECT_EQ(three.readControl(TESS_CR_CONTEXTS), 3u);
  for (unsigned bad : {1u, 7u}) {
    c.contexts = bad;
    EXPECT_THROW(ModelDevice{c}, Error) << bad;
  }
  // noFpu alone makes any chip integer-only.
  DeviceOptions n;
  n.tiles = 2;
  n.noFpu = true;
  EXPECT_FALSE(ModelDevice{n}.info().hasFpu);
  EXPECT_TRUE(ModelDevice{n}.info().hasMulDiv);
  // noMulDiv alone takes the M extension away from any chip, and an M instruction traps.
  DeviceOptions m;
  m.tiles = 1;
  m.noMulDiv = true;
  ModelDevice noM{m};
  EXPECT_FALSE(noM.info().hasMulDiv);
  EXPECT_TRUE(noM.info().hasFpu);
  expectIllegalSecondWord(noM, mul(1, 2, 3));
}

TEST(Chip, MatrixUnitOption) {
  // DeviceOptions::matrixUnit: unset = the configuration's MATRIX_UNIT; the model builds either,
  // and reports it in ChipInfo (a compiler Target made from it has it too).
  DeviceOptions o;
  o.tiles = 1;
  EXPECT_EQ(ModelDevice{o}.info().hasMatrixUnit, TESS_MATRIX_UNIT != 0);
  const uint32_t ampClr = TESS_AMP_OPCODE | TESS_AMP_F3_CLR << 12;
  o.matrixUnit = true;
  ModelDevice on{o};
  EXPECT_TRUE(on.info().hasMatrixUnit);
  EXPECT_TRUE(ChipShape::of(on.info()).hasMatrixUnit);
  chipprog::place(on, 0, 0, {kMmio, ampClr, exitWith(zero)});
  on.reset();
  EXPECT_EQ(on.run(1000).reason, StopReason::Halted);
  o.matrixUnit = false;
  ModelDevice off{o};
  EXPECT_FALSE(off.info().hasMatrixUnit);
  expectIllegalSecondWord(off, ampClr);
  // The unit writes f-registers: an integer-only tile cannot have it, and loses the default one.
  o.matrixUnit = true;
  o.noFpu = true;
  EXPECT_THROW(ModelDevice{o}, Error);
  o.matrixUnit.reset();
  EXPECT_FALSE(ModelDevice{o}.info().hasMatrixUnit);
}

TEST(Chip, CounterWidthOfThePresetsAndTheOption) {
  // COUNTER_BITS (rtl/params.json): 64 by default, 32 on the iCE40 board; DeviceOptions::
  // counterBits sets it on any other chip. The wrap itself: device tests, CounterSuite.
  DeviceOptions o;
  EXPECT_EQ(ModelDevice{o}.info().counterBits, TESS_COUNTER_BITS);
  o.preset = "ice40";
  EXPECT_EQ(ModelDevice{o}.info().counterBits, TESS_ICE40_COUNTER_BITS);
  o.counterBits = TESS_ICE40_COUNTER_BITS;
  EXPECT_EQ(ModelDevice{o}.info().counterBits, TESS_ICE40_COUNTER_BITS);
  o.counterBits = 64;  // not the board's: refused like another size
  EXPECT_THROW(ModelDevice{o}, Error);
  o.preset = "mk2";
  o.counterBits = 32;
  EXPECT_EQ(chipGeometry(o).counterBits, 32u);
  o.preset = "";
  o.tiles = 1;
  EXPECT_EQ(ModelDevice{o}.info().counterBits, 32u);
  o.counterBits = 48;
  EXPECT_THROW(ModelDevice{o}, Error);
}

TEST(Chip, CounterHelpersWrapModuloTheWidth) {
  EXPECT_EQ(wrapCounter(0x1'2345'6789ull, 32), 0x2345'6789u);
  EXPECT_EQ(wrapCounter(0x1'2345'6789ull, 64), 0x1'2345'6789ull);
  EXPECT_EQ(wrapCounter(~uint64_t{0}, 64), ~uint64_t{0});
  // Across a wrap of a 32-bit counter: 0xffff'fff0 -> 0x10 is 0x20 counts.
  EXPECT_EQ(counterDelta(0x10, 0xffff'fff0u, 32), 0x20u);
  EXPECT_EQ(counterDelta(0x1'0000'0010ull, 0xffff'fff0u, 64), 0x20u);
  TileStats s;
  s.cycles = 0x1'0000'0005ull;
  s.instructions = 0x2'0000'0001ull;
  s.contextInstructions[5] = 0x3'0000'0002ull;
  s.idleSlots = 0x4'0000'0003ull;
  s.syncWaitCycles = 0x5'0000'0004ull;
  s.exchangeCycles = 0x6'0000'0006ull;
  wrapCounters(s, 32);
  EXPECT_EQ(s.cycles, 5u);
  EXPECT_EQ(s.instructions, 1u);
  EXPECT_EQ(s.contextInstructions[5], 2u);
  EXPECT_EQ(s.idleSlots, 3u);
  EXPECT_EQ(s.syncWaitCycles, 4u);
  EXPECT_EQ(s.exchangeCycles, 6u);
}

TEST(Chip, Ice40PresetHasNoExchangeEngine) {
  // HAS_EXCHANGE = 0 (docs/chip.md, "A chip without exchange engines"): a sync without an
  // exchange program resumes as on any chip; one with a program is an error at the release R.
  DeviceOptions o;
  o.preset = "ice40";
  ModelDevice dev(o);
  const std::vector<uint32_t> code{kMmio,           // 0
                                   syncWith(zero),  // 6: arrives at 9, R = 13, resumes at slot 18
                                   addi(a0, zero, 0x200),  // 18
                                   xchgProgFrom(a0),       // 24
                                   syncWith(zero),         // 30: arrives at 33, R = 37: the error
                                   exitWith(zero)};
  std::vector<uint8_t> bytes(code.size() * 4);
  std::memcpy(bytes.data(), code.data(), bytes.size());
  dev.writeMemory(0, 0, bytes);
  const uint32_t endWord = xc::end();  // a valid program: without an engine it does not matter
  dev.writeMemory(0, 0x200, {reinterpret_cast<const uint8_t*>(&endWord), 4});
  dev.reset();
  const RunResult r = dev.run(1000);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.cycles, 38u);
  EXPECT_EQ(r.trap.tile, 0u);
  EXPECT_EQ(r.trap.context, uint32_t{TESS_EXCHANGE_CONTEXT});
  EXPECT_EQ(r.trap.cause, uint32_t{TESS_CAUSE_XCHG_ABSENT});
  EXPECT_EQ(r.trap.pc, 0x200u);
  EXPECT_EQ(r.trap.value, 0x200u);
  EXPECT_EQ(dev.stats(0).syncWaitCycles, 2u * TESS_SYNC_LATENCY);
  EXPECT_EQ(dev.stats(0).exchangeCycles, 1u);  // R, as an engine failing on its first word
  // The same program on a chip with engines runs the END and exits.
  DeviceOptions full;
  full.tiles = 1;
  full.tileMemBytes = TESS_ICE40_TILE_MEM_BYTES;
  ModelDevice withEngine(full);
  withEngine.writeMemory(0, 0, bytes);
  withEngine.writeMemory(0, 0x200, {reinterpret_cast<const uint8_t*>(&endWord), 4});
  withEngine.reset();
  EXPECT_EQ(withEngine.run(1000).reason, StopReason::Halted);
}

TEST(Chip, Ice40PresetRefusesCheckpointRegisters) {
  // HAS_CHECKPOINT = 0: the checkpoint registers are refused both ways, naming the register, and
  // so are the state writes at a sync stop; the other registers work.
  DeviceOptions o;
  o.preset = "ice40";
  ModelDevice dev(o);
  // CTX_SEL and reading C_INSTRET stay: a host reads instruction counts per context with them.
  for (uint32_t off = TESS_CR_REG_SEL; off <= TESS_CR_T_XCHG_PROG; off += 4) {
    if (off != TESS_CR_C_INSTRET_LO && off != TESS_CR_C_INSTRET_HI) {
      EXPECT_THROW(dev.readControl(off), Error) << fmt::format("0x{:03x}", off);
    }
    EXPECT_THROW(dev.writeControl(off, 0), Error) << fmt::format("0x{:03x}", off);
  }
  dev.writeControl(TESS_CR_CTX_SEL, TESS_ICE40_NUM_CONTEXTS - 1);
  EXPECT_EQ(dev.readControl(TESS_CR_CTX_SEL), TESS_ICE40_NUM_CONTEXTS - 1);
  EXPECT_THROW(dev.writeControl(TESS_CR_CTX_SEL, TESS_ICE40_NUM_CONTEXTS), Error);
  dev.writeControl(TESS_CR_CTX_SEL, 0);
  try {
    dev.readControl(TESS_CR_C_PC);
    ADD_FAILURE() << "C_PC was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("C_PC"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no checkpoint support"), std::string::npos) << e.what();
  }
  // A stop at a sync (SYNC_BREAK), where a chip with checkpoints accepts state writes.
  const std::vector<uint32_t> code{kMmio, syncWith(zero), exitWith(zero)};
  std::vector<uint8_t> bytes(code.size() * 4);
  std::memcpy(bytes.data(), code.data(), bytes.size());
  dev.writeMemory(0, 0, bytes);
  dev.reset();
  dev.writeControl(TESS_CR_SYNC_BREAK, 1);
  ASSERT_EQ(dev.run(1000).reason, StopReason::SyncBreak);
  for (uint32_t off :
       {TESS_CR_CYCLE_LO, TESS_CR_CYCLE_HI, TESS_CR_T_IDLE_LO, TESS_CR_T_IDLE_HI,
        TESS_CR_T_SYNCWAIT_LO, TESS_CR_T_SYNCWAIT_HI, TESS_CR_T_EXCH_LO, TESS_CR_T_EXCH_HI}) {
    EXPECT_THROW(dev.writeControl(off, 0), Error) << fmt::format("0x{:03x}", off);
    EXPECT_NO_THROW(dev.readControl(off)) << fmt::format("0x{:03x}", off);
  }
  EXPECT_EQ(dev.run(1000).reason, StopReason::Halted);
  // The supervisor retired its three instructions (the halting store counts), read through
  // CTX_SEL + C_INSTRET as the board's bridge does; a worker none.
  EXPECT_EQ(dev.readControl(TESS_CR_C_INSTRET_LO), 3u);
  EXPECT_EQ(dev.readControl(TESS_CR_C_INSTRET_HI), 0u);
  dev.writeControl(TESS_CR_CTX_SEL, 1);
  EXPECT_EQ(dev.readControl(TESS_CR_C_INSTRET_LO), 0u);
  // The default chip has them.
  DeviceOptions d;
  d.tiles = 1;
  ModelDevice full(d);
  EXPECT_EQ(full.readControl(TESS_CR_CTX_SEL), 0u);
}

}  // namespace
}  // namespace tessera::model::test
