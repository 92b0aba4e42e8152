// tanh, sigmoid and GELU with their gradients (docs/library.md, "Layers").
#include <functional>

#include "flops.hpp"
#include "rows.hpp"
#include "tessera/nn.hpp"

namespace tessera::ops {

namespace {

// out = codelet(inputs...) elementwise, mapped like the first input, up to six vertices a tile.
Tensor pointwise(Graph& graph, const char* codelet,
                 const std::vector<std::pair<std::string, Tensor>>& inputs,
                 const std::string& outField, Sequence& prog, const std::string& name) {
  for (const auto& [field, t] : inputs) {
    requireFloat(t, field, name);
    requireSameShape(inputs[0].second, t, name);
  }
  const Tensor out = cloneMapped(graph, inputs[0].second, ElemType::Float32, name);
  ComputeSet cs = graph.addComputeSet(name);
  const Tensor flat = out.flatten();
  for (const Chunk& c : tileChunks(graph, out)) {
    std::vector<std::pair<std::string, Tensor>> conn;
    for (const auto& [field, t] : inputs)
      conn.emplace_back(field, t.flatten().slice(c.begin, c.end));
    conn.emplace_back(outField, flat.slice(c.begin, c.end));
    VertexRef v = graph.addVertex(cs, codelet, conn);
    setElementwiseFlops(graph, v, codelet, c.end - c.begin);
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  return out;
}

}  // namespace

Tensor tanh(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name) {
  return pointwise(graph, "Tanh", {{"in", x}}, "out", prog, name);
}

Tensor tanhBackward(Graph& graph, const Tensor& grad, const Tensor& y, Sequence& prog,
                    const std::string& name) {
  return pointwise(graph, "TanhGrad", {{"grad", grad}, {"out", y}}, "dx", prog, name);
}

Tensor sigmoid(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name) {
  return pointwise(graph, "Sigmoid", {{"in", x}}, "out", prog, name);
}

Tensor sigmoidBackward(Graph& graph, const Tensor& grad, const Tensor& y, Sequence& prog,
                       const std::string& name) {
  return pointwise(graph, "SigmoidGrad", {{"grad", grad}, {"out", y}}, "dx", prog, name);
}

Tensor gelu(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name) {
  return pointwise(graph, "Gelu", {{"in", x}}, "out", prog, name);
}

Tensor geluBackward(Graph& graph, const Tensor& grad, const Tensor& x, Sequence& prog,
                    const std::string& name) {
  return pointwise(graph, "GeluGrad", {{"grad", grad}, {"in", x}}, "dx", prog, name);
}

}  // namespace tessera::ops
