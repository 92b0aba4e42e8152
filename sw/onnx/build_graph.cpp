// Building an ONNX model's nodes on an autodiff tape (tessera/onnx.hpp, buildGraph; docs/onnx.md,
// "How a model is built"). Every value is either a constant known on the host (HostTensor:
// initializers that are not variables, Constant nodes and everything folded from them) or a
// Value on the tape. A node whose inputs are all host constants and that can be folded is folded;
// any other node goes to the registry op of its type, with its constant-only inputs (Reshape's
// shape, axes, pads...) turned into attributes and its other constant inputs into graph constants.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>

#include "host_tensor.hpp"
#include "model_impl.hpp"
#include "onnx_ops.hpp"
#include "tessera/error.hpp"
#include "tessera/ops.hpp"

namespace tessera::onnx {

namespace ad = autodiff;

namespace {

int64_t intAttrOf(const ::onnx::NodeProto& n, const std::string& key, int64_t fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == key) return a.i();
  }
  return fallback;
}

// What an ONNX value name stands for while the graph is built.
struct Slot {
  std::optional<HostTensor> host;
  ad::Value value;
  bool valid() const { return host.has_value() || value.valid(); }
};

class Builder {
 public:
  Builder(ad::Tape& tape, const OnnxModel& model, const BuildOptions& options)
      : tape_(tape), m_(model.impl()), opt_(options) {}

  std::vector<ad::Value> build(const std::vector<ad::Value>& variables,
                               const std::vector<ad::Value>& inputs) {
    const ::onnx::GraphProto& g = m_.proto.graph();
    if (variables.size() != m_.variables.size())
      throw Error(fmt::format("{}: {} variables given, the model has {}", m_.path, variables.size(),
                              m_.variables.size()));
    if (inputs.size() != m_.inputs.size())
      throw Error(fmt::format("{}: {} inputs given, the model has {}", m_.path, inputs.size(),
                              m_.inputs.size()));
    for (size_t i = 0; i < variables.size(); ++i) slots_[m_.variables[i].name].value = variables[i];
    for (const auto& t : g.initializer()) {
      if (!slots_.count(t.name())) slots_[t.name()].host = fromProto(t);
    }
    for (size_t i = 0; i < inputs.size(); ++i) slots_[m_.inputs[i].name].value = inputs[i];
    for (int i = 0; i < g.node_size(); ++i) {
      const size_t idx = static_cast<size_t>(i);
      try {
        node(g.node(i), idx);
      } catch (const Error& e) {
        const std::string where = nodeWhere(m_, g.node(i), idx);
        const std::string what = e.what();
        // A nested node error (from a registry op naming its debug name) keeps its text.
        throw Error(what.rfind(m_.path, 0) == 0 ? what : fmt::format("{}: {}", where, what));
      }
    }
    std::vector<ad::Value> outs;
    for (const ValueShape& o : m_.outputs) outs.push_back(device(o.name, o.name));
    return outs;
  }

 private:
  const Slot& slot(const std::string& name) const {
    const auto it = slots_.find(name);
    if (it == slots_.end() || !it->second.valid())
      throw Error(
          fmt::format("value \"{}\" is not computed (an optional output tessera does not "
                      "produce?)",
                      name));
    return it->second;
  }

  std::vector<int64_t> shapeOf(const Slot& s) const {
    if (s.host) return s.host->shape;
    std::vector<int64_t> r;
    for (size_t d : s.value.tensor().shape()) r.push_back(static_cast<int64_t>(d));
    return r;
  }

  // The value as a tape Value: host constants become graph constants (int64 -> int32).
  ad::Value device(const std::string& name, const std::string& debug) {
    const Slot& s = slot(name);
    if (s.value.valid()) return s.value;
    auto cached = constants_.find(name);
    if (cached != constants_.end()) return cached->second;
    const HostTensor& h = *s.host;
    std::vector<size_t> shape;
    for (int64_t d : h.shape) shape.push_back(static_cast<size_t>(d));
    Tensor t;
    const std::string cname = opt_.prefix + "const/" + debug;
    if (h.isFloat) {
      std::vector<float> v(h.f.begin(), h.f.end());
      t = tape_.graph().addConstant(shape, v, cname);
    } else {
      std::vector<int32_t> v;
      for (int64_t x : h.i) {
        if (x < INT32_MIN || x > INT32_MAX)
          throw Error(fmt::format("constant \"{}\" holds {}, out of int32's range", name, x));
        v.push_back(static_cast<int32_t>(x));
      }
      t = tape_.graph().addConstant(shape, v, cname);
    }
    ad::Value v = tape_.input(t);
    constants_[name] = v;
    return v;
  }

