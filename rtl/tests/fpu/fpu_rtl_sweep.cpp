// Long sweep of the RTL FPU against tessera::fp: kSweepSets random operand sets per operation
// (default 10^7; tess_fpu ops in a random mix, FDIV/FSQRT on all six contexts). About 5 minutes on
// one core, so only in the "sweep" ctest label: `ctest --test-dir build -L sweep`, or by hand:
//   ninja -C build fpu_rtl_sweep && build/rtl/tests/fpu/fpu_rtl_sweep [--gtest_filter=...]
// The environment variable FPU_SWEEP_SETS overrides the count, FPU_SWEEP_SEED the seed.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#include "divsqrt_driver.hpp"
#include "fpu_driver.hpp"
#include "operand_gen.hpp"

namespace tessera::fpu_test {
namespace {

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 0) : fallback;
}

const uint64_t kSweepSets = env_or("FPU_SWEEP_SETS", 10000000);
const uint64_t kSeed = env_or("FPU_SWEEP_SEED", 1000);

TEST(FpuRtlSweep, AllOneRoundOps) {
  FpuDriver fpu;
  OperandGen gen(kSeed);
  std::mt19937_64 rng(kSeed + 1);
  std::vector<uint64_t> count(kNumOps, 0);
  const int n = kNumOps - 2;  // kDiv and kSqrt are the last two
  for (uint64_t i = 0; i < kSweepSets * n; ++i) {
    const auto op = static_cast<FpuOp>(rng() % n);
    fpu.issue(op, static_cast<unsigned>(count[static_cast<int>(op)]++ % 5), gen.operands(op));
  }
  fpu.drain();
  std::printf("%llu operand sets checked, %llu mismatches\n",
              static_cast<unsigned long long>(fpu.checked()),
              static_cast<unsigned long long>(fpu.mismatches()));
  EXPECT_EQ(fpu.mismatches(), 0u);
  // Every set issued was compared (a lost result would otherwise pass unnoticed).
  EXPECT_EQ(fpu.checked(), kSweepSets * n);
}

TEST(FpuRtlSweep, DivSqrt) {
  DivSqrtDriver unit(PassSchedule::kRoundRobin, kSeed + 2);
  OperandGen gen(kSeed + 3);
  for (uint64_t i = 0; i < kSweepSets; ++i) {
    unit.submit(FpuOp::kDiv, static_cast<unsigned>(i % 5), gen.operands(FpuOp::kDiv));
    unit.submit(FpuOp::kSqrt, static_cast<unsigned>(i % 5), gen.operands(FpuOp::kSqrt));
  }
  unit.drain();
  std::printf("%llu operand sets checked, %llu mismatches\n",
              static_cast<unsigned long long>(unit.checked()),
              static_cast<unsigned long long>(unit.mismatches()));
  EXPECT_EQ(unit.mismatches(), 0u);
  EXPECT_EQ(unit.checked(), 2 * kSweepSets);
}

}  // namespace
}  // namespace tessera::fpu_test

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
