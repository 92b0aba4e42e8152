// The matrix unit's long sweep (label "sweep"): 10^6 random operand sets, each through AMP.LW,
// AMP.LA, AMP.S (and again AMP.H), AMP.RD and AMP.SA on the model, and 10^6 through each
// conversion, against the host reference (amp_reference.hpp).
#include "amp_reference.hpp"

namespace tessera::model::test {
namespace {

TEST(AmpSweep, MillionRandomOperandSets) {
  ampSweep(1000000, 0x5eed0a3dull);
}

TEST(AmpSweep, MillionRandomFp16OperandSets) {
  ampSweep(1000000, 0x5eed0a3eull, AmpPrecision::Fp16);
}

// Each set is one AMP.CVTHS, AMP.CVTHS.SR, AMP.CVTSH.LO and AMP.CVTSH.HI: 10^6 of each.
TEST(AmpSweep, MillionRandomConversionSets) {
  cvtSweep(1000000, 0x5eed0a3full);
}

}  // namespace
}  // namespace tessera::model::test
