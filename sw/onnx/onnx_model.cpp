// Reading, checking and writing ONNX files (tessera/onnx.hpp; docs/onnx.md, "Limits" and
// "Checks"). Everything in the file is checked before a graph is built from it: hostile input
// gives a tessera::Error naming the file, never a crash.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstring>
#include <limits>

#include "file_io.hpp"
#include "model_impl.hpp"
#include "onnx_ops.hpp"
#include "tessera/error.hpp"

namespace tessera::onnx {

std::string nodeName(const ::onnx::NodeProto& node, size_t index) {
  return node.name().empty() ? fmt::format("{}_{}", node.op_type(), index) : node.name();
}

std::string nodeWhere(const OnnxModel::Impl& m, const ::onnx::NodeProto& node, size_t index) {
  return fmt::format("{}: node \"{}\" (#{}, {}, opset {})", m.path, nodeName(node, index), index,
                     node.op_type(), m.opset);
}

namespace {

// Nesting of the protobuf messages (a model holds graphs only inside attributes, which tessera
// refuses anyway): deep enough for every real model, shallow enough for the parser's stack.
constexpr int kRecursionLimit = 64;
// Most elements of one initializer or constant, and most nodes: a hostile header cannot make
// tessera allocate more than the file could hold.
constexpr uint64_t kMaxElements = kMaxModelBytes / 4;

size_t elemBytes(int32_t type) {
  switch (type) {
    case ::onnx::TensorProto::FLOAT:
    case ::onnx::TensorProto::INT32:
      return 4;
    case ::onnx::TensorProto::INT64:
      return 8;
    case ::onnx::TensorProto::BOOL:
    case ::onnx::TensorProto::UINT8:
    case ::onnx::TensorProto::INT8:
      return 1;
    default:
      return 0;
  }
}

// Element count of dims, refusing negative dimensions and overflow.
uint64_t checkedCount(const google::protobuf::RepeatedField<int64_t>& dims,
                      const std::string& what) {
  uint64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw Error(fmt::format("{}: negative dimension {}", what, d));
    if (d != 0 && n > kMaxElements / static_cast<uint64_t>(d))
      throw Error(fmt::format("{}: more than {} elements", what, kMaxElements));
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

void checkTensorData(const ::onnx::TensorProto& t, const std::string& what) {
  if (t.data_location() == ::onnx::TensorProto::EXTERNAL || t.external_data_size() > 0)
    throw Error(
        fmt::format("{}: external data is not supported (save with the weights inside)", what));
  const size_t eb = elemBytes(t.data_type());
  if (eb == 0) {
    throw Error(fmt::format("{}: element type {} is not supported (float32, int64, int32, bool)",
                            what,
                            ::onnx::TensorProto::DataType_Name(
                                static_cast<::onnx::TensorProto::DataType>(t.data_type()))));
  }
  const uint64_t n = checkedCount(t.dims(), what);
  uint64_t have = 0;
  if (t.has_raw_data()) {
    if (t.raw_data().size() != n * eb)
      throw Error(fmt::format("{}: {} bytes of raw data for {} elements of {} bytes", what,
                              t.raw_data().size(), n, eb));
    return;
  }
  switch (t.data_type()) {
    case ::onnx::TensorProto::FLOAT:
      have = static_cast<uint64_t>(t.float_data_size());
      break;
    case ::onnx::TensorProto::INT64:
      have = static_cast<uint64_t>(t.int64_data_size());
      break;
    default:
      have = static_cast<uint64_t>(t.int32_data_size());
  }
  if (have != n) throw Error(fmt::format("{}: {} values for {} elements", what, have, n));
}

ValueShape shapeOf(const ::onnx::ValueInfoProto& v, const std::string& path, bool input) {
  ValueShape s{v.name(), {}};
  const std::string what =
      fmt::format("{}: graph {} \"{}\"", path, input ? "input" : "output", v.name());
  if (!v.type().has_tensor_type()) throw Error(what + ": not a tensor");
  const auto& tt = v.type().tensor_type();
  s.integer =
      tt.elem_type() == ::onnx::TensorProto::INT64 || tt.elem_type() == ::onnx::TensorProto::INT32;
  if (input && tt.elem_type() != ::onnx::TensorProto::FLOAT && !s.integer) {
    throw Error(fmt::format(
        "{}: element type {}; tessera's inputs are float32, or int64/int32 indices", what,
        ::onnx::TensorProto::DataType_Name(
            static_cast<::onnx::TensorProto::DataType>(tt.elem_type()))));
  }
  if (!input) s.integer = false;
  if (!tt.has_shape()) {
    if (input) throw Error(what + ": no shape");
    return s;
  }
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value()) {
      if (d.dim_value() <= 0 || d.dim_value() > static_cast<int64_t>(kMaxElements))
        throw Error(fmt::format("{}: dimension {} out of range", what, d.dim_value()));
      s.dims.push_back(d.dim_value());
    } else {
      s.dims.push_back(-1);
    }
  }
  if (input) {
    for (size_t i = 1; i < s.dims.size(); ++i) {
      if (s.dims[i] < 0)
        throw Error(fmt::format("{}: dimension {} is dynamic; only the leading (batch) one may be",
                                what, i));
    }
    if (s.dims.empty()) throw Error(what + ": a scalar input has no batch dimension");
  }
  return s;
}

// Inputs of op at which a float initializer is data rather than a weight.
bool constantPosition(const std::string& op, int i) {
  if (i == 0) return false;
  return op == "Reshape" || op == "Pad" || op == "Squeeze" || op == "Unsqueeze" ||
         op == "ReduceSum" || op == "ReduceMean" || op == "Dropout" || op == "Slice" ||
         op == "Expand" || op == "ConstantOfShape" || op == "Range" || op == "Pow";
}

void classifyInitializers(OnnxModel::Impl& m) {
  const ::onnx::GraphProto& g = m.proto.graph();
  std::map<std::string, std::pair<bool, bool>> use;  // name -> (weight use, statistic use)
  for (const auto& n : g.node()) {
    for (int i = 0; i < n.input_size(); ++i) {
      auto& u = use[n.input(i)];
      if (n.op_type() == "BatchNormalization" && (i == 3 || i == 4))
        u.second = true;
      else if (!constantPosition(n.op_type(), i))
        u.first = true;
    }
  }
  for (const auto& t : g.initializer()) {
    if (t.data_type() != ::onnx::TensorProto::FLOAT || t.dims_size() == 0) continue;
    const auto it = use.find(t.name());
    if (it == use.end() || (!it->second.first && !it->second.second)) continue;
    Variable v;
    v.name = t.name();
    for (int64_t d : t.dims()) v.shape.push_back(static_cast<size_t>(d));
    v.trainable = it->second.first && !it->second.second;
    const uint64_t n = checkedCount(t.dims(), t.name());
    v.values.resize(n);
    if (t.has_raw_data())
      std::memcpy(v.values.data(), t.raw_data().data(), n * 4);
    else
      std::copy(t.float_data().begin(), t.float_data().end(), v.values.begin());
    m.variableIndex[v.name] = m.variables.size();
    m.variables.push_back(std::move(v));
  }
}

void checkGraph(OnnxModel::Impl& m) {
  const ::onnx::GraphProto& g = m.proto.graph();
  std::set<std::string> defined;
  for (const auto& t : g.initializer()) {
    const std::string what = fmt::format("{}: initializer \"{}\"", m.path, t.name());
    if (t.name().empty()) throw Error(fmt::format("{}: an initializer has no name", m.path));
    if (!m.initializers.insert(t.name()).second) throw Error(what + ": defined twice");
    checkTensorData(t, what);
    defined.insert(t.name());
  }
  for (const auto& v : g.input()) {
    if (m.initializers.count(v.name())) continue;  // an initializer listed as an input (IR < 4)
    m.inputs.push_back(shapeOf(v, m.path, true));
    defined.insert(v.name());
  }
  if (m.inputs.empty()) throw Error(fmt::format("{}: the graph has no inputs", m.path));
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    const size_t idx = static_cast<size_t>(i);
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      throw Error(fmt::format("{}: operator domain \"{}\" is not supported (ai.onnx only)",
                              nodeWhere(m, n, idx), n.domain()));
    }
    if (!isSupportedOp(n.op_type())) {
      throw Error(fmt::format("{}: operator {} is not supported (supported: {})",
                              nodeWhere(m, n, idx), n.op_type(), fmt::join(supportedOps(), ", ")));
    }
    for (const auto& in : n.input()) {
      if (!in.empty() && !defined.count(in))
        throw Error(fmt::format("{}: input \"{}\" is not defined before the node",
                                nodeWhere(m, n, idx), in));
    }
    for (const auto& a : n.attribute()) {
      if (a.type() == ::onnx::AttributeProto::GRAPH || a.type() == ::onnx::AttributeProto::GRAPHS)
        throw Error(fmt::format("{}: attribute \"{}\" holds a subgraph (not supported)",
                                nodeWhere(m, n, idx), a.name()));
      if (a.type() == ::onnx::AttributeProto::TENSOR)
        checkTensorData(a.t(), fmt::format("{}: attribute \"{}\"", nodeWhere(m, n, idx), a.name()));
    }
    for (const auto& out : n.output()) {
      if (out.empty()) continue;
      if (!defined.insert(out).second)
        throw Error(fmt::format("{}: output \"{}\" is defined twice", nodeWhere(m, n, idx), out));
    }
  }
  for (const auto& v : g.output()) {
    if (!defined.count(v.name()))
      throw Error(
          fmt::format("{}: graph output \"{}\" is not computed by any node", m.path, v.name()));
    m.outputs.push_back(shapeOf(v, m.path, false));
  }
  if (m.outputs.empty()) throw Error(fmt::format("{}: the graph has no outputs", m.path));
}

}  // namespace

