// softmax and log-softmax along any axis, with their gradients (docs/library.md, "Layers"):
// rows of the axis (rows.hpp), whole rows per vertex.
#include <fmt/format.h>

#include "rows.hpp"
#include "tessera/error.hpp"
#include "tessera/nn.hpp"

namespace tessera::ops {

namespace {

void checkAxis(const Tensor& x, size_t axis, const std::string& name) {
  if (axis >= x.rank()) {
    throw Error(fmt::format("{}: axis {} of \"{}\" {}, which has {} dimensions", name, axis,
                            x.debugName(), x.shapeString(), x.rank()));
  }
}

Tensor forward(Graph& graph, const Tensor& x, size_t axis, bool log, Sequence& prog,
               const std::string& name) {
  requireFloat(x, "input", name);
  checkAxis(x, axis, name);
  const Tensor in = axisRows(x, axis);
  const size_t len = in.dim(1);
  const Tensor out = createRows(graph, in.dim(0), len, name);
  ComputeSet cs = graph.addComputeSet(name);
  if (len > 0) {
    for (const RowChunk& c : rowChunks(graph, out)) {
      VertexRef v = graph.addVertex(cs, "SoftmaxRows",
                                    {{"in", in.slice(c.begin, c.end).flatten()},
                                     {"out", out.slice(c.begin, c.end).flatten()}});
      graph.setFieldValue(v, "length", static_cast<uint32_t>(len));
      graph.setFieldValue(v, "log", log ? 1u : 0u);
      // Per element: subtract the maximum, exp, sum, normalise.
      graph.setFlops(v, 4 * uint64_t{c.end - c.begin} * len);
      graph.setTileMapping(v, c.tile);
    }
  }
  prog.add(Execute(cs, name));
  return fromAxisRows(out, x.shape(), axis);
}

Tensor backward(Graph& graph, const Tensor& grad, const Tensor& y, size_t axis, bool log,
                Sequence& prog, const std::string& name) {
  requireFloat(grad, "gradient", name);
  requireFloat(y, "output", name);
  requireSameShape(grad, y, name);
  checkAxis(y, axis, name);
  const Tensor g = axisRows(grad, axis), out = axisRows(y, axis);
  const size_t len = g.dim(1);
  const Tensor dx = createRows(graph, g.dim(0), len, name);
  ComputeSet cs = graph.addComputeSet(name);
  if (len > 0) {
    for (const RowChunk& c : rowChunks(graph, dx)) {
      VertexRef v = graph.addVertex(cs, "SoftmaxRowsGrad",
                                    {{"grad", g.slice(c.begin, c.end).flatten()},
                                     {"out", out.slice(c.begin, c.end).flatten()},
                                     {"dx", dx.slice(c.begin, c.end).flatten()}});
      graph.setFieldValue(v, "length", static_cast<uint32_t>(len));
      graph.setFieldValue(v, "log", log ? 1u : 0u);
      // Per element: the row's dot product (a multiply-add), then a subtract and a multiply.
      graph.setFlops(v, 4 * uint64_t{c.end - c.begin} * len);
      graph.setTileMapping(v, c.tile);
    }
  }
  prog.add(Execute(cs, name));
  return fromAxisRows(dx, y.shape(), axis);
}

}  // namespace

Tensor softmax(Graph& graph, const Tensor& x, size_t axis, Sequence& prog,
               const std::string& name) {
  return forward(graph, x, axis, false, prog, name);
}

Tensor softmaxBackward(Graph& graph, const Tensor& grad, const Tensor& y, size_t axis,
                       Sequence& prog, const std::string& name) {
  return backward(graph, grad, y, axis, false, prog, name);
}

Tensor logSoftmax(Graph& graph, const Tensor& x, size_t axis, Sequence& prog,
                  const std::string& name) {
  return forward(graph, x, axis, true, prog, name);
}

Tensor logSoftmaxBackward(Graph& graph, const Tensor& grad, const Tensor& y, size_t axis,
                          Sequence& prog, const std::string& name) {
  return backward(graph, grad, y, axis, true, prog, name);
}

}  // namespace tessera::ops
