#include "minibatcher.hpp"

#include <fmt/format.h>

#include <numeric>
#include <utility>

#include "tessera/error.hpp"

namespace tessera::bench {

Minibatcher::Minibatcher(const LabelledImages& data, size_t batch, uint32_t seed, float scale,
                         float offset)
    : data_(&data), batch_(batch), stepsPerEpoch_(0), scale_(scale), offset_(offset), rng_(seed) {
  if (batch == 0) throw Error("minibatcher: batch size must be positive");
  if (data.count() > UINT32_MAX) throw Error("minibatcher: data set too large");
  if (data.images.size() != data.count() * data.pixels)
    throw Error(fmt::format("minibatcher: {} image bytes for {} images of {} pixels",
                            data.images.size(), data.count(), data.pixels));
  if (batch > data.count())
    throw Error(fmt::format("minibatcher: batch {} is larger than the data set ({} images)", batch,
                            data.count()));
  stepsPerEpoch_ = data.count() / batch;
  order_.resize(data.count());
  std::iota(order_.begin(), order_.end(), 0u);
  shuffle(order_, rng_);
}

std::span<const uint32_t> Minibatcher::nextIndices() const {
  return std::span<const uint32_t>(order_).subspan(stepInEpoch_ * batch_, batch_);
}

void Minibatcher::next(std::span<float> images, std::span<int32_t> labels) {
  gather(*data_, nextIndices(), scale_, offset_, images, labels);
  ++stepsDone_;
  if (++stepInEpoch_ == stepsPerEpoch_) {
    stepInEpoch_ = 0;
    ++epoch_;
    shuffle(order_, rng_);
  }
}

void Minibatcher::gather(const LabelledImages& data, std::span<const uint32_t> indices, float scale,
                         float offset, std::span<float> images, std::span<int32_t> labels) {
  const size_t p = data.pixels;
  const bool wantImages = !images.empty();
  const bool wantLabels = !labels.empty();
  if ((wantImages && images.size() != indices.size() * p) ||
      (wantLabels && labels.size() != indices.size()))
    throw Error(fmt::format(
        "minibatcher: buffers hold {} floats and {} labels, a batch of {} needs {} and {}",
        images.size(), labels.size(), indices.size(), indices.size() * p, indices.size()));
  for (size_t r = 0; r < indices.size(); ++r) {
    const size_t idx = indices[r];
    if (idx >= data.count())
      throw Error(fmt::format("minibatcher: image index {} out of range", idx));
    if (wantImages) {
      const uint8_t* src = data.images.data() + idx * p;
      float* dst = images.data() + r * p;
      for (size_t i = 0; i < p; ++i) {
        const float prod =
            static_cast<float>(src[i]) * scale;  // rounded, then + offset (-ffp-contract=off)
        dst[i] = prod + offset;
      }
    }
    if (wantLabels) labels[r] = data.labels[idx];
  }
}

uint32_t Minibatcher::uniformBelow(uint32_t n, std::mt19937& rng) {
  const uint64_t range = uint64_t{1} << 32;
  const uint64_t limit = range - range % n;
  for (;;) {
    const uint64_t x = static_cast<uint32_t>(rng());
    if (x < limit) return static_cast<uint32_t>(x % n);
  }
}

void Minibatcher::shuffle(std::vector<uint32_t>& v, std::mt19937& rng) {
  for (size_t i = v.size(); i-- > 1;)
    std::swap(v[i], v[uniformBelow(static_cast<uint32_t>(i + 1), rng)]);
}

}  // namespace tessera::bench
