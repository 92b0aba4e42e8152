// Checkpoints (docs/checkpoint.md) on every backend:
//  - every chip program of the sw/ manifest is run with SYNC_BREAK and checkpointed at every sync;
//    each checkpoint is restored into a fresh device (same backend, and model<->rtl) and run to
//    the end: every later sync stop (cycle, STATUS, memory) and the end (run result, memory,
//    consoles, every counter) must equal the uninterrupted run;
//  - the model and the rtl save byte-identical checkpoints at the same sync;
//  - over tcp:// and serial: (tessera-server on loopback / a pty) a checkpoint saved and restored
//    through the link continues like the in-process run;
//  - a corrupted, truncated or foreign checkpoint is refused and leaves the device untouched; a
//    save away from a sync is refused; state writes away from a sync are refused by the chip;
//  - the matrix unit's state (chip_amp_state keeps weights, accumulators and generators live at
//    every sync) is in the file, a version-1 file (without it) still restores, and a file with it
//    is refused by tiles without the unit.
#include "tessera/checkpoint.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "backends.hpp"
#include "checkpoint_format.hpp"
#include "crc32.hpp"
#include "little_endian.hpp"
#include "program_loader.hpp"
#include "program_manifest.hpp"
#include "server_process.hpp"
#include "tessera/chip_params.h"
#include "tessera/device.hpp"