  const HostTensor& hostInput(const ::onnx::NodeProto& n, int i) const {
    const Slot& s = slot(n.input(i));
    if (!s.host) {
      throw Error(
          fmt::format("input {} (\"{}\") must be a constant: tessera needs it when the "
                      "graph is built, but it is computed on the device",
                      i, n.input(i)));
    }
    return *s.host;
  }

  static ad::Attribute attribute(const ::onnx::AttributeProto& a) {
    switch (a.type()) {
      case ::onnx::AttributeProto::INT:
        return a.i();
      case ::onnx::AttributeProto::FLOAT:
        return static_cast<double>(a.f());
      case ::onnx::AttributeProto::INTS:
        return std::vector<int64_t>(a.ints().begin(), a.ints().end());
      case ::onnx::AttributeProto::STRING:
        return a.s();
      default:
        throw Error(fmt::format("attribute \"{}\" has type {}, which tessera's ops do not take",
                                a.name(), ::onnx::AttributeProto::AttributeType_Name(a.type())));
    }
  }

  void setOutputs(const ::onnx::NodeProto& n, const std::vector<ad::Value>& outs) {
    for (int i = 0; i < n.output_size(); ++i) {
      if (n.output(i).empty()) continue;
      if (static_cast<size_t>(i) < outs.size())
        slots_[n.output(i)].value = outs[static_cast<size_t>(i)];
    }
  }

  // A host constant of an attribute's value (ints: a 1-D int64 tensor; float: a scalar).
  static HostTensor attributeTensor(const ::onnx::AttributeProto& a) {
    HostTensor t;
    if (a.type() == ::onnx::AttributeProto::INTS) {
      t.i.assign(a.ints().begin(), a.ints().end());
      t.shape = {static_cast<int64_t>(t.i.size())};
    } else if (a.type() == ::onnx::AttributeProto::FLOAT) {
      t.isFloat = true;
      t.f = {static_cast<double>(a.f())};
    } else {
      throw Error(fmt::format("attribute \"{}\" has type {} (ints or float expected)", a.name(),
                              ::onnx::AttributeProto::AttributeType_Name(a.type())));
    }
    return t;
  }

