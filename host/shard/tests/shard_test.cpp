// The sharded model against the model in one process, run under mpirun with 1, 2 and 3 ranks
// (docs/scale-out.md, "Tests"). Every rank opens both devices and makes the same calls: the
// sharded one is collective, the plain one (a whole chip) is this rank's reference. Compared:
//  - every chip and chiperr program of the sw/ manifest, stopped at every sync (SYNC_BREAK) and
//    host sync: each RunResult (reason, cycles, exit code, trap), STATUS, the cycle counter, every
//    tile's counters and per-tile registers, every tile's whole memory, and at the end consoles;
//  - the same programs on more tiles than ranks and on a chip with fewer tiles than ranks;
//  - the engine_stream executable through the Engine (exchanges across ranks, host streams):
//    outputs, cycles, counters and consoles (a compiled library matmul: sw/library/tests);
//  - host-port errors: the same error on every rank, after which the device still works;
//  - checkpoints: the same bytes saved at a sync, and a restore continued as in one process;
//  - the retirement trace: each rank's sink gets its own tiles' records, as the model gives them.
// No ASSERT_* around device calls: a rank that left a test early would leave the others waiting
// in a collective. Each rank's failures fail the job.
#include "tessera/shard.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>

#include "program_loader.hpp"
#include "program_manifest.hpp"
#include "tessera/checkpoint.hpp"
#include "tessera/chip_params.h"
#include "tessera/device.hpp"
#include "tessera/engine.hpp"
#include "tessera/executable.hpp"

