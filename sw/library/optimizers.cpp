// Optimizer steps on the tiles (docs/library.md, "Optimizers").
#include "tessera/optimizers.hpp"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <span>

#include "flops.hpp"
#include "tessera/error.hpp"
#include "tile_chunks.hpp"

namespace tessera::ops {

namespace {

void checkFloat(const Tensor& t, const std::string& what, const std::string& name) {
  if (!t.valid() || t.elementType() != ElemType::Float32) {
    throw Error(fmt::format("{}: {} \"{}\" must be a float32 tensor", name, what,
                            t.valid() ? t.debugName() : "?"));
  }
}

void checkScalar(const Tensor& s, const std::string& what, const std::string& name) {
  checkFloat(s, what, name);
  if (s.numElements() != 1) {
    throw Error(fmt::format("{}: {} \"{}\" must be a float32 scalar, got {}", name, what,
                            s.debugName(), s.shapeString()));
  }
}

void checkLike(const Tensor& w, const Tensor& t, const std::string& what, const std::string& name) {
  checkFloat(t, what, name);
  if (t.shape() != w.shape()) {
    throw Error(fmt::format("{}: {} \"{}\" is {}, the weights \"{}\" are {}", name, what,
                            t.debugName(), t.shapeString(), w.debugName(), w.shapeString()));
  }
}

// One vertex of codelet per chunk of w's elements (on w's tiles): fields of tensors shaped like w
// are sliced, scalars are connected whole (the compiler sends them to every tile that reads them).
// FLOPs per element of the optional weight decay d = wd * w + g (one multiply-add), as the
// update codelets compute it only when wd is not 0.
uint64_t decayFlops(float weightDecay) {
  return weightDecay != 0.0f ? 2 : 0;
}

void perChunk(Graph& graph, const std::string& codelet, const Tensor& w,
              const std::vector<std::pair<std::string, Tensor>>& likeW,
              const std::vector<std::pair<std::string, Tensor>>& scalars,
              const std::function<void(VertexRef)>& params, uint64_t flopsPerElement,
              Sequence& prog, const std::string& name) {
  ComputeSet cs = graph.addComputeSet(name);
  // Element by element, so in storage order where all share one (weights in the unit's layout).
  std::vector<Tensor> all{w};
  for (const auto& [field, t] : likeW) all.push_back(t);
  const std::vector<Tensor> flats = inStorageOrder(graph, all);
  for (const SpanChunk& c : spanChunks(graph, flats)) {
    std::vector<std::pair<std::string, Tensor>> conn;
    for (size_t i = 0; i < likeW.size(); ++i)
      conn.emplace_back(likeW[i].first, spanOf(flats[i + 1], c));
    for (const auto& [field, t] : scalars) conn.emplace_back(field, t.flatten());
    VertexRef v = graph.addVertex(cs, codelet, conn);
    graph.setTileMapping(v, c.tile);
    graph.setFlops(v, flopsPerElement * spanSize(c));
    params(v);
  }
  prog.add(Execute(cs, name));
}

}  // namespace

Tensor createScalar(Graph& graph, float value, const std::string& name) {
  Tensor s = graph.addVariable(ElemType::Float32, {1}, name);
  graph.setTileMapping(s, 0);
  const float v[1] = {value};
  graph.setInitialValue(s, v);
  return s;
}

Tensor scaleByScalar(Graph& graph, const Tensor& a, const Tensor& s, float factor, Sequence& prog,
                     const std::string& name) {
  checkFloat(a, "input", name);
  checkScalar(s, "scale", name);
  const Tensor out = cloneMapped(graph, a, ElemType::Float32, name);
  perChunk(
      graph, "ScaleByScalar", out, {{"in", a}, {"out", out}}, {{"s", s}},
      [&](VertexRef v) { graph.setFieldValue(v, "factor", factor); }, 1, prog, name);
  return out;
}

void sgdUpdate(Graph& graph, const Tensor& w, const Tensor& g, const Tensor& lr, float weightDecay,
               Sequence& prog, const std::string& name) {
  checkFloat(w, "weights", name);
  checkLike(w, g, "gradient", name);
  checkScalar(lr, "learning rate", name);
  // Without weight decay the unrolled codelet, with it the one-element loop (docs/library.md).
  const bool decay = weightDecay != 0.0f;
  perChunk(
      graph, decay ? "SgdUpdateDecay" : "SgdUpdate", w, {{"w", w}, {"g", g}}, {{"lr", lr}},
      [&](VertexRef v) {
        if (decay) graph.setFieldValue(v, "weightDecay", weightDecay);
      },
      decayFlops(weightDecay) + 2, prog, name);
}

void sgdMomentumUpdate(Graph& graph, const Tensor& w, const Tensor& v, const Tensor& g,
                       const Tensor& lr, float momentum, float weightDecay, Sequence& prog,
                       const std::string& name) {
  checkFloat(w, "weights", name);
  checkLike(w, v, "velocity", name);
  checkLike(w, g, "gradient", name);
  checkScalar(lr, "learning rate", name);
  perChunk(
      graph, "SgdMomentumUpdate", w, {{"w", w}, {"v", v}, {"g", g}}, {{"lr", lr}},
      [&](VertexRef vx) {
        graph.setFieldValue(vx, "momentum", momentum);
        graph.setFieldValue(vx, "weightDecay", weightDecay);
      },
      decayFlops(weightDecay) + 4, prog, name);
}

AdamScalars createAdamScalars(Graph& graph, float beta1, float beta2, const std::string& name) {
  AdamScalars s;
  s.beta1 = beta1;
  s.beta2 = beta2;
  s.pows = graph.addVariable(ElemType::Float32, {2}, name + "/pows");
  s.hyper = graph.addVariable(ElemType::Float32, {2}, name + "/hyper");
  graph.setTileMapping(s.pows, 0);
  graph.setTileMapping(s.hyper, 0);
  const float ones[2] = {1.0f, 1.0f};
  graph.setInitialValue(s.pows, ones);
  return s;
}

void adamStep(Graph& graph, const AdamScalars& s, const Tensor& lr, Sequence& prog,
              const std::string& name) {
  checkScalar(lr, "learning rate", name);
  ComputeSet cs = graph.addComputeSet(name);
  VertexRef v = graph.addVertex(cs, "AdamStep", {{"pows", s.pows}, {"lr", lr}, {"hyper", s.hyper}});
  graph.setFieldValue(v, "beta1", s.beta1);
  graph.setFieldValue(v, "beta2", s.beta2);
  graph.setTileMapping(v, 0);
  prog.add(Execute(cs, name));
}

void adamUpdate(Graph& graph, const Tensor& w, const Tensor& m, const Tensor& v, const Tensor& g,
                const AdamScalars& s, float eps, float weightDecay, Sequence& prog,
                const std::string& name) {
  checkFloat(w, "weights", name);
  checkLike(w, m, "first moment", name);
  checkLike(w, v, "second moment", name);
  checkLike(w, g, "gradient", name);
  perChunk(
      graph, "AdamUpdate", w, {{"w", w}, {"m", m}, {"v", v}, {"g", g}}, {{"hyper", s.hyper}},
      [&](VertexRef vx) {
        graph.setFieldValue(vx, "beta1", s.beta1);
        graph.setFieldValue(vx, "beta2", s.beta2);
        graph.setFieldValue(vx, "eps", eps);
        graph.setFieldValue(vx, "weightDecay", weightDecay);
      },
      // m: a multiply and a multiply-add; v: three multiplies and an add; sqrt, divide and add
      // for the denominator; a divide and a multiply-add for w.
      decayFlops(weightDecay) + 13, prog, name);
}

void scaleInPlaceByScalar(Graph& graph, const Tensor& data, const Tensor& s, Sequence& prog,
                          const std::string& name) {
  checkFloat(data, "data", name);
  checkScalar(s, "scale", name);
  perChunk(
      graph, "ScaleInPlaceByScalar", data, {{"data", data}}, {{"s", s}}, [](VertexRef) {}, 1, prog,
      name);
}

void requirePowerOfTwoScale(float scale, const std::string& who) {
  int exponent = 0;
  if (!(scale > 0.0f) || std::isinf(scale) || std::frexp(scale, &exponent) != 0.5f) {
    throw Error(
        fmt::format("{} {} is not a power of two (dividing by it must be exact)", who, scale));
  }
}

LossScaler createLossScaler(Graph& graph, float initialScale, uint32_t growthInterval,
                            const std::string& name) {
  requirePowerOfTwoScale(initialScale, name + ": the initial loss scale");
  if (growthInterval == 0 || growthInterval > 0x7fffffffu)
    throw Error(
        fmt::format("{}: the growth interval {} is not in 1..2^31-1", name, growthInterval));
  LossScaler s;
  s.interval = growthInterval;
  s.scale = createScalar(graph, initialScale, name);
  s.inv = createScalar(graph, 1.0f / initialScale, name + "/inv");
  s.state = graph.addVariable(ElemType::Int32, {2}, name + "/state");
  s.ok = graph.addVariable(ElemType::Int32, {1}, name + "/ok");
  graph.setTileMapping(s.state, 0);
  graph.setTileMapping(s.ok, 0);
  const int32_t zeros[2] = {0, 0};
  graph.setInitialValue(s.state, std::span<const int32_t>(zeros, 2));
  graph.setInitialValue(s.ok, std::span<const int32_t>(zeros, 1));
  return s;
}

// Gradients up to this many elements are checked in one chunk per tile.
constexpr size_t kSmallGradient = 4096;

void lossScaleStep(Graph& graph, const LossScaler& s, const std::vector<Tensor>& grads,
                   Sequence& prog, const std::string& name) {
  // One flag per chunk of every gradient, on the chunk's tile.
  struct Part {
    Tensor span;
    unsigned tile;
  };
  std::vector<Part> parts;
  for (const Tensor& g : grads) {
    checkFloat(g, "gradient", name);
    const std::vector<Tensor> flats = inStorageOrder(graph, {g});
    // A small gradient (a bias) is one chunk per tile: fewer flags for tile 0 to read.
    const size_t perTile = g.numElements() <= kSmallGradient ? 1 : kPerContext;
    for (const SpanChunk& c : spanChunks(graph, flats, perTile))
      parts.push_back({spanOf(flats[0], c), c.tile});
  }
  if (parts.empty()) throw Error(fmt::format("{}: no gradients to check", name));
  const Tensor flags = graph.addVariable(ElemType::Int32, {parts.size()}, name + "/flags");
  ComputeSet check = graph.addComputeSet(name + "/check");
  // Four elements an instruction on the matrix unit (NonFiniteFlagAmp), else two instructions an
  // element.
  const Target& t = graph.target();
  const bool unit = t.hasMatrixUnit && t.hasFpu;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor f = flags.slice(i, i + 1);
    graph.setTileMapping(f, parts[i].tile);
    VertexRef v = graph.addVertex(check, unit ? "NonFiniteFlagAmp" : "NonFiniteFlag",
                                  {{"in", parts[i].span}, {"flag", f}});
    graph.setTileMapping(v, parts[i].tile);
  }
  prog.add(Execute(check, name + "/check"));
  ComputeSet update = graph.addComputeSet(name + "/update");
  VertexRef v = graph.addVertex(
      update, "LossScaleUpdate",
      {{"flags", flags}, {"scale", s.scale}, {"state", s.state}, {"inv", s.inv}, {"ok", s.ok}});
  graph.setTileMapping(v, 0);
  graph.setFieldValue(v, "interval", s.interval);
  prog.add(Execute(update, name + "/update"));
}

Program ifLossScaleOk(Graph& graph, const LossScaler& s, const Program& body,
                      const std::string& name) {
  const int32_t zero[1] = {0};
  const Tensor none = graph.addConstant({1}, std::span<const int32_t>(zero, 1), name + "/zero");
  graph.setTileMapping(none, 0);
  Sequence once({body, Copy(none, s.ok, name + "/done")}, name);
  return RepeatWhile(Sequence({}, name + "/cond"), s.ok, once, name);
}

}  // namespace tessera::ops