namespace tessera::test {
namespace {

constexpr uint64_t kMaxCycles = 20'000'000;
const std::string kBin = TESSERA_SW_BIN_DIR;

struct Stop {
  uint64_t cycle = 0;
  uint32_t status = 0;
  std::vector<uint32_t> memCrc;  // per tile
  bool operator==(const Stop&) const = default;
};

struct Outcome {
  std::vector<Stop> stops;
  RunResult result;
  std::vector<std::string> consoles;
  std::vector<TileStats> stats;
  std::vector<uint32_t> memCrc;
  std::vector<std::vector<uint8_t>> checkpoints;  // one per stop, when asked for
};

std::vector<uint32_t> memoryCrcs(Device& dev) {
  const ChipInfo info = dev.info();
  std::vector<uint32_t> out;
  std::vector<uint8_t> mem(info.tileMemBytes);
  for (unsigned t = 0; t < info.tiles; ++t) {
    dev.readMemory(t, 0, mem);
    out.push_back(crc32(mem));
  }
  return out;
}

uint64_t cycleCounter(Device& dev) {
  const uint64_t lo = dev.readControl(TESS_CR_CYCLE_LO);
  return lo | uint64_t{dev.readControl(TESS_CR_CYCLE_HI)} << 32;
}

// Run from the device's current state to the end, stopping at every sync.
Outcome runToEnd(Device& dev, bool save) {
  Outcome o;
  dev.setSyncBreak(true);
  for (;;) {
    const uint64_t done = cycleCounter(dev);
    o.result = dev.run(done >= kMaxCycles ? 0 : kMaxCycles - done);
    if (o.result.reason != StopReason::HostSync && o.result.reason != StopReason::SyncBreak) break;
    o.stops.push_back(Stop{cycleCounter(dev), dev.readControl(TESS_CR_STATUS), memoryCrcs(dev)});
    if (save) o.checkpoints.push_back(saveCheckpoint(dev));
  }
  const unsigned tiles = dev.info().tiles;
  for (unsigned t = 0; t < tiles; ++t) {
    o.consoles.push_back(dev.console(t));
    o.stats.push_back(dev.stats(t));
  }
  o.memCrc = memoryCrcs(dev);
  return o;
}

void expectSameStats(const TileStats& a, const TileStats& b, const std::string& where) {
  EXPECT_EQ(a.cycles, b.cycles) << where;
  EXPECT_EQ(a.instructions, b.instructions) << where;
  for (unsigned c = 0; c < 6; ++c)
    EXPECT_EQ(a.contextInstructions[c], b.contextInstructions[c]) << where << " context " << c;
  EXPECT_EQ(a.idleSlots, b.idleSlots) << where;
  EXPECT_EQ(a.syncWaitCycles, b.syncWaitCycles) << where;
  EXPECT_EQ(a.exchangeCycles, b.exchangeCycles) << where;
  EXPECT_EQ(a.halted, b.halted) << where;
  EXPECT_EQ(a.exitCode, b.exitCode) << where;
}

// The run restored from checkpoint k must continue exactly like the reference from stop k.
void expectContinuesLike(const Outcome& ref, size_t k, const Outcome& got,
                         const CheckpointInfo& info, const std::string& where) {
  ASSERT_EQ(got.stops.size(), ref.stops.size() - k - 1) << where;
  for (size_t i = 0; i < got.stops.size(); ++i) {
    EXPECT_EQ(got.stops[i], ref.stops[k + 1 + i]) << where << ": sync stop " << k + 1 + i;
  }
  EXPECT_EQ(got.result.reason, ref.result.reason) << where;
  EXPECT_EQ(got.result.cycles, ref.result.cycles) << where;
  EXPECT_EQ(got.result.exitCode, ref.result.exitCode) << where;
  EXPECT_EQ(describeTrap(got.result.trap), describeTrap(ref.result.trap)) << where;
  EXPECT_EQ(got.memCrc, ref.memCrc) << where;
  for (size_t t = 0; t < ref.consoles.size(); ++t) {
    EXPECT_EQ(info.consoles[t] + got.consoles[t], ref.consoles[t]) << where << " tile " << t;
    expectSameStats(got.stats[t], ref.stats[t], fmt::format("{} tile {}", where, t));
  }
}

// The chip programs; with the rtl only those of 4 tiles (every host-port word is a clock cycle of
// the verilated chip, and the 16-tile chip's memory is 1 MiB).
std::vector<Program> chipPrograms(bool rtl = false) {
  std::vector<Program> out;
  for (const Program& p : readManifest(kBin)) {
    if (p.kind == "chip" && (!rtl || p.tiles <= 4)) out.push_back(p);
  }
  return out;
}

DeviceOptions withTiles(unsigned tiles) {
  DeviceOptions o;
  o.tiles = tiles;
  return o;
}

Outcome reference(const std::string& backend, const Program& p, bool save) {
  auto dev = openDevice(backend, withTiles(p.tiles));
  loadProgramOnAllTiles(*dev, kBin + "/" + p.name + ".elf");
  return runToEnd(*dev, save);
}

// --- Round trips: save on one backend at every sync, restore on another, run to the end ---

struct Pair {
  std::string from;
  std::string to;
};

/// Readable test parameters in gtest and ctest output.
void PrintTo(const Pair& p, std::ostream* os) {
  *os << p.from << " -> " << p.to;
}

class CheckpointRoundTrip : public testing::TestWithParam<Pair> {};

// The model restores from every sync of every program; a pair with the (slower) rtl from every
// sync of chip_ring_shift and from the first, a middle and the last sync of the others.
std::vector<size_t> syncsToRestore(const Pair& pair, const Program& p, size_t n) {
  std::vector<size_t> out;
  const bool all = (pair.from == "model" && pair.to == "model") || p.name == "chip_ring_shift";
  for (size_t k = 0; k < n; ++k) {
    if (all || k == 0 || k == n / 2 || k + 1 == n) out.push_back(k);
  }
  return out;
}

TEST_P(CheckpointRoundTrip, EverySyncOfEveryChipProgram) {
  const Pair pair = GetParam();
  const auto programs = chipPrograms(pair.from == "rtl" || pair.to == "rtl");
  ASSERT_FALSE(programs.empty());
  for (const Program& p : programs) {
    SCOPED_TRACE(p.name);
    const Outcome plain = reference(pair.from, p, false);
    const Outcome ref = reference(pair.from, p, true);
    // Saving does not disturb the run.
    ASSERT_EQ(ref.stops, plain.stops);
    ASSERT_EQ(ref.memCrc, plain.memCrc);
    ASSERT_EQ(ref.result.cycles, plain.result.cycles);
    ASSERT_FALSE(ref.stops.empty()) << "a chip program has syncs";
    auto dev = openDevice(pair.to, withTiles(p.tiles));
    for (size_t k : syncsToRestore(pair, p, ref.checkpoints.size())) {
      const std::string where =
          fmt::format("{} {}->{} from sync stop {}", p.name, pair.from, pair.to, k);
      const CheckpointInfo info = restoreCheckpoint(*dev, ref.checkpoints[k]);
      EXPECT_EQ(info.cycle, ref.stops[k].cycle) << where;
      EXPECT_EQ(cycleCounter(*dev), ref.stops[k].cycle) << where;
      EXPECT_EQ(dev->readControl(TESS_CR_STATUS), ref.stops[k].status) << where;
      EXPECT_EQ(memoryCrcs(*dev), ref.stops[k].memCrc) << where;
      // The restored device saves the same checkpoint again.
      EXPECT_EQ(saveCheckpoint(*dev), ref.checkpoints[k]) << where;
      expectContinuesLike(ref, k, runToEnd(*dev, false), info, where);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, CheckpointRoundTrip,
                         testing::Values(Pair{"model", "model"}, Pair{"rtl", "rtl"},
                                         Pair{"model", "rtl"}, Pair{"rtl", "model"}),
                         [](const testing::TestParamInfo<Pair>& i) {
                           return i.param.from + "_to_" + i.param.to;
                         });

// The two implementations hold the same state at every sync, byte for byte.
TEST(Checkpoint, ModelAndRtlSaveTheSameBytes) {
  for (const Program& p : chipPrograms(true)) {
    SCOPED_TRACE(p.name);
    const Outcome model = reference("model", p, true);
    const Outcome rtl = reference("rtl", p, true);
    ASSERT_EQ(model.checkpoints.size(), rtl.checkpoints.size());
    for (size_t k = 0; k < model.checkpoints.size(); ++k) {
      EXPECT_EQ(model.checkpoints[k], rtl.checkpoints[k]) << "sync stop " << k;
    }
  }
}

// --- Through tessera-server: tcp:// and serial: ---

class CheckpointLink : public testing::TestWithParam<bool> {};

TEST_P(CheckpointLink, SaveAndRestoreThroughTheServer) {
  const bool pty = GetParam();
  Program p;
  for (const Program& q : chipPrograms()) {
    if (q.name == "chip_ring_shift") p = q;
  }
  ASSERT_EQ(p.name, "chip_ring_shift");
  std::vector<std::string> args = {"--device", "model", "--tiles", std::to_string(p.tiles)};
  if (pty) {
    args.push_back("--pty");
  } else {
    args.insert(args.end(), {"--listen", "127.0.0.1:0"});
  }
  link::ServerProcess server(TESSERA_SERVER_PATH, args);
  auto remote = openDevice(server.deviceString());
  const Outcome ref = reference("model", p, true);
  ASSERT_GE(ref.stops.size(), 2u);
  // Restore a locally saved checkpoint through the link, continue there.
  const size_t k = ref.stops.size() / 2;
  const CheckpointInfo info = restoreCheckpoint(*remote, ref.checkpoints[k]);
  // Saved through the link, the same bytes.
  EXPECT_EQ(saveCheckpoint(*remote), ref.checkpoints[k]);
  expectContinuesLike(ref, k, runToEnd(*remote, false), info, server.deviceString());
}

INSTANTIATE_TEST_SUITE_P(Link, CheckpointLink, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool>& i) {
                           return i.param ? std::string("serial_pty") : std::string("tcp");
                         });

// --- Bad files and refusals ---

struct DeviceState {
  uint32_t status;
  uint64_t cycle;
  std::vector<uint32_t> memCrc;
  bool operator==(const DeviceState&) const = default;
};

DeviceState stateOf(Device& dev) {
  return DeviceState{dev.readControl(TESS_CR_STATUS), cycleCounter(dev), memoryCrcs(dev)};
}

class CheckpointRefusal : public testing::TestWithParam<std::string> {
 protected:
  // A checkpoint of chip_ring_shift at its second sync, and a device stopped at its first.
  void SetUp() override {
    backends::skipIfExcluded(GetParam());
    if (IsSkipped()) return;
    for (const Program& q : chipPrograms()) {
      if (q.name == "chip_ring_shift") program_ = q;
    }
    ASSERT_EQ(program_.name, "chip_ring_shift");
    const Outcome ref = reference("model", program_, true);
    ASSERT_GE(ref.checkpoints.size(), 2u);
    good_ = ref.checkpoints[1];
    opened_ = backends::open(GetParam(), withTiles(program_.tiles));
    dev_ = opened_.device.get();
    loadProgramOnAllTiles(*dev_, kBin + "/" + program_.name + ".elf");
    dev_->setSyncBreak(true);
    ASSERT_EQ(dev_->run(kMaxCycles).reason, StopReason::SyncBreak);
    before_ = stateOf(*dev_);
  }
  void expectRefused(const std::vector<uint8_t>& bytes, const std::string& what) {
    EXPECT_THROW(restoreCheckpoint(*dev_, bytes), Error) << what;
    EXPECT_EQ(stateOf(*dev_), before_) << what << ": the device was changed";
  }
  Program program_;
  std::vector<uint8_t> good_;
  backends::Opened opened_;  // the device and, on tcp, its server
  Device* dev_ = nullptr;
  DeviceState before_;
};

TEST_P(CheckpointRefusal, FlippedBytesAreRefused) {
  // Every byte of the header and section framing, then a spread of bytes through the payloads.
  std::vector<size_t> positions;
  for (size_t i = 0; i < std::min<size_t>(good_.size(), 64); ++i) positions.push_back(i);
  // The refusal happens before the device is touched, on any backend: the rtl (whose memory
  // reads are slow) checks a sample.
  const size_t spread = GetParam() == "rtl" ? 7 : 97;
  if (GetParam() == "rtl") positions.resize(8);
  for (size_t i = 64; i < good_.size(); i += good_.size() / spread + 1) positions.push_back(i);
  positions.push_back(good_.size() - 1);
  for (size_t i : positions) {
    std::vector<uint8_t> bad = good_;
    bad[i] ^= 0x10;
    expectRefused(bad, fmt::format("byte {} flipped", i));
  }
}

TEST_P(CheckpointRefusal, TruncatedFilesAreRefused) {
  for (size_t len : {size_t{0}, size_t{7}, size_t{12}, size_t{40}, good_.size() / 2,
                     good_.size() - 20, good_.size() - 1}) {
    expectRefused(std::vector<uint8_t>(good_.begin(), good_.begin() + len),
                  fmt::format("truncated to {} bytes", len));
  }
  std::vector<uint8_t> longer = good_;
  longer.push_back(0);
  expectRefused(longer, "one byte appended");
}

TEST_P(CheckpointRefusal, OtherConfigurationsAreRefused) {
  // Saved on 2 and on 8 tiles: the 4-tile device refuses both.
  for (unsigned tiles : {2u, 8u}) {
    if (GetParam() == "rtl" && tiles == 8) continue;  // the rtl is verilated with 4 and 16 tiles
    auto other = openDevice("model", withTiles(tiles));
    loadProgramOnAllTiles(*other, kBin + "/" + program_.name + ".elf");
    other->setSyncBreak(true);
    const RunResult r = other->run(kMaxCycles);
    ASSERT_TRUE(r.reason == StopReason::SyncBreak || r.reason == StopReason::Trap);
    if (r.reason != StopReason::SyncBreak) continue;
    expectRefused(saveCheckpoint(*other), fmt::format("saved on {} tiles", tiles));
  }
  // Another memory size.
  DeviceOptions o = withTiles(program_.tiles);
  o.tileMemBytes = 2 * TESS_TILE_MEM_BYTES;
  auto bigger = openDevice("model", o);
  loadProgramOnAllTiles(*bigger, kBin + "/" + program_.name + ".elf");
  bigger->setSyncBreak(true);
  ASSERT_EQ(bigger->run(kMaxCycles).reason, StopReason::SyncBreak);
  try {
    restoreCheckpoint(*dev_, saveCheckpoint(*bigger));
    ADD_FAILURE() << "a checkpoint of 128 KiB tiles was restored on 64 KiB tiles";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("131072 bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(stateOf(*dev_), before_);
}

TEST_P(CheckpointRefusal, SaveAwayFromASyncIsRefused) {
  const backends::Opened opened = backends::open(GetParam(), withTiles(program_.tiles));
  Device* const dev = opened.device.get();
  loadProgramOnAllTiles(*dev, kBin + "/" + program_.name + ".elf");
  EXPECT_THROW(saveCheckpoint(*dev), Error) << "reset state";
  ASSERT_EQ(dev->run(50).reason, StopReason::MaxCycles);
  EXPECT_THROW(saveCheckpoint(*dev), Error) << "paused while running";
  ASSERT_EQ(dev->run(kMaxCycles).reason, StopReason::Halted);
  EXPECT_THROW(saveCheckpoint(*dev), Error) << "halted";
}

TEST_P(CheckpointRefusal, StateWritesOnlyAtASync) {
  const backends::Opened opened = backends::open(GetParam(), withTiles(program_.tiles));
  Device* const dev = opened.device.get();
  loadProgramOnAllTiles(*dev, kBin + "/" + program_.name + ".elf");
  const uint32_t stateRegs[] = {TESS_CR_CYCLE_LO,    TESS_CR_C_REG,        TESS_CR_C_PC,
                                TESS_CR_C_FCSR,      TESS_CR_C_INSTRET_LO, TESS_CR_T_RUN_ARG,
                                TESS_CR_T_XCHG_PROG, TESS_CR_T_IDLE_HI,    TESS_CR_T_SYNCWAIT_LO,
                                TESS_CR_T_EXCH_LO};
  for (uint32_t r : stateRegs)
    EXPECT_THROW(dev->writeControl(r, 1), Error) << "reset, 0x" << std::hex << r;
  ASSERT_EQ(dev->run(50).reason, StopReason::MaxCycles);
  for (uint32_t r : stateRegs)
    EXPECT_THROW(dev->writeControl(r, 1), Error) << "running, 0x" << std::hex << r;
  EXPECT_THROW(dev->writeControl(TESS_CR_C_STATE, 0), Error) << "C_STATE is read-only";
  EXPECT_THROW(dev->writeControl(TESS_CR_CTX_SEL, 6), Error);
  // With the matrix unit REG_SEL goes on past the registers to the unit's state.
  EXPECT_THROW(dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_END), Error);
  EXPECT_THROW(dev->writeControl(TESS_CR_REG_SEL, 255), Error);
  EXPECT_THROW(dev->writeControl(TESS_CR_REG_SEL, 256 + TESS_REG_SEL_AMP_ACC), Error);
  // At a sync: accepted, and read back.
  dev->setSyncBreak(true);
  ASSERT_EQ(dev->run(kMaxCycles).reason, StopReason::SyncBreak);
  dev->writeControl(TESS_CR_TILE_SEL, 1);
  dev->writeControl(TESS_CR_CTX_SEL, 3);
  dev->writeControl(TESS_CR_REG_SEL, 40);
  dev->writeControl(TESS_CR_C_REG, 0x3f800000u);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 0x3f800000u);
  dev->writeControl(TESS_CR_REG_SEL, 0);
  dev->writeControl(TESS_CR_C_REG, 5);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 0u) << "x0 stays 0";
  dev->writeControl(TESS_CR_C_PC, 0x1234);
  EXPECT_EQ(dev->readControl(TESS_CR_C_PC), 0x1234u);
  dev->writeControl(TESS_CR_C_FCSR, 0xfff);
  EXPECT_EQ(dev->readControl(TESS_CR_C_FCSR), 0xffu);
  const uint64_t instr = uint64_t{dev->readControl(TESS_CR_T_INSTR_LO)};
  const uint32_t before = dev->readControl(TESS_CR_C_INSTRET_LO);
  dev->writeControl(TESS_CR_C_INSTRET_LO, before + 10);
  EXPECT_EQ(dev->readControl(TESS_CR_T_INSTR_LO), instr + 10) << "T_INSTR follows the contexts";
  EXPECT_EQ(dev->readControl(TESS_CR_C_STATE), 0u) << "worker 3 is idle at a sync";
  dev->writeControl(TESS_CR_CTX_SEL, 0);
  EXPECT_EQ(dev->readControl(TESS_CR_C_STATE), 5u) << "the supervisor stands at the sync";
  // The matrix unit: weights are the tile's (any CTX_SEL), accumulators and generators the
  // context's; a generator written 0 holds AMP_SR_SEED0, as after AMP.SEED of 0.
  dev->writeControl(TESS_CR_CTX_SEL, 3);
  dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_W + 17);  // W[1][0][1]
  dev->writeControl(TESS_CR_C_REG, 0xc0490fdbu);
  dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_ACC + 6);  // acc[1][2]
  dev->writeControl(TESS_CR_C_REG, 0x7fc00001u);
  dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_SR);
  dev->writeControl(TESS_CR_C_REG, 0x12345678u);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 0x12345678u);
  dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_ACC + 6);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 0x7fc00001u) << "bits unchanged";
  dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_ACC + 7);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 0u) << "the row's other words";
  dev->writeControl(TESS_CR_CTX_SEL, 2);
  dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_ACC + 6);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 0u) << "accumulators are per context";
  dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_SR);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), uint32_t{TESS_AMP_SR_SEED0}) << "per context";
  dev->writeControl(TESS_CR_C_REG, 0);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), uint32_t{TESS_AMP_SR_SEED0}) << "0 gives SEED0";
  // The last accumulator row, the row strides and the row limit (stored as AMP.ROWS stores it).
  dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_ACC + 31);  // acc[7][3]
  dev->writeControl(TESS_CR_C_REG, 0xff800000u);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 0xff800000u);
  dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_STRIDE_S);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 0u) << "reset stride";
  dev->writeControl(TESS_CR_C_REG, 0xfffffff0u);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 0xfffffff0u);
  dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_STRIDE_C);
  dev->writeControl(TESS_CR_C_REG, 48);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 48u);
  dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_ROWS);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), uint32_t{TESS_AMP_ACC_ROWS}) << "reset limit";
  dev->writeControl(TESS_CR_C_REG, 5);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 5u);
  dev->writeControl(TESS_CR_C_REG, 0);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 0u);
  dev->writeControl(TESS_CR_C_REG, 1000);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), uint32_t{TESS_AMP_ACC_ROWS}) << "clamped";
  dev->writeControl(TESS_CR_C_REG, 3);
  dev->writeControl(TESS_CR_CTX_SEL, 4);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), uint32_t{TESS_AMP_ACC_ROWS}) << "per context";
  dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_STRIDE_C);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 0u) << "per context";
  dev->writeControl(TESS_CR_CTX_SEL, 2);
  dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_ROWS);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 3u);
  dev->writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_W + 17);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 0xc0490fdbu) << "weights are the tile's";
  dev->writeControl(TESS_CR_TILE_SEL, 2);
  EXPECT_EQ(dev->readControl(TESS_CR_C_REG), 0u) << "and only that tile's";
}

