// The tape: recording, and the reverse-mode walk that generates the backward program
// (docs/autodiff.md, "How the backward is generated").
#include <fmt/format.h>

#include <algorithm>

#include "autodiff_util.hpp"
#include "tessera/autodiff.hpp"
#include "tessera/error.hpp"

namespace tessera::autodiff {

Gradient Gradient::uniform(float value, std::vector<size_t> shape) {
  Gradient g;
  g.constant = value;
  g.shape = std::move(shape);
  return g;
}

Gradient Gradient::of(const Tensor& t) {
  Gradient g;
  g.tensor = t;
  g.shape = t.shape();
  return g;
}

int64_t OpNode::intAttr(const std::string& key, int64_t fallback) const {
  auto it = attributes.find(key);
  if (it == attributes.end()) return fallback;
  if (const int64_t* v = std::get_if<int64_t>(&it->second)) return *v;
  throw Error(fmt::format("{} ({}): attribute \"{}\" must be an integer", name, type, key));
}

double OpNode::floatAttr(const std::string& key, double fallback) const {
  auto it = attributes.find(key);
  if (it == attributes.end()) return fallback;
  if (const double* v = std::get_if<double>(&it->second)) return *v;
  if (const int64_t* v = std::get_if<int64_t>(&it->second)) return static_cast<double>(*v);
  throw Error(fmt::format("{} ({}): attribute \"{}\" must be a number", name, type, key));
}

std::vector<int64_t> OpNode::intsAttr(const std::string& key) const {
  auto it = attributes.find(key);
  if (it == attributes.end()) return {};
  if (const auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  throw Error(fmt::format("{} ({}): attribute \"{}\" must be a list of integers", name, type, key));
}

std::string BackwardContext::stepName(const std::string& what) const {
  return node.name + "/grad/" + what;
}

Tensor BackwardContext::gradOutputTensor(size_t i) {
  Gradient& g = gradOutputs_[i];
  if (g.isConstant()) g = Gradient::of(materialize(graph, prog, g, outputs[i], stepName("seed")));
  return g.tensor;
}

void BackwardContext::sinkUsed(size_t i) {
  sinkDone_[i] = true;
}

void BackwardContext::setGrad(size_t i, Gradient g) {
  const std::vector<size_t>& want = inputs[i].shape();
  if (g.shape != want) {
    throw Error(fmt::format("{} ({}): the gradient of input {} (\"{}\" {}) has shape [{}]",
                            node.name, node.type, i, inputs[i].debugName(), inputs[i].shapeString(),
                            fmt::join(g.shape, ",")));
  }
  gradInputs_[i] = std::move(g);
}

void OpRegistry::add(OpDefinition op) {
  if (!op.forward) throw Error(fmt::format("op \"{}\" has no forward", op.type));
  std::string type = op.type;
  ops_[type] = std::move(op);
}

const OpDefinition* OpRegistry::find(const std::string& type) const {
  auto it = ops_.find(type);
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, op] : ops_) out.push_back(name);
  return out;
}

Tape::Tape(Graph& graph, Sequence& forward, OpRegistry registry)
    : graph_(graph), forward_(forward), registry_(std::move(registry)) {}

Tape::~Tape() = default;

Value Tape::make(const Tensor& t, bool parameter, size_t producer, size_t index) {
  if (!t.valid() || t.graphId() != graph_.id())
    throw Error("autodiff: a tensor of another graph (or none) recorded");
  values_.push_back({t, parameter, producer, index});
  Value v;
  v.tensor_ = t;
  v.id_ = values_.size() - 1;
  return v;
}

Value Tape::input(const Tensor& t) {
  return make(t, false, ValueInfo{}.producer, 0);
}

Value Tape::parameter(const Tensor& t) {
  if (t.elementType() != ElemType::Float32) {
    throw Error(fmt::format("autodiff: parameter \"{}\" {} must be float32", t.debugName(),
                            t.shapeString()));
  }
  return make(t, true, ValueInfo{}.producer, 0);
}