  // The node in its opset-13 form. Before opset 13 Squeeze, Unsqueeze, ReduceSum (axes) and
  // Split (split) take as attributes what opset 13 takes as inputs; so do Pad (pads, value) and
  // Clip (min, max) before 11, Dropout (ratio) before 12 and Slice (starts, ends, axes) before 10.
  // Each such attribute becomes the input at its opset-13 position, a host constant under a name
  // no value of the file has; everything else about these operators is the same in the opsets
  // read (docs/onnx.md, "Opsets"). Softmax and LogSoftmax, whose meaning changed, are
  // legacySoftmax's.
  ::onnx::NodeProto currentForm(const ::onnx::NodeProto& n, const std::string& own) {
    const std::string& op = n.op_type();
    std::vector<std::pair<std::string, int>> moved;  // attribute -> input position
    if (m_.opset < 13 && (op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum"))
      moved = {{"axes", 1}};
    else if (m_.opset < 13 && op == "Split")
      moved = {{"split", 1}};
    else if (m_.opset < 11 && op == "Pad")
      moved = {{"pads", 1}, {"value", 2}};
    else if (m_.opset < 11 && op == "Clip")
      moved = {{"min", 1}, {"max", 2}};
    else if (m_.opset < 12 && op == "Dropout")
      moved = {{"ratio", 1}};
    else if (m_.opset < 10 && op == "Slice")
      moved = {{"starts", 1}, {"ends", 2}, {"axes", 3}};
    if (moved.empty()) return n;
    ::onnx::NodeProto out = n;
    out.clear_attribute();
    std::vector<std::string> inputs(n.input().begin(), n.input().end());
    for (const auto& a : n.attribute()) {
      const auto it = std::find_if(moved.begin(), moved.end(),
                                   [&](const auto& m) { return m.first == a.name(); });
      if (it == moved.end()) {
        *out.add_attribute() = a;
        continue;
      }
      std::string name = fmt::format("{}:{}@opset{}", own, a.name(), m_.opset);
      while (slots_.count(name)) name += "'";
      slots_[name].host = attributeTensor(a);
      const size_t at = static_cast<size_t>(it->second);
      if (inputs.size() <= at) inputs.resize(at + 1);
      if (!inputs[at].empty())
        throw Error(fmt::format("both attribute \"{}\" and input {} are given", a.name(), at));
      inputs[at] = name;
    }
    out.clear_input();
    for (const std::string& s : inputs) out.add_input(s);
    return out;
  }

  // Softmax and LogSoftmax before opset 13: the input coerced to 2-D at axis (default 1), [d0 x
  // ... x d(axis-1), d(axis) x ... x d(r-1)], normalised over the second dimension, then given
  // its shape back. With axis the last this is opset 13's op; otherwise two views around it.
  void legacySoftmax(const ::onnx::NodeProto& n, const std::string& name) {
    const ad::Value x = device(n.input(0), name);
    const std::vector<size_t> shape = x.tensor().shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    int64_t axis = intAttrOf(n, "axis", 1);
    if (axis < -rank || axis >= rank)
      throw Error(fmt::format("axis {} out of range for rank {}", axis, rank));
    if (axis < 0) axis += rank;
    if (axis == rank - 1) {
      slots_[n.output(0)].value = tape_.apply1(n.op_type(), {x}, {{"axis", int64_t{-1}}}, name);
      return;
    }
    int64_t rows = 1, cols = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < axis ? rows : cols) *= static_cast<int64_t>(shape[static_cast<size_t>(d)]);
    const ad::Value x2 =
        tape_.apply1("Reshape", {x}, {{"shape", std::vector<int64_t>{rows, cols}}}, name + "/2d");
    const ad::Value y2 = tape_.apply1(n.op_type(), {x2}, {{"axis", int64_t{1}}}, name);
    std::vector<int64_t> back;
    for (size_t d : shape) back.push_back(static_cast<int64_t>(d));
    slots_[n.output(0)].value = tape_.apply1("Reshape", {y2}, {{"shape", back}}, name + "/nd");
  }

  void node(const ::onnx::NodeProto& file, size_t index) {
    const std::string own = nodeName(file, index);
    const ::onnx::NodeProto n = currentForm(file, own);
    const std::string& op = n.op_type();
    const std::string name =
        opt_.prefix.empty() || own.front() == '/' ? opt_.prefix + own : opt_.prefix + "/" + own;
    bool allHost = true;
    for (const auto& in : n.input()) {
      if (!in.empty() && !slot(in).host) allHost = false;
    }
    if (op == "Constant" || (allHost && isFoldable(op))) {
      std::vector<HostTensor> in;
      for (const auto& i : n.input()) {
        if (i.empty()) {
          in.push_back(HostTensor{});  // an absent optional input: empty
        } else {
          in.push_back(*slot(i).host);
        }
      }
      const std::vector<HostTensor> out = fold(n, in);
      for (size_t i = 0; i < out.size() && i < static_cast<size_t>(n.output_size()); ++i)
        slots_[n.output(static_cast<int>(i))].host = out[i];
      return;
    }
    if (op == "Shape") {
      // The shape of a device value is known when the graph is built.
      const std::vector<int64_t> shape = shapeOf(slot(n.input(0)));
      HostTensor t;
      t.shape = shape;
      const std::vector<HostTensor> out = fold(n, {t});
      slots_[n.output(0)].host = out[0];
      return;
    }
    if (isHostOnly(op)) {
      for (int i = 0; i < n.input_size(); ++i) {
        if (!n.input(i).empty()) hostInput(n, i);  // names the device input
      }
    }
    if (op == "Identity") {
      slots_[n.output(0)] = slot(n.input(0));
      return;
    }
    if (op == "Dropout") {
      // Inference (training_mode absent or 0) or a ratio of 0: the identity. In training mode it
      // drops under the training run's device seed (docs/autodiff.md), which the file does not
      // carry: one stream per Dropout node in file order.
      const double ratio = n.input_size() > 1 && !n.input(1).empty() ? hostInput(n, 1).at(0) : 0.5;
      // Before opset 12 the file does not say: ONNX leaves test or training mode to the
      // runtime, so it drops in the training step of a training run and is the identity in
      // inference and evaluation (PyTorch writes such a node only in a training-mode export).
      const bool training =
          m_.opset < 12 ? opt_.trainingRun
                        : n.input_size() > 2 && !n.input(2).empty() && hostInput(n, 2).at(0) != 0;
      // The mask output (which PyTorch's training-mode export names but nothing reads) is not
      // computed: a node that reads it is refused as reading a value tessera does not produce.
      if (training && ratio != 0 && !opt_.trainingRun) {
        throw Error(
            "Dropout in training mode (training_mode 1) drops at random in inference; export the "
            "model in evaluation mode to infer, or train it (tessera-onnx train gives it a seed)");
      }
      if (training && ratio != 0 && opt_.training) {
        if (!opt_.dropoutSeed)
          throw Error("Dropout in training mode needs a device seed (BuildOptions::dropoutSeed)");
        if (!seed_.valid()) seed_ = opt_.dropoutSeed();
        if (!(ratio > 0 && ratio < 1))
          throw Error(fmt::format("Dropout ratio {} is not in [0, 1)", ratio));
        slots_[n.output(0)].value = ad::dropout(tape_, device(n.input(0), n.input(0)), seed_,
                                                static_cast<float>(ratio), dropoutStreams_++, name);
        return;
      }
      slots_[n.output(0)] = slot(n.input(0));
      return;
    }
    if ((op == "Softmax" || op == "LogSoftmax") && m_.opset < 13) {
      legacySoftmax(n, name);
      return;
    }
    if (op == "Slice") {
      slice(n, name);
      return;
    }
    if (op == "Split") {
      split(n, name);
      return;
    }
    if (op == "Pad" && n.input_size() > 1 && !n.input(1).empty()) {
      // PyTorch exports avg_pool2d with a Pad of zeros in front: nothing to do.
      const std::vector<int64_t> pads = hostInput(n, 1).ints("pads");
      if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) {
        slots_[n.output(0)] = slot(n.input(0));
        return;
      }
    }
    if (!registryHas(op)) {
      throw Error(
          fmt::format("operator {} is not supported on values computed on the device "
                      "(tessera folds it only when all its inputs are constants)",
                      op));
    }
    std::vector<ad::Value> inputs;
    ad::Attributes attrs;
    for (const auto& a : n.attribute()) attrs[a.name()] = attribute(a);
    for (int i = 0; i < n.input_size(); ++i) {
      const std::string key = constantInputAttribute(op, i);
      if (!key.empty()) {
        if (n.input(i).empty()) continue;
        const HostTensor& h = hostInput(n, i);
        if (key == "constant_value" || key == "ratio" || key == "min" || key == "max")
          attrs[key] = h.size() ? h.at(0) : 0.0;
        else if (key == "training_mode")
          attrs[key] = static_cast<int64_t>(h.size() && h.at(0) != 0);
        else
          attrs[key] = h.ints(key);
        continue;
      }
      if (n.input(i).empty()) {
        inputs.push_back(ad::Value());
        continue;
      }
      inputs.push_back(device(n.input(i), fmt::format("{}/{}", nodeName(n, index), i)));
    }
    // Trailing absent optional inputs are dropped, as ONNX allows.
    while (!inputs.empty() && !inputs.back().valid()) inputs.pop_back();
    if (op == "BatchNormalization" && opt_.training) attrs["training_mode"] = int64_t{1};
    // Before opset 14 BatchNormalization has no training_mode: its extra outputs (the running
    // statistics PyTorch's training-mode export writes) are what say it uses batch statistics.
    if (op == "BatchNormalization" && m_.opset < 14) {
      for (int i = 1; i < n.output_size(); ++i) {
        if (!n.output(i).empty()) attrs["training_mode"] = int64_t{1};
      }
    }
    const bool spatial1d = (op == "Conv" || op == "MaxPool" || op == "AveragePool") &&
                           !inputs.empty() && inputs[0].tensor().rank() == 3;
    const std::vector<ad::Value> outs =
        spatial1d ? oneDimensional(op, inputs, attrs, name) : tape_.apply(op, inputs, attrs, name);
    setOutputs(n, outs);
  }

