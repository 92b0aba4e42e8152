// The matrix unit's long sweep on the RTL (label "sweep"): 10^6 random operand sets through the
// batch program of host/testing/amp_batch.hpp on the verilated chip, against the host reference.
// The model's own 10^6 is model.amp_sweep.
#include <gtest/gtest.h>

#include "amp_device_runner.hpp"

namespace tessera::test {
namespace {

TEST(AmpRtlSweep, MillionOperandSets) {
  auto dev = openDevice("rtl");
  EXPECT_EQ(sweepOn(*dev, 1000000, 0x5eed0a3dull), 0u) << "of 10^6 operand sets";
}

}  // namespace
}  // namespace tessera::test