INSTANTIATE_TEST_SUITE_P(Backends, CheckpointRefusal, testing::ValuesIn(backends::names()),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(Checkpoint, ChipWithoutCheckpointRegisters) {
  // HAS_CHECKPOINT = 0 (the iCE40 board, model preset ice40): no save, no restore, and the
  // device is not touched by the refused restore.
  DeviceOptions o;
  o.preset = "ice40";
  auto dev = openDevice("model", o);
  EXPECT_FALSE(hasCheckpointSupport(*dev));
  EXPECT_TRUE(hasCheckpointSupport(*openDevice("model", withTiles(1))));
  loadProgram(*dev, kBin + "/chip_no_exchange_ice40.elf", 0);
  dev->setSyncBreak(true);
  ASSERT_EQ(dev->run(kMaxCycles).reason, StopReason::SyncBreak);
  try {
    saveCheckpoint(*dev);
    ADD_FAILURE() << "saved a checkpoint of a chip without checkpoint registers";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no checkpoint support"), std::string::npos) << e.what();
  }
  // A checkpoint of a chip of the same size with the registers is refused the same way.
  auto full = openDevice("model", [] {
    DeviceOptions f = withTiles(TESS_ICE40_NUM_TILES);
    f.tileMemBytes = TESS_ICE40_TILE_MEM_BYTES;
    return f;
  }());
  loadProgram(*full, kBin + "/chip_no_exchange_ice40.elf", 0);
  full->setSyncBreak(true);
  ASSERT_EQ(full->run(kMaxCycles).reason, StopReason::SyncBreak);
  const DeviceState before = stateOf(*dev);
  EXPECT_THROW(restoreCheckpoint(*dev, saveCheckpoint(*full)), Error);
  EXPECT_EQ(stateOf(*dev), before);
}

TEST(Checkpoint, InfoOfAFile) {
  Program p;
  for (const Program& q : chipPrograms()) {
    if (q.name == "chip_ring_shift") p = q;
  }
  const Outcome ref = reference("model", p, true);
  ASSERT_FALSE(ref.checkpoints.empty());
  const CheckpointInfo info = readCheckpointInfo(ref.checkpoints[0]);
  EXPECT_EQ(info.tiles, p.tiles);
  EXPECT_EQ(info.tileMemBytes, uint32_t{TESS_TILE_MEM_BYTES});
  EXPECT_EQ(info.contexts, 6u);
  EXPECT_EQ(info.cycle, ref.stops[0].cycle);
  EXPECT_EQ(info.paramHash, checkpointParamHash());
  EXPECT_TRUE(info.syncBreak) << "SYNC_BREAK is saved as it was (runToEnd sets it)";
}

// --- The matrix unit's state ---

Program programNamed(const std::string& name) {
  for (const Program& q : chipPrograms()) {
    if (q.name == name) return q;
  }
  ADD_FAILURE() << name << " is not in the manifest";
  return {};
}

// The file a build before version 2 saved from the same state: version 1, CONFIG without the
// feature word, no matrix-unit state.
std::vector<uint8_t> asVersion1(const std::vector<uint8_t>& file) {
  checkpoint::Image img = checkpoint::decode(file);
  img.info.matrixUnit = false;
  const std::vector<uint8_t> v2 = checkpoint::encode(img);
  // magic (8), version (4), then CONFIG: type (4), length (8), CRC (4), payload.
  const uint64_t length = loadLe64(v2.data() + 16);
  const std::span<const uint8_t> config(v2.data() + 28, length - 4);
  std::vector<uint8_t> out(v2.begin(), v2.begin() + 8);
  appendLe32(out, 1);
  appendLe32(out, loadLe32(v2.data() + 12));
  appendLe64(out, config.size());
  appendLe32(out, crc32(config));
  out.insert(out.end(), config.begin(), config.end());
  out.insert(out.end(), v2.begin() + 28 + length, v2.end());
  return out;
}

TEST(CheckpointMatrixUnit, StateIsLiveAndInTheFileAtEverySync) {
  // What makes chip_amp_state the test of the unit's state: at every sync every tile's weights,
  // every context's accumulators and generator are not their reset values.
  const Program p = programNamed("chip_amp_state");
  const Outcome ref = reference("model", p, true);
  ASSERT_EQ(ref.checkpoints.size(), 3u);
  for (size_t k = 0; k < ref.checkpoints.size(); ++k) {
    const checkpoint::Image img = checkpoint::decode(ref.checkpoints[k]);
    EXPECT_EQ(img.info.version, checkpoint::kVersion);
    EXPECT_TRUE(img.info.matrixUnit);
    for (unsigned t = 0; t < img.tiles.size(); ++t) {
      const checkpoint::TileState& ts = img.tiles[t];
      const auto nonzero = [](uint32_t w) { return w != 0; };
      EXPECT_TRUE(std::all_of(ts.weights.begin(), ts.weights.end(), nonzero))
          << "sync " << k << " tile " << t;
      for (unsigned c = 0; c < ts.contexts.size(); ++c) {
        const checkpoint::ContextState& cs = ts.contexts[c];
        EXPECT_TRUE(std::any_of(cs.accs.begin(), cs.accs.end(), nonzero))
            << "sync " << k << " tile " << t << " context " << c;
        EXPECT_NE(cs.srState, uint32_t{TESS_AMP_SR_SEED0})
            << "sync " << k << " tile " << t << " context " << c;
        // Rows 4..6 computed, the row addressing set (row 7 past the limit 7).
        EXPECT_TRUE(std::any_of(cs.accs.begin() + 16, cs.accs.end(), nonzero))
            << "sync " << k << " tile " << t << " context " << c;
        EXPECT_EQ(cs.strideS, 16u);
        EXPECT_EQ(cs.strideC, 16u);
        EXPECT_EQ(cs.rowLimit, 7u);
      }
    }
  }
  EXPECT_EQ(ref.result.reason, StopReason::Halted);
  EXPECT_EQ(ref.result.exitCode, 0u);
}

TEST(CheckpointMatrixUnit, Version1FilesStillRestore) {
  // A version-1 file restores with the unit at its reset state, as version 1 always did: exact for
  // a program without unit state at the sync (chip_ring_shift) ...
  const Program ring = programNamed("chip_ring_shift");
  const Outcome ref = reference("model", ring, true);
  auto dev = openDevice("model", withTiles(ring.tiles));
  const size_t k = ref.checkpoints.size() / 2;
  const std::vector<uint8_t> old = asVersion1(ref.checkpoints[k]);
  EXPECT_LT(old.size(), ref.checkpoints[k].size());
  const CheckpointInfo info = restoreCheckpoint(*dev, old);
  EXPECT_EQ(info.version, 1u);
  EXPECT_FALSE(info.matrixUnit);
  expectContinuesLike(ref, k, runToEnd(*dev, false), info, "chip_ring_shift from version 1");
  // ... and what version 2 is for: chip_amp_state's state is lost, and its check fails.
  const Program amp = programNamed("chip_amp_state");
  const Outcome ampRef = reference("model", amp, true);
  ASSERT_FALSE(ampRef.checkpoints.empty());
  restoreCheckpoint(*dev, asVersion1(ampRef.checkpoints[0]));
  const Outcome lost = runToEnd(*dev, false);
  EXPECT_EQ(ampRef.result.exitCode, 0u);
  EXPECT_NE(lost.result.exitCode, 0u) << "the program's check found the loss";
  EXPECT_NE(lost.consoles[0].find("FAIL check"), std::string::npos) << lost.consoles[0];
  EXPECT_NE(lost.memCrc, ampRef.memCrc);
}

TEST(CheckpointMatrixUnit, Version2FilesStillRead) {
  // Version 2 held four accumulator rows a context and no row addressing: the same image written
  // in that layout reads back with rows 4..7 at +0 and the reset addressing; chip_ring_shift, with
  // no unit state at its syncs, continues from it exactly.
  const Program ring = programNamed("chip_ring_shift");
  const Outcome ref = reference("model", ring, true);
  const size_t k = ref.checkpoints.size() / 2;
  const checkpoint::Image img = checkpoint::decode(ref.checkpoints[k]);
  const std::vector<uint8_t> v2 = checkpoint::encode(img, 2);
  EXPECT_LT(v2.size(), ref.checkpoints[k].size());
  const checkpoint::Image back = checkpoint::decode(v2);
  EXPECT_EQ(back.info.version, 2u);
  for (const checkpoint::TileState& ts : back.tiles) {
    for (const checkpoint::ContextState& cs : ts.contexts) {
      EXPECT_TRUE(
          std::all_of(cs.accs.begin() + 16, cs.accs.end(), [](uint32_t w) { return w == 0; }));
      EXPECT_EQ(cs.strideS, 0u);
      EXPECT_EQ(cs.rowLimit, uint32_t{TESS_AMP_ACC_ROWS});
    }
  }
  auto dev = openDevice("model", withTiles(ring.tiles));
  const CheckpointInfo info = restoreCheckpoint(*dev, v2);
  EXPECT_EQ(info.version, 2u);
  expectContinuesLike(ref, k, runToEnd(*dev, false), info, "chip_ring_shift from version 2");
  // A row limit past the unit's rows cannot be in a file.
  checkpoint::Image bad = img;
  bad.tiles[0].contexts[1].rowLimit = TESS_AMP_ACC_ROWS + 1;
  try {
    checkpoint::decode(checkpoint::encode(bad));
    ADD_FAILURE() << "a row limit of 9 was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row limit 9"), std::string::npos) << e.what();
  }
}

