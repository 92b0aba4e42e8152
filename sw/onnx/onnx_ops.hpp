// Which ONNX operators the importer takes, and how (docs/onnx.md, "Operators").
#pragma once

#include <string>
#include <vector>

namespace tessera::onnx {

/// True when op can appear in a model: folded on the host, or built on the tiles through the op
/// registry (an op of the contract that the registry lacks is unsupported).
bool isSupportedOp(const std::string& op);
/// The supported operators, sorted.
std::vector<std::string> supportedOps();
/// True when op is folded into a constant on the host when all its inputs are constants.
bool isFoldable(const std::string& op);
/// True when the built-in op registry has op.
bool registryHas(const std::string& op);
/// True when op can only run on the host (its inputs must be constants).
bool isHostOnly(const std::string& op);
/// The name of the attribute that carries input i of op when it must be a constant (Reshape's
/// shape, Pad's pads, axes, Dropout's ratio...), or "" when the input is a tensor.
std::string constantInputAttribute(const std::string& op, int i);

}  // namespace tessera::onnx
