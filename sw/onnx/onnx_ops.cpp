#include "onnx_ops.hpp"

#include <algorithm>
#include <set>

#include "tessera/autodiff.hpp"

namespace tessera::onnx {

namespace {

// The operators of issue 26 that compute on tensors: built by the registry op of the same name.
const std::set<std::string>& deviceOps() {
  static const std::set<std::string> ops{"Gemm",
                                         "MatMul",
                                         "Add",
                                         "Sub",
                                         "Mul",
                                         "Div",
                                         "Pow",
                                         "Sqrt",
                                         "Relu",
                                         "Clip",
                                         "Tanh",
                                         "Sigmoid",
                                         "Erf",
                                         "Softmax",
                                         "LogSoftmax",
                                         "Conv",
                                         "MaxPool",
                                         "AveragePool",
                                         "GlobalAveragePool",
                                         "Pad",
                                         "BatchNormalization",
                                         "LayerNormalization",
                                         "ReduceMean",
                                         "ReduceSum",
                                         "Flatten",
                                         "Reshape",
                                         "Transpose",
                                         "Concat",
                                         "Squeeze",
                                         "Unsqueeze",
                                         "Gather",
                                         "Neg",
                                         "Exp",
                                         "Log",
                                         "Reciprocal"};
  return ops;
}

const std::set<std::string>& foldableOps() {
  static const std::set<std::string> ops{
      "Constant", "Shape",           "Gather",    "Slice",  "Unsqueeze", "Squeeze", "Concat",
      "Cast",     "Reshape",         "Mul",       "Add",    "Div",       "Sub",     "Equal",
      "Where",    "ConstantOfShape", "Range",     "Expand", "Identity",  "Neg",     "Sqrt",
      "Pow",      "Reciprocal",      "Transpose", "Flatten"};
  return ops;
}

const std::set<std::string>& hostOnlyOps() {
  static const std::set<std::string> ops{"Constant", "Cast",   "Equal",          "Where",
                                         "Range",    "Expand", "ConstantOfShape"};
  return ops;
}

}  // namespace

bool isFoldable(const std::string& op) {
  return foldableOps().count(op) > 0;
}

bool registryHas(const std::string& op) {
  static const autodiff::OpRegistry registry = autodiff::OpRegistry::builtin();
  return registry.find(op) != nullptr;
}

bool isHostOnly(const std::string& op) {
  return hostOnlyOps().count(op) > 0;
}

bool isSupportedOp(const std::string& op) {
  static const autodiff::OpRegistry registry = autodiff::OpRegistry::builtin();
  // Shape reads a device value's shape; Identity and Dropout (inference) pass it on; Slice uses
  // the registry's Slice view once per axis.
  if (isHostOnly(op) || op == "Shape" || op == "Identity" || op == "Dropout") return true;
  // Folded when its inputs are constants (the shape arithmetic around a Reshape); on device
  // values only with a registry op (checked when the graph is built).
  if (isFoldable(op)) return true;
  if (op == "Pad") return true;  // zero pads pass the value on; others need the registry's Pad
  if (op == "Slice" || op == "Split") return registry.find("Slice") != nullptr;
  return deviceOps().count(op) > 0 && registry.find(op) != nullptr;
}

std::vector<std::string> supportedOps() {
  std::set<std::string> all(hostOnlyOps());
  for (const char* op : {"Shape", "Identity", "Dropout", "Slice", "Split"}) all.insert(op);
  all.insert(deviceOps().begin(), deviceOps().end());
  std::vector<std::string> out;
  for (const std::string& op : all) {
    if (isSupportedOp(op)) out.push_back(op);
  }
  return out;
}

std::string constantInputAttribute(const std::string& op, int i) {
  if (op == "Reshape" && i == 1) return "shape";
  if (op == "Pad" && i == 1) return "pads";
  if (op == "Pad" && i == 2) return "constant_value";
  if (op == "Pad" && i == 3) return "axes";
  if ((op == "ReduceSum" || op == "ReduceMean" || op == "Squeeze" || op == "Unsqueeze") && i == 1)
    return "axes";
  if (op == "Clip" && i == 1) return "min";
  if (op == "Clip" && i == 2) return "max";
  if (op == "Dropout" && i == 1) return "ratio";
  if (op == "Dropout" && i == 2) return "training_mode";
  return "";
}

}  // namespace tessera::onnx
