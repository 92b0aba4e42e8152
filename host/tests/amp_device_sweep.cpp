// The matrix unit's long sweep on the RTL (label "sweep"): 10^6 random operand sets through the
// batch programs of host/testing/amp_batch.hpp on the verilated chip (AMP.S, AMP.H and the
// conversions), against the host reference.
// The model's own 10^6 is model.amp_sweep.
#include <gtest/gtest.h>

#include "amp_device_runner.hpp"

namespace tessera::test {
namespace {

TEST(AmpRtlSweep, MillionOperandSets) {
  auto dev = openDevice("rtl");
  EXPECT_EQ(sweepOn(*dev, 1000000, 0x5eed0a3dull), 0u) << "of 10^6 operand sets";
}

TEST(AmpRtlSweep, MillionFp16OperandSets) {
  auto dev = openDevice("rtl");
  EXPECT_EQ(sweepOn(*dev, 1000000, 0x5eed0a3eull, AmpPrecision::Fp16), 0u)
      << "of 10^6 operand sets";
}

// 10^6 of each conversion (each set is one AMP.CVTHS, .SR, AMP.CVTSH.LO and .HI).
TEST(AmpRtlSweep, MillionConversionSets) {
  auto dev = openDevice("rtl");
  EXPECT_EQ(cvtSweepOn(*dev, 1000000, 0x5eed0a3full), 0u) << "of 10^6 conversion sets";
}

}  // namespace
}  // namespace tessera::test
