// Programs (docs/compiler.md): what the tiles do, in order. Sequence, Execute (a compute set),
// Copy (between tensors, or between a host stream and a tensor), Repeat and RepeatWhile. A
// Program is a cheap handle to a shared node; Sequence::add appends to the shared node.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/graph.hpp"

namespace tessera {

/// What a program node does.
enum class ProgramKind : uint8_t {
  Sequence,
  Execute,
  Copy,
  StreamToTensor,
  TensorToStream,
  Repeat,
  RepeatWhile
};

/// The node behind a Program (read by the compiler).
struct ProgramNode {
  ProgramKind kind = ProgramKind::Sequence;
  std::vector<std::shared_ptr<ProgramNode>>
      children;           ///< Sequence: steps; Repeat: body; RepeatWhile: cond, body
  ComputeSet computeSet;  ///< Execute
  Tensor src, dst;        ///< Copy; stream copies use one of them
  DataStream stream;      ///< stream copies
  uint32_t count = 0;     ///< Repeat
  Tensor predicate;       ///< RepeatWhile
  std::string name;       ///< debug name
};

/// A program: a handle to a node.
class Program {
 public:
  /// An empty sequence.
  Program();
  /// The node.
  const std::shared_ptr<ProgramNode>& node() const { return node_; }

 protected:
  explicit Program(std::shared_ptr<ProgramNode> node) : node_(std::move(node)) {}
  std::shared_ptr<ProgramNode> node_;
};

/// Programs run one after the other.
class Sequence : public Program {
 public:
  /// An empty sequence; steps may be given at once.
  Sequence(std::vector<Program> steps = {}, const std::string& name = "");
  /// Append a step.
  void add(const Program& p);
};

/// Run every vertex of a compute set (with the exchanges its inputs and outputs need).
class Execute : public Program {
 public:
  explicit Execute(ComputeSet cs, const std::string& name = "");
};

/// Copy between tensors of equal shape and type (an exchange), or a stream copy.
class Copy : public Program {
 public:
  /// dst = src, element by element (shapes must have the same element count and type).
  Copy(const Tensor& src, const Tensor& dst, const std::string& name = "");
  /// The next elements of a host-to-device stream into dst (at a host sync).
  Copy(DataStream src, const Tensor& dst, const std::string& name = "");
  /// src appended to a device-to-host stream (at a host sync).
  Copy(const Tensor& src, DataStream dst, const std::string& name = "");
};

/// A body run count times (count = 0 runs nothing).
class Repeat : public Program {
 public:
  Repeat(uint32_t count, const Program& body, const std::string& name = "");
};

/// cond, then while the int32 scalar predicate is not 0: body, cond.
class RepeatWhile : public Program {
 public:
  RepeatWhile(const Program& cond, const Tensor& predicate, const Program& body,
              const std::string& name = "");
};

}  // namespace tessera
