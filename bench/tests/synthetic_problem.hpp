// The small learnable problem the trainer tests use instead of Fashion-MNIST: 20 inputs drawn
// uniformly from [0, 1), 4 classes, and the class of a row is the group of five inputs with the
// largest sum. Each step's rows come from a generator seeded by the step, so every test, every
// device and every MPI rank sees the same minibatch for the same step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>

namespace tessera::bench {

inline constexpr size_t kSyntheticInputs = 20;
inline constexpr size_t kSyntheticClasses = 4;

/// Fills labels.size() rows (images holds kSyntheticInputs floats per row) for step `step`.
inline void syntheticBatch(uint64_t step, std::span<float> images, std::span<int32_t> labels) {
  std::mt19937 rng(static_cast<uint32_t>(1000 + step));
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (size_t r = 0; r < labels.size(); ++r) {
    float best = -1e9f;
    for (size_t i = 0; i < kSyntheticInputs; ++i) images[r * kSyntheticInputs + i] = u(rng);
    for (size_t c = 0; c < kSyntheticClasses; ++c) {
      float s = 0;
      for (size_t i = 5 * c; i < 5 * c + 5; ++i) s += images[r * kSyntheticInputs + i];
      if (s > best) best = s, labels[r] = static_cast<int32_t>(c);
    }
  }
}

}  // namespace tessera::bench
