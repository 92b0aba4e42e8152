// Helpers shared by the tape and the ops' backward functions.
#pragma once

#include <string>
#include <vector>

#include "tessera/autodiff.hpp"

namespace tessera::autodiff {

/// Throws naming the op unless it has n inputs.
void expectInputs(const OpNode& node, const std::vector<Tensor>& in, size_t n);
/// Throws naming the op and input i unless t is float32.
void expectFloat(const OpNode& node, const Tensor& t, size_t i);
/// Throws naming the op and both tensors unless in[0] and in[1] are float32 of one shape.
void expectSameShape(const OpNode& node, const std::vector<Tensor>& in);
/// Integer attribute key (default 0) as a dimension of a tensor of rank `rank`; throws naming the
/// op when out of range.
size_t dimAttr(const OpNode& node, const std::string& key, size_t rank);
/// The ONNX attribute "axis" (fallback when absent; negative counts from the end) as a dimension
/// of t; throws naming the op, the tensor and its shape when out of range.
size_t signedAxis(const OpNode& node, const Tensor& t, int64_t fallback);
/// List attribute key as sizes; throws naming the op on a negative entry.
std::vector<size_t> sizesOf(const OpNode& n, const std::string& key);

/// Registers Conv, MaxPool, AveragePool and Flatten (ops_conv.cpp).
void addConvOps(OpRegistry& r);
/// Registers the ops of tessera/nn.hpp (ops_nn.cpp).
void addNnOps(OpRegistry& r);
/// Registers the element-by-element ONNX ops with broadcasting and the math functions
/// (ops_math.cpp).
void addMathOps(OpRegistry& r);
/// Registers CastPrecision, the float32 <-> float16 cast (ops_half.cpp).
void addHalfOps(OpRegistry& r);
// MatMul with float16 operands (ops_half.cpp): true if a or b is float16; the forward (both 2-D
// float16, no transA/transB: ops::matmulHalf, float32 result) and the backward (the output's
// gradient narrowed to float16 once, then float16 products with float32 results).
bool halfProduct(const Tensor& a, const Tensor& b);
std::vector<Tensor> halfMatMulForward(ForwardContext& ctx);
void halfMatMulBackward(BackwardContext& ctx);
/// True when a ReduceSum node has ONNX's attributes (axes, keepdims, …) rather than the typed
/// builder's 2-D `axis` (ops_math.cpp).
bool onnxReduceSum(const OpNode& n);
/// ReduceSum with ONNX's attributes (ops_math.cpp).
std::vector<Tensor> reduceSumOnnxForward(ForwardContext& ctx);
/// See reduceSumOnnxForward.
void reduceSumOnnxBackward(BackwardContext& ctx);
/// Maps every element of each whole variable under t that has no tile yet (a constant an importer
/// made with Graph::addConstant) linearly over the tiles (ops::mapLinearly).
void mapUnmapped(Graph& graph, const Tensor& t);
/// MatMul's forward and backward for 3-D (batched) operands (ops_nn.cpp).
std::vector<Tensor> batchMatMulForward(ForwardContext& ctx);
/// See batchMatMulForward.
void batchMatMulBackward(BackwardContext& ctx);

/// A new float32 variable of t's shape mapped element by element like t (stored like t where t
/// is a weight in the matrix unit's layout: ops::cloneMapped).
Tensor likeMapped(Graph& graph, const Tensor& t, const std::string& name);
/// True when every tile's elements of the 2-D tensor t form one rectangular block (what
/// ops::matmulAccumulate needs of its target).
bool blockMapped(const Graph& graph, const Tensor& t);
/// g as a tensor: a constant is filled into a new variable mapped like `like`.
Tensor materialize(Graph& graph, Sequence& prog, const Gradient& g, const Tensor& like,
                   const std::string& name);
/// t if it is a whole variable (or one stored in like's order); else a copy of it into a new
/// variable mapped like `like`.
Tensor wholeTensor(Graph& graph, Sequence& prog, const Tensor& t, const Tensor& like,
                   const std::string& name);

}  // namespace tessera::autodiff
