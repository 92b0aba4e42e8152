#include "model_parameters.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <random>

#include "tessera/error.hpp"

namespace tessera::bench {

size_t ParameterShape::size() const {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  return n;
}

size_t ModelParameters::indexOf(const std::string& name) const {
  for (size_t i = 0; i < shapes.size(); ++i)
    if (shapes[i].name == name) return i;
  throw Error(fmt::format("model parameters: no array \"{}\"", name));
}

void ModelParameters::validate() const {
  if (values.size() != shapes.size())
    throw Error(
        fmt::format("model parameters: {} arrays for {} shapes", values.size(), shapes.size()));
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (values[i].size() != shapes[i].size())
      throw Error(fmt::format("model parameters: {} has {} values, its shape ({}) needs {}",
                              shapes[i].name, values[i].size(), fmt::join(shapes[i].shape, ", "),
                              shapes[i].size()));
  }
}

ModelParameters ModelParameters::kaimingUniform(const std::vector<ParameterShape>& shapes,
                                                uint32_t seed) {
  ModelParameters p;
  p.shapes = shapes;
  std::mt19937 rng(seed);
  size_t fanIn = 0;
  bool afterNorm = false;  // the last weight was a normalisation's (its bias is 0)
  auto endsWith = [](const std::string& name, const std::string& tail) {
    return name.size() >= tail.size() && name.substr(name.size() - tail.size()) == tail;
  };
  for (const ParameterShape& s : shapes) {
    if (endsWith(s.name, ".running_mean") || endsWith(s.name, ".running_var")) {
      p.values.emplace_back(s.size(), endsWith(s.name, ".running_var") ? 1.0f : 0.0f);
      continue;
    }
    const bool bias = endsWith(s.name, "bias");
    if (!bias && s.shape.size() == 1) {  // a BatchNorm's or LayerNorm's scale
      p.values.emplace_back(s.size(), 1.0f);
      afterNorm = true;
      continue;
    }
    if (bias && afterNorm) {
      p.values.emplace_back(s.size(), 0.0f);
      continue;
    }
    if (!bias) {
      if (s.shape.empty())
        throw Error(fmt::format("model parameters: weight {} needs at least 1 dimension", s.name));
      fanIn = s.size() / s.shape[0];
      afterNorm = false;
    } else if (fanIn == 0) {
      throw Error(fmt::format("model parameters: bias {} comes before any weight", s.name));
    }
    const float bound = 1.0f / std::sqrt(static_cast<float>(fanIn));
    std::vector<float> v(s.size());
    for (float& x : v) {
      const float u = static_cast<float>(static_cast<uint32_t>(rng()) >> 8) * 0x1p-24f;  // exact
      x = bound * (2.0f * u - 1.0f);  // 2u - 1 exact
    }
    p.values.push_back(std::move(v));
  }
  return p;
}

NpzFile ModelParameters::toNpz() const {
  validate();
  NpzFile npz;
  for (size_t i = 0; i < shapes.size(); ++i) npz.set(shapes[i].name, shapes[i].shape, values[i]);
  npz.setScalar("input_scale", inputScale);
  npz.setScalar("input_offset", inputOffset);
  return npz;
}

ModelParameters ModelParameters::fromNpz(const NpzFile& npz,
                                         const std::vector<ParameterShape>& expected,
                                         const std::string& what) {
  ModelParameters p;
  p.shapes = expected;
  for (const ParameterShape& s : expected) {
    if (!npz.contains(s.name))
      throw Error(fmt::format("{}: no array {} (the model needs shape ({}))", what, s.name,
                              fmt::join(s.shape, ", ")));
    const NpzFile::Array& a = npz.get(s.name);
    if (a.shape != s.shape)
      throw Error(fmt::format("{}: {} has shape ({}), the model needs ({})", what, s.name,
                              fmt::join(a.shape, ", "), fmt::join(s.shape, ", ")));
    p.values.push_back(a.data);
  }
  for (const std::string& name : npz.names()) {
    bool known = name == "input_scale" || name == "input_offset";
    for (const ParameterShape& s : expected) known = known || s.name == name;
    if (!known)
      throw Error(fmt::format("{}: array {} is not a parameter of the model", what, name));
  }
  for (const char* name : {"input_scale", "input_offset"}) {
    if (!npz.contains(name)) throw Error(fmt::format("{}: no array {}", what, name));
  }
  p.inputScale = npz.scalar("input_scale");
  p.inputOffset = npz.scalar("input_offset");
  for (const float v : {p.inputScale, p.inputOffset}) {
    if (!std::isfinite(v))
      throw Error(fmt::format("{}: input_scale and input_offset must be finite, got {} and {}",
                              what, p.inputScale, p.inputOffset));
  }
  for (size_t k = 0; k < p.values.size(); ++k) {
    for (size_t i = 0; i < p.values[k].size(); ++i) {
      if (!std::isfinite(p.values[k][i]))
        throw Error(fmt::format("{}: {} element {} is {} (parameters must be finite)", what,
                                expected[k].name, i, p.values[k][i]));
    }
  }
  return p;
}

std::vector<ParameterShape> lenetShapes() {
  return {{"conv0.weight", {6, 1, 5, 5}},  {"conv0.bias", {6}},
          {"conv1.weight", {16, 6, 5, 5}}, {"conv1.bias", {16}},
          {"fc0.weight", {120, 400}},      {"fc0.bias", {120}},
          {"fc1.weight", {84, 120}},       {"fc1.bias", {84}},
          {"fc2.weight", {10, 84}},        {"fc2.bias", {10}}};
}

std::vector<ParameterShape> resnetTinyShapes() {
  std::vector<ParameterShape> s;
  auto bn = [&s](const std::string& layer) {
    for (const char* a : {"weight", "bias", "running_mean", "running_var"})
      s.push_back({fmt::format("{}.{}", layer, a), {16}});
  };
  s.push_back({"conv0.weight", {16, 1, 3, 3}});
  bn("bn0");
  s.push_back({"conv1.weight", {16, 1, 3, 3}});  // depthwise: groups 16
  bn("bn1");
  s.push_back({"conv2.weight", {16, 16, 1, 1}});
  bn("bn2");
  s.push_back({"fc0.weight", {10, 784}});
  s.push_back({"fc0.bias", {10}});
  return s;
}

std::vector<ParameterShape> transformerTinyShapes() {
  return {{"embed.weight", {32, 28}},
          {"embed.bias", {32}},
          {"pos_embedding", {1, 28, 32}},
          {"encoder.self_attn.in_proj_weight", {96, 32}},
          {"encoder.self_attn.in_proj_bias", {96}},
          {"encoder.self_attn.out_proj.weight", {32, 32}},
          {"encoder.self_attn.out_proj.bias", {32}},
          {"encoder.linear1.weight", {64, 32}},
          {"encoder.linear1.bias", {64}},
          {"encoder.linear2.weight", {32, 64}},
          {"encoder.linear2.bias", {32}},
          {"encoder.norm1.weight", {32}},
          {"encoder.norm1.bias", {32}},
          {"encoder.norm2.weight", {32}},
          {"encoder.norm2.bias", {32}},
          {"fc0.weight", {10, 32}},
          {"fc0.bias", {10}}};
}

}  // namespace tessera::bench
