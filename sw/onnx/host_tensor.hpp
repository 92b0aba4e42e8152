// Constant tensors on the host: the values the importer folds (shape arithmetic, Constant nodes,
// int64 initializers) before anything reaches the tiles (docs/onnx.md, "Folding").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace tessera::onnx {

/// A folded constant: float32 values (held as double, each a float32) or integers (int64, int32
/// and bool alike).
struct HostTensor {
  bool isFloat = false;
  std::vector<int64_t> shape;
  std::vector<double> f;   ///< float values
  std::vector<int64_t> i;  ///< integer values
  /// Elements.
  size_t size() const { return isFloat ? f.size() : i.size(); }
  /// Element k as a double.
  double at(size_t k) const { return isFloat ? f[k] : static_cast<double>(i[k]); }
  /// Element k as an integer (floats truncated).
  int64_t intAt(size_t k) const { return isFloat ? static_cast<int64_t>(f[k]) : i[k]; }
  /// The values as integers; throws naming what when the tensor is float.
  std::vector<int64_t> ints(const std::string& what) const;
  /// "[2,3] int64".
  std::string describe() const;
};

/// The tensor of a TensorProto (checked by OnnxModel::load).
HostTensor fromProto(const ::onnx::TensorProto& t);

/// Fold node (every input a constant; isFoldable(op)) into its outputs. Throws tessera::Error
/// (without the node's name: the caller adds it) on shapes or values it cannot fold.
std::vector<HostTensor> fold(const ::onnx::NodeProto& node, const std::vector<HostTensor>& inputs);

/// The broadcast of two shapes (NumPy's rule); throws on incompatible ones.
std::vector<int64_t> broadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

}  // namespace tessera::onnx
