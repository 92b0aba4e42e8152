// Differential tests of the RTL FPU (verilated tess_fpu, tess_fpu_divsqrt) against tessera::fp.
// Regular run: per operation kRandomSets random operand sets (rounding modes cycling through all
// five) issued one per cycle in a random mix of operations, plus the exhaustive cross product of
// edge values in all five modes.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "divsqrt_driver.hpp"
#include "fpu_driver.hpp"
#include "operand_gen.hpp"

namespace tessera::fpu_test {
namespace {

constexpr uint64_t kRandomSets = 300000;

// One-round operations of tess_fpu.
std::vector<FpuOp> fpu_ops() {
  std::vector<FpuOp> ops;
  for (int i = 0; i < kNumOps; ++i) {
    const auto op = static_cast<FpuOp>(i);
    if (op != FpuOp::kDiv && op != FpuOp::kSqrt) ops.push_back(op);
  }
  return ops;
}

TEST(FpuRtl, RandomMixAllOps) {
  FpuDriver fpu;
  OperandGen gen(1);
  std::mt19937_64 rng(2);
  const std::vector<FpuOp> ops = fpu_ops();
  std::vector<uint64_t> count(kNumOps, 0);
  const uint64_t total = kRandomSets * ops.size();
  for (uint64_t i = 0; i < total; ++i) {
    // A random op every cycle (any mix must work back to back); each op cycles through the modes.
    const FpuOp op = ops[rng() % ops.size()];
    const unsigned rm = static_cast<unsigned>(count[static_cast<int>(op)]++ % 5);
    fpu.issue(op, rm, gen.operands(op));
    if (rng() % 64 == 0) fpu.bubble();
  }
  fpu.drain();
  for (FpuOp op : ops) {
    std::printf("%-9s %8llu random operand sets\n", std::string(op_name(op)).c_str(),
                static_cast<unsigned long long>(count[static_cast<int>(op)]));
    EXPECT_GE(count[static_cast<int>(op)], kRandomSets * 9 / 10);
  }
  EXPECT_EQ(fpu.checked(), total);
  EXPECT_EQ(fpu.mismatches(), 0u);
}

TEST(FpuRtl, EdgeCrossProduct) {
  FpuDriver fpu;
  const std::vector<uint32_t> edges = OperandGen::fp_edges();
  const std::vector<uint32_t> fma = OperandGen::fma_edges();
  const std::vector<uint32_t> ints = OperandGen::int_edges();
  uint64_t issued = 0;
  for (FpuOp op : fpu_ops()) {
    const unsigned modes = op_uses_rm(op) ? 5 : 1;
    for (unsigned rm = 0; rm < modes; ++rm) {
      switch (op_arity(op)) {
        case 1:
          for (uint32_t a : op_takes_int(op) ? ints : edges) {
            fpu.issue(op, rm, {a, 0, 0});
            ++issued;
          }
          break;
        case 2:
          for (uint32_t a : edges) {
            for (uint32_t b : edges) {
              fpu.issue(op, rm, {a, b, 0});
              ++issued;
            }
          }
          break;
        default:
          for (uint32_t a : fma) {
            for (uint32_t b : fma) {
              for (uint32_t c : fma) {
                fpu.issue(op, rm, {a, b, c});
                ++issued;
              }
            }
          }
          break;
      }
    }
  }
  fpu.drain();
  std::printf("%llu edge operand sets\n", static_cast<unsigned long long>(issued));
  EXPECT_EQ(fpu.checked(), issued);
  EXPECT_EQ(fpu.mismatches(), 0u);
}

void run_divsqrt(PassSchedule schedule, uint64_t sets, uint64_t seed) {
  DivSqrtDriver unit(schedule, seed);
  OperandGen gen(seed + 1);
  for (uint64_t i = 0; i < sets; ++i) {
    unit.submit(FpuOp::kDiv, static_cast<unsigned>(i % 5), gen.operands(FpuOp::kDiv));
    unit.submit(FpuOp::kSqrt, static_cast<unsigned>(i % 5), gen.operands(FpuOp::kSqrt));
  }
  unit.drain();
  EXPECT_EQ(unit.checked(), 2 * sets);
  EXPECT_EQ(unit.mismatches(), 0u);
}

TEST(FpuDivSqrtRtl, RandomRoundRobin) {
  run_divsqrt(PassSchedule::kRoundRobin, kRandomSets, 3);
}

TEST(FpuDivSqrtRtl, RandomAnySpacing) {
  run_divsqrt(PassSchedule::kRandom, kRandomSets / 5, 4);
}

TEST(FpuDivSqrtRtl, EdgeCrossProduct) {
  DivSqrtDriver unit(PassSchedule::kRoundRobin, 5);
  const std::vector<uint32_t> edges = OperandGen::fp_edges();
  uint64_t issued = 0;
  for (unsigned rm = 0; rm < 5; ++rm) {
    for (uint32_t a : edges) {
      unit.submit(FpuOp::kSqrt, rm, {a, 0, 0});
      ++issued;
      for (uint32_t b : edges) {
        unit.submit(FpuOp::kDiv, rm, {a, b, 0});
        ++issued;
      }
    }
  }
  unit.drain();
  EXPECT_EQ(unit.checked(), issued);
  EXPECT_EQ(unit.mismatches(), 0u);
}

}  // namespace
}  // namespace tessera::fpu_test
