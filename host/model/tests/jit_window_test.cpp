// The translating engine while several contexts run (docs/tile.md, "Several contexts"): workers
// started by the supervisor run windows of translated code, which are kept only when no word was
// shared with a write, no store hit translated code and every context reached the window's end.
// Each program runs on a tile of each engine, compared in full at many stop cycles.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>

#include "jit_pair.hpp"

namespace tessera::model::test {
namespace {

using namespace rv;

constexpr uint32_t kWorkerEntry = 0x400;

// The pair, and what its windows did.
struct Pair : EnginePair {
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
  p.runInSlices(5, 300, 1'000'000);
  if (HasFailure()) return;
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

// A random worker: a counted loop over a body of random RV32IM instructions whose loads and
// stores go to the worker's own 512 bytes (tp) or to 64 bytes all workers share (gp), with
// forward branches, CSR reads, divides, FP, console bytes and an occasional store of an
// instruction into the body that every worker runs; worker a0 passes 2 + a0 times. Some seeds
// trap (a misaligned access). With unit, also matrix-unit instructions on tp and either bank.
std::vector<uint32_t> randomWorker(uint32_t seed, uint32_t entry, bool unit = false) {
  std::mt19937 rng(seed);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  auto reg = [&] { return 11 + pick(7); };  // a1..a7
  auto dst = [&] { return pick(16) == 0 ? 0u : reg(); };
  constexpr uint32_t kPatch = addi(a1, a1, 1);
  std::vector<uint32_t> prog{slli(tp, a0, 9),
                             lui(t1, 8),
                             add(tp, tp, t1),
                             lui(gp, 7),
                             addi(s1, a0, 2),
                             lui(s0, kPatch >> 12),
                             addi(s0, s0, static_cast<int32_t>(kPatch & 0xfff))};
  for (uint32_t r = 11; r < 18; ++r) prog.push_back(addi(r, a0, static_cast<int32_t>(pick(2048))));
  const uint32_t bodyStart = static_cast<uint32_t>(prog.size());
  const uint32_t bodyLen = 20 + pick(40);
  for (uint32_t k = 0; k < bodyLen; ++k) {
    const uint32_t left = bodyLen - k - 1;
    const uint32_t kind = pick(100);
    const uint32_t base = pick(4) == 0 ? uint32_t{gp} : uint32_t{tp};
    const int32_t off =
        static_cast<int32_t>((base == gp ? pick(64) : pick(512)) & (pick(40) ? ~3u : ~0u));
    uint32_t w;
    if (kind < 30) {
      const bool m = pick(4) == 0;
      const uint32_t f3 = pick(8);
      const uint32_t f7 = m ? 1 : ((f3 == 0 || f3 == 5) && pick(2) ? 0x20 : 0);
      w = r(f7, reg(), reg(), f3, dst(), 0x33);
    } else if (kind < 50) {
      const uint32_t f3 = pick(8);
      int32_t imm = static_cast<int32_t>(pick(4096)) - 2048;
      if (f3 == 1) imm = static_cast<int32_t>(pick(32));
      if (f3 == 5) imm = static_cast<int32_t>(pick(32) | (pick(2) ? 0x400 : 0));
      w = i(imm, reg(), f3, dst(), 0x13);
    } else if (kind < 68) {
      static constexpr uint32_t kF3[] = {0, 1, 2, 4, 5};
      w = i(off, base, kF3[pick(5)], dst(), 0x03);
    } else if (kind < 84) {
      w = s(off, reg(), base, pick(3), 0x23);
    } else if (kind < 85) {
      w = sw(s0, zero, static_cast<int32_t>(entry + 4 * (bodyStart + pick(bodyLen))));
    } else if (kind < 93 && left > 0) {
      static constexpr uint32_t kF3[] = {0, 1, 4, 5, 6, 7};
      w = b(static_cast<int32_t>(4 * (1 + pick(std::min(left, 4u)))), reg(), reg(), kF3[pick(6)]);
    } else if (kind < 95) {
      static constexpr uint32_t kCsr[] = {0xc00, 0xc02, 0xcc1};
      w = csrr(dst(), kCsr[pick(3)]);
    } else if (kind < 96) {
      w = fcvt_s_w(pick(4), reg());
    } else if (kind < 97) {
      w = div(dst(), reg(), reg());
    } else if (kind < 98) {
      prog.push_back(kLoadMmioBase);
      ++k;
      w = sw(reg(), t0, mmio(TESS_MMIO_CONSOLE));
    } else if (unit && kind < 99) {
      // The matrix unit on the worker's own buffer (tp), a bank chosen at random: the banks are
      // the tile's, so workers share them.
      const uint32_t bank = pick(2), row = pick(4);
      switch (pick(5)) {
        case 0:
          w = amp_lw(zero, tp, bank, row);
          break;
        case 1:
          w = amp_s(zero, tp, bank, row);
          break;
        case 2:
          w = amp_sa(zero, tp, row, pick(2));
          break;
        case 3:
          w = amp_rd(pick(4), row, pick(4));
          break;
        default:
          w = amp_cvths_sr(dst(), reg(), reg());
          break;
      }
    } else {
      w = addi(reg(), reg(), static_cast<int32_t>(pick(4096)) - 2048);
    }
    prog.push_back(w);
  }
  prog.push_back(addi(s1, s1, -1));
  prog.push_back(bne(s1, zero, -4 * static_cast<int32_t>(prog.size() - bodyStart)));
  done(prog);
  return prog;
}

// ---- Why windows stop (docs/tile.md, "Why translated code stops") ----

// The jit tile's counts (instructions, windows, stops by reason).
ModelJitStatistics statistics(const TileModel& jit) {
  ModelJitStatistics s;
  jit.addJitStatistics(s);
  return s;
}

uint64_t count(const JitStopCounts& c, JitStop r) {
  return c[static_cast<unsigned>(r)];
}

// Worker a0 (1 or 2) in 40 passes: loads the four rows of a weight bank from its own buffer
// (0x4000 + 1024 a0), runs two AMP.S rows through it, stores the two accumulator rows, stores its
// instret and cycle CSRs, and updates a word of its buffer. Worker 1 uses bank bank1, worker 2
// bank bank2; the code of each is its own.
std::vector<uint32_t> ampWorker(uint32_t bank1, uint32_t bank2) {
  std::vector<uint32_t> p{addi(t2, zero, 1), bne(a0, t2, 0)};  // patched: worker 2's body
  const auto body = [&p](uint32_t bank) {
    const size_t start = p.size();
    p.insert(p.end(), {slli(a1, a0, 10), lui(tp, 4), add(a1, a1, tp), addi(a2, zero, 40)});
    const size_t loop = p.size();
    p.insert(p.end(),
             {addi(a3, a1, 0), amp_lw(a3, a3, bank, 0), amp_lw(a3, a3, bank, 1),
              amp_lw(a3, a3, bank, 2), amp_lw(a3, a3, bank, 3), amp_s(a3, a3, bank, 0),
              amp_s(a3, a3, bank, 1), addi(a5, a1, 256), amp_sa(a5, a5, 0, 0), amp_sa(a5, a5, 1, 1),
              csrr(a6, kInstret), sw(a6, a1, 512), csrr(a7, kCycle), sw(a7, a1, 516),
              lw(a6, a1, 600), add(a6, a6, a2), sw(a6, a1, 600), addi(a2, a2, -1)});
    p.push_back(bne(a2, zero, -4 * static_cast<int32_t>(p.size() - loop)));
    done(p);
    return start;
  };
  body(bank1);
  const size_t second = body(bank2);
  p[1] = bne(a0, t2, 4 * static_cast<int32_t>(second - 1));
  return p;
}

// Floats in both workers' buffers: weights and inputs of the unit.
void placeAmpOperands(Pair& p) {
  for (uint32_t w = 1; w <= 2; ++w) {
    std::vector<uint32_t> v(96);
    for (uint32_t k = 0; k < v.size(); ++k) {
      const float x = 0.25f * static_cast<float>(k % 7) - 0.5f + 0.125f * static_cast<float>(w);
      std::memcpy(&v[k], &x, 4);
    }
    p.place(0x4000 + 1024 * w, v);
  }
}

TEST_F(JitWindow, MatrixUnitOnDisjointBanksStaysInWindows) {
  // Each worker has its own bank (and its own accumulators and buffer): windows run the unit's
  // instructions and the CSR reads they meet as steps, so none is cut by them, and nothing
  // conflicts. (A window does not start while a member's next instruction is one of them: those
  // attempts count as undone for amp or csr.)
  Pair p;
  p.place(0, supervisor(2));
  p.place(kWorkerEntry, ampWorker(0, 1));
  placeAmpOperands(p);
  p.runToEnd(4);
  p.report("unit, disjoint banks");
  const ModelJitStatistics s = statistics(p.jit);
  EXPECT_GT(s.windows, 0u);
  for (JitStop r : {JitStop::Amp, JitStop::Csr, JitStop::Conflict}) {
    EXPECT_EQ(count(s.windowCut, r), 0u) << jitStopName(r);
  }
  EXPECT_EQ(count(s.windowUndone, JitStop::Conflict), 0u);
  EXPECT_GT(p.jit.jitInstructions(), 0u);
}

TEST_F(JitWindow, MatrixUnitSharedBankIsAConflict) {
  // Both workers load and use bank 0: the barrel's order decides what each AMP.S reads, so a
  // window in which both touch the bank is undone or stops where the second one touches it.
  Pair p;
  p.place(0, supervisor(2));
  p.place(kWorkerEntry, ampWorker(0, 0));
  placeAmpOperands(p);
  p.runToEnd(5);
  p.report("unit, shared bank");
  const ModelJitStatistics s = statistics(p.jit);
  EXPECT_GT(count(s.windowUndone, JitStop::Conflict) + count(s.windowCut, JitStop::Conflict), 0u);
  EXPECT_EQ(count(s.windowCut, JitStop::Amp), 0u);
}

TEST_F(JitWindow, MatrixUnitStepsAtEveryCycleLimit) {
  // Cut at every cycle: windows end (and are kept) at every point of the unit's code, shared
  // bank or not; the fetch-timing notes of AMP.SA's four words come from the window's log.
  for (uint32_t shared = 0; shared <= 1; ++shared) {
    SCOPED_TRACE(shared ? "shared bank" : "disjoint banks");
    Pair p;
    p.place(0, supervisor(2));
    std::vector<uint32_t> w = ampWorker(0, shared ? 0 : 1);
    p.place(kWorkerEntry, w);
    placeAmpOperands(p);
    for (uint64_t t = 0; p.jit.state() == TileState::Running && t < 30000; t += 1 + t % 3) {
      p.runTo(t);
      if (HasFailure()) return;
    }
    EXPECT_EQ(p.jit.state(), TileState::Halted);
  }
}

TEST_F(JitWindow, StopReasonsAreCounted) {
  // A worker whose loop writes a console byte (MMIO): every window it is in stops there, and the
  // undone windows' reasons sum to the fallbacks. Its DIV and CSR read are window steps.
  std::vector<uint32_t> w{lui(tp, 4), addi(a2, zero, 30), kLoadMmioBase,
                          // loop (12)
                          addi(a3, a3, 5), addi(a4, a4, 7), add(a5, a3, a4), div(a6, a5, a2),
                          csrr(a7, kInstret), add(a6, a6, a7), sw(a6, tp, 0),
                          sw(a2, t0, mmio(TESS_MMIO_CONSOLE)), addi(a2, a2, -1),
                          bne(a2, zero, -36)};
  done(w);
  Pair p;
  p.place(0, supervisor(1));
  p.place(kWorkerEntry, w);
  p.runToEnd(6);
  const ModelJitStatistics s = statistics(p.jit);
  std::printf("stop reasons: %s\n", formatJitStatistics(s).c_str());
  uint64_t undone = 0;
  for (uint64_t n : s.windowUndone) undone += n;
  EXPECT_EQ(undone, s.windowFallbacks);
  EXPECT_GT(s.windows, 0u);
  EXPECT_GT(count(s.windowCut, JitStop::Mmio) + count(s.windowUndone, JitStop::Mmio), 0u);
  for (JitStop r : {JitStop::Amp, JitStop::Csr, JitStop::FpMode, JitStop::Conflict}) {
    EXPECT_EQ(count(s.windowUndone, r) + count(s.windowCut, r), 0u) << jitStopName(r);
  }
  // The DIV is not a stop of any window that it is in.
  EXPECT_EQ(count(s.windowCut, JitStop::LongOp), 0u);
}

TEST_F(JitWindow, LongOpsRetireInsideWindows) {
  // Workers dividing (DIV, REMU, FDIV, FSQRT) in loops of different lengths: each long op
  // issues and retires inside the window, or stays pending past its end; cut at many cycles.
  std::vector<uint32_t> w{slli(a1, a0, 10), lui(tp, 4), add(a1, a1, tp), slli(a2, a0, 2),
                          addi(a2, a2, 9), fcvt_s_w(1, a2),
                          // loop (24)
                          addi(a3, a3, 11), div(a4, a3, a2), r(1, a2, a3, 7, a5, 0x33),  // remu
                          add(a6, a4, a5), fcvt_s_w(2, a6), fdiv(3, 2, 1), fsqrt(4, 3),
                          fsw(4, a1, 0), sw(a6, a1, 4), addi(a2, a2, -1), bne(a2, zero, -40)};
  done(w);
  Pair p;
  p.place(0, supervisor(TESS_NUM_CONTEXTS - 1));
  p.place(kWorkerEntry, w);
  for (uint64_t t = 0; p.jit.state() == TileState::Running && t < 40000; t += 1 + t % 5) {
    p.runTo(t);
    if (HasFailure()) return;
  }
  EXPECT_EQ(p.jit.state(), TileState::Halted);
  const ModelJitStatistics s = statistics(p.jit);
  EXPECT_GT(s.windows, 0u);
  EXPECT_EQ(count(s.windowCut, JitStop::LongOp), 0u);
}

TEST_F(JitWindow, ContextZeroAloneStopsAtEachCsrRead) {
  // Context 0 alone: its blocks end at each CSR read (the interpreter runs it and the rest of
  // the pass), once per pass of the loop.
  constexpr int32_t kPasses = 25;
  std::vector<uint32_t> prog{addi(a2, zero, kPasses),
                             // loop (4)
                             addi(a3, a3, 3), csrr(a4, kInstret), add(a5, a5, a4), addi(a2, a2, -1),
                             bne(a2, zero, -16), kLoadMmioBase, kExit};
  Pair p;
  p.place(0, prog);
  p.runTo(100000);
  EXPECT_EQ(p.jit.state(), TileState::Halted);
  const ModelJitStatistics s = statistics(p.jit);
  EXPECT_EQ(count(s.blockExits, JitStop::Csr), static_cast<uint64_t>(kPasses));
  EXPECT_EQ(s.windows + s.windowFallbacks, 0u);
}

TEST_F(JitWindow, RandomWorkersAgreeWithTheInterpreter) {
  uint64_t translated = 0, total = 0, kept = 0, fellBack = 0;
  unsigned halted = 0, trapped = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Pair p;
    p.place(0, supervisor(TESS_NUM_CONTEXTS - 1));
    p.place(kWorkerEntry, randomWorker(seed, kWorkerEntry));
    p.runInSlices(seed, 500, 400000);
    if (HasFailure()) return;
    translated += p.jit.jitInstructions();
    total += p.jit.stats().instructions;
    kept += p.jit.jitWindows();
    fellBack += p.jit.jitWindowFallbacks();
    halted += p.jit.state() == TileState::Halted;
    trapped += p.jit.state() == TileState::Trapped;
  }
  EXPECT_GT(halted, 20u);
  EXPECT_GT(trapped, 20u);
  EXPECT_GT(kept, 0u);
  EXPECT_GT(fellBack, 0u);
  EXPECT_GT(translated, 0u);
  std::printf(
      "random workers: %u halted, %u trapped, %llu windows kept, %llu fell back, %llu of %llu "
      "instructions translated\n",
      halted, trapped, static_cast<unsigned long long>(kept),
      static_cast<unsigned long long>(fellBack), static_cast<unsigned long long>(translated),
      static_cast<unsigned long long>(total));
}

TEST_F(JitWindow, RandomWorkersWithTheMatrixUnit) {
  // The random workers with the unit's instructions too (the banks shared by all workers, so
  // some windows stop or are undone at a bank another worker touched).
  uint64_t kept = 0, conflicts = 0;
  unsigned halted = 0;
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Pair p;
    p.place(0, supervisor(TESS_NUM_CONTEXTS - 1));
    p.place(kWorkerEntry, randomWorker(seed, kWorkerEntry, true));
    p.runInSlices(seed, 500, 400000);
    if (HasFailure()) return;
    const ModelJitStatistics s = statistics(p.jit);
    kept += s.windows;
    conflicts += count(s.windowUndone, JitStop::Conflict) + count(s.windowCut, JitStop::Conflict);
    halted += p.jit.state() == TileState::Halted;
  }
  EXPECT_GT(halted, 20u);
  EXPECT_GT(kept, 0u);
  EXPECT_GT(conflicts, 0u);
  std::printf("random workers with the unit: %u halted, %llu windows kept, %llu conflicts\n",
              halted, static_cast<unsigned long long>(kept),
              static_cast<unsigned long long>(conflicts));
}

}  // namespace
}  // namespace tessera::model::test
