// Multi-tile program suite (docs/chip.md): every "chip" and "chiperr" program of the sw/ manifest,
// on every backend with the tile count the manifest gives, and model against rtl stop by stop.
//  - chip programs must halt with exit code 0 on every tile and "<name> ok" on tile 0, stopping at
//    every sync (SYNC_BREAK) with the documented STATUS, and with the same cycle counts as a run
//    without SYNC_BREAK; chip_host_sync's host syncs are served by hostSyncHandler below.
//  - chiperr programs must stop with the error at their tess_expect symbol (tile, context, pc,
//    cause, value), shown also by the ERR_ registers; then the same device is reset and runs a good
//    program, to show the host can go on.
//  - ChipLockstepTest compares model and rtl at every sync: cycles, STATUS, counters, retired
//    instructions and every tile's memory, and reports the first divergence.
//  - Host-port range errors, a disabled tile at a sync, the identification registers, and the
//    model with several host threads against one thread.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backends.hpp"
#include "chip_session.hpp"
#include "lockstep.hpp"
#include "program_manifest.hpp"
#include "program_runner.hpp"
#include "tessera/chip_params.h"
#include "tessera/device.hpp"
#include "tessera/error.hpp"

namespace tessera::test {
namespace {

constexpr uint64_t kMaxCycles = 20'000'000;

std::vector<Program> chipPrograms() {
  std::vector<Program> out;
  for (const Program& p : readManifest(TESSERA_SW_BIN_DIR)) {
    if (p.multiTile()) out.push_back(p);
  }
  return out;
}

std::vector<std::string> devices() {
  return backends::names();
}

bool hasDevice(const std::string& d) {
  const auto all = devices();
  return std::find(all.begin(), all.end(), d) != all.end();
}

std::string elfPath(const std::string& name) {
  return std::string(TESSERA_SW_BIN_DIR) + "/" + name + ".elf";
}

DeviceOptions withTiles(unsigned tiles) {
  DeviceOptions o;
  o.tiles = tiles;
  return o;
}

uint32_t readWord(Device& dev, unsigned tile, uint32_t addr) {
  uint8_t b[4];
  dev.readMemory(tile, addr, b);
  return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
}

void writeWord(Device& dev, unsigned tile, uint32_t addr, uint32_t v) {
  const uint8_t b[4] = {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
  dev.writeMemory(tile, addr, b);
}

uint32_t symbolOrThrow(const ElfImage& image, const std::string& name) {
  const auto at = image.symbol(name);
  if (!at) throw Error("program has no symbol " + name);
  return *at;
}

/// The host side of sw/tests/chip/chip_host_sync.c; the formulas are the ones its header comment
/// specifies (the test's specification, not values taken from a device).
void hostSyncHandler(Device& dev, const ElfImage& image, uint32_t id,
                     std::vector<std::string>& failures) {
  constexpr uint32_t kHn = 16;
  const unsigned tiles = dev.info().tiles;
  if (id == 1) {
    const uint32_t out = symbolOrThrow(image, "host_out"), in = symbolOrThrow(image, "host_in");
    for (unsigned t = 0; t < tiles; ++t) {
      for (uint32_t i = 0; i < kHn; ++i) {
        const uint32_t got = readWord(dev, t, out + 4 * i), want = 0xA5000000u + (t << 16) + i;
        if (got != want)
          failures.push_back(fmt::format(
              "host sync 1: tile {} host_out[{}] = 0x{:08x}, want 0x{:08x}", t, i, got, want));
        writeWord(dev, t, in + 4 * i, 0x5A000000u + (t << 16) + 3 * i);
      }
    }
  } else if (id == 3) {
    const uint32_t ring = symbolOrThrow(image, "ring_in"), token = symbolOrThrow(image, "token");
    for (unsigned t = 0; t < tiles; ++t) {
      const uint32_t l = (t + tiles - 1) % tiles;
      for (uint32_t i = 0; i < kHn; ++i) {
        const uint32_t got = readWord(dev, t, ring + 4 * (3 + i));
        const uint32_t want = 3 * (0x5A000000u + (l << 16) + 3 * i) + l;
        if (got != want)
          failures.push_back(fmt::format(
              "host sync 3: tile {} ring_in[{}] = 0x{:08x}, want 0x{:08x}", t, i, got, want));
      }
      writeWord(dev, t, token, 0x70000000u + t);
    }
  } else {
    failures.push_back(fmt::format("unexpected host sync {}", id));
  }
}

/// Serve the host syncs of a run on one device: stops at SyncBreak are counted and checked.
struct StepLog {
  unsigned syncBreaks = 0;
  std::vector<uint32_t> hostSyncs;
  std::vector<std::string> failures;
};

/// Run a loaded session to its end, serving host syncs and checking STATUS at each stop.
RunResult runToEnd(ChipSession& s, const ElfImage& image, StepLog& log) {
  for (;;) {
    const RunResult r = s.step();
    const uint32_t status = s.device().readControl(TESS_CR_STATUS);
    if (r.reason == StopReason::SyncBreak) {
      ++log.syncBreaks;
      EXPECT_EQ(status, TESS_ST_HOST_SYNC | r.hostSyncId << 16)
          << "STATUS at internal sync " << r.hostSyncId;
      continue;
    }
    if (r.reason == StopReason::HostSync) {
      log.hostSyncs.push_back(r.hostSyncId);
      EXPECT_EQ(status, TESS_ST_HOST_SYNC | 1u << 4 | r.hostSyncId << 16)
          << "STATUS at host sync " << r.hostSyncId;
      hostSyncHandler(s.device(), image, r.hostSyncId, log.failures);
      continue;
    }
    return r;
  }
}

/// Check that the error the device reports is the one the program declares, also in the ERR_
/// registers.
void expectDeclaredError(Device& dev, const RunResult& r, const TrapExpectation& e) {
  ASSERT_EQ(r.reason, StopReason::Trap) << "exit code " << r.exitCode;
  SCOPED_TRACE(describeTrap(r.trap));
  EXPECT_EQ(r.trap.tile, e.tile);
  EXPECT_EQ(r.trap.context, e.context);
  EXPECT_EQ(r.trap.pc, e.pc) << std::hex << "0x" << r.trap.pc << " vs 0x" << e.pc;
  EXPECT_EQ(r.trap.cause, e.cause);
  EXPECT_EQ(r.trap.value, e.value) << std::hex << "0x" << r.trap.value << " vs 0x" << e.value;
  EXPECT_EQ(dev.readControl(TESS_CR_STATUS) & 0xfu, TESS_ST_ERROR);
  EXPECT_EQ(dev.readControl(TESS_CR_ERR_TILE), r.trap.tile);
  EXPECT_EQ(dev.readControl(TESS_CR_ERR_CONTEXT), r.trap.context);
  EXPECT_EQ(dev.readControl(TESS_CR_ERR_PC), r.trap.pc);
  EXPECT_EQ(dev.readControl(TESS_CR_ERR_CAUSE), r.trap.cause);
  EXPECT_EQ(dev.readControl(TESS_CR_ERR_VALUE), r.trap.value);
}

/// Check a finished good run: every tile halted with exit 0, tile 0 printed "<name> ok".
void expectAllPassed(ChipSession& s, const RunResult& r, const std::string& name) {
  Device& dev = s.device();
  ASSERT_EQ(r.reason, StopReason::Halted)
      << (r.reason == StopReason::Trap ? describeTrap(r.trap) : "cycle limit");
  EXPECT_EQ(dev.readControl(TESS_CR_STATUS) & 0xfu, TESS_ST_HALTED);
  uint64_t last = 0;
  for (unsigned t = 0; t < s.tiles(); ++t) {
    const TileStats st = dev.stats(t);
    EXPECT_TRUE(st.halted) << "tile " << t;
    EXPECT_EQ(st.exitCode, 0u) << "tile " << t << " failed check " << st.exitCode
                               << "; console: " << dev.console(t);
    dev.writeControl(TESS_CR_TILE_SEL, t);
    EXPECT_EQ(dev.readControl(TESS_CR_T_STATE) & 1u, 1u) << "tile " << t;
    EXPECT_EQ(dev.readControl(TESS_CR_T_EXIT), st.exitCode) << "tile " << t;
    EXPECT_EQ(dev.readControl(TESS_CR_T_INSTR_LO), uint32_t(st.instructions)) << "tile " << t;
    EXPECT_EQ(dev.readControl(TESS_CR_T_SYNCWAIT_LO), uint32_t(st.syncWaitCycles)) << "tile " << t;
    EXPECT_EQ(dev.readControl(TESS_CR_T_EXCH_LO), uint32_t(st.exchangeCycles)) << "tile " << t;
    last = std::max(last, st.cycles);
  }
  EXPECT_EQ(r.cycles, last) << "a halted chip's cycle count is the last tile's halt cycle + 1";
  EXPECT_EQ(dev.console(0), name + " ok\n");
}

using Param = std::tuple<std::string, Program>;

class ChipProgramTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override { backends::skipIfExcluded(std::get<0>(GetParam())); }
};

TEST_P(ChipProgramTest, RunsAsDeclared) {
  const auto& [spec, program] = GetParam();
  ChipSession s(spec, withTiles(program.tiles));
  ASSERT_EQ(s.tiles(), program.tiles);
  const ElfImage image = s.load(elfPath(program.name), kMaxCycles);
  s.device().setSyncBreak(true);
  StepLog log;
  const RunResult r = runToEnd(s, image, log);
  ASSERT_NE(r.reason, StopReason::MaxCycles) << program.name << " did not stop";
  RecordProperty("cycles", std::to_string(r.cycles));
  RecordProperty("syncs", std::to_string(log.syncBreaks + log.hostSyncs.size()));
  for (const std::string& f : log.failures) ADD_FAILURE() << f;

  if (program.kind == "chiperr") {
    const auto expect = findExpectation(image);
    ASSERT_TRUE(expect.has_value()) << "no tess_expect in " << program.name;
    expectDeclaredError(s.device(), r, *expect);
    // The host goes on: reset, load a good program on the same device, run it.
    const ElfImage good = s.load(elfPath("chip_multicast"), kMaxCycles);
    StepLog goodLog;
    expectAllPassed(s, runToEnd(s, good, goodLog), "chip_multicast");
    return;
  }
  expectAllPassed(s, r, program.name);
  EXPECT_GT(log.syncBreaks + log.hostSyncs.size(), 0u) << "a chip program syncs at least once";
  if (program.name == "chip_host_sync") {
    EXPECT_EQ(log.hostSyncs, (std::vector<uint32_t>{1, 3}));
  } else {
    EXPECT_TRUE(log.hostSyncs.empty());
  }

  // SYNC_BREAK must not change any cycle count: run again without it and compare.
  std::vector<TileStats> withBreak;
  for (unsigned t = 0; t < s.tiles(); ++t) withBreak.push_back(s.device().stats(t));
  const ElfImage again = s.load(elfPath(program.name), kMaxCycles);
  StepLog plain;
  const RunResult r2 = runToEnd(s, again, plain);
  EXPECT_EQ(plain.syncBreaks, 0u);
  EXPECT_EQ(r2.reason, r.reason);
  EXPECT_EQ(r2.cycles, r.cycles);
  for (unsigned t = 0; t < s.tiles(); ++t) {
    const TileStats st = s.device().stats(t);
    EXPECT_EQ(st.instructions, withBreak[t].instructions) << "tile " << t;
    EXPECT_EQ(st.idleSlots, withBreak[t].idleSlots) << "tile " << t;
    EXPECT_EQ(st.syncWaitCycles, withBreak[t].syncWaitCycles) << "tile " << t;
    EXPECT_EQ(st.exchangeCycles, withBreak[t].exchangeCycles) << "tile " << t;
  }
}

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  const Program& p = std::get<1>(info.param);
  return fmt::format("{}_{}_{}t", std::get<0>(info.param), p.name, p.tiles);
}

std::vector<Param> allParams() {
  std::vector<Param> out;
  for (const auto& d : devices()) {
    for (const auto& p : chipPrograms()) out.emplace_back(d, p);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Chip, ChipProgramTest, ::testing::ValuesIn(allParams()), paramName);

/// Model and rtl compared at every sync of every chip program.
class ChipLockstepTest : public ::testing::TestWithParam<Program> {};

TEST_P(ChipLockstepTest, ModelAndRtlAgreeAtEverySync) {
  if (!hasDevice("rtl") || !hasDevice("model")) GTEST_SKIP() << "needs both model and rtl";
  const Program& p = GetParam();
  const ElfImage image = ElfImage::fromFile(elfPath(p.name), TESS_TILE_MEM_BYTES);
  std::vector<std::string> hostFailures;
  LockstepOptions options;
  options.tiles = p.tiles;
  options.allTiles = true;
  options.maxCycles = kMaxCycles;
  options.onHostSync = [&](Device& dev, uint32_t id) {
    hostSyncHandler(dev, image, id, hostFailures);
  };
  const LockstepReport r = runLockstep(elfPath(p.name), "model", "rtl", options);
  EXPECT_TRUE(r.agree()) << r.describe();
  for (const std::string& f : hostFailures) ADD_FAILURE() << f;
  EXPECT_NE(r.a.result.reason, StopReason::MaxCycles);
  RecordProperty("stops", std::to_string(r.a.stops));
  RecordProperty("cycles", std::to_string(r.a.result.cycles));
}

INSTANTIATE_TEST_SUITE_P(Chip, ChipLockstepTest, ::testing::ValuesIn(chipPrograms()),
                         [](const ::testing::TestParamInfo<Program>& info) {
                           return fmt::format("{}_{}t", info.param.name, info.param.tiles);
                         });

/// Per-device tests that are not one program each.
class ChipDeviceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { backends::skipIfExcluded(GetParam()); }
};

TEST_P(ChipDeviceTest, IdentificationRegisters) {
  ChipSession s(GetParam(), withTiles(4));
  Device& dev = s.device();
  EXPECT_EQ(dev.readControl(TESS_CR_ID), TESS_CHIP_ID);
  EXPECT_EQ(dev.readControl(TESS_CR_TILES), 4u);
  EXPECT_EQ(dev.readControl(TESS_CR_MEM_BYTES), dev.info().tileMemBytes);
  EXPECT_EQ(dev.readControl(TESS_CR_CONTEXTS), TESS_NUM_CONTEXTS);
  EXPECT_EQ(dev.readControl(TESS_CR_SYNC_BREAK), 0u);
  dev.writeControl(TESS_CR_TILE_SEL, 2);
  EXPECT_EQ(dev.readControl(TESS_CR_TILE_SEL), 2u);
  EXPECT_EQ(dev.readControl(TESS_CR_T_ENABLE), 1u);
  dev.setTileEnabled(2, false);
  dev.writeControl(TESS_CR_TILE_SEL, 2);
  EXPECT_EQ(dev.readControl(TESS_CR_T_ENABLE), 0u);
  dev.reset();
  dev.writeControl(TESS_CR_TILE_SEL, 2);
  EXPECT_EQ(dev.readControl(TESS_CR_T_ENABLE), 1u) << "reset enables every tile";
}

// docs/chip.md: an unknown or read-only offset, TILE_SEL >= T and T_ENABLE outside the reset
// state are refused — by the model and by the RTL's control-port error flag alike — and change
// nothing (issue 13, item 4).
TEST_P(ChipDeviceTest, RefusedControlAccessesChangeNothing) {
  ChipSession s(GetParam(), withTiles(4));
  Device& dev = s.device();
  for (uint32_t offset : {uint32_t{0x1000}, uint32_t{0x1000} + TESS_CR_ID, uint32_t{TESS_CR_CTRL},
                          uint32_t{0x038}, uint32_t{0x002}, uint32_t{0x070}, uint32_t{0xFFC}})
    EXPECT_THROW(dev.readControl(offset), Error) << "read of 0x" << std::hex << offset;
  for (uint32_t offset :
       {uint32_t{TESS_CR_ID}, uint32_t{TESS_CR_STATUS}, uint32_t{TESS_CR_CYCLE_LO},
        uint32_t{TESS_CR_T_EXIT}, uint32_t{0x1000} + TESS_CR_TILE_SEL})
    EXPECT_THROW(dev.writeControl(offset, 1), Error) << "write of 0x" << std::hex << offset;
  EXPECT_EQ(dev.readControl(TESS_CR_ID), TESS_CHIP_ID);
  dev.writeControl(TESS_CR_TILE_SEL, 2);
  EXPECT_THROW(dev.writeControl(TESS_CR_TILE_SEL, 99), Error);
  EXPECT_THROW(dev.writeControl(TESS_CR_TILE_SEL, 4), Error);
  EXPECT_EQ(dev.readControl(TESS_CR_TILE_SEL), 2u) << "a refused TILE_SEL changed it";
  dev.writeControl(TESS_CR_CTRL, 2u);  // RUN: the chip leaves the reset state
  EXPECT_THROW(dev.writeControl(TESS_CR_T_ENABLE, 0), Error);
  EXPECT_EQ(dev.readControl(TESS_CR_T_ENABLE), 1u) << "a refused T_ENABLE changed it";
  dev.reset();
  dev.writeControl(TESS_CR_TILE_SEL, 2);
  dev.writeControl(TESS_CR_T_ENABLE, 0);  // allowed again after a reset
  EXPECT_EQ(dev.readControl(TESS_CR_T_ENABLE), 0u);
}

TEST_P(ChipDeviceTest, HostAccessOutOfRangeIsReportedAndHarmless) {
  ChipSession s(GetParam(), withTiles(4));
  Device& dev = s.device();
  const uint32_t mem = dev.info().tileMemBytes;
  auto expectError = [](const std::function<void()>& f, const std::vector<std::string>& mentions) {
    try {
      f();
      ADD_FAILURE() << "no tessera::Error";
    } catch (const Error& e) {
      const std::string msg = e.what();
      for (const std::string& m : mentions)
        EXPECT_NE(msg.find(m), std::string::npos) << "\"" << msg << "\" lacks " << m;
    }
  };
  uint8_t buf[8] = {};
  const std::string lastWord = fmt::format("{:x}", mem - 4);
  expectError([&] { dev.readMemory(1, mem - 4, std::span<uint8_t>(buf, 8)); },
              {"tile 1", lastWord});
  expectError([&] { dev.writeMemory(3, mem - 4, std::span<const uint8_t>(buf, 8)); },
              {"tile 3", lastWord});
  expectError([&] { dev.readMemory(2, 0x80000000u, std::span<uint8_t>(buf, 4)); },
              {"tile 2", "80000000"});
  expectError([&] { dev.readMemory(4, 0, std::span<uint8_t>(buf, 4)); }, {"tile 4"});
  // Still usable: a full program runs.
  const ElfImage image = s.load(elfPath("chip_multicast"), kMaxCycles);
  StepLog log;
  expectAllPassed(s, runToEnd(s, image, log), "chip_multicast");
}

TEST_P(ChipDeviceTest, DisabledTileTakesNoPartInSyncs) {
  // docs/chip.md: a disabled tile counts as halted (exit 0, counters 0) and takes no part in
  // syncs; a tile halted by EXIT does (cause 26). chip_ring_shift with tile 1 disabled: sync 1
  // completes without it, tile 2 then receives only zeros from bus 1 and exits with its check 31,
  // and sync 2 fails on tile 0 because tile 2 halted.
  ChipSession s(GetParam(), withTiles(4));
  s.load(elfPath("chip_ring_shift"), kMaxCycles);
  s.device().setTileEnabled(1, false);
  const RunResult r = s.device().run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Trap);
  EXPECT_EQ(r.trap.cause, TESS_CAUSE_SYNC_HALTED);
  EXPECT_EQ(r.trap.tile, 0u) << "the lowest arrived tile";
  EXPECT_EQ(r.trap.context, 0u);
  EXPECT_EQ(r.trap.value, 2u) << "the tile halted by EXIT, not the disabled one";
  const TileStats disabled = s.device().stats(1);
  EXPECT_TRUE(disabled.halted);
  EXPECT_EQ(disabled.exitCode, 0u);
  EXPECT_EQ(disabled.instructions, 0u);
  EXPECT_EQ(s.device().stats(2).exitCode, 31u)
      << "tile 2 received zeros from the disabled tile's bus";
  EXPECT_GT(s.device().stats(0).exchangeCycles, 0u) << "sync 1 completed without tile 1";
}

