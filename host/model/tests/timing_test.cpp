// Timing per docs/tile.md "Contexts and barrel threading": slots, long ops, the +3 rule.
#include <gtest/gtest.h>

#include "tile_harness.hpp"

namespace tessera::model::test {
namespace {

using namespace rv;

TEST(Timing, StraightLineOnOneContextTakesSixCyclesPerInstruction) {
  for (unsigned extra : {0u, 1u, 5u, 100u}) {
    TileHarness h;
    std::vector<uint32_t> prog{kLoadMmioBase};
    for (unsigned k = 0; k < extra; ++k) prog.push_back(addi(a0, a0, 1));
    prog.push_back(kExit);
    h.place(0, prog);
    ASSERT_EQ(h.run(), TileState::Halted);
    const uint64_t n = prog.size();
    EXPECT_EQ(h.tile.cycles(), 6 * (n - 1) + 1);
    const TileStats s = h.tile.stats();
    EXPECT_EQ(s.instructions, n);
    EXPECT_EQ(s.contextInstructions[0], n);
    EXPECT_EQ(s.idleSlots, s.cycles - n);
    EXPECT_EQ(h.tile.xreg(0, a0), extra);
    ASSERT_EQ(h.records.size(), n);
    for (uint64_t k = 0; k < n; ++k) EXPECT_EQ(h.records[k].cycle, 6 * k);
  }
}

TEST(Timing, LongOpsOccupyEightRoundsAndRetireAtIssuePlus42) {
  // div, divu, rem, remu, fdiv.s, fsqrt.s: issue at 6, next instruction at 6 + 48.
  for (uint32_t op : {div(a2, a0, a1), divu(a2, a0, a1), rem(a2, a0, a1), remu(a2, a0, a1),
                      fdiv(2, 0, 1), fsqrt(2, 0)}) {
    TileHarness h;
    h.place(0, {addi(a0, zero, 7), op, csrr(a3, kCycle), kLoadMmioBase, kExit});
    ASSERT_EQ(h.run(), TileState::Halted) << std::hex << op;
    EXPECT_EQ(h.tile.xreg(0, a3), 54u);
    EXPECT_EQ(h.tile.cycles(), 54u + 12 + 1);
    ASSERT_EQ(h.records.size(), 5u);
    EXPECT_EQ(h.records[1].cycle, 48u);
    EXPECT_EQ(h.records[1].insn, op);
    EXPECT_EQ(h.records[2].cycle, 54u);
    const TileStats s = h.tile.stats();
    // 5 instructions use 4 + 8 slots; everything else is idle.
    EXPECT_EQ(s.idleSlots, s.cycles - 12);
  }
}

TEST(Timing, LongOpResultVisibleToNextInstruction) {
  TileHarness h;
  h.place(0, {addi(a0, zero, 100), addi(a1, zero, 7), div(a2, a0, a1), rem(a3, a0, a1),
              add(a4, a2, a3), kLoadMmioBase, kExit});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(0, a2), 14u);
  EXPECT_EQ(h.tile.xreg(0, a3), 2u);
  EXPECT_EQ(h.tile.xreg(0, a4), 16u);
}

// Supervisor: RUN worker w at cycle 12, WAIT at 18, read cycle when released, EXIT.
// Worker at 0x100: read cycle (its first issue), store it, DONE.
void expectRunWaitTiming(TileHarness& h, unsigned w) {
  h.place(0, {kLoadMmioBase,                                       // 0
              addi(t1, zero, 0x100),                               // 6
              sw(t1, t0, mmio(TESS_MMIO_RUN_BASE + 4 * (w - 1))),  // 12: RUN w
              sw(zero, t0, mmio(TESS_MMIO_WAIT)),                  // 18: WAIT
              csrr(a2, kCycle),                                    // released
              kExit});
  h.place(0x100, {csrr(a1, kCycle), kLoadMmioBase, sw(a1, zero, 0x200),
                  sw(zero, t0, mmio(TESS_MMIO_DONE))});
  ASSERT_EQ(h.run(), TileState::Halted);
  const uint64_t first = slotAtOrAfter(w, 12 + 3);
  const uint64_t done = first + 18;
  const uint64_t release = slotAtOrAfter(0, std::max<uint64_t>(18 + 6, done + 3));
  EXPECT_EQ(h.word(0x200), first);
  EXPECT_EQ(h.tile.xreg(0, a2), release);
  EXPECT_EQ(h.tile.cycles(), release + 6 + 1);
  EXPECT_EQ(h.tile.stats().contextInstructions[w], 4u);
  EXPECT_EQ(h.tile.stats().contextInstructions[0], 6u);
}

class RunWaitTiming : public ::testing::TestWithParam<unsigned> {};

TEST_P(RunWaitTiming, FollowsThePlusThreeRule) {
  TileHarness h;
  expectRunWaitTiming(h, GetParam());
}

INSTANTIATE_TEST_SUITE_P(EachWorker, RunWaitTiming, ::testing::Values(1u, 2u, 3u, 4u, 5u));

// docs/tile.md "Fewer contexts": a tile of n < 6 contexts keeps the six-cycle round, so each
// worker it has starts, runs and ends as on the full tile; the slots of the others are idle, their
// counts 0, and the RUN word of worker n (one past the last) is an unmapped MMIO word.
class FewerContexts : public ::testing::TestWithParam<unsigned> {};

TEST_P(FewerContexts, KeepTheRoundAndUnmapTheMissingWorkers) {
  const unsigned n = GetParam();
  for (unsigned w = 1; w < n; ++w) {
    SCOPED_TRACE(::testing::Message() << "worker " << w << " of " << n << " contexts");
    TileHarness h(n);
    expectRunWaitTiming(h, w);
    const TileStats s = h.tile.stats();
    EXPECT_EQ(s.idleSlots, s.cycles - 10);
    for (unsigned c = n; c < TileModel::kMaxContexts; ++c) EXPECT_EQ(s.contextInstructions[c], 0u);
  }
  TileHarness h(n);
  const uint32_t run = TESS_MMIO_RUN_BASE + 4 * (n - 1);
  h.place(0, {kLoadMmioBase, addi(t1, zero, 0x100), sw(t1, t0, mmio(run)), kExit});
  ASSERT_EQ(h.run(), TileState::Trapped);
  EXPECT_EQ(h.tile.trap().cause, TESS_CAUSE_STORE_ACCESS);
  EXPECT_EQ(h.tile.trap().pc, 8u);
  EXPECT_EQ(h.tile.trap().value, run);
  EXPECT_EQ(h.tile.trap().context, 0u);
}

INSTANTIATE_TEST_SUITE_P(TwoToSix, FewerContexts, ::testing::Values(2u, 3u, 4u, 5u, 6u));

TEST(Timing, ATileHasTwoToSixContexts) {
  for (unsigned n : {0u, 1u, 7u}) {
    EXPECT_THROW(TileModel(TileConfig{0, 1, 4096, true, true, n}), Error) << n;
  }
}

TEST(Timing, WaitWithAllWorkersIdleBlocksOneRound) {
  TileHarness h;
  h.place(0, {kLoadMmioBase, sw(zero, t0, mmio(TESS_MMIO_WAIT)), csrr(a2, kCycle), kExit});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(0, a2), 12u);
}