namespace tessera::test {
namespace {

constexpr uint64_t kMaxCycles = 20'000'000;

std::string elfPath(const std::string& name) {
  return std::string(TESSERA_SW_BIN_DIR) + "/" + name + ".elf";
}

std::unique_ptr<Device> open(unsigned tiles, bool shard) {
  DeviceOptions o;
  o.tiles = tiles;
  o.shard = shard;
  return openDevice("model", o);
}

uint64_t cycleCounter(Device& d) {
  return uint64_t{d.readControl(TESS_CR_CYCLE_HI)} << 32 | d.readControl(TESS_CR_CYCLE_LO);
}

void expectSameResult(const RunResult& got, const RunResult& want, const std::string& where) {
  EXPECT_EQ(int(got.reason), int(want.reason)) << where;
  EXPECT_EQ(got.cycles, want.cycles) << where;
  EXPECT_EQ(got.exitCode, want.exitCode) << where;
  EXPECT_EQ(got.hostSyncId, want.hostSyncId) << where;
  EXPECT_EQ(describeTrap(got.trap), describeTrap(want.trap)) << where;
}

void expectSameStats(const TileStats& a, const TileStats& b, const std::string& where) {
  EXPECT_EQ(a.cycles, b.cycles) << where;
  EXPECT_EQ(a.instructions, b.instructions) << where;
  for (unsigned c = 0; c < 6; ++c)
    EXPECT_EQ(a.contextInstructions[c], b.contextInstructions[c]) << where;
  EXPECT_EQ(a.idleSlots, b.idleSlots) << where;
  EXPECT_EQ(a.syncWaitCycles, b.syncWaitCycles) << where;
  EXPECT_EQ(a.exchangeCycles, b.exchangeCycles) << where;
  EXPECT_EQ(a.halted, b.halted) << where;
  EXPECT_EQ(a.exitCode, b.exitCode) << where;
}

// Chip state visible through the host port: STATUS, cycles, every tile's counters, registers and
// memory. Returns the number of differing memory bytes (reported once per tile).
void expectSameChip(Device& sharded, Device& plain, const std::string& where) {
  EXPECT_EQ(sharded.readControl(TESS_CR_STATUS), plain.readControl(TESS_CR_STATUS)) << where;
  EXPECT_EQ(cycleCounter(sharded), cycleCounter(plain)) << where;
  for (uint32_t r : {TESS_CR_ERR_TILE, TESS_CR_ERR_CONTEXT, TESS_CR_ERR_PC, TESS_CR_ERR_CAUSE,
                     TESS_CR_ERR_VALUE}) {
    EXPECT_EQ(sharded.readControl(r), plain.readControl(r)) << where << " register " << r;
  }
  const ChipInfo info = plain.info();
  std::vector<uint8_t> a(info.tileMemBytes), b(info.tileMemBytes);
  for (unsigned t = 0; t < info.tiles; ++t) {
    const std::string tw = fmt::format("{}, tile {}", where, t);
    expectSameStats(sharded.stats(t), plain.stats(t), tw);
    sharded.writeControl(TESS_CR_TILE_SEL, t);
    plain.writeControl(TESS_CR_TILE_SEL, t);
    for (uint32_t r : {TESS_CR_T_ENABLE, TESS_CR_T_STATE, TESS_CR_T_EXIT, TESS_CR_T_INSTR_LO,
                       TESS_CR_T_IDLE_LO, TESS_CR_T_SYNCWAIT_LO, TESS_CR_T_EXCH_LO}) {
      EXPECT_EQ(sharded.readControl(r), plain.readControl(r)) << tw << " register " << r;
    }
    // The checkpoint registers of every context (docs/checkpoint.md).
    for (unsigned c = 0; c < info.contexts; ++c) {
      sharded.writeControl(TESS_CR_CTX_SEL, c);
      plain.writeControl(TESS_CR_CTX_SEL, c);
      for (uint32_t r : {TESS_CR_C_PC, TESS_CR_C_FCSR, TESS_CR_C_INSTRET_LO, TESS_CR_C_STATE}) {
        EXPECT_EQ(sharded.readControl(r), plain.readControl(r))
            << tw << " context " << c << " register " << r;
      }
    }
    sharded.readMemory(t, 0, a);
    plain.readMemory(t, 0, b);
    if (a != b) {
      size_t i = 0;
      while (a[i] == b[i]) ++i;
      ADD_FAILURE() << tw << ": memory differs first at byte 0x" << std::hex << i;
    }
  }
}

// The same chip program on both devices, stop by stop; returns the stops seen.
unsigned compareProgram(const std::string& name, unsigned tiles) {
  auto sharded = open(tiles, true);
  auto plain = open(tiles, false);
  loadProgramOnAllTiles(*sharded, elfPath(name));
  loadProgramOnAllTiles(*plain, elfPath(name));
  sharded->setSyncBreak(true);
  plain->setSyncBreak(true);
  unsigned stops = 0;
  for (;;) {
    const uint64_t done = cycleCounter(*plain);
    const uint64_t budget = done >= kMaxCycles ? 0 : kMaxCycles - done;
    const RunResult want = plain->run(budget);
    const RunResult got = sharded->run(budget);
    const std::string where = fmt::format("{} on {} tiles, stop {}", name, tiles, stops);
    expectSameResult(got, want, where);
    expectSameChip(*sharded, *plain, where);
    ++stops;
    if (want.reason != StopReason::HostSync && want.reason != StopReason::SyncBreak) break;
    if (stops > 100'000) {
      ADD_FAILURE() << name << ": more than 100000 stops";
      break;
    }
  }
  for (unsigned t = 0; t < tiles; ++t) {
    EXPECT_EQ(sharded->console(t), plain->console(t)) << name << " tile " << t;
  }
  // And once more without SYNC_BREAK: the same end, with the same cycles.
  sharded->reset();
  plain->reset();
  const RunResult want = plain->run(kMaxCycles);
  RunResult got = sharded->run(kMaxCycles);
  RunResult wantEnd = want;
  while (wantEnd.reason == StopReason::HostSync) {
    wantEnd = plain->run(kMaxCycles - wantEnd.cycles);
    got = sharded->run(kMaxCycles - got.cycles);
  }
  expectSameResult(got, wantEnd, name + " without SYNC_BREAK");
  expectSameChip(*sharded, *plain, name + " without SYNC_BREAK");
  return stops;
}

std::vector<Program> chipPrograms() {
  std::vector<Program> out;
  for (const Program& p : readManifest(TESSERA_SW_BIN_DIR)) {
    if (p.multiTile()) out.push_back(p);
  }
  return out;
}

class ShardProgramTest : public ::testing::TestWithParam<Program> {};

TEST_P(ShardProgramTest, SameAsModelStopByStop) {
  const Program& p = GetParam();
  const unsigned stops = compareProgram(p.name, p.tiles);
  if (p.kind == "chip") {
    EXPECT_GT(stops, 1u) << "the program should stop at syncs";
  }
}

TEST_P(ShardProgramTest, SameAsModelOnMoreTiles) {
  const Program& p = GetParam();
  if (p.kind != "chip") GTEST_SKIP() << "error programs expect their own tile count";
  compareProgram(p.name, 7);
}

INSTANTIATE_TEST_SUITE_P(Programs, ShardProgramTest, ::testing::ValuesIn(chipPrograms()),
                         [](const auto& info) {
                           return fmt::format("{}_{}", info.param.name, info.param.tiles);
                         });

TEST(Shard, FewerTilesThanRanks) {
  // Ranks without tiles still take part in every sync and exchange.
  compareProgram("chip_ring_shift", 2);
}

TEST(Shard, HostPortErrorsAreTheSameOnEveryRankAndHarmless) {
  auto sharded = open(4, true);
  auto plain = open(4, false);
  std::vector<uint8_t> buf(8);
  const auto message = [](auto&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { sharded->readMemory(3, 65532, buf); }),
            message([&] { plain->readMemory(3, 65532, buf); }));
  EXPECT_EQ(message([&] { sharded->writeMemory(9, 0, buf); }),
            message([&] { plain->writeMemory(9, 0, buf); }));
  EXPECT_EQ(message([&] { sharded->writeControl(TESS_CR_TILE_SEL, 4); }),
            message([&] { plain->writeControl(TESS_CR_TILE_SEL, 4); }));
  EXPECT_EQ(message([&] { sharded->readControl(0xffc); }),
            message([&] { plain->readControl(0xffc); }));
  // Every tile written through the sharded device reads back on every rank.
  for (unsigned t = 0; t < 4; ++t) {
    const std::vector<uint8_t> data = {uint8_t(t), 1, 2, 3, 4, 5, 6, uint8_t(0xa0 + t)};
    sharded->writeMemory(t, 0x100, data);
    std::vector<uint8_t> back(8);
    sharded->readMemory(t, 0x100, back);
    EXPECT_EQ(back, data) << "tile " << t;
  }
}

// A checkpoint saved at a sync of the sharded chip has the bytes of the model's; restored into a
// sharded chip it continues as the model does.
TEST(Shard, CheckpointsAsInOneProcess) {
  constexpr unsigned kTiles = 5;
  auto sharded = open(kTiles, true);
  auto plain = open(kTiles, false);
  for (Device* d : {sharded.get(), plain.get()}) {
    loadProgramOnAllTiles(*d, elfPath("chip_ring_shift"));
    d->setSyncBreak(true);
  }
  RunResult got, want;
  for (int stop = 0; stop < 3; ++stop) {
    want = plain->run(kMaxCycles);
    got = sharded->run(kMaxCycles);
  }
  ASSERT_EQ(want.reason, StopReason::SyncBreak);  // the same on every rank: no collective left
  expectSameResult(got, want, "at the third sync");
  const std::vector<uint8_t> app = {1, 2, 3};
  const std::vector<uint8_t> bytes = saveCheckpoint(*plain, app);
  EXPECT_EQ(saveCheckpoint(*sharded, app), bytes);
  // Restore the model's checkpoint into a fresh sharded chip and run both to the end.
  auto restored = open(kTiles, true);
  const CheckpointInfo info = restoreCheckpoint(*restored, bytes);
  EXPECT_EQ(info.appData, app);
  expectSameChip(*restored, *plain, "restored");
  plain->setSyncBreak(false);
  restored->setSyncBreak(false);
  want = plain->run(kMaxCycles);
  got = restored->run(kMaxCycles);
  EXPECT_EQ(want.reason, StopReason::Halted) << describeTrap(want.trap);
  expectSameResult(got, want, "after the restore");
  expectSameChip(*restored, *plain, "after the restore");
}

// Each rank's retirement sink gets the records of that rank's tiles, in the model's order.
TEST(Shard, RetireTraceOfEachRanksTiles) {
  constexpr unsigned kTiles = 4;
  auto sharded = open(kTiles, true);
  auto plain = open(kTiles, false);
  const shard::ShardInfo mine = shard::shardInfo(*sharded);
  EXPECT_EQ(mine.ranks, unsigned(shard::ranks()));
  std::vector<RetireRecord> got, want;
  sharded->setRetireSink([&](const RetireRecord& r) { got.push_back(r); });
  plain->setRetireSink([&](const RetireRecord& r) {
    if (r.tile >= mine.firstTile && r.tile < mine.endTile) want.push_back(r);
  });
  for (Device* d : {sharded.get(), plain.get()}) loadProgramOnAllTiles(*d, elfPath("chip_stencil"));
  const RunResult w = plain->run(kMaxCycles);
  const RunResult g = sharded->run(kMaxCycles);
  expectSameResult(g, w, "chip_stencil traced");
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want) << "the records of tiles " << mine.firstTile << ".." << mine.endTile;
  if (mine.endTile > mine.firstTile) {
    EXPECT_FALSE(got.empty());
  }
}

