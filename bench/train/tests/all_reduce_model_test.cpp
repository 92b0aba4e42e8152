// The modelled ring all-reduce (bench/train/all_reduce_model.hpp) against its formula worked by
// hand.
#include "all_reduce_model.hpp"

#include <gtest/gtest.h>

namespace tessera::bench {
namespace {

TEST(AllReduceModel, OneReplicaTakesNoTime) {
  const AllReduceModel m;
  EXPECT_EQ(m.seconds(1 << 20, 1), 0.0);
  EXPECT_EQ(m.bytesSentPerChip(1 << 20, 1), 0.0);
}

TEST(AllReduceModel, RingFormula) {
  AllReduceModel m;
  m.bytesPerSecond = 100.0;
  m.stepLatencySeconds = 0.5;
  // 4 chips, 400 bytes: each sends 2 * 3/4 * 400 = 600 bytes in 6 steps: 6 s + 3 s.
  EXPECT_DOUBLE_EQ(m.bytesSentPerChip(400, 4), 600.0);
  EXPECT_DOUBLE_EQ(m.seconds(400, 4), 9.0);
  // 2 chips: 400 bytes, 2 steps: 4 s + 1 s.
  EXPECT_DOUBLE_EQ(m.seconds(400, 2), 5.0);
}

TEST(AllReduceModel, DefaultsAreTheMk2LinksEachWay) {
  const AllReduceModel m;
  EXPECT_DOUBLE_EQ(m.bytesPerSecond, 160e9);  // 320 GB/s per chip, both directions together
  // The default benchmark network's gradients, 784-128-10: 101,770 floats, 2 replicas.
  const uint64_t bytes = 4 * (784 * 128 + 128 + 128 * 10 + 10);
  EXPECT_NEAR(m.seconds(bytes, 2), 407080.0 / 160e9 + 2e-6, 1e-12);
}

}  // namespace
}  // namespace tessera::bench