std::vector<Value> Tape::apply(const std::string& type, const std::vector<Value>& inputs,
                               const Attributes& attributes, const std::string& name) {
  const OpDefinition* def = registry_.find(type);
  if (!def) {
    throw Error(fmt::format("{}: unknown op \"{}\" (known: {})", name, type,
                            fmt::join(registry_.names(), ", ")));
  }
  OpNode node;
  node.type = type;
  node.name = name;
  node.attributes = attributes;
  std::vector<Tensor> tensors;
  // An absent optional input (ONNX's empty name) is an invalid Value; ONNX's optional inputs of
  // these ops are trailing, so the op sees fewer inputs.
  size_t count = inputs.size();
  while (count > 0 && !inputs[count - 1].valid()) --count;
  for (size_t i = 0; i < count; ++i) {
    if (!inputs[i].valid()) {
      throw Error(
          fmt::format("{} ({}): input {} is absent; only trailing optional inputs may be left out",
                      name, type, i));
    }
    if (inputs[i].id() >= values_.size() ||
        values_[inputs[i].id()].tensor.runs() != inputs[i].tensor().runs()) {
      throw Error(fmt::format("{} ({}): input {} is not a value of this tape", name, type, i));
    }
    node.inputs.push_back(inputs[i].id());
    tensors.push_back(inputs[i].tensor());
    // Constants an importer made (Graph::addConstant) may have no tiles yet.
    mapUnmapped(graph_, inputs[i].tensor());
  }
  ForwardContext ctx{graph_, forward_, node, tensors};
  std::vector<Tensor> outs = def->forward(ctx);
  const size_t index = ops_.size();
  std::vector<Value> result;
  for (size_t i = 0; i < outs.size(); ++i) {
    result.push_back(make(outs[i], false, index, i));
    node.outputs.push_back(result.back().id());
  }
  ops_.push_back(std::move(node));
  return result;
}

Value Tape::apply1(const std::string& type, const std::vector<Value>& inputs,
                   const Attributes& attributes, const std::string& name) {
  std::vector<Value> out = apply(type, inputs, attributes, name);
  if (out.size() != 1)
    throw Error(fmt::format("{} ({}): {} outputs, one expected", name, type, out.size()));
  return out[0];
}

std::vector<Tensor> Tape::gradients(const Value& loss, const std::vector<Value>& wrt,
                                    Sequence& prog, float lossScale, const std::string& name) {
  if (!loss.valid() || loss.id() >= values_.size())
    throw Error(fmt::format("{}: the loss is not a value of this tape", name));
  std::vector<const GradientSink*> none(wrt.size(), nullptr);
  std::vector<std::optional<Tensor>> g =
      run(loss, Gradient::uniform(lossScale, loss.tensor().shape()), wrt, none, prog, name);
  std::vector<Tensor> out;
  for (auto& t : g) out.push_back(*t);
  return out;
}

std::vector<Tensor> Tape::gradients(const Value& output, const Tensor& seed,
                                    const std::vector<Value>& wrt, Sequence& prog,
                                    const std::string& name) {
  if (!output.valid() || output.id() >= values_.size()) {
    throw Error(fmt::format("{}: the output is not a value of this tape", name));
  }
  if (seed.shape() != output.tensor().shape() || seed.elementType() != ElemType::Float32) {
    throw Error(fmt::format("{}: seed \"{}\" {} does not match the output \"{}\" {}", name,
                            seed.debugName(), seed.shapeString(), output.tensor().debugName(),
                            output.tensor().shapeString()));
  }
  std::vector<const GradientSink*> none(wrt.size(), nullptr);
  std::vector<std::optional<Tensor>> g = run(output, Gradient::of(seed), wrt, none, prog, name);
  std::vector<Tensor> out;
  for (auto& t : g) out.push_back(*t);
  return out;
}

