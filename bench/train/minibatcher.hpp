// Seeded minibatches of a LabelledImages set, in an order that is the same with every standard
// library: std::mt19937 (fully specified by the standard) and our own Fisher-Yates shuffle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "fashion_mnist.hpp"

namespace tessera::bench {

/// Cuts a data set into shuffled minibatches, epoch after epoch. The last partial batch of an
/// epoch is dropped (every step has exactly batch() images). Algorithm (docs/training.md):
/// one std::mt19937 seeded with `seed`; the order starts as 0..N-1 and, at the start of every
/// epoch (the first included), is shuffled in place by shuffle() below, continuing the same
/// generator. Not thread-safe: use one Minibatcher from one thread.
class Minibatcher {
 public:
  /// Batches of `batch` images of `data` (which must outlive this object); float pixel = byte *
  /// scale + offset. Throws tessera::Error if batch is 0 or larger than the data set.
  Minibatcher(const LabelledImages& data, size_t batch, uint32_t seed, float scale = 1.0f / 255.0f,
              float offset = 0.0f);

  /// Fill the next step's images ([batch, pixels] row-major float32) and labels (int32) and
  /// advance; an empty span skips that part (e.g. one Minibatcher per stream, same seed).
  /// Throws tessera::Error if a non-empty span has the wrong size.
  void next(std::span<float> images, std::span<int32_t> labels);
  /// The order of the current epoch's images (indices into the data set).
  std::span<const uint32_t> order() const { return order_; }
  /// The image indices of the next step, in batch order.
  std::span<const uint32_t> nextIndices() const;

  /// Images per step.
  size_t batch() const { return batch_; }
  /// Steps per epoch: floor(N / batch).
  size_t stepsPerEpoch() const { return stepsPerEpoch_; }
  /// Epoch of the next step (0-based).
  uint32_t epoch() const { return epoch_; }
  /// Step within the epoch of the next step (0-based).
  size_t stepInEpoch() const { return stepInEpoch_; }
  /// Steps produced so far.
  uint64_t stepsDone() const { return stepsDone_; }
  /// The pixel scale.
  float scale() const { return scale_; }
  /// The pixel offset.
  float offset() const { return offset_; }

  /// Convert images `indices` of `data` to float (byte * scale + offset, one multiply then one
  /// add) and int32 labels; non-empty spans must hold indices.size() images or labels.
  static void gather(const LabelledImages& data, std::span<const uint32_t> indices, float scale,
                     float offset, std::span<float> images, std::span<int32_t> labels);
  /// Fisher-Yates: for i = n-1 down to 1, swap v[i] with v[uniformBelow(i + 1)].
  static void shuffle(std::vector<uint32_t>& v, std::mt19937& rng);
  /// A uniform integer in [0, n) (n >= 1) by rejection: draw x = rng() (32 bits) until
  /// x < 2^32 - (2^32 mod n), return x mod n.
  static uint32_t uniformBelow(uint32_t n, std::mt19937& rng);

 private:
  const LabelledImages* data_;
  size_t batch_;
  size_t stepsPerEpoch_;
  float scale_;
  float offset_;
  std::mt19937 rng_;
  std::vector<uint32_t> order_;
  uint32_t epoch_ = 0;
  size_t stepInEpoch_ = 0;
  uint64_t stepsDone_ = 0;
};

}  // namespace tessera::bench
