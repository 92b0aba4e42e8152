// A compiled graph with exchanges between every tile, the sharded model against the model in one
// process, run under mpirun with 1, 2 and 3 ranks (docs/scale-out.md, "Tests"). It was a case of
// host/shard/tests/shard_test.cpp; it lives here because it needs the compiler and the library,
// which host/ may not use (docs/architecture.md, "Layout"). Every rank makes the same calls: the
// sharded device is collective, the plain one is this rank's reference. No ASSERT_* around device
// calls: a rank that left the test early would leave the others waiting in a collective.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <random>

#include "tessera/chip_params.h"
#include "tessera/compiler.hpp"
#include "tessera/device.hpp"
#include "tessera/engine.hpp"
#include "tessera/ops.hpp"

namespace tessera::test {
namespace {

uint64_t cycleCounter(Device& d) {
  return uint64_t{d.readControl(TESS_CR_CYCLE_HI)} << 32 | d.readControl(TESS_CR_CYCLE_LO);
}

// Chip state visible through the host port: STATUS, cycles, every tile's counters, registers and
// memory.
void expectSameChip(Device& sharded, Device& plain) {
  EXPECT_EQ(sharded.readControl(TESS_CR_STATUS), plain.readControl(TESS_CR_STATUS));
  EXPECT_EQ(cycleCounter(sharded), cycleCounter(plain));
  for (uint32_t r : {TESS_CR_ERR_TILE, TESS_CR_ERR_CONTEXT, TESS_CR_ERR_PC, TESS_CR_ERR_CAUSE,
                     TESS_CR_ERR_VALUE}) {
    EXPECT_EQ(sharded.readControl(r), plain.readControl(r)) << "register " << r;
  }
  const ChipInfo info = plain.info();
  std::vector<uint8_t> a(info.tileMemBytes), b(info.tileMemBytes);
  for (unsigned t = 0; t < info.tiles; ++t) {
    const TileStats s = sharded.stats(t), p = plain.stats(t);
    EXPECT_EQ(s.cycles, p.cycles) << "tile " << t;
    EXPECT_EQ(s.instructions, p.instructions) << "tile " << t;
    for (unsigned c = 0; c < info.contexts; ++c)
      EXPECT_EQ(s.contextInstructions[c], p.contextInstructions[c]) << "tile " << t;
    EXPECT_EQ(s.idleSlots, p.idleSlots) << "tile " << t;
    EXPECT_EQ(s.syncWaitCycles, p.syncWaitCycles) << "tile " << t;
    EXPECT_EQ(s.exchangeCycles, p.exchangeCycles) << "tile " << t;
    EXPECT_EQ(s.halted, p.halted) << "tile " << t;
    EXPECT_EQ(s.exitCode, p.exitCode) << "tile " << t;
    sharded.writeControl(TESS_CR_TILE_SEL, t);
    plain.writeControl(TESS_CR_TILE_SEL, t);
    for (uint32_t r : {TESS_CR_T_ENABLE, TESS_CR_T_STATE, TESS_CR_T_EXIT, TESS_CR_T_INSTR_LO,
                       TESS_CR_T_IDLE_LO, TESS_CR_T_SYNCWAIT_LO, TESS_CR_T_EXCH_LO}) {
      EXPECT_EQ(sharded.readControl(r), plain.readControl(r)) << "tile " << t << " register " << r;
    }
    sharded.readMemory(t, 0, a);
    plain.readMemory(t, 0, b);
    EXPECT_TRUE(a == b) << "tile " << t << ": memory differs";
  }
}

TEST(Shard, LibraryMatMulThroughTheEngine) {
  constexpr unsigned kTiles = 8;
  Graph graph{Target{kTiles}};
  Sequence prog;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const auto input = [&](std::vector<size_t> shape, const std::string& name) {
    Tensor t = ops::createLinear(graph, ElemType::Float32, shape, name, 1);
    std::vector<float> v(t.numElements());
    for (float& x : v) x = dist(rng);
    graph.setInitialValue(t, v);
    return t;
  };
  Tensor a = input({24, 40}, "a");
  Tensor b = input({40, 16}, "b");
  Tensor c = ops::matmul(graph, a, b, prog, "mm");
  Tensor d = ops::matmul(graph, c, input({16, 12}, "e"), prog, "mm2");
  graph.exposeTensor("d", d);
  const Compiled compiled = compile(graph, prog);
  DeviceOptions o;
  o.tiles = kTiles;
  auto plainDev = openDevice("model", o);
  o.shard = true;
  auto shardDev = openDevice("model", o);
  Engine plain(*plainDev, compiled.executable);
  Engine sharded(*shardDev, compiled.executable);
  const RunResult want = plain.run(200'000'000);
  const RunResult got = sharded.run(200'000'000);
  EXPECT_EQ(want.reason, StopReason::Halted) << describeTrap(want.trap);
  EXPECT_EQ(int(got.reason), int(want.reason));
  EXPECT_EQ(got.cycles, want.cycles);
  EXPECT_EQ(got.exitCode, want.exitCode);
  EXPECT_EQ(describeTrap(got.trap), describeTrap(want.trap));
  EXPECT_EQ(sharded.readTensor("d"), plain.readTensor("d"));
  expectSameChip(*shardDev, *plainDev);
  uint64_t exchange = 0;
  for (unsigned t = 0; t < kTiles; ++t) exchange += plainDev->stats(t).exchangeCycles;
  EXPECT_GT(exchange, 0u) << "the matmul should exchange";
}

}  // namespace
}  // namespace tessera::test

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ::testing::InitGoogleTest(&argc, argv);
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  if (failed) fmt::print(stderr, "library_shard_test: rank {} had failures\n", rank);
  int anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return anyFailed;
}
