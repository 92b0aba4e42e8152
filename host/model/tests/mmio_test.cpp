// The MMIO page per docs/tile.md "MMIO registers": EXIT, CONSOLE, RUN/RUN_ARG/WORKERS, misuse.
#include <gtest/gtest.h>

#include "tile_harness.hpp"

namespace tessera::model::test {
namespace {

using namespace rv;

TEST(Mmio, ExitCodeAndConsole) {
  TileHarness h;
  h.place(
      0, {kLoadMmioBase, addi(a0, zero, 'h'), sw(a0, t0, 4), addi(a0, zero, 0x169),  // low byte 'i'
          sw(a0, t0, 4), addi(a1, zero, 42), sw(a1, t0, 0), addi(a0, zero, 'X'), sw(a0, t0, 4)});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.console(), "hi");
  EXPECT_EQ(h.tile.exitCode(), 42u);
  EXPECT_EQ(h.tile.cycles(), 6u * 6 + 1);
  // The EXIT store retires at the halt cycle, with no destination.
  ASSERT_EQ(h.records.size(), 7u);
  EXPECT_EQ(h.records.back().cycle, 36u);
  EXPECT_EQ(h.records.back().dest, DestKind::None);
  EXPECT_EQ(h.records.back().value, 0u);
}

TEST(Mmio, WorkerGetsRunArgInA0AndKeepsOtherRegisters) {
  TileHarness h;
  h.place(0, {kLoadMmioBase, addi(a0, zero, 0x123), sw(a0, t0, 0x10), lw(a3, t0, 0x10),
              addi(t1, zero, 0x100), sw(t1, t0, 0x20), sw(zero, t0, 0x8),
              // second start of worker 1: same code, new argument
              addi(a0, zero, 0x77), sw(a0, t0, 0x10), sw(t1, t0, 0x20), sw(zero, t0, 0x8), kExit});
  // Worker: a1 += a0 (a1 survives between runs), then DONE.
  h.place(0x100, {add(a1, a1, a0), kLoadMmioBase, sw(zero, t0, 0xc)});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(0, a3), 0x123u);
  EXPECT_EQ(h.tile.xreg(1, a0), 0x77u);
  EXPECT_EQ(h.tile.xreg(1, a1), 0x123u + 0x77u);
}

TEST(Mmio, WorkersShowsRunningWorkers) {
  TileHarness h;
  h.place(0, {kLoadMmioBase, lw(a1, t0, 0x38), addi(t1, zero, 0x100), sw(t1, t0, 0x24),  // RUN 2
              sw(t1, t0, 0x2c),                                                          // RUN 4
              lw(a2, t0, 0x38), sw(zero, t0, 0x8), lw(a3, t0, 0x38), kExit});
  h.place(0x100, {kLoadMmioBase, sw(zero, t0, 0xc)});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(0, a1), 0u);
  EXPECT_EQ(h.tile.xreg(0, a2), (1u << 2) | (1u << 4));
  EXPECT_EQ(h.tile.xreg(0, a3), 0u);
}

TEST(Mmio, WorkerCanExitTheTile) {
  TileHarness h;
  h.place(0, {kLoadMmioBase, addi(t1, zero, 0x100), sw(t1, t0, 0x30), sw(zero, t0, 0x8)});  // RUN 5
  h.place(0x100, {kLoadMmioBase, addi(a1, zero, 7), sw(a1, t0, 0)});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.exitCode(), 7u);
  // RUN at 12 → worker 5 at 17, 23, EXIT at 29.
  EXPECT_EQ(h.tile.cycles(), 30u);
}

struct MisuseCase {
  const char* name;
  std::vector<uint32_t> worker;  // worker 1 code at 0x100; the last instruction traps
  uint32_t address;
};
void PrintTo(const MisuseCase& c, std::ostream* os) {
  *os << c.name;
}

class Misuse : public ::testing::TestWithParam<MisuseCase> {};

TEST_P(Misuse, ByWorkerTrapsWithCause24) {
  const MisuseCase& mc = GetParam();
  TileHarness h;
  h.place(0, {kLoadMmioBase, addi(t1, zero, 0x100), sw(t1, t0, 0x20), sw(zero, t0, 0x8)});
  h.place(0x100, mc.worker);
  ASSERT_EQ(h.run(), TileState::Trapped);
  EXPECT_EQ(h.tile.trap().context, 1u);
  EXPECT_EQ(h.tile.trap().cause, 24u);
  EXPECT_EQ(h.tile.trap().value, mc.address);
  EXPECT_EQ(h.tile.trap().pc, 0x100u + 4 * static_cast<uint32_t>(mc.worker.size() - 1));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Misuse,
    ::testing::Values(MisuseCase{"Run", {kLoadMmioBase, sw(zero, t0, 0x24)}, 0x80000024u},
                      MisuseCase{"RunSelf", {kLoadMmioBase, sw(zero, t0, 0x20)}, 0x80000020u},
                      MisuseCase{"Wait", {kLoadMmioBase, sw(zero, t0, 0x8)}, 0x80000008u}),
    [](const ::testing::TestParamInfo<MisuseCase>& info) { return std::string(info.param.name); });

TEST(Mmio, RunOfARunningWorkerTraps) {
  TileHarness h;
  h.place(0, {kLoadMmioBase, addi(t1, zero, 0x100), sw(t1, t0, 0x28), sw(t1, t0, 0x28)});
  h.place(0x100, {jal(zero, 0)});
  ASSERT_EQ(h.run(), TileState::Trapped);
  EXPECT_EQ(h.tile.trap().context, 0u);
  EXPECT_EQ(h.tile.trap().pc, 12u);
  EXPECT_EQ(h.tile.trap().cause, 24u);
  EXPECT_EQ(h.tile.trap().value, 0x80000028u);
}

TEST(Mmio, RunAfterDoneRestartsTheWorker) {
  // Worker 1 DONEs; the supervisor polls WORKERS until it reads 0, then starts it again.
  TileHarness h;
  h.place(0, {kLoadMmioBase, addi(t1, zero, 0x100), sw(t1, t0, 0x20), lw(a1, t0, 0x38),
              bne(a1, zero, -4),  // poll
              sw(t1, t0, 0x20), sw(zero, t0, 0x8), kExit});
  h.place(0x100, {addi(a2, a2, 1), kLoadMmioBase, sw(zero, t0, 0xc)});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(1, a2), 2u);
}

}  // namespace
}  // namespace tessera::model::test