OnnxModel OnnxModel::load(const std::string& path) {
  auto m = std::make_shared<Impl>();
  m->path = path;
  const std::vector<uint8_t> bytes = readRegularFile(path, kMaxModelBytes, "ONNX model");
  {
    google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
    google::protobuf::io::CodedInputStream in(&raw);
    in.SetTotalBytesLimit(static_cast<int>(bytes.size()));
    in.SetRecursionLimit(kRecursionLimit);
    if (!m->proto.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
      throw Error(
          fmt::format("{}: not an ONNX model (protobuf parsing failed: truncated or "
                      "corrupt)",
                      path));
  }
  if (!m->proto.has_graph() || m->proto.graph().node_size() == 0)
    throw Error(fmt::format("{}: not an ONNX model (no graph, or a graph without nodes)", path));
  bool found = false;
  for (const auto& o : m->proto.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") {
      m->opset = o.version();
      found = true;
    }
  }
  if (!found) throw Error(fmt::format("{}: the model imports no ai.onnx opset", path));
  if (m->opset > kMaxOpset || m->opset < kMinOpset) {
    throw Error(
        fmt::format("{}: ai.onnx opset {} is not supported (tessera reads opsets {} to {}; "
                    "export with opset_version={})",
                    path, m->opset, kMinOpset, kMaxOpset, kMaxOpset));
  }
  checkGraph(*m);
  classifyInitializers(*m);
  OnnxModel model;
  model.impl_ = std::move(m);
  return model;
}

