// The parameters of the benchmark's MLP on the host: layer sizes, weights, biases and the input
// scaling; their seeded initialization, shared by the device run and the CPU reference; and their
// .npz layout (docs/training.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "npz_file.hpp"

namespace tessera::bench {

/// Weights w[l] (sizes[l] x sizes[l+1], row-major: fan_in rows), biases b[l] (sizes[l+1]).
struct MlpParameters {
  std::vector<size_t> sizes;                ///< inputs, hidden..., classes
  std::vector<std::vector<float>> weights;  ///< w0, w1, ...
  std::vector<std::vector<float>> biases;   ///< b0, b1, ...
  float inputScale = 1.0f / 255.0f;         ///< network input = pixel * inputScale + inputOffset
  float inputOffset = 0.0f;

  /// Number of layers (weight matrices).
  size_t layers() const { return weights.size(); }
  /// Throws tessera::Error naming the array whose size does not match `sizes`.
  void validate() const;

  /// Seeded initialization: one std::mt19937(seed) draws w0 then w1 ... in row-major order, each
  /// value u = (rng() >> 8) * 2^-24, w = limit * (2u - 1) (float), limit = sqrtf(6 / (fan_in +
  /// fan_out)) (Glorot uniform); biases are 0.
  static MlpParameters initialize(const std::vector<size_t>& sizes, uint32_t seed);
  /// The .npz layout: w0, b0, w1, b1, ... then input_scale and input_offset.
  NpzFile toNpz() const;
  /// From an .npz with that layout; throws tessera::Error naming the array that is missing or whose
  /// shape does not chain (w_l is (fan_in, fan_out), b_l is (fan_out,)).
  static MlpParameters fromNpz(const NpzFile& npz);
};

}  // namespace tessera::bench
