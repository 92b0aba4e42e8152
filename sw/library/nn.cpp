// Losses, metrics and optimiser steps (docs/library.md, "Training").
#include <fmt/format.h>

#include <map>
#include <optional>

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
  std::optional<ComputeSet> es;  // the exponentials of rows split over contexts
  const Tensor fl = logits.flatten(), fg = out.grad.flatten();
  // Each tile's rows: those that start in its chunks, whole (the compiler gathers a row's tail
  // from elsewhere).
  std::map<unsigned, std::vector<std::pair<size_t, size_t>>> rowsOf;
  for (const Chunk& c : tileChunks(graph, logits, kPerContext, classes)) {
    const size_t r0 = (c.begin + classes - 1) / classes, r1 = (c.end + classes - 1) / classes;
    if (r0 != r1) rowsOf[c.tile].emplace_back(r0, r1);
  }
  const size_t contexts = graph.target().contexts;
  for (const auto& [tile, ranges] : rowsOf) {
    size_t rows = 0;
    for (const auto& [r0, r1] : ranges) rows += r1 - r0;
    // A tile with at most half as many rows as contexts (the MLP's 2 of 32 on each of 16 tiles)
    // would leave most contexts idle: the split form spreads each row over contexts/rows of them.
    // Its exponentials go in slices into a scratch row (SoftmaxExp, NAME/exp); then, from that
    // row, its gradient in slices (SoftmaxCrossEntropyGrad) and its loss (SoftmaxCrossEntropyLoss)
    // in NAME. The same operations in the same order: the same bits.
    const size_t per = contexts / rows;  // contexts a row
    const bool split = per >= 2 && classes >= 2;
    // A row's exponentials in per slices; its gradient in per - 1, beside its loss. Each of the
    // second step's vertices sums the row's exponentials itself (classes adds: cheaper than a
    // third compute set to share the sum).
    const size_t expSlices = std::min(per, classes), gradSlices = std::min(per - 1, classes);
    std::optional<Tensor> scratch;
    size_t at = 0;  // the next row of the scratch
    if (split) {
      if (!es) es = graph.addComputeSet(name + "/exp");
      scratch = graph.addVariable(ElemType::Float32, {rows * classes},
                                  fmt::format("{}/exp@{}", name, tile));
      graph.setTileMapping(*scratch, tile);
    }
    for (const auto& [r0, r1] : ranges) {
      graph.setTileMapping(out.loss.slice(r0, r1), tile);
      if (!split) {
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
        graph.setTileMapping(v, tile);
        continue;
      }
      for (size_t r = r0; r < r1; ++r, ++at) {
        const Tensor x = fl.slice(r * classes, (r + 1) * classes);
        const Tensor e = scratch->slice(at * classes, (at + 1) * classes);
        const Tensor label = labels.slice(r, r + 1);
        for (size_t s = 0; s < expSlices; ++s) {
          const size_t j0 = classes * s / expSlices, j1 = classes * (s + 1) / expSlices;
          VertexRef v = graph.addVertex(*es, "SoftmaxExp", {{"x", x}, {"e", e.slice(j0, j1)}});
          graph.setFieldValue(v, "begin", static_cast<uint32_t>(j0));
          graph.setFlops(v, 2 * uint64_t{j1 - j0});  // subtract and exp
          graph.setTileMapping(v, tile);
        }
        for (size_t s = 0; s < gradSlices; ++s) {
          const size_t j0 = classes * s / gradSlices, j1 = classes * (s + 1) / gradSlices;
          VertexRef v = graph.addVertex(
              cs, "SoftmaxCrossEntropyGrad",
              {{"e", e}, {"label", label}, {"grad", fg.slice(r * classes + j0, r * classes + j1)}});
          graph.setFieldValue(v, "begin", static_cast<uint32_t>(j0));
          graph.setFieldValue(v, "scale", gradScale);
          // Per element the multiply, subtract and scale; the sum and reciprocal counted once
          // (on the first slice).
          graph.setFlops(v, 3 * uint64_t{j1 - j0} + (s == 0 ? classes : 0));
          graph.setTileMapping(v, tile);
        }
        VertexRef v = graph.addVertex(
            cs, "SoftmaxCrossEntropyLoss",
            {{"x", x}, {"e", e}, {"label", label}, {"loss", out.loss.slice(r, r + 1)}});
        graph.setFlops(v, 3);  // log, subtract, subtract
        graph.setTileMapping(v, tile);
      }
    }
  }
  if (es) prog.add(Execute(*es, name + "/exp"));
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
