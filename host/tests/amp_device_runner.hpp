// The matrix unit's batch programs (host/testing/amp_batch.hpp) on a Device: shared by
// amp_device_test (every backend, regular run) and amp_device_sweep (the RTL's 10^6, "sweep").
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "amp_batch.hpp"
#include "tessera/device.hpp"

namespace tessera::test {

/// Runs a batch (AmpBatch or AmpCvtBatch) of `sets` on tile 0 of dev (the other tiles disabled)
/// and returns the mismatches its check() counts.
template <class Batch, class Set>
size_t runBatchOn(Device& dev, const Batch& batch, const std::vector<Set>& sets) {
  if (batch.endBytes() > dev.info().tileMemBytes) {
    ADD_FAILURE() << "batch of " << sets.size() << " sets does not fit in tile memory";
    return sets.size();
  }
  dev.reset();
  batch.place(sets, [&](uint32_t addr, const uint32_t* words, size_t count) {
    dev.writeMemory(0, addr, std::span(reinterpret_cast<const uint8_t*>(words), count * 4));
  });
  for (unsigned t = 1; t < dev.info().tiles; ++t) dev.setTileEnabled(t, false);
  const RunResult result = dev.run(uint64_t{1} << 32);
  if (result.reason != StopReason::Halted) {
    ADD_FAILURE() << "the batch program did not halt (trap cause " << result.trap.cause << " pc 0x"
                  << std::hex << result.trap.pc << ")";
    return sets.size();
  }
  return batch.check(sets, [&](uint32_t addr, uint32_t* words, size_t count) {
    dev.readMemory(0, addr, std::span(reinterpret_cast<uint8_t*>(words), count * 4));
  });
}

/// Runs `sets` through the batch program (AMP.S, or AMP.H with Fp16) on tile 0 of dev and
/// compares each result with the reference. Returns the mismatches.
inline size_t runAmpBatchOn(Device& dev, const std::vector<AmpOperands>& sets, unsigned b,
                            unsigned r, unsigned j, AmpPrecision p = AmpPrecision::Fp32) {
  return runBatchOn(dev, AmpBatch(static_cast<uint32_t>(sets.size()), b, r, j, p), sets);
}

/// Runs `sets` through the conversion batch (generator seeded with `seed`) on tile 0 of dev.
inline size_t runCvtBatchOn(Device& dev, const std::vector<AmpCvtOperands>& sets, uint32_t seed) {
  return runBatchOn(dev, AmpCvtBatch(static_cast<uint32_t>(sets.size()), seed), sets);
}

/// `total` random sets in batches, every bank, row (all eight) and column in turn.
inline size_t sweepOn(Device& dev, size_t total, uint64_t seed,
                      AmpPrecision p = AmpPrecision::Fp32) {
  std::mt19937_64 rng(seed);
  constexpr size_t kBatch = 400;
  size_t bad = 0;
  for (size_t done = 0, batch = 0; done < total; done += kBatch, ++batch) {
    const size_t n = std::min(kBatch, total - done);
    const std::vector<AmpOperands> sets =
        p == AmpPrecision::Fp16 ? randomAmpHOperands(rng, n) : randomAmpOperands(rng, n);
    bad += runAmpBatchOn(dev, sets, static_cast<unsigned>(batch % 2),
                         static_cast<unsigned>(batch / 2 % TESS_AMP_ACC_ROWS),
                         static_cast<unsigned>(batch / 8 % 4), p);
  }
  return bad;
}

/// `total` random conversion sets in batches of 1,000, each seeded anew.
inline size_t cvtSweepOn(Device& dev, size_t total, uint64_t seed) {
  std::mt19937_64 rng(seed);
  constexpr size_t kBatch = 1000;
  size_t bad = 0;
  for (size_t done = 0; done < total; done += kBatch) {
    const std::vector<AmpCvtOperands> sets = randomCvtOperands(rng, std::min(kBatch, total - done));
    bad += runCvtBatchOn(dev, sets, static_cast<uint32_t>(rng()));
  }
  return bad;
}

}  // namespace tessera::test
