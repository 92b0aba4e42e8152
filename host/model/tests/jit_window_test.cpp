// The translating engine while several contexts run (docs/tile.md, "Several contexts"): workers
// started by the supervisor run windows of translated code, which are kept only when no word was
// shared with a write, no store hit translated code and every context reached the window's end.
// Each program runs on a tile of each engine, compared in full at many stop cycles.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "tile_harness.hpp"

namespace tessera::model::test {
namespace {

using namespace rv;

constexpr uint32_t kWorkerEntry = 0x400;

TileConfig config(bool jit) {
  return TileConfig{
      0, 1, 65536, true, true, TESS_NUM_CONTEXTS, TESS_COUNTER_BITS, TESS_MATRIX_UNIT != 0, jit};
}

struct Pair {
  TileModel interp{config(false)};
  TileModel jit{config(true)};

  void place(uint32_t addr, const std::vector<uint32_t>& words) {
    std::vector<uint8_t> bytes(words.size() * 4);
    std::memcpy(bytes.data(), words.data(), bytes.size());
    interp.writeMemory(addr, bytes);
    jit.writeMemory(addr, bytes);
  }
  void runTo(uint64_t until) {
    interp.run(until);
    jit.run(until);
    ASSERT_EQ(tileStateDifference(interp, jit), "") << "at cycle " << until;
  }
  // To the end in uneven slices (seeded), comparing after each.
  void runToEnd(uint32_t seed, unsigned maxSlice = 400) {
    std::mt19937 rng(seed);
    uint64_t t = 0;
    while (jit.state() == TileState::Running && t < 2'000'000) {
      t += 1 + rng() % maxSlice;
      runTo(t);
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_EQ(jit.state(), TileState::Halted);
  }
  void report(const char* what) const {
    std::printf("%s: %llu windows kept, %llu fell back, %llu of %llu instructions translated\n",
                what, static_cast<unsigned long long>(jit.jitWindows()),
                static_cast<unsigned long long>(jit.jitWindowFallbacks()),
                static_cast<unsigned long long>(jit.jitInstructions()),
                static_cast<unsigned long long>(jit.stats().instructions));
  }
};

class JitWindow : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kHasJit) GTEST_SKIP() << "this build has no translating engine";
  }
};

// The supervisor: RUN workers 1..workers at kWorkerEntry with RUN_ARG = the worker's number,
// WAIT for them, EXIT 0.
std::vector<uint32_t> supervisor(unsigned workers) {
  std::vector<uint32_t> p{kLoadMmioBase, addi(t1, zero, kWorkerEntry)};
  for (unsigned w = 1; w <= workers; ++w) {
    p.push_back(addi(t2, zero, static_cast<int32_t>(w)));
    p.push_back(sw(t2, t0, mmio(TESS_MMIO_RUN_ARG)));
    p.push_back(sw(t1, t0, mmio(TESS_MMIO_RUN_BASE + 4 * (w - 1))));
  }
  p.push_back(sw(zero, t0, mmio(TESS_MMIO_WAIT)));
  p.push_back(kExit);
  return p;
}

// The end of a worker: DONE.
void done(std::vector<uint32_t>& p) {
  p.push_back(kLoadMmioBase);
  p.push_back(sw(zero, t0, mmio(TESS_MMIO_DONE)));
}

// Worker a0 sums into its own 1 KiB buffer at 0x4000 + 1024 a0 for 100 + 32 a0 iterations
// (so the workers end at different cycles, inside windows), then stores the sum and ends.
std::vector<uint32_t> disjointWorker() {
  std::vector<uint32_t> p{slli(a1, a0, 10), lui(tp, 4), add(a1, a1, tp), slli(a2, a0, 5),
                          addi(a2, a2, 100), addi(a3, zero, 0),
                          // loop (24)
                          i(63, a2, 7, a4, 0x13),  // andi a4, a2, 63
                          slli(a4, a4, 2), add(a4, a4, a1), lw(a5, a4, 0), add(a5, a5, a2),
                          add(a3, a3, a5), sw(a3, a4, 0), mulhu(a6, a3, a5),
                          r(0, a6, a7, 4, a7, 0x33), addi(a2, a2, -1), bne(a2, zero, -40),
                          sw(a3, a1, 1020), sw(a7, a1, 1016)};
  done(p);
  return p;
}

TEST_F(JitWindow, DisjointWorkersRunTranslated) {
  Pair p;
  p.place(0, supervisor(TESS_NUM_CONTEXTS - 1));
  p.place(kWorkerEntry, disjointWorker());
  p.runToEnd(1);
  p.report("disjoint workers");
  EXPECT_GT(p.jit.jitWindows(), 0u);
  EXPECT_GT(p.jit.jitInstructions(), p.jit.stats().instructions / 2);
}

TEST_F(JitWindow, DisjointWorkersStopAtEveryCycleLimit) {
  Pair p;
  p.place(0, supervisor(3));
  std::vector<uint32_t> w = disjointWorker();
  w[4] = addi(a2, a2, 4);  // 4 + 32 a0 iterations
  p.place(kWorkerEntry, w);
  for (uint64_t t = 0; p.jit.state() == TileState::Running && t < 20000; ++t) {
    p.runTo(t);
    if (HasFailure()) return;
  }
  EXPECT_EQ(p.jit.state(), TileState::Halted);
  EXPECT_GT(p.jit.jitWindows(), 0u);
}

