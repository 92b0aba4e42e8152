// NumPy broadcasting, element-by-element binary ops over it, reductions over any set of axes and
// the element-by-element math functions (docs/library.md, "Broadcasting and math"). An operand
// broadcast over a leading and a trailing block of dimensions (a bias, a per-row statistic, a
// positional table) goes to BinaryBroadcast vertices compact; any other broadcast operand is a
// view (Tensor::broadcast repeats its elements) whose repeated elements the compiler gathers for
// each vertex, so one codelet per function serves every shape.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>

#include "flops.hpp"
#include "rows.hpp"
#include "tessera/error.hpp"
#include "tessera/ops.hpp"
#include "tile_chunks.hpp"

namespace tessera::ops {

namespace {

std::string shapeText(const std::vector<size_t>& s) {
  return fmt::format("[{}]", fmt::join(s, ","));
}

size_t count(const std::vector<size_t>& s) {
  size_t n = 1;
  for (size_t d : s) n *= d;
  return n;
}

// A mapping for a new tensor of shape out made from inputs: the first input that has as many
// elements (its broadcast view is then the input itself), else none (the caller maps linearly).
Tensor mappingFor(const std::vector<Tensor>& inputs, const std::vector<size_t>& out) {
  for (const Tensor& t : inputs) {
    if (t.numElements() == count(out)) return broadcastTo(t, out);
  }
  return {};
}

Tensor pointwise(Graph& graph, const std::string& codelet,
                 const std::vector<std::pair<std::string, Tensor>>& inputs, Sequence& prog,
                 const std::string& name) {
  std::vector<Tensor> ts;
  for (const auto& [field, t] : inputs) {
    requireFloat(t, field, name);
    requireSameShape(inputs[0].second, t, name);
    ts.push_back(t);
  }
  return elementwise(graph, codelet, inputs, "out", prog, name, {}, mappingFor(ts, ts[0].shape()));
}

// codelet(inputs..., b) element by element where b has one element, connected whole to every
// vertex (field "b"); out mapped like inputs[0].
Tensor withExponent(Graph& graph, const std::string& codelet,
                    const std::vector<std::pair<std::string, Tensor>>& inputs, const Tensor& b,
                    Sequence& prog, const std::string& name) {
  requireFloat(b, "b", name);
  const Tensor out = cloneMapped(graph, inputs[0].second, ElemType::Float32, name);
  ComputeSet cs = graph.addComputeSet(name);
  const Tensor flat = out.flatten();
  for (const Chunk& c : tileChunks(graph, out)) {
    std::vector<std::pair<std::string, Tensor>> conn;
    for (const auto& [field, t] : inputs) {
      requireFloat(t, field, name);
      conn.emplace_back(field, t.flatten().slice(c.begin, c.end));
    }
    conn.emplace_back("b", b.flatten());
    conn.emplace_back("out", flat.slice(c.begin, c.end));
    VertexRef v = graph.addVertex(cs, codelet, conn);
    setElementwiseFlops(graph, v, codelet, c.end - c.begin);
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  return out;
}

// An operand of shape s broadcast over out (s right-aligned against out) whose kept dimensions
// form one block [l, r), every dimension outside it broadcast: output element i reads the
// operand's element (i / inner) % period, with inner the product of out[r:] and period that of
// out[l:r] (the operand's element count).
struct CompactBroadcast {
  size_t inner = 1, period = 1;
};

std::optional<CompactBroadcast> compactBroadcast(const std::vector<size_t>& s,
                                                 const std::vector<size_t>& out) {
  if (s.size() > out.size()) return {};
  const size_t lead = out.size() - s.size();
  auto dim = [&](size_t d) { return d < lead ? size_t{1} : s[d - lead]; };
  size_t l = out.size(), r = 0;  // the kept block: dimensions where s is not broadcast
  for (size_t d = 0; d < out.size(); ++d) {
    if (dim(d) == out[d] && out[d] != 1) l = std::min(l, d), r = d + 1;
  }
  CompactBroadcast c;
  for (size_t d = 0; d < out.size(); ++d) {
    const bool kept = d >= l && d < r;
    if (kept && dim(d) != out[d]) return {};  // a broadcast dimension inside the block
    if (!kept && dim(d) != 1) return {};      // cannot happen for a valid broadcast
    if (kept) c.period *= out[d];
    if (d >= r && r > 0) c.inner *= out[d];
  }
  if (r == 0) c.inner = count(out);  // one element for every output element
  if (c.period > UINT32_MAX || c.inner > UINT32_MAX || count(out) > UINT32_MAX) return {};
  return c;
}

// full OP bc over broadcastShape (full's shape), bc connected compact to each vertex: the
// elements its chunk reads, or all of bc where the chunk wraps around it.
Tensor binaryBroadcast(Graph& graph, BinaryOp op, const Tensor& full, const Tensor& bc,
                       bool bcFirst, const CompactBroadcast& cb, Sequence& prog,
                       const std::string& name) {
  static const char* const plain[] = {"Add", "Sub", "Mul", "Div", "Pow"};
  const Tensor out = cloneMapped(graph, full, ElemType::Float32, name);
  const Tensor flatFull = full.flatten(), flatOut = out.flatten(), flatBc = bc.flatten();
  const Tensor view = broadcastTo(bc, out.shape()).flatten();
  ComputeSet cs = graph.addComputeSet(name);
  for (const Chunk& c : tileChunks(graph, out)) {
    if (cb.inner == 1 && c.end - c.begin <= cb.period) {
      // The chunk reads each element of bc at most once: its view is runs of bc, and the plain
      // codelet's state is smaller.
      const Tensor f = flatFull.slice(c.begin, c.end), b = view.slice(c.begin, c.end);
      VertexRef v = graph.addVertex(
          cs, plain[static_cast<int>(op)],
          {{"a", bcFirst ? b : f}, {"b", bcFirst ? f : b}, {"out", flatOut.slice(c.begin, c.end)}});
      graph.setFlops(v, c.end - c.begin);
      graph.setTileMapping(v, c.tile);
      continue;
    }
    const size_t j0 = (c.begin / cb.inner) % cb.period, j1 = ((c.end - 1) / cb.inner) % cb.period;
    const bool whole = (c.end - 1) / cb.inner - c.begin / cb.inner >= cb.period || j1 < j0;
    const size_t base = whole ? 0 : j0;
    VertexRef v = graph.addVertex(cs, "BinaryBroadcast",
                                  {{"full", flatFull.slice(c.begin, c.end)},
                                   {"bc", whole ? flatBc : flatBc.slice(j0, j1 + 1)},
                                   {"out", flatOut.slice(c.begin, c.end)}});
    graph.setFieldValue(v, "op", static_cast<uint32_t>(op) | (bcFirst ? 8u : 0u));
    graph.setFieldValue(v, "start", static_cast<uint32_t>(c.begin));
    graph.setFieldValue(v, "inner", static_cast<uint32_t>(cb.inner));
    graph.setFieldValue(v, "period", static_cast<uint32_t>(cb.period));
    graph.setFieldValue(v, "base", static_cast<uint32_t>(base));
    graph.setFlops(v, c.end - c.begin);
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  return out;
}

}  // namespace

std::vector<size_t> broadcastShape(const std::vector<size_t>& a, const std::vector<size_t>& b,
                                   const std::string& name) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<size_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    const size_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const size_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw Error(
          fmt::format("{}: shapes {} and {} do not broadcast (dimension {} of the result: "
                      "{} and {})",
                      name, shapeText(a), shapeText(b), i, da, db));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor broadcastTo(const Tensor& t, const std::vector<size_t>& shape) {
  if (t.rank() > shape.size()) {
    throw Error(fmt::format("tensor \"{}\" {} cannot broadcast to {}", t.debugName(),
                            t.shapeString(), shapeText(shape)));
  }
  Tensor v = t;
  while (v.rank() < shape.size()) v = v.expand(0);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (v.dim(d) == shape[d]) continue;
    if (v.dim(d) != 1) {
      throw Error(fmt::format("tensor \"{}\" {} cannot broadcast to {}", t.debugName(),
                              t.shapeString(), shapeText(shape)));
    }
    v = v.broadcast(shape[d], d);
  }
  return v;
}

std::optional<float> constantScalar(const Graph& graph, const Tensor& t) {
  if (!t.valid() || t.numElements() != 1 || t.elementType() != ElemType::Float32) return {};
  const auto [var, index] = t.elements()[0];
  const GraphVariable& v = graph.variables()[var];
  if (!v.constant) return {};
  const uint32_t bits = v.initial.empty() ? 0u : v.initial[index];
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

Tensor binary(Graph& graph, BinaryOp op, const Tensor& a, const Tensor& b, Sequence& prog,
              const std::string& name) {
  requireFloat(a, "a", name);
  requireFloat(b, "b", name);
  const std::vector<size_t> out = broadcastShape(a.shape(), b.shape(), name);
  if (a.shape() == b.shape()) {
    switch (op) {
      case BinaryOp::Add:
        return add(graph, a, b, prog, name);
      case BinaryOp::Sub:
        return sub(graph, a, b, prog, name);
      case BinaryOp::Mul:
        return mul(graph, a, b, prog, name);
      default:
        break;
    }
  }
  // A constant scalar operand goes into the vertices as a parameter: the same roundings, no
  // gathering of a repeated element. x - c is x + (-c) exactly in IEEE arithmetic.
  auto withValue = [&](const char* codelet, const Tensor& in, const char* field, float value) {
    return elementwise(graph, codelet, {{"in", in}}, "out", prog, name,
                       [&](VertexRef v) { graph.setFieldValue(v, field, value); });
  };
  if (a.shape() == out) {
    if (const std::optional<float> c = constantScalar(graph, b)) {
      switch (op) {
        case BinaryOp::Add:
          return withValue("AddScalar", a, "value", *c);
        case BinaryOp::Sub:
          return withValue("AddScalar", a, "value", -*c);
        case BinaryOp::Mul:
          return scale(graph, a, *c, prog, name);
        case BinaryOp::Div:
          return divScalar(graph, a, *c, prog, name);
        case BinaryOp::Pow:
          break;
      }
    }
  }
  // A one-element exponent is connected as it is: the Pow codelet reads it for every element.
  if (op == BinaryOp::Pow && a.shape() == out && b.numElements() == 1 && out.size() > 0 &&
      count(out) > 1) {
    return withExponent(graph, "Pow", {{"a", a}}, b, prog, name);
  }
  if (b.shape() == out) {
    if (const std::optional<float> c = constantScalar(graph, a)) {
      // c + b and c * b: addition and multiplication commute bit for bit.
      switch (op) {
        case BinaryOp::Add:
          return withValue("AddScalar", b, "value", *c);
        case BinaryOp::Sub:
          return withValue("ScalarSub", b, "value", *c);
        case BinaryOp::Mul:
          return scale(graph, b, *c, prog, name);
        case BinaryOp::Div:
          return withValue("ScalarDiv", b, "value", *c);
        case BinaryOp::Pow:
          break;
      }
    }
  }
  // One operand full and the other broadcast over a leading and a trailing block of dimensions:
  // where a vertex's chunk would read an element of it more than once, the compact operand goes to
  // the vertex as it is (each element gathered once, not once per use).
  if (a.shape() == out || b.shape() == out) {
    const bool bcFirst = a.shape() != out;
    const Tensor& full = bcFirst ? b : a;
    const Tensor& bc = bcFirst ? a : b;
    if (const std::optional<CompactBroadcast> cb = compactBroadcast(bc.shape(), out))
      return binaryBroadcast(graph, op, full, bc, bcFirst, *cb, prog, name);
  }
  static const char* const codelets[] = {"Add", "Sub", "Mul", "Div", "Pow"};
  const Tensor va = broadcastTo(a, out), vb = broadcastTo(b, out);
  const Tensor like = mappingFor({a, b}, out);
  if (like.valid()) {
    return elementwise(graph, codelets[static_cast<int>(op)], {{"a", va}, {"b", vb}}, "out", prog,
                       name, {}, like);
  }
  const Tensor result = createLinear(graph, ElemType::Float32, out, name);
  elementwiseInto(graph, codelets[static_cast<int>(op)], {{"a", va}, {"b", vb}}, "out", result,
                  prog, name);
  return result;
}

Tensor div(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog,
           const std::string& name) {
  requireSameShape(a, b, name);
  return pointwise(graph, "Div", {{"a", a}, {"b", b}}, prog, name);
}

Tensor divScalar(Graph& graph, const Tensor& a, float divisor, Sequence& prog,
                 const std::string& name) {
  requireFloat(a, "a", name);
  return elementwise(graph, "DivScalar", {{"in", a}}, "out", prog, name,
                     [&](VertexRef v) { graph.setFieldValue(v, "divisor", divisor); });
}

Tensor reduceSumAxes(Graph& graph, const Tensor& x, const std::vector<size_t>& axes, Sequence& prog,
                     const std::string& name) {
  requireFloat(x, "x", name);
  std::vector<bool> reduced(x.rank(), false);
  for (size_t a : axes) {
    if (a >= x.rank() || reduced[a]) {
      throw Error(fmt::format("{}: axes [{}] of \"{}\" {} repeat an axis or leave the rank", name,
                              fmt::join(axes, ","), x.debugName(), x.shapeString()));
    }
    reduced[a] = true;
  }
  std::vector<size_t> keptShape, keptDims, redDims;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (!reduced[d]) keptShape.push_back(x.dim(d));
    // Dimensions of size 1 change neither the order nor the values: left out of the layout test.
    if (x.dim(d) == 1) continue;
    (reduced[d] ? redDims : keptDims).push_back(d);
  }
  if (x.numElements() == 0) {
    throw Error(fmt::format("{}: \"{}\" {} has no elements", name, x.debugName(), x.shapeString()));
  }
  size_t r = 1;
  for (size_t d : redDims) r *= x.dim(d);
  const size_t k = x.numElements() / r;
  if (r == 1) return x.reshape(keptShape);
  Tensor sums;
  if (keptDims.empty() || redDims.back() < keptDims.front()) {
    sums = reduceSum(graph, x.reshape({r, k}), 0, prog, name);
  } else if (keptDims.back() < redDims.front()) {
    sums = reduceSum(graph, x.reshape({k, r}), 1, prog, name);
  } else {
    // Size-1 dimensions dropped by a reshape first, so that the permutation covers the rest.
    std::vector<size_t> shapeNo1, posOf(x.rank(), 0), perm;
    for (size_t d = 0; d < x.rank(); ++d) {
      if (x.dim(d) != 1) posOf[d] = shapeNo1.size(), shapeNo1.push_back(x.dim(d));
    }
    for (size_t d : keptDims) perm.push_back(posOf[d]);
    for (size_t d : redDims) perm.push_back(posOf[d]);
    sums = reduceSum(graph, x.reshape(shapeNo1).dimShuffle(perm).reshape({k, r}), 1, prog, name);
  }
  return sums.reshape(keptShape);
}

Tensor reduceToShape(Graph& graph, const Tensor& g, const std::vector<size_t>& shape,
                     Sequence& prog, const std::string& name) {
  if (g.shape() == shape) return g;
  if (broadcastShape(shape, g.shape(), name) != g.shape()) {
    throw Error(fmt::format("{}: \"{}\" {} is not a broadcast of {}", name, g.debugName(),
                            g.shapeString(), shapeText(shape)));
  }
  const size_t lead = g.rank() - shape.size();
  std::vector<size_t> axes;
  for (size_t d = 0; d < g.rank(); ++d) {
    if (d < lead || (shape[d - lead] == 1 && g.dim(d) != 1)) axes.push_back(d);
  }
  return reduceSumAxes(graph, g, axes, prog, name).reshape(shape);
}

Tensor sqrt(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name) {
  return pointwise(graph, "Sqrt", {{"in", x}}, prog, name);
}
Tensor sqrtBackward(Graph& graph, const Tensor& grad, const Tensor& y, Sequence& prog,
                    const std::string& name) {
  return pointwise(graph, "SqrtGrad", {{"g", grad}, {"y", y}}, prog, name);
}
Tensor exp(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name) {
  return pointwise(graph, "Exp", {{"in", x}}, prog, name);
}
Tensor log(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name) {
  return pointwise(graph, "Log", {{"in", x}}, prog, name);
}
Tensor reciprocal(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name) {
  return pointwise(graph, "Reciprocal", {{"in", x}}, prog, name);
}
Tensor reciprocalBackward(Graph& graph, const Tensor& grad, const Tensor& y, Sequence& prog,
                          const std::string& name) {
  return pointwise(graph, "ReciprocalGrad", {{"g", grad}, {"y", y}}, prog, name);
}
Tensor erf(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name) {
  return pointwise(graph, "Erf", {{"in", x}}, prog, name);
}
Tensor erfBackward(Graph& graph, const Tensor& grad, const Tensor& x, Sequence& prog,
                   const std::string& name) {
  return pointwise(graph, "ErfGrad", {{"g", grad}, {"x", x}}, prog, name);
}
Tensor divBackwardB(Graph& graph, const Tensor& grad, const Tensor& y, const Tensor& b,
                    Sequence& prog, const std::string& name) {
  return pointwise(graph, "DivGradB", {{"g", grad}, {"y", y}, {"b", b}}, prog, name);
}
Tensor powBackwardA(Graph& graph, const Tensor& grad, const Tensor& a, const Tensor& b,
                    Sequence& prog, const std::string& name) {
  if (b.numElements() == 1 && grad.numElements() > 1) {
    requireSameShape(grad, a, name);
    return withExponent(graph, "PowGradA", {{"g", grad}, {"a", a}}, b, prog, name);
  }
  return pointwise(graph, "PowGradA", {{"g", grad}, {"a", a}, {"b", b}}, prog, name);
}
Tensor powBackwardB(Graph& graph, const Tensor& grad, const Tensor& a, const Tensor& b,
                    const Tensor& y, Sequence& prog, const std::string& name) {
  return pointwise(graph, "PowGradB", {{"g", grad}, {"a", a}, {"b", b}, {"y", y}}, prog, name);
}

}  // namespace tessera::ops