TEST(Timing, SixBusyContextsReachIpcOne) {
  // The supervisor starts workers 1..5 on a loop of 20 addi, then WAITs.
  TileHarness h;
  std::vector<uint32_t> sup{kLoadMmioBase, addi(t1, zero, 0x100)};
  for (unsigned w = 1; w <= 5; ++w)
    sup.push_back(sw(t1, t0, mmio(TESS_MMIO_RUN_BASE + 4 * (w - 1))));
  for (int k = 0; k < 20; ++k) sup.push_back(addi(a1, a1, 1));
  sup.push_back(sw(zero, t0, mmio(TESS_MMIO_WAIT)));
  sup.push_back(kExit);
  h.place(0, sup);
  std::vector<uint32_t> worker{kLoadMmioBase};
  for (int k = 0; k < 20; ++k) worker.push_back(addi(a1, a1, 1));
  worker.push_back(sw(zero, t0, mmio(TESS_MMIO_DONE)));
  h.place(0x100, worker);
  ASSERT_EQ(h.run(), TileState::Halted);
  const TileStats s = h.tile.stats();
  for (unsigned w = 1; w <= 5; ++w) EXPECT_EQ(h.tile.xreg(w, a1), 20u);
  EXPECT_EQ(s.instructions, sup.size() + 5 * worker.size());
  EXPECT_EQ(s.idleSlots, s.cycles - s.instructions);
  // Records: sorted by cycle, at most one per cycle, and each in its context's slot.
  for (size_t k = 0; k < h.records.size(); ++k) {
    EXPECT_EQ(h.records[k].cycle % 6, h.records[k].context);
    if (k > 0) {
      EXPECT_LT(h.records[k - 1].cycle, h.records[k].cycle);
    }
  }
  // RUN w issues at 6 + 6w, so worker w starts at the first slot of w ≥ 9 + 6w (worker 5 at 41);
  // the supervisor's addi run to 156 and worker 1's last addi is at 139: from 42 on, every cycle
  // retires an instruction.
  size_t inWindow = 0;
  for (const RetireRecord& r : h.records) inWindow += r.cycle >= 42 && r.cycle < 42 + 60;
  EXPECT_EQ(inWindow, 60u);
}