void Tape::backwardInto(const Value& loss, const std::vector<Value>& wrt,
                        const std::vector<GradientSink>& sinks, Sequence& prog, float lossScale,
                        const std::string& name) {
  if (sinks.size() != wrt.size())
    throw Error(fmt::format("{}: {} sinks for {} parameters", name, sinks.size(), wrt.size()));
  if (!loss.valid() || loss.id() >= values_.size())
    throw Error(fmt::format("{}: the loss is not a value of this tape", name));
  std::vector<const GradientSink*> ptrs;
  for (const GradientSink& s : sinks) ptrs.push_back(&s);
  run(loss, Gradient::uniform(lossScale, loss.tensor().shape()), wrt, ptrs, prog, name);
}

std::vector<std::optional<Tensor>> Tape::run(const Value& output, const Gradient& seed,
                                             const std::vector<Value>& wrt,
                                             const std::vector<const GradientSink*>& sinks,
                                             Sequence& prog, const std::string& name) {
  const size_t nv = values_.size();
  // reach: depends on a wanted parameter; anc: the output depends on it. Gradients flow through
  // the values that are both.
  std::vector<bool> reach(nv, false), anc(nv, false);
  std::vector<size_t> wantIndex(nv, ~size_t{0});
  for (size_t i = 0; i < wrt.size(); ++i) {
    const Value& w = wrt[i];
    if (!w.valid() || w.id() >= nv)
      throw Error(fmt::format("{}: parameter {} is not a value of this tape", name, i));
    if (!values_[w.id()].parameter) {
      throw Error(fmt::format("{}: \"{}\" {} is not a parameter (Tape::parameter)", name,
                              w.tensor().debugName(), w.tensor().shapeString()));
    }
    if (wantIndex[w.id()] != ~size_t{0}) {
      throw Error(
          fmt::format("{}: parameter \"{}\" is asked for twice", name, w.tensor().debugName()));
    }
    wantIndex[w.id()] = i;
    reach[w.id()] = true;
  }
  for (const OpNode& op : ops_) {
    const bool any =
        std::any_of(op.inputs.begin(), op.inputs.end(), [&](size_t v) { return reach[v]; });
    for (size_t v : op.outputs) reach[v] = reach[v] || any;
  }
  anc[output.id()] = true;
  for (size_t o = ops_.size(); o-- > 0;) {
    const OpNode& op = ops_[o];
    if (std::any_of(op.outputs.begin(), op.outputs.end(), [&](size_t v) { return anc[v]; })) {
      for (size_t v : op.inputs) anc[v] = true;
    }
  }
  for (const Value& w : wrt) {
    if (!anc[w.id()]) {
      throw Error(fmt::format("{}: parameter \"{}\" {} does not reach the loss \"{}\" {}", name,
                              w.tensor().debugName(), w.tensor().shapeString(),
                              output.tensor().debugName(), output.tensor().shapeString()));
    }
  }
  auto needs = [&](size_t v) { return reach[v] && anc[v]; };
  // Uses of each value by the ops the backward visits: a parameter's gradient is complete (and its
  // sink may run) when all of them are done.
  std::vector<size_t> pending(nv, 0);
  for (const OpNode& op : ops_) {
    if (!std::any_of(op.outputs.begin(), op.outputs.end(), [&](size_t v) { return needs(v); }))
      continue;
    for (size_t v : op.inputs) {
      if (needs(v)) ++pending[v];
    }
  }
  std::vector<std::optional<Gradient>> grads(nv);
  grads[output.id()] = seed;
  std::vector<std::optional<Tensor>> result(wrt.size());

  auto accumulate = [&](size_t v, Gradient g, const std::string& step) {
    std::optional<Gradient>& have = grads[v];
    if (!have) {
      have = std::move(g);
    } else if (have->isConstant() && g.isConstant()) {
      have->constant = have->constant + g.constant;
    } else {
      const Tensor like = values_[v].tensor;
      const Tensor a = materialize(graph_, prog, *have, like, step + "/a");
      const Tensor b = materialize(graph_, prog, g, like, step + "/b");
      have = Gradient::of(ops::add(graph_, a, b, prog, step));
    }
  };
  // A parameter's gradient is complete: into its sink, or out as a whole tensor.
  auto complete = [&](size_t v) {
    const size_t i = wantIndex[v];
    if (i == ~size_t{0}) return;
    const Tensor& param = values_[v].tensor;
    const std::string step = fmt::format("{}/{}", name, param.debugName());
    if (sinks[i]) {
      if (grads[v]) {
        const Tensor g = materialize(graph_, prog, *grads[v], param, step + "/grad");
        ops::sgdUpdate(graph_, sinks[i]->target, g, sinks[i]->scalar, 0.0f, prog, step + "/update");
      }
    } else {
      result[i] =
          wholeTensor(graph_, prog, materialize(graph_, prog, *grads[v], param, step + "/grad"),
                      param, step + "/grad");
    }
  };
  std::vector<bool> consumedBy(nv, false);

  for (size_t o = ops_.size(); o-- > 0;) {
    const OpNode& op = ops_[o];
    if (!std::any_of(op.outputs.begin(), op.outputs.end(), [&](size_t v) { return needs(v); }))
      continue;
    std::vector<Tensor> ins, outs;
    for (size_t v : op.inputs) ins.push_back(values_[v].tensor);
    for (size_t v : op.outputs) outs.push_back(values_[v].tensor);
    const OpDefinition* def = registry_.find(op.type);
    if (!def->backward) {
      size_t first = 0;
      while (!needs(op.inputs[first])) ++first;
      throw Error(
          fmt::format("{} ({}): the op has no gradient, but the loss \"{}\" needs one through its "
                      "input \"{}\" {}",
                      op.name, op.type, output.tensor().debugName(), ins[first].debugName(),
                      ins[first].shapeString()));
    }
    BackwardContext ctx(graph_, prog, op, ins, outs);
    for (size_t k = 0; k < op.outputs.size(); ++k) {
      const size_t v = op.outputs[k];
      ctx.gradOutputs_.push_back(grads[v] ? *grads[v] : Gradient::uniform(0.0f, outs[k].shape()));
    }
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const size_t v = op.inputs[k];
      ctx.needs_.push_back(needs(v));
      ctx.leaf_.push_back(values_[v].producer == ValueInfo{}.producer);
      // A sink is offered when this is the parameter's only use: its value is read by no later
      // step.
      const size_t i = wantIndex[v];
      const bool onlyUse =
          pending[v] == 1 && std::count(op.inputs.begin(), op.inputs.end(), v) == 1;
      ctx.sinks_.push_back(i != ~size_t{0} && sinks[i] && onlyUse ? sinks[i] : nullptr);
    }
    ctx.gradInputs_.resize(op.inputs.size());
    ctx.sinkDone_.assign(op.inputs.size(), false);
    def->backward(ctx);
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const size_t v = op.inputs[k];
      if (!needs(v)) continue;
      if (ctx.sinkDone_[k]) {
        if (!ctx.sinks_[k])
          throw Error(fmt::format("{} ({}): used a sink it was not given", op.name, op.type));
        consumedBy[v] = true;
      } else if (ctx.gradInputs_[k]) {
        accumulate(v, std::move(*ctx.gradInputs_[k]), fmt::format("{}/acc{}", op.name, k));
      } else {
        throw Error(fmt::format("{} ({}): the backward set no gradient for input {} (\"{}\" {})",
                                op.name, op.type, k, ins[k].debugName(), ins[k].shapeString()));
      }
      if (--pending[v] == 0 && !consumedBy[v]) complete(v);
    }
  }
  // A parameter that is itself the output has no use to wait for.
  for (size_t i = 0; i < wrt.size(); ++i) {
    const size_t v = wrt[i].id();
    if (pending[v] == 0 && !consumedBy[v] && !result[i] && v == output.id()) complete(v);
  }
  return result;
}

}  // namespace tessera::autodiff
