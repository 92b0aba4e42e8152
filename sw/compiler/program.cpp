#include "tessera/program.hpp"

#include <fmt/format.h>

#include "tessera/error.hpp"

namespace tessera {

namespace {
std::shared_ptr<ProgramNode> makeNode(ProgramKind kind, const std::string& name) {
  auto n = std::make_shared<ProgramNode>();
  n->kind = kind;
  n->name = name;
  return n;
}
}  // namespace

Program::Program() : node_(makeNode(ProgramKind::Sequence, "")) {}

Sequence::Sequence(std::vector<Program> steps, const std::string& name)
    : Program(makeNode(ProgramKind::Sequence, name)) {
  for (const Program& p : steps) add(p);
}

void Sequence::add(const Program& p) {
  if (p.node() == node_) throw Error("Sequence::add: a sequence cannot contain itself");
  node_->children.push_back(p.node());
}

Execute::Execute(ComputeSet cs, const std::string& name)
    : Program(makeNode(ProgramKind::Execute, name)) {
  node_->computeSet = cs;
}

Copy::Copy(const Tensor& src, const Tensor& dst, const std::string& name)
    : Program(makeNode(ProgramKind::Copy, name)) {
  if (!src.valid() || !dst.valid()) throw Error(fmt::format("Copy \"{}\": invalid tensor", name));
  if (src.numElements() != dst.numElements() || src.elementType() != dst.elementType()) {
    throw Error(fmt::format("Copy \"{}\": source \"{}\" {} {} and destination \"{}\" {} {} differ",
                            name, src.debugName(), elemTypeName(src.elementType()),
                            src.shapeString(), dst.debugName(), elemTypeName(dst.elementType()),
                            dst.shapeString()));
  }
  node_->src = src;
  node_->dst = dst;
}

Copy::Copy(DataStream src, const Tensor& dst, const std::string& name)
    : Program(makeNode(ProgramKind::StreamToTensor, name)) {
  node_->stream = src;
  node_->dst = dst;
}

Copy::Copy(const Tensor& src, DataStream dst, const std::string& name)
    : Program(makeNode(ProgramKind::TensorToStream, name)) {
  node_->stream = dst;
  node_->src = src;
}

Repeat::Repeat(uint32_t count, const Program& body, const std::string& name)
    : Program(makeNode(ProgramKind::Repeat, name)) {
  node_->count = count;
  node_->children.push_back(body.node());
}

RepeatWhile::RepeatWhile(const Program& cond, const Tensor& predicate, const Program& body,
                         const std::string& name)
    : Program(makeNode(ProgramKind::RepeatWhile, name)) {
  if (!predicate.valid() || predicate.numElements() != 1 ||
      predicate.elementType() != ElemType::Int32) {
    throw Error(fmt::format("RepeatWhile \"{}\": the predicate must be one int32 element", name));
  }
  node_->children.push_back(cond.node());
  node_->children.push_back(body.node());
  node_->predicate = predicate;
}

}  // namespace tessera