  // Conv, MaxPool and AveragePool over [N, C, L] (PyTorch's Conv1d, MaxPool1d, AvgPool1d) as the
  // 2-D op over [N, C, 1, L] with a kernel of height 1: the same products and sums in the same
  // order, no padding or stride along the added axis. Views on either side (Reshape).
  std::vector<ad::Value> oneDimensional(const std::string& op, std::vector<ad::Value> inputs,
                                        ad::Attributes attrs, const std::string& name) {
    auto to2d = [&](const ad::Value& v, const std::string& what) {
      std::vector<int64_t> shape;
      for (size_t d : v.tensor().shape()) shape.push_back(static_cast<int64_t>(d));
      shape.insert(shape.begin() + 2, 1);
      return tape_.apply1("Reshape", {v}, {{"shape", shape}}, fmt::format("{}/{}2d", name, what));
    };
    for (const char* key : {"kernel_shape", "strides", "dilations", "pads"}) {
      const auto it = attrs.find(key);
      if (it == attrs.end()) continue;
      const auto* v = std::get_if<std::vector<int64_t>>(&it->second);
      const size_t want = std::string_view(key) == "pads" ? 2 : 1;
      if (!v || v->size() != want)
        throw Error(fmt::format("{} of a 1-D {} must have {} entries", key, op, want));
      if (std::string_view(key) == "pads")
        it->second = std::vector<int64_t>{0, (*v)[0], 0, (*v)[1]};
      else
        it->second = std::vector<int64_t>{1, (*v)[0]};
    }
    inputs[0] = to2d(inputs[0], "x");
    if (op == "Conv") {
      if (inputs.size() < 2 || inputs[1].tensor().rank() != 3)
        throw Error("a 1-D Conv needs weights [OC, C / group, K]");
      inputs[1] = to2d(inputs[1], "w");
    }
    const ad::Value y = tape_.apply1(op, inputs, attrs, name);
    std::vector<int64_t> shape;
    for (size_t d : y.tensor().shape()) shape.push_back(static_cast<int64_t>(d));
    shape.erase(shape.begin() + 2);
    return {tape_.apply1("Reshape", {y}, {{"shape", shape}}, name + "/1d")};
  }