// The packed engine_stream executable: host streams at 12 host syncs, on 4 tiles.
TEST(Shard, EngineStreamExecutable) {
  const Executable exe = Executable::fromFile(TESSERA_STREAM_TESS);
  std::vector<std::vector<uint8_t>> results(2);
  std::vector<RunResult> runs(2);
  std::vector<std::unique_ptr<Device>> devs(2);
  for (int s = 0; s < 2; ++s) {
    DeviceOptions o;
    o.tiles = exe.target.tiles;
    o.tileMemBytes = exe.target.tileMemBytes;
    o.shard = s == 1;
    devs[s] = openDevice("model", o);
    Engine engine(*devs[s], exe);
    uint32_t k = 0;
    engine.connectStream("minibatch", [&k](uint64_t, std::span<uint8_t> data) {
      for (size_t i = 0; i + 4 <= data.size(); i += 4, ++k) {
        const uint32_t w = (k * 2654435761u + 12345u) | 1u;
        std::memcpy(&data[i], &w, 4);
      }
    });
    engine.connectStream("result", [&results, s](uint64_t, std::span<uint8_t> data) {
      results[s].insert(results[s].end(), data.begin(), data.end());
    });
    runs[s] = engine.run(kMaxCycles);
  }
  EXPECT_EQ(runs[0].reason, StopReason::Halted) << describeTrap(runs[0].trap);
  expectSameResult(runs[1], runs[0], "engine_stream");
  EXPECT_FALSE(results[0].empty());
  EXPECT_EQ(results[1], results[0]);
  expectSameChip(*devs[1], *devs[0], "engine_stream");
}

}  // namespace

/// Prints the failures of a rank other than 0 (whose default printer is off).
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    fmt::print(stderr, "rank {}: {}:{}: failure\n{}\n", rank_, r.file_name() ? r.file_name() : "",
               r.line_number(), r.summary());
  }

 private:
  int rank_;
};

}  // namespace tessera::test

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ::testing::InitGoogleTest(&argc, argv);
  if (rank != 0) {
    // Rank 0 prints the progress; the others print only their failures.
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new tessera::test::RankFailurePrinter(rank));
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  if (failed) fmt::print(stderr, "shard_test: rank {} had failures\n", rank);
  int anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return anyFailed;
}
