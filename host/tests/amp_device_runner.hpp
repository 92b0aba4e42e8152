// The matrix unit's batch program (host/testing/amp_batch.hpp) on a Device: shared by
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

/// Runs `sets` through the batch program on tile 0 of dev (the other tiles disabled) and compares
/// each result with the reference. Returns the mismatches.
inline size_t runAmpBatchOn(Device& dev, const std::vector<AmpOperands>& sets, unsigned b,
                            unsigned r, unsigned j) {
  const AmpBatch batch(static_cast<uint32_t>(sets.size()), b, r, j);
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

/// `total` random sets in batches, every bank, row and column in turn.
inline size_t sweepOn(Device& dev, size_t total, uint64_t seed) {
  std::mt19937_64 rng(seed);
  constexpr size_t kBatch = 400;
  size_t bad = 0;
  for (size_t done = 0, batch = 0; done < total; done += kBatch, ++batch) {
    const std::vector<AmpOperands> sets = randomAmpOperands(rng, std::min(kBatch, total - done));
    bad +=
        runAmpBatchOn(dev, sets, static_cast<unsigned>(batch % 2),
                      static_cast<unsigned>(batch / 2 % 4), static_cast<unsigned>(batch / 8 % 4));
  }
  return bad;
}

}  // namespace tessera::test
