// The matrix unit's long sweep (label "sweep"): 10^6 random operand sets, each through AMP.LW,
// AMP.LA, AMP.S, AMP.RD and AMP.SA on the model, against the host reference (amp_reference.hpp).
#include "amp_reference.hpp"

namespace tessera::model::test {
namespace {

TEST(AmpSweep, MillionRandomOperandSets) {
  ampSweep(1000000, 0x5eed0a3dull);
}

}  // namespace
}  // namespace tessera::model::test
