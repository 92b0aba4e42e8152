// The parsed model behind OnnxModel (private to sw/onnx): the protobuf, the opset and what the
// checks found, shared by loading, building and saving.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "tessera/onnx.hpp"

namespace tessera::onnx {

struct OnnxModel::Impl {
  std::string path;
  ::onnx::ModelProto proto;
  int64_t opset = 0;
  std::vector<ValueShape> inputs, outputs;
  std::vector<Variable> variables;
  std::map<std::string, size_t> variableIndex;  // name -> index in variables
  std::set<std::string> initializers;           // every initializer's name
};

/// "file: node "name" (#index, OpType, opset N)": the prefix of every error about a node.
std::string nodeWhere(const OnnxModel::Impl& m, const ::onnx::NodeProto& node, size_t index);

/// The node's debug name: its own, or "<OpType>_<index>" when the file gives none.
std::string nodeName(const ::onnx::NodeProto& node, size_t index);

}  // namespace tessera::onnx
