// The parameters of any network of the training benchmark on the host, named and shaped as
// PyTorch's state_dict holds them (docs/training.md, "Models"): PyTorch's default initialization
// from the run's seed, the .npz layout, and the layer list of LeNet-5.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "npz_file.hpp"

namespace tessera::bench {

/// A trainable array: its state_dict name and shape.
struct ParameterShape {
  std::string name;
  std::vector<size_t> shape;
  /// Elements (the product of shape).
  size_t size() const;
};

/// Named float32 arrays in layer order, plus the input scaling (input = pixel * inputScale +
/// inputOffset, pixels 0-255).
struct ModelParameters {
  std::vector<ParameterShape> shapes;
  std::vector<std::vector<float>> values;  ///< values[i]: shapes[i], row-major
  float inputScale = 1.0f / 255.0f;
  float inputOffset = 0.0f;

  /// Index of array `name`; throws tessera::Error naming it if absent.
  size_t indexOf(const std::string& name) const;
  /// Values of array `name`.
  std::vector<float>& operator[](const std::string& name) { return values[indexOf(name)]; }
  /// Values of array `name`.
  const std::vector<float>& operator[](const std::string& name) const {
    return values[indexOf(name)];
  }
  /// Throws tessera::Error naming the array whose value count does not match its shape.
  void validate() const;

  /// PyTorch's default initialization of Conv2d and Linear (kaiming_uniform_ with a = sqrt(5) for
  /// the weight, which is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bound for the bias):
  /// one std::mt19937(seed) draws the arrays in order, each row-major, each value
  /// u = (rng() >> 8) * 2^-24, v = bound * (2u - 1) (float), bound = 1 / sqrtf(fan_in), where
  /// fan_in is the product of the weight's dimensions after the first (a bias takes its weight's).
  /// A bias is an array whose name ends in "bias" ("<layer>.bias", "in_proj_bias"); it takes the
  /// fan_in of the weight before it. A normalisation's arrays (BatchNorm, LayerNorm) draw nothing:
  /// a 1-D weight is 1 and the bias after it 0, "*.running_mean" 0, "*.running_var" 1 (PyTorch's).
  static ModelParameters kaimingUniform(const std::vector<ParameterShape>& shapes, uint32_t seed);
  /// The arrays in order, then the scalars input_scale and input_offset.
  NpzFile toNpz() const;
  /// From an .npz holding exactly the arrays of `expected` (and the two scalars); throws
  /// tessera::Error naming `what` (the file), the array and both shapes on a mismatch.
  static ModelParameters fromNpz(const NpzFile& npz, const std::vector<ParameterShape>& expected,
                                 const std::string& what);
};

/// LeNet-5 of issue 24 (docs/training.md): 1x28x28 -> conv0 5x5, 6 channels, padding 2 -> ReLU
/// -> max-pool 2 -> conv1 5x5, 16 channels -> ReLU -> max-pool 2 -> flatten (400) -> fc0 120 ->
/// ReLU -> fc1 84 -> ReLU -> fc2 10. Its arrays: conv0.weight (6,1,5,5), conv0.bias (6,),
/// conv1.weight (16,6,5,5), conv1.bias (16,), fc0.weight (120,400), fc0.bias (120,), fc1.weight
/// (84,120), fc1.bias (84,), fc2.weight (10,84), fc2.bias (10,).
std::vector<ParameterShape> lenetShapes();

/// resnet-tiny (docs/training.md): conv0.weight (16,1,3,3), bn0.{weight,bias,running_mean,
/// running_var} (16,), conv1.weight (16,1,3,3) (depthwise), bn1.*, conv2.weight (16,16,1,1), bn2.*,
/// fc0.weight (10,784), fc0.bias (10,). The convolutions have no bias (batch normalisation
/// follows).
std::vector<ParameterShape> resnetTinyShapes();

/// transformer-tiny (docs/training.md): embed.weight (32,28), embed.bias, pos_embedding (1,28,32),
/// then torch.nn.TransformerEncoderLayer(32, 2, 64)'s state_dict under "encoder."
/// (self_attn.in_proj_weight (96,32), self_attn.in_proj_bias, self_attn.out_proj.weight (32,32),
/// .bias, linear1.weight (64,32), .bias, linear2.weight (32,64), .bias, norm1.weight, .bias,
/// norm2.weight, .bias), fc0.weight (10,32), fc0.bias (10,).
std::vector<ParameterShape> transformerTinyShapes();

/// transformer-tiny's sizes and the indices of transformerTinyShapes()'s arrays, shared by the
/// model (bench/model.hpp) and its CPU reference (cpu_transformer_tiny.hpp).
namespace transformer_tiny {
inline constexpr size_t kTokens = 28;    ///< image rows
inline constexpr size_t kFeatures = 28;  ///< pixels per row
inline constexpr size_t kModel = 32;     ///< d_model
inline constexpr size_t kHeads = 2;
inline constexpr size_t kFeedForward = 64;
/// Indices in transformerTinyShapes().
enum Param : size_t {
  kEmbedW,
  kEmbedB,
  kPos,
  kInProjW,
  kInProjB,
  kOutProjW,
  kOutProjB,
  kLinear1W,
  kLinear1B,
  kLinear2W,
  kLinear2B,
  kNorm1W,
  kNorm1B,
  kNorm2W,
  kNorm2B,
  kFcW,
  kFcB
};
}  // namespace transformer_tiny

}  // namespace tessera::bench