  // ONNX Slice on a device value: constant starts/ends/axes, steps of 1, one registry Slice (a
  // view) per sliced axis.
  void slice(const ::onnx::NodeProto& n, const std::string& name) {
    ad::Value x = device(n.input(0), name);
    const std::vector<size_t> shape = x.tensor().shape();
    const std::vector<int64_t> starts = hostInput(n, 1).ints("starts"),
                               ends = hostInput(n, 2).ints("ends");
    std::vector<int64_t> axes, steps;
    if (n.input_size() > 3 && !n.input(3).empty())
      axes = hostInput(n, 3).ints("axes");
    else
      for (size_t a = 0; a < starts.size(); ++a) axes.push_back(static_cast<int64_t>(a));
    if (n.input_size() > 4 && !n.input(4).empty()) steps = hostInput(n, 4).ints("steps");
    if (ends.size() != starts.size() || axes.size() != starts.size())
      throw Error("starts, ends and axes differ in length");
    for (int64_t s : steps) {
      if (s != 1) throw Error(fmt::format("Slice step {} on a device value (only 1)", s));
    }
    const int64_t rank = static_cast<int64_t>(shape.size());
    for (size_t k = 0; k < starts.size(); ++k) {
      int64_t a = axes[k];
      if (a < -rank || a >= rank) throw Error(fmt::format("Slice axis {} out of range", a));
      if (a < 0) a += rank;
      const int64_t dim = static_cast<int64_t>(shape[static_cast<size_t>(a)]);
      int64_t b = starts[k], e = ends[k];
      if (b < 0) b += dim;
      if (e < 0) e += dim;
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      if (e <= b) throw Error("Slice to an empty tensor");
      x = tape_.apply1("Slice", {x}, {{"begin", b}, {"end", e}, {"axis", a}},
                       fmt::format("{}/axis{}", name, a));
    }
    slots_[n.output(0)].value = x;
  }

