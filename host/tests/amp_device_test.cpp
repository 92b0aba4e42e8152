// The matrix unit on every backend against the host reference (docs/tile.md, "Matrix unit"): the
// directed special values and random operand sets of host/testing/amp_batch.hpp, run by the batch
// program through AMP.LW, AMP.LA, AMP.S, AMP.RD and AMP.SA on tile 0 of each backend's chip. The
// long form (amp_device_sweep, label "sweep") runs 10^6 sets on the RTL.
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
    for (unsigned r = 0; r < 4; ++r) EXPECT_EQ(runAmpBatchOn(*opened.device, sets, b, r, r), 0u);
  }
}

TEST_P(AmpDeviceTest, RandomOperandSetsMatchTheReference) {
  const backends::Opened opened = backends::open(GetParam());
  EXPECT_EQ(sweepOn(*opened.device, 6400, 0xa3d0e55ull), 0u) << "of 6400 operand sets";
}

INSTANTIATE_TEST_SUITE_P(Backends, AmpDeviceTest, testing::ValuesIn(backends::names()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tessera::test