INSTANTIATE_TEST_SUITE_P(Chip, ChipDeviceTest, ::testing::ValuesIn(devices()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

/// Every chip program on the model's translating engine and on the RTL, compared at every sync
/// (memory, counters, stops) and at the end; records would make the model interpret.
TEST_P(ChipLockstepTest, ModelJitAndRtlAgreeAtEverySync) {
  if (!hasDevice("rtl") || !hasDevice("model")) GTEST_SKIP() << "needs both model and rtl";
  if (!modelJitAvailable()) GTEST_SKIP() << "this build has no translating engine";
  const Program& p = GetParam();
  const ElfImage image = ElfImage::fromFile(elfPath(p.name), TESS_TILE_MEM_BYTES);
  std::vector<std::string> hostFailures;
  LockstepOptions options;
  options.tiles = p.tiles;
  options.allTiles = true;
  options.maxCycles = kMaxCycles;
  options.compareRetirements = false;
  options.engineA = ModelEngine::Jit;
  options.onHostSync = [&](Device& dev, uint32_t id) {
    hostSyncHandler(dev, image, id, hostFailures);
  };
  const LockstepReport r = runLockstep(elfPath(p.name), "model", "rtl", options);
  EXPECT_TRUE(r.agree()) << r.describe();
  for (const std::string& f : hostFailures) ADD_FAILURE() << f;
  EXPECT_NE(r.a.result.reason, StopReason::MaxCycles);
}

/// The translating engine on several host threads against the interpreter on one.
TEST(ChipModelThreads, JitOnSeveralThreadsAgreesWithTheInterpreter) {
  if (!modelJitAvailable()) GTEST_SKIP() << "this build has no translating engine";
  LockstepOptions options;
  options.tiles = 16;
  options.allTiles = true;
  options.maxCycles = kMaxCycles;
  options.compareRetirements = false;
  options.threadsA = 1;
  options.threadsB = 4;
  options.engineB = ModelEngine::Jit;
  const LockstepReport r = runLockstep(elfPath("chip_random"), "model", "model", options);
  EXPECT_TRUE(r.agree()) << r.describe();
  EXPECT_EQ(r.a.result.reason, StopReason::Halted);
}

/// The model on several host threads gives exactly what it gives on one.
TEST(ChipModelThreads, SeveralThreadsAgreeWithOne) {
  LockstepOptions options;
  options.tiles = 16;
  options.allTiles = true;
  options.maxCycles = kMaxCycles;
  options.threadsA = 1;
  options.threadsB = 4;
  const LockstepReport r = runLockstep(elfPath("chip_random"), "model", "model", options);
  EXPECT_TRUE(r.agree()) << r.describe();
  EXPECT_EQ(r.a.result.reason, StopReason::Halted);
}

}  // namespace
}  // namespace tessera::test