  // Split on a device value: constant sizes (the "split" input, or equal parts), one registry
  // Slice view per output.
  void split(const ::onnx::NodeProto& n, const std::string& name) {
    const ad::Value x = device(n.input(0), name);
    const std::vector<size_t> shape = x.tensor().shape();
    int64_t axis = 0;
    for (const auto& a : n.attribute()) {
      if (a.name() == "axis") axis = a.i();
    }
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (axis < -rank || axis >= rank) throw Error(fmt::format("Split axis {} out of range", axis));
    if (axis < 0) axis += rank;
    const int64_t dim = static_cast<int64_t>(shape[static_cast<size_t>(axis)]);
    std::vector<int64_t> sizes;
    if (n.input_size() > 1 && !n.input(1).empty()) {
      sizes = hostInput(n, 1).ints("split");
    } else {
      const int64_t parts = n.output_size();
      if (parts == 0 || dim % parts != 0)
        throw Error(fmt::format("Split of {} into {} equal parts", dim, parts));
      sizes.assign(static_cast<size_t>(parts), dim / parts);
    }
    if (sizes.size() != static_cast<size_t>(n.output_size()))
      throw Error(fmt::format("{} split sizes for {} outputs", sizes.size(), n.output_size()));
    int64_t begin = 0;
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (sizes[k] <= 0 || begin + sizes[k] > dim)
        throw Error(
            fmt::format("split sizes [{}] do not fit dimension {}", fmt::join(sizes, ","), dim));
      slots_[n.output(static_cast<int>(k))].value =
          tape_.apply1("Slice", {x}, {{"begin", begin}, {"end", begin + sizes[k]}, {"axis", axis}},
                       fmt::format("{}/{}", name, k));
      begin += sizes[k];
    }
    if (begin != dim)
      throw Error(fmt::format("split sizes [{}] do not add up to {}", fmt::join(sizes, ","), dim));
  }

  ad::Tape& tape_;
  const OnnxModel::Impl& m_;
  BuildOptions opt_;
  uint32_t dropoutStreams_ = 0;  // the stream of the next training-mode Dropout
  ad::Value seed_;               // the training step's dropout seed, made at the first
  std::map<std::string, Slot> slots_;
  std::map<std::string, ad::Value> constants_;
};

// The first node that reads value name, and at which input.
std::pair<const ::onnx::NodeProto*, int> firstConsumer(const OnnxModel::Impl& m,
                                                       const std::string& name) {
  for (const auto& n : m.proto.graph().node()) {
    for (int i = 0; i < n.input_size(); ++i) {
      if (n.input(i) == name) return {&n, i};
    }
  }
  return {nullptr, 0};
}

}  // namespace

std::vector<ad::Value> buildGraph(ad::Tape& tape, const OnnxModel& model,
                                  const std::vector<ad::Value>& variables,
                                  const std::vector<ad::Value>& inputs,
                                  const BuildOptions& options) {
  BuildOptions o = options;
  if (o.batch == 0) o.batch = model.defaultBatch();
  return Builder(tape, model, o).build(variables, inputs);
}

Tensor createVariable(Graph& graph, const OnnxModel& model, size_t i, size_t batch) {
  const Variable& v = model.variables().at(i);
  const auto [consumer, at] = firstConsumer(model.impl(), v.name);
  // The right operand of a 2-D product without a transpose is laid out as the matmul reads it
  // (one block per tile, which also lets plain SGD add into it in place: docs/autodiff.md).
  if (consumer && at == 1 && v.shape.size() == 2 &&
      ((consumer->op_type() == "Gemm" && intAttrOf(*consumer, "transB", 0) == 0) ||
       consumer->op_type() == "MatMul")) {
    return ops::createMatMulRhs(graph, batch ? batch : 1, v.shape[0], v.shape[1], v.name);
  }
  return ops::createLinear(graph, ElemType::Float32, v.shape, v.name);
}

Tensor createInput(Graph& graph, const OnnxModel& model, size_t i, size_t batch) {
  const std::vector<size_t> shape = model.inputShape(i, batch);
  const std::string& name = model.inputs().at(i).name;
  if (model.inputs()[i].integer) return ops::createLinear(graph, ElemType::Int32, shape, name);
  if (shape.size() == 4) return ops::createConv2dInput(graph, shape, name);
  return ops::createLinear(graph, ElemType::Float32, shape, name);
}

}  // namespace tessera::onnx