TEST(CheckpointMatrixUnit, RefusedByTilesWithoutTheUnitAndByOtherVersions) {
  const Program p = programNamed("chip_amp_state");
  const Outcome ref = reference("model", p, true);
  ASSERT_FALSE(ref.checkpoints.empty());
  DeviceOptions o = withTiles(p.tiles);
  o.matrixUnit = false;
  auto dev = openDevice("model", o);
  loadProgramOnAllTiles(*dev, kBin + "/chip_ring_shift.elf");
  dev->setSyncBreak(true);
  ASSERT_EQ(dev->run(kMaxCycles).reason, StopReason::SyncBreak);
  const DeviceState before = stateOf(*dev);
  try {
    restoreCheckpoint(*dev, ref.checkpoints[0]);
    ADD_FAILURE() << "unit state restored into tiles without the unit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("matrix unit"), std::string::npos) << e.what();
  }
  EXPECT_EQ(stateOf(*dev), before);
  // A chip without the unit saves no unit state, and its file restores there.
  const std::vector<uint8_t> own = saveCheckpoint(*dev);
  EXPECT_FALSE(readCheckpointInfo(own).matrixUnit);
  EXPECT_EQ(restoreCheckpoint(*dev, own).version, checkpoint::kVersion);
  // A version this build does not know is refused, naming it.
  for (uint32_t version : {0u, checkpoint::kVersion + 1}) {
    std::vector<uint8_t> bad = ref.checkpoints[0];
    storeLe32(bad.data() + 8, version);
    try {
      readCheckpointInfo(bad);
      ADD_FAILURE() << "version " << version << " was read";
    } catch (const Error& e) {
      EXPECT_NE(
          std::string(e.what()).find(fmt::format("format version {} is not supported", version)),
          std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace tessera::test
