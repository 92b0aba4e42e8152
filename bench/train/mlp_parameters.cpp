#include "mlp_parameters.hpp"

#include <fmt/format.h>

#include <cmath>
#include <random>
#include <string>

#include "tessera/error.hpp"

namespace tessera::bench {

void MlpParameters::validate() const {
  if (sizes.size() < 2) throw Error("mlp: need at least an input and an output size");
  for (size_t s : sizes)
    if (s == 0) throw Error("mlp: layer sizes must be positive");
  if (weights.size() != sizes.size() - 1 || biases.size() != sizes.size() - 1)
    throw Error(fmt::format("mlp: {} weights and {} biases for {} layers", weights.size(),
                            biases.size(), sizes.size() - 1));
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    if (weights[l].size() != sizes[l] * sizes[l + 1])
      throw Error(fmt::format("mlp: w{} has {} values, expected {} x {}", l, weights[l].size(),
                              sizes[l], sizes[l + 1]));
    if (biases[l].size() != sizes[l + 1])
      throw Error(
          fmt::format("mlp: b{} has {} values, expected {}", l, biases[l].size(), sizes[l + 1]));
  }
}

MlpParameters MlpParameters::initialize(const std::vector<size_t>& sizes, uint32_t seed) {
  MlpParameters p;
  p.sizes = sizes;
  if (sizes.size() < 2) throw Error("mlp: need at least an input and an output size");
  std::mt19937 rng(seed);
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    const float limit = std::sqrt(6.0f / static_cast<float>(sizes[l] + sizes[l + 1]));
    std::vector<float> w(sizes[l] * sizes[l + 1]);
    for (float& v : w) {
      const float u = static_cast<float>(static_cast<uint32_t>(rng()) >> 8) * 0x1p-24f;  // exact
      v = limit * (2.0f * u - 1.0f);  // 2u - 1 exact
    }
    p.weights.push_back(std::move(w));
    p.biases.emplace_back(sizes[l + 1], 0.0f);
  }
  p.validate();
  return p;
}

NpzFile MlpParameters::toNpz() const {
  validate();
  NpzFile npz;
  for (size_t l = 0; l < layers(); ++l) {
    npz.set(fmt::format("w{}", l), {sizes[l], sizes[l + 1]}, weights[l]);
    npz.set(fmt::format("b{}", l), {sizes[l + 1]}, biases[l]);
  }
  npz.setScalar("input_scale", inputScale);
  npz.setScalar("input_offset", inputOffset);
  return npz;
}

MlpParameters MlpParameters::fromNpz(const NpzFile& npz) {
  MlpParameters p;
  if (!npz.contains("w0")) throw Error("mlp: the .npz has no w0");
  for (size_t l = 0; npz.contains(fmt::format("w{}", l)); ++l) {
    const std::string wn = fmt::format("w{}", l);
    const std::string bn = fmt::format("b{}", l);
    const NpzFile::Array& w = npz.get(wn);
    if (w.shape.size() != 2)
      throw Error(fmt::format("mlp: {} has {} dimensions, expected 2 (fan_in, fan_out)", wn,
                              w.shape.size()));
    if (l == 0) p.sizes.push_back(w.shape[0]);
    if (w.shape[0] != p.sizes.back())
      throw Error(fmt::format("mlp: {} has fan_in {}, but the previous layer has {} outputs", wn,
                              w.shape[0], p.sizes.back()));
    if (!npz.contains(bn)) throw Error(fmt::format("mlp: the .npz has {} but no {}", wn, bn));
    const NpzFile::Array& b = npz.get(bn);
    if (b.shape.size() != 1 || b.shape[0] != w.shape[1])
      throw Error(fmt::format("mlp: {} must have shape ({},)", bn, w.shape[1]));
    p.sizes.push_back(w.shape[1]);
    p.weights.push_back(w.data);
    p.biases.push_back(b.data);
  }
  if (npz.contains(fmt::format("b{}", p.layers())))
    throw Error(fmt::format("mlp: the .npz has b{} but no w{}", p.layers(), p.layers()));
  p.inputScale = npz.scalar("input_scale");
  p.inputOffset = npz.scalar("input_offset");
  p.validate();
  return p;
}

}  // namespace tessera::bench
