// The matrix unit on every backend against the host reference (docs/tile.md, "Matrix unit"): the
// directed special values and random operand sets of host/testing/amp_batch.hpp, run by the batch
// program through AMP.LW, AMP.LA, AMP.S (and AMP.H), AMP.RD and AMP.SA, and by the conversion
// batch through AMP.SEED, AMP.CVTHS, AMP.CVTHS.SR and AMP.CVTSH.LO/HI, on tile 0 of each
// backend's chip. The long form (amp_device_sweep, label "sweep") runs 10^6 sets of each on the
// RTL.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "amp_device_runner.hpp"
#include "backends.hpp"

namespace tessera::test {
namespace {

class AmpDeviceTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { backends::skipIfExcluded(GetParam()); }
};

TEST_P(AmpDeviceTest, ReportsTheUnit) {
  const backends::Opened opened = backends::open(GetParam());
  EXPECT_TRUE(opened.device->info().hasMatrixUnit);
}

TEST_P(AmpDeviceTest, DirectedSpecialValuesMatchTheReference) {
  const backends::Opened opened = backends::open(GetParam());
  std::vector<AmpOperands> sets;
  for (const AmpDirectedCase& c : directedAmpCases()) {
    EXPECT_EQ(referenceAmp(c.o), c.want);  // the reference agrees with the hand-derived values
    sets.push_back(c.o);
  }
  for (unsigned b = 0; b < 2; ++b) {
    for (unsigned r = 0; r < TESS_AMP_ACC_ROWS; ++r) {
      EXPECT_EQ(runAmpBatchOn(*opened.device, sets, b, r, r % 4), 0u);
    }
  }
}

TEST_P(AmpDeviceTest, RandomOperandSetsMatchTheReference) {
  const backends::Opened opened = backends::open(GetParam());
  EXPECT_EQ(sweepOn(*opened.device, 6400, 0xa3d0e55ull), 0u) << "of 6400 operand sets";
}

TEST_P(AmpDeviceTest, Fp16DirectedSpecialValuesMatchTheReference) {
  const backends::Opened opened = backends::open(GetParam());
  std::vector<AmpOperands> sets;
  for (const AmpDirectedCase& c : directedAmpHCases()) {
    EXPECT_EQ(referenceAmpH(c.o), c.want);
    sets.push_back(c.o);
  }
  for (unsigned b = 0; b < 2; ++b) {
    for (unsigned r = 0; r < TESS_AMP_ACC_ROWS; ++r) {
      EXPECT_EQ(runAmpBatchOn(*opened.device, sets, b, r, r % 4, AmpPrecision::Fp16), 0u);
    }
  }
}

TEST_P(AmpDeviceTest, RandomFp16OperandSetsMatchTheReference) {
  const backends::Opened opened = backends::open(GetParam());
  EXPECT_EQ(sweepOn(*opened.device, 6400, 0xa3d0e56ull, AmpPrecision::Fp16), 0u)
      << "of 6400 operand sets";
}

// The conversions' directed cases with three seeds, then random sets: the same seed gives the
// reference's bits on every backend.
TEST_P(AmpDeviceTest, ConversionsMatchTheReference) {
  const backends::Opened opened = backends::open(GetParam());
  const std::vector<AmpCvtOperands> sets = directedCvtOperands();
  for (uint32_t seed : {0u, 1u, 0xdeadbeefu}) {
    EXPECT_EQ(runCvtBatchOn(*opened.device, sets, seed), 0u) << "seed " << seed;
  }
  EXPECT_EQ(cvtSweepOn(*opened.device, 8000, 0xa3d0e57ull), 0u) << "of 8000 conversion sets";
}

INSTANTIATE_TEST_SUITE_P(Backends, AmpDeviceTest, testing::ValuesIn(backends::names()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tessera::test