TEST(Timing, RecordsOfLongOpsComeOutInRetireOrder) {
  // Worker 1 issues a div; the supervisor keeps issuing meanwhile.
  TileHarness h;
  h.place(0, {kLoadMmioBase, addi(t1, zero, 0x100), sw(t1, t0, mmio(TESS_MMIO_RUN_BASE)),
              addi(a0, zero, 1), addi(a0, a0, 1), addi(a0, a0, 1), addi(a0, a0, 1), addi(a0, a0, 1),
              addi(a0, a0, 1), addi(a0, a0, 1), addi(a0, a0, 1), sw(zero, t0, mmio(TESS_MMIO_WAIT)),
              kExit});
  h.place(0x100,
          {addi(a1, zero, 9), div(a2, a1, a1), kLoadMmioBase, sw(zero, t0, mmio(TESS_MMIO_DONE))});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(1, a2), 1u);
  for (size_t k = 1; k < h.records.size(); ++k)
    EXPECT_LT(h.records[k - 1].cycle, h.records[k].cycle);
  // Worker 1 first issues at 19 (RUN at 12, first slot of 1 at or after 15): addi at 19, div at
  // 25 retiring at 67.
  bool found = false;
  for (const RetireRecord& r : h.records) {
    if (r.context == 1 && r.insn == div(a2, a1, a1)) {
      found = true;
      EXPECT_EQ(r.cycle, 25u + 42);
      EXPECT_EQ(r.dest, DestKind::X);
      EXPECT_EQ(r.rd, a2);
      EXPECT_EQ(r.value, 1u);
    }
  }
  EXPECT_TRUE(found);
}

TEST(Timing, HaltDiscardsUnfinishedLongOps) {
  // Worker 1 starts at 19 and issues a div at 25 (retire 67); the supervisor exits at 36.
  TileHarness h;
  h.place(0, {kLoadMmioBase, addi(t1, zero, 0x100), sw(t1, t0, mmio(TESS_MMIO_RUN_BASE)),
              addi(a0, zero, 1), addi(a0, zero, 1), addi(a0, zero, 1), kExit});
  h.place(0x100, {addi(a1, zero, 9), div(a2, a1, a1)});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.cycles(), 37u);
  EXPECT_EQ(h.tile.xreg(1, a2), 0u);
  EXPECT_EQ(h.tile.stats().contextInstructions[1], 1u);
  EXPECT_EQ(h.tile.stats().instructions, 8u);
  // Busy slots: supervisor 7, worker addi at 19 and the div's passes at 25 and 31.
  EXPECT_EQ(h.tile.stats().idleSlots, 37u - 10);
  for (const RetireRecord& r : h.records) EXPECT_LE(r.cycle, 36u);
}

TEST(Timing, RunStopsAtTheCycleLimitAndResumes) {
  TileHarness h;
  std::vector<uint32_t> prog{kLoadMmioBase};
  for (int k = 0; k < 10; ++k) prog.push_back(addi(a0, a0, 1));
  prog.push_back(kExit);
  h.place(0, prog);
  EXPECT_EQ(h.run(31), TileState::Running);
  EXPECT_EQ(h.tile.cycles(), 31u);
  EXPECT_EQ(h.tile.xreg(0, a0), 5u);  // issues at 0, 6, ..., 30: lui + 5 addi
  EXPECT_EQ(h.run(1000), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(0, a0), 10u);
  EXPECT_EQ(h.tile.cycles(), 6u * 11 + 1);
}

TEST(Timing, SupervisorWaitingForeverRunsToTheLimit) {
  TileHarness h;
  h.place(0, {kLoadMmioBase, addi(t1, zero, 0x100), sw(t1, t0, mmio(TESS_MMIO_RUN_BASE)),
              sw(zero, t0, mmio(TESS_MMIO_WAIT)), kExit});
  h.place(0x100, {jal(zero, 0)});
  EXPECT_EQ(h.run(1'000'000), TileState::Running);
  EXPECT_EQ(h.tile.cycles(), 1'000'000u);
}

}  // namespace
}  // namespace tessera::model::test