TEST_F(JitWindow, WorkersSharingACounterFallBack) {
  // Every worker adds its number to one word 200 times (load, add, store): the interleaving of
  // the barrel decides the result, so every window that runs it must be undone.
  std::vector<uint32_t> w{lui(tp, 4), addi(a2, zero, 200),
                          // loop (8)
                          lw(a5, tp, 0), add(a5, a5, a0), sw(a5, tp, 0), addi(a2, a2, -1),
                          bne(a2, zero, -16)};
  done(w);
  Pair p;
  p.place(0, supervisor(TESS_NUM_CONTEXTS - 1));
  p.place(kWorkerEntry, w);
  p.runToEnd(2);
  p.report("shared counter");
  EXPECT_GT(p.jit.jitWindowFallbacks(), 0u);
}

TEST_F(JitWindow, PollingAFlagWrittenByAnotherWorker) {
  // Worker 1 spins on a flag until worker 2, after 300 rounds of its own work, sets it; worker 1
  // then stores flag + 5.
  std::vector<uint32_t> w{lui(tp, 4), addi(t2, zero, 1), bne(a0, t2, 24),  // 8: worker 2 to 32
                                                                           // 12: poll
                          lw(a5, tp, 0), beq(a5, zero, -4), addi(a6, a5, 5), sw(a6, tp, 4),
                          jal(zero, 28),  // 28: to done (56)
                          // 32: the producer
                          addi(a2, zero, 300), addi(a3, a3, 3), addi(a2, a2, -1), bne(a2, zero, -8),
                          addi(a5, zero, 7), sw(a5, tp, 0)};
  done(w);  // 56
  Pair p;
  p.place(0, supervisor(2));
  p.place(kWorkerEntry, w);
  p.runToEnd(3);
  p.report("polling");
  uint8_t word[4];
  p.jit.readMemory(0x4004, word);
  EXPECT_EQ(word[0], 12u);
}

TEST_F(JitWindow, CodeRewrittenByAnotherWorker) {
  // Worker 1 counts in a loop whose first word worker 2 replaces after 100 rounds of its own:
  // from then on worker 1 adds 16 per pass.
  constexpr uint32_t kPatched = addi(a1, a1, 16);
  constexpr uint32_t kBody = kWorkerEntry + 12;
  std::vector<uint32_t> w{
      addi(t2, zero, 1), bne(a0, t2, 24),  // 4: worker 2 to 28
      addi(a2, zero, 400),
      // 12: the loop body worker 2 rewrites
      addi(a1, a1, 1), addi(a2, a2, -1), bne(a2, zero, -8), jal(zero, 36),  // 24: to done (60)
      // 28: the writer
      addi(a2, zero, 100), addi(a3, a3, 1), addi(a2, a2, -1), bne(a2, zero, -8),
      lui(a4, (kPatched + 0x800) >> 12), addi(a4, a4, static_cast<int32_t>(kPatched << 20) >> 20),
      sw(a4, zero, static_cast<int32_t>(kBody)), jal(zero, 4)};
  done(w);  // 60
  Pair p;
  p.place(0, supervisor(2));
  p.place(kWorkerEntry, w);
  p.runToEnd(4);
  p.report("code rewritten by another worker");
  EXPECT_GT(p.jit.xreg(1, a1), 400u);
}

TEST_F(JitWindow, WorkersWithInterpretedInstructionsAndTraps) {
  // Workers that mix translated code with what stops a window (a CSR read, a divide, FP) in
  // different places, sharing nothing; worker 3 ends the tile with a misaligned load.
  std::vector<uint32_t> w{slli(a1, a0, 10), lui(tp, 4), add(a1, a1, tp), addi(a2, zero, 60),
                          // 16: loop
                          addi(a3, a3, 7), sw(a3, a1, 0), lw(a4, a1, 0), add(a5, a5, a4),
                          i(7, a2, 7, a6, 0x13),  // andi a6, a2, 7
                          bne(a6, a0, 12),        // 36: a0 == a2 & 7: a CSR read and a divide
                          csrr(a7, 0xc00), div(s1, a5, a0), fcvt_s_w(1, a5), addi(a2, a2, -1),
                          bne(a2, zero, -40), addi(t2, zero, 3), bne(a0, t2, 8), lw(a4, a1, 2)};
  done(w);
  Pair p;
  p.place(0, supervisor(TESS_NUM_CONTEXTS - 1));
  p.place(kWorkerEntry, w);
  std::mt19937 rng(5);
  uint64_t t = 0;
  while (p.jit.state() == TileState::Running && t < 1'000'000) {
    t += 1 + rng() % 300;
    p.runTo(t);
    if (HasFailure()) return;
  }
  EXPECT_EQ(p.jit.state(), TileState::Trapped);
  p.report("interpreted instructions");
}

TEST_F(JitWindow, RollbackOfAChunkWithWindows) {
  // The chip's rollback (checkpoint, run, rollback) over windows that were kept.
  Pair p;
  p.place(0, supervisor(TESS_NUM_CONTEXTS - 1));
  p.place(kWorkerEntry, disjointWorker());
  p.runTo(300);
  p.interp.checkpoint();
  p.jit.checkpoint();
  p.runTo(5000);
  p.interp.rollback();
  p.jit.rollback();
  ASSERT_EQ(tileStateDifference(p.interp, p.jit), "");
  p.runToEnd(6);
}

}  // namespace
}  // namespace tessera::model::test
