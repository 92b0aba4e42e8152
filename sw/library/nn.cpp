// Losses, metrics and optimiser steps (docs/library.md, "Training").
#include <fmt/format.h>

#include <map>

#include "tessera/error.hpp"
#include "tessera/ops.hpp"
#include "tile_chunks.hpp"

namespace tessera::ops {

namespace {

void checkLogits(const Tensor& logits, const Tensor* labels, const std::string& name) {
  if (logits.rank() != 2 || logits.elementType() != ElemType::Float32) {
    throw Error(fmt::format("{}: logits must be [rows, classes] float32, got {} {}", name,
                            elemTypeName(logits.elementType()), logits.shapeString()));
  }
  if (labels && (labels->rank() != 1 || labels->dim(0) != logits.dim(0) ||
                 labels->elementType() != ElemType::Int32)) {
    throw Error(fmt::format("{}: labels must be [{}] int32, got {} {}", name, logits.dim(0),
                            elemTypeName(labels->elementType()), labels->shapeString()));
  }
}

}  // namespace

SoftmaxCrossEntropyResult softmaxCrossEntropy(Graph& graph, const Tensor& logits,
                                              const Tensor& labels, float gradScale, Sequence& prog,
                                              const std::string& name) {
  checkLogits(logits, &labels, name);
  const size_t classes = logits.dim(1);
  SoftmaxCrossEntropyResult out;
  out.grad = cloneMapped(graph, logits, ElemType::Float32, name + "/grad");
  out.loss = graph.addVariable(ElemType::Float32, {logits.dim(0)}, name + "/loss");
  ComputeSet cs = graph.addComputeSet(name);
  const Tensor fl = logits.flatten(), fg = out.grad.flatten();
  for (const Chunk& c : tileChunks(graph, logits, kPerContext, classes)) {
    // The rows that start in this chunk, whole (the compiler gathers a row's tail from elsewhere).
    const size_t r0 = (c.begin + classes - 1) / classes, r1 = (c.end + classes - 1) / classes;
    if (r0 == r1) continue;
    graph.setTileMapping(out.loss.slice(r0, r1), c.tile);
    VertexRef v = graph.addVertex(cs, "SoftmaxCrossEntropy",
                                  {{"logits", fl.slice(r0 * classes, r1 * classes)},
                                   {"labels", labels.slice(r0, r1)},
                                   {"grad", fg.slice(r0 * classes, r1 * classes)},
                                   {"loss", out.loss.slice(r0, r1)}});
    graph.setFieldValue(v, "classes", static_cast<uint32_t>(classes));
    graph.setFieldValue(v, "scale", gradScale);
    // Per logit: subtract the maximum, exp, sum, and the gradient's multiply, subtract and
    // scale; per row the reciprocal, log and loss.
    graph.setFlops(v, (6 * uint64_t{classes} + 3) * (r1 - r0));
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  return out;
}

Tensor argMax(Graph& graph, const Tensor& logits, Sequence& prog, const std::string& name) {
  checkLogits(logits, nullptr, name);
  const size_t classes = logits.dim(1);
  Tensor index = graph.addVariable(ElemType::Int32, {logits.dim(0)}, name);
  ComputeSet cs = graph.addComputeSet(name);
  const Tensor fl = logits.flatten();
  for (const Chunk& c : tileChunks(graph, logits, kPerContext, classes)) {
    const size_t r0 = (c.begin + classes - 1) / classes, r1 = (c.end + classes - 1) / classes;
    if (r0 == r1) continue;
    graph.setTileMapping(index.slice(r0, r1), c.tile);
    VertexRef v = graph.addVertex(
        cs, "ArgMax",
        {{"logits", fl.slice(r0 * classes, r1 * classes)}, {"index", index.slice(r0, r1)}});
    graph.setFieldValue(v, "classes", static_cast<uint32_t>(classes));
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  return index;
}

Tensor correctCount(Graph& graph, const Tensor& logits, const Tensor& labels, Sequence& prog,
                    const std::string& name) {
  checkLogits(logits, &labels, name);
  const Tensor index = argMax(graph, logits, prog, name + "/argmax");
  // One partial count per tile that holds predictions, then their sum.
  std::map<unsigned, std::vector<std::pair<size_t, size_t>>> byTile;
  for (const Chunk& c : tileChunks(graph, index, 1)) byTile[c.tile].emplace_back(c.begin, c.end);
  Tensor partial = graph.addVariable(ElemType::Float32, {byTile.size(), 1}, name + "/partial");
  ComputeSet cs = graph.addComputeSet(name);
  size_t i = 0;
  for (const auto& [tile, ranges] : byTile) {
    std::vector<Tensor> a, b;
    for (const auto& [r0, r1] : ranges)
      a.push_back(index.slice(r0, r1)), b.push_back(labels.slice(r0, r1));
    graph.setTileMapping(partial[i], tile);
    VertexRef v = graph.addVertex(
        cs, "CountEqual",
        {{"a", concat(a, 0)}, {"b", concat(b, 0)}, {"count", partial[i].flatten()}});
    graph.setTileMapping(v, tile);
    ++i;
  }
  prog.add(Execute(cs, name));
  return reduceSum(graph, partial, 0, prog, name + "/sum");
}

Tensor sgdMomentum(Graph& graph, const Tensor& w, const Tensor& grad, float lr, float momentum,
                   Sequence& prog, const std::string& name) {
  if (w.shape() != grad.shape() || w.elementType() != ElemType::Float32 ||
      grad.elementType() != ElemType::Float32) {
    throw Error(fmt::format("{}: weights {} and gradient {} must be float32 of one shape", name,
                            w.shapeString(), grad.shapeString()));
  }
  Tensor v = cloneMapped(graph, w, ElemType::Float32, name + "/velocity");
  ComputeSet cs = graph.addComputeSet(name);
  const Tensor fw = w.flatten(), fv = v.flatten(), fg = grad.flatten();
  for (const Chunk& c : tileChunks(graph, w)) {
    VertexRef vx = graph.addVertex(cs, "SgdMomentum",
                                   {{"w", fw.slice(c.begin, c.end)},
                                    {"v", fv.slice(c.begin, c.end)},
                                    {"g", fg.slice(c.begin, c.end)}});
    graph.setFieldValue(vx, "lr", lr);
    graph.setFieldValue(vx, "momentum", momentum);
    graph.setFlops(vx, 4 * uint64_t{c.end - c.begin});  // two multiply-adds
    graph.setTileMapping(vx, c.tile);
  }
  prog.add(Execute(cs, name));
  return v;
}

}  // namespace tessera::ops
