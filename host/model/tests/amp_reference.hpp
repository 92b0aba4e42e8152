// The matrix unit's sweep on the model (docs/tile.md, "Matrix unit"): the host reference and the
// batch program of host/testing/amp_batch.hpp run on a TileModel, shared by the model's regular
// tests (a short sweep) and amp_sweep (the long one, label "sweep").
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "amp_batch.hpp"
#include "tile_harness.hpp"

namespace tessera::model::test {

using tessera::test::AmpBatch;
using tessera::test::AmpCvtBatch;
using tessera::test::AmpCvtOperands;
using tessera::test::AmpDirectedCase;
using tessera::test::AmpOperands;
using tessera::test::AmpPrecision;
using tessera::test::directedAmpCases;
using tessera::test::directedAmpHCases;
using tessera::test::randomAmpHOperands;
using tessera::test::randomAmpOperands;
using tessera::test::randomCvtOperands;
using tessera::test::referenceAmp;
using tessera::test::referenceAmpH;

/// Runs a batch (AmpBatch or AmpCvtBatch) of `sets` on a model tile with the unit and returns
/// the mismatches its check() counts.
template <class Batch, class Set>
size_t runBatchOnModel(const Batch& batch, const std::vector<Set>& sets) {
  TileConfig config{0, 1, 65536, true, true, TESS_NUM_CONTEXTS};
  config.hasMatrixUnit = true;
  TileModel tile(config);
  if (batch.endBytes() > config.memBytes) {
    ADD_FAILURE() << "batch of " << sets.size() << " sets does not fit in tile memory";
    return sets.size();
  }
  batch.place(sets, [&](uint32_t addr, const uint32_t* words, size_t count) {
    tile.writeMemory(addr, std::span(reinterpret_cast<const uint8_t*>(words), count * 4));
  });
  const TileState state = tile.run(uint64_t{1} << 40);
  if (state != TileState::Halted) {
    ADD_FAILURE() << "the sweep program did not halt (trap cause " << tile.trap().cause << ")";
    return sets.size();
  }
  return batch.check(sets, [&](uint32_t addr, uint32_t* words, size_t count) {
    tile.readMemory(addr, std::span(reinterpret_cast<uint8_t*>(words), count * 4));
  });
}

/// Runs `sets` through the batch program (AmpBatch) on a model tile and compares each result with
/// the reference. Returns the mismatches.
inline size_t runAmpBatch(const std::vector<AmpOperands>& sets, unsigned b, unsigned r, unsigned j,
                          AmpPrecision p = AmpPrecision::Fp32) {
  return runBatchOnModel(AmpBatch(static_cast<uint32_t>(sets.size()), b, r, j, p), sets);
}

/// Runs `sets` through the conversion batch (AmpCvtBatch, generator seeded with `seed`) on a
/// model tile. Returns the mismatches.
inline size_t runCvtBatch(const std::vector<AmpCvtOperands>& sets, uint32_t seed) {
  return runBatchOnModel(AmpCvtBatch(static_cast<uint32_t>(sets.size()), seed), sets);
}

/// The sweep: `total` random operand sets in batches, every bank, row and column in turn, through
/// AMP.S (Fp32) or AMP.H (Fp16).
inline void ampSweep(size_t total, uint64_t seed, AmpPrecision p = AmpPrecision::Fp32) {
  std::mt19937_64 rng(seed);
  constexpr size_t kBatch = 400;
  size_t bad = 0;
  for (size_t done = 0, batch = 0; done < total; done += kBatch, ++batch) {
    const size_t n = std::min(kBatch, total - done);
    const std::vector<AmpOperands> sets =
        p == AmpPrecision::Fp16 ? randomAmpHOperands(rng, n) : randomAmpOperands(rng, n);
    bad += runAmpBatch(sets, static_cast<unsigned>(batch % 2),
                       static_cast<unsigned>(batch / 2 % TESS_AMP_ACC_ROWS),
                       static_cast<unsigned>(batch / 8 % 4), p);
  }
  EXPECT_EQ(bad, 0u) << "of " << total << " operand sets";
}

/// The conversions' sweep: `total` random sets in batches of 1,000, each batch seeded anew.
inline void cvtSweep(size_t total, uint64_t seed) {
  std::mt19937_64 rng(seed);
  constexpr size_t kBatch = 1000;
  size_t bad = 0;
  for (size_t done = 0; done < total; done += kBatch) {
    const std::vector<AmpCvtOperands> sets = randomCvtOperands(rng, std::min(kBatch, total - done));
    bad += runCvtBatch(sets, static_cast<uint32_t>(rng()));
  }
  EXPECT_EQ(bad, 0u) << "of " << total << " operand sets";
}

}  // namespace tessera::model::test
