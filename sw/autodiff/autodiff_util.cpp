#include "autodiff_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "tessera/error.hpp"
#include "tessera/ops.hpp"

namespace tessera::autodiff {

void expectInputs(const OpNode& node, const std::vector<Tensor>& in, size_t n) {
  if (in.size() != n)
    throw Error(fmt::format("{} ({}): {} inputs, {} expected", node.name, node.type, in.size(), n));
}

void expectFloat(const OpNode& node, const Tensor& t, size_t i) {
  if (t.elementType() != ElemType::Float32) {
    throw Error(fmt::format("{} ({}): input {} \"{}\" {} must be float32", node.name, node.type, i,
                            t.debugName(), t.shapeString()));
  }
}

void expectSameShape(const OpNode& node, const std::vector<Tensor>& in) {
  expectFloat(node, in[0], 0);
  expectFloat(node, in[1], 1);
  if (in[0].shape() != in[1].shape()) {
    throw Error(fmt::format("{} ({}): shapes differ: \"{}\" {} and \"{}\" {}", node.name, node.type,
                            in[0].debugName(), in[0].shapeString(), in[1].debugName(),
                            in[1].shapeString()));
  }
}

size_t dimAttr(const OpNode& node, const std::string& key, size_t rank) {
  const int64_t d = node.intAttr(key, 0);
  if (d < 0 || static_cast<size_t>(d) >= rank) {
    throw Error(fmt::format("{} ({}): {} {} is out of range for rank {}", node.name, node.type, key,
                            d, rank));
  }
  return static_cast<size_t>(d);
}

size_t signedAxis(const OpNode& node, const Tensor& t, int64_t fallback) {
  const int64_t rank = static_cast<int64_t>(t.rank());
  const int64_t a = node.intAttr("axis", fallback);
  if (a < -rank || a >= rank) {
    throw Error(fmt::format("{} ({}): axis {} is out of range for \"{}\" {}", node.name, node.type,
                            a, t.debugName(), t.shapeString()));
  }
  return static_cast<size_t>(a < 0 ? a + rank : a);
}

std::vector<size_t> sizesOf(const OpNode& n, const std::string& key) {
  std::vector<size_t> out;
  for (int64_t v : n.intsAttr(key)) {
    if (v < 0) throw Error(fmt::format("{} ({}): negative {} entry {}", n.name, n.type, key, v));
    out.push_back(static_cast<size_t>(v));
  }
  return out;
}

void mapUnmapped(Graph& graph, const Tensor& t) {
  std::vector<uint32_t> vars;
  for (const ElementRun& r : t.runs()) {
    if (std::find(vars.begin(), vars.end(), r.var) == vars.end()) vars.push_back(r.var);
  }
  for (uint32_t v : vars) {
    const GraphVariable& var = graph.variables()[v];
    if (std::all_of(var.tileOf.begin(), var.tileOf.end(), [](int32_t tile) { return tile < 0; })) {
      ops::mapLinearly(graph, Tensor::ofVariable(graph.id(), var.type, var.shape, v, var.name));
    }
  }
}

Tensor likeMapped(Graph& graph, const Tensor& t, const std::string& name) {
  const std::vector<int32_t> map = graph.tileMapping(t);
  for (size_t i = 0; i < map.size(); ++i) {
    if (map[i] < 0)
      throw Error(fmt::format("{}: element {} of \"{}\" is not mapped", name, i, t.debugName()));
  }
  // Stored like t where t is a weight in the matrix unit's layout (ops::cloneMapped), so its
  // gradient and optimizer state are produced and updated in that layout.
  return ops::cloneMapped(graph, t, ElemType::Float32, name);
}

bool blockMapped(const Graph& graph, const Tensor& t) {
  if (t.rank() != 2 || t.numElements() == 0) return false;
  const size_t n = t.dim(1);
  struct Box {
    size_t r0 = SIZE_MAX, r1 = 0, c0 = SIZE_MAX, c1 = 0, count = 0;
  };
  std::map<int32_t, Box> boxes;
  const std::vector<int32_t> map = graph.tileMapping(t);
  for (size_t i = 0; i < map.size(); ++i) {
    if (map[i] < 0) return false;
    Box& b = boxes[map[i]];
    const size_t r = i / n, c = i % n;
    b.r0 = std::min(b.r0, r), b.r1 = std::max(b.r1, r + 1);
    b.c0 = std::min(b.c0, c), b.c1 = std::max(b.c1, c + 1);
    ++b.count;
  }
  for (const auto& [tile, b] : boxes) {
    if (b.count != (b.r1 - b.r0) * (b.c1 - b.c0)) return false;
  }
  return true;
}

Tensor materialize(Graph& graph, Sequence& prog, const Gradient& g, const Tensor& like,
                   const std::string& name) {
  if (!g.isConstant()) return g.tensor;
  const Tensor out = likeMapped(graph, like, name);
  ops::fill(graph, out, g.constant, prog, name + "/fill");
  return out;
}

Tensor wholeTensor(Graph& graph, Sequence& prog, const Tensor& t, const Tensor& like,
                   const std::string& name) {
  const std::vector<ElementRun>& runs = t.runs();
  // A whole variable stored in like's order (both in the matrix unit's layout: likeMapped).
  const std::vector<ElementRun>& likeRuns = like.runs();
  if (runs.size() > 1 && runs.size() == likeRuns.size() && t.shape() == like.shape()) {
    bool same = true;
    for (size_t i = 0; i < runs.size() && same; ++i) {
      same = runs[i].var == runs[0].var && runs[i].begin == likeRuns[i].begin &&
             runs[i].end == likeRuns[i].end;
    }
    const GraphVariable& var = graph.variables()[runs[0].var];
    size_t count = 1;
    for (size_t d : var.shape) count *= d;
    const GraphVariable& likeVar = graph.variables()[likeRuns[0].var];
    size_t likeCount = 1;
    for (size_t d : likeVar.shape) likeCount *= d;
    if (same && count == t.numElements() && likeCount == count && !var.constant) return t;
  }
  if (runs.size() == 1 && runs[0].begin == 0 && runs[0].end == t.numElements()) {
    const GraphVariable& var = graph.variables()[runs[0].var];
    size_t count = 1;
    for (size_t d : var.shape) count *= d;
    if (count == t.numElements() && !var.constant) return t.reshape(like.shape());
  }
  const Tensor out = likeMapped(graph, like, name);
  prog.add(Copy(t, out, name));
  return out;
}

}  // namespace tessera::autodiff
