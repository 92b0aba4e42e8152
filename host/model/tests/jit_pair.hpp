// What the translating engine's tests share (jit_test.cpp, jit_window_test.cpp): a tile of each
// engine holding the same memory, run to the same cycles and compared in full.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "tile_harness.hpp"

namespace tessera::model::test {

/// The tile both engines' tests use: the chip's contexts, counters and matrix unit, 64 KiB.
inline TileConfig jitTestConfig(bool jit) {
  return TileConfig{
      0, 1, 65536, true, true, TESS_NUM_CONTEXTS, TESS_COUNTER_BITS, TESS_MATRIX_UNIT != 0, jit};
}

/// A tile of each engine holding the same memory.
struct EnginePair {
  TileModel interp{jitTestConfig(false)};
  TileModel jit{jitTestConfig(true)};

  EnginePair() = default;
  EnginePair(const EnginePair&) = delete;
  EnginePair& operator=(const EnginePair&) = delete;
  /// With TESSERA_JIT_STOPS set, the jit tile's counts to stderr (as a model device prints them).
  ~EnginePair() {
    if (std::getenv("TESSERA_JIT_STOPS") == nullptr) return;
    ModelJitStatistics s;
    jit.addJitStatistics(s);
    std::fputs(("model jit: " + formatJitStatistics(s) + "\n").c_str(), stderr);
  }

  void place(uint32_t addr, const std::vector<uint32_t>& words) {
    std::vector<uint8_t> bytes(words.size() * 4);
    std::memcpy(bytes.data(), words.data(), bytes.size());
    interp.writeMemory(addr, bytes);
    jit.writeMemory(addr, bytes);
  }
  /// Both to cycle `until` (or a stop); their states must agree.
  void runTo(uint64_t until) {
    interp.run(until);
    jit.run(until);
    ASSERT_EQ(tileStateDifference(interp, jit), "") << "at cycle " << until;
  }
  /// Both in uneven slices of 1..maxSlice cycles (seeded), compared after each, until the tile
  /// stops or passes `limit` cycles.
  void runInSlices(uint32_t seed, unsigned maxSlice, uint64_t limit) {
    std::mt19937 rng(seed);
    uint64_t t = 0;
    while (jit.state() == TileState::Running && t < limit) {
      t += 1 + rng() % maxSlice;
      runTo(t);
      if (::testing::Test::HasFailure()) return;
    }
  }
  /// To the end in slices of up to maxSlice cycles; the program must halt.
  void runToEnd(uint32_t seed, unsigned maxSlice = 400) {
    runInSlices(seed, maxSlice, 2'000'000);
    EXPECT_EQ(jit.state(), TileState::Halted);
  }
};

}  // namespace tessera::model::test