const std::string& OnnxModel::path() const {
  return impl_->path;
}
int64_t OnnxModel::opset() const {
  return impl_->opset;
}
const std::vector<ValueShape>& OnnxModel::inputs() const {
  return impl_->inputs;
}
const std::vector<ValueShape>& OnnxModel::outputs() const {
  return impl_->outputs;
}
const std::vector<Variable>& OnnxModel::variables() const {
  return impl_->variables;
}
const OnnxModel::Impl& OnnxModel::impl() const {
  return *impl_;
}

size_t OnnxModel::defaultBatch() const {
  const ValueShape& in = impl_->inputs.front();
  if (in.dims.front() < 0) {
    throw Error(
        fmt::format("{}: input \"{}\" has a dynamic batch dimension: give the batch "
                    "(--batch)",
                    impl_->path, in.name));
  }
  return static_cast<size_t>(in.dims.front());
}

std::vector<size_t> OnnxModel::inputShape(size_t i, size_t batch) const {
  if (i >= impl_->inputs.size())
    throw Error(fmt::format("{}: the model has {} inputs, not {}", impl_->path,
                            impl_->inputs.size(), i + 1));
  std::vector<size_t> s;
  for (int64_t d : impl_->inputs[i].dims) s.push_back(static_cast<size_t>(d));
  s[0] = batch ? batch : defaultBatch();
  return s;
}

void OnnxModel::save(const std::string& path,
                     const std::map<std::string, std::vector<float>>& values) const {
  ::onnx::ModelProto out = impl_->proto;
  size_t replaced = 0;
  for (auto& t : *out.mutable_graph()->mutable_initializer()) {
    const auto it = values.find(t.name());
    if (it == values.end()) continue;
    const uint64_t n = checkedCount(t.dims(), t.name());
    if (t.data_type() != ::onnx::TensorProto::FLOAT || it->second.size() != n) {
      throw Error(fmt::format("{}: initializer \"{}\" holds {} float32 values, {} were given", path,
                              t.name(), n, it->second.size()));
    }
    t.clear_float_data();
    t.set_raw_data(std::string(reinterpret_cast<const char*>(it->second.data()), n * 4));
    ++replaced;
  }
  if (replaced != values.size())
    throw Error(fmt::format("{}: {} of the {} values given name no float initializer", path,
                            values.size() - replaced, values.size()));
  std::string bytes;
  if (!out.SerializeToString(&bytes))
    throw Error(fmt::format("{}: the model could not be serialised", path));
  writeFileChecked(path, std::string_view(bytes));
}

}  // namespace tessera::onnx
