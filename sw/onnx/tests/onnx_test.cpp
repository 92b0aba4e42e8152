// The importer's own tests (docs/onnx.md, "Tests"): .npy files, the host folding of the shape
// arithmetic exporters emit around Reshape (on the model and on the RTL), the variables a model
// gets, the write-back of trained values, and errors. Models are written here with libonnx's
// protobuf classes; the PyTorch comparisons are bench/onnx/compare.py.
#include "tessera/onnx.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "onnx/onnx_pb.h"
#include "tessera/error.hpp"
#include "tessera/npy.hpp"

namespace tx = tessera::onnx;

namespace {

std::string tempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (std::to_string(::getpid()) + "-onnx-test-" + name))
      .string();
}

::onnx::NodeProto* addNode(::onnx::GraphProto* g, const std::string& op,
                           std::vector<std::string> in, std::vector<std::string> out,
                           const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

void addInt(::onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}

void floatInit(::onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
               const std::vector<float>& v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
}

void intInit(::onnx::GraphProto* g, const std::string& name, std::vector<int64_t> v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
}

void io(::onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims,
        bool dynamicBatch) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(::onnx::TensorProto::FLOAT);
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (i == 0 && dynamicBatch)
      d->set_dim_param("batch");
    else
      d->set_dim_value(dims[i]);
  }
}

std::string save(const ::onnx::ModelProto& m, const std::string& name) {
  const std::string path = tempPath(name);
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
  return path;
}

// x [batch, 2, 3] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), Unsqueeze(Mul(Gather(
// Shape(x), 1), Gather(Shape(x), 2))))) = [batch, 6] -> MatMul w [6, 4] -> Relu: PyTorch's
// x.view(x.size(0), -1) written out, the folding tessera must do.
::onnx::ModelProto foldingModel(const std::vector<float>& w) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_version(13);
  auto* g = m.mutable_graph();
  io(g->add_input(), "x", {0, 2, 3}, true);
  io(g->add_output(), "y", {0, 4}, true);
  floatInit(g, "w", {6, 4}, w);
  intInit(g, "i0", {0});
  intInit(g, "ax0", {0});
  addNode(g, "Shape", {"x"}, {"s"}, "shape");
  auto* c1 = addNode(g, "Constant", {}, {"i1"}, "one");
  auto* a = c1->add_attribute();
  a->set_name("value_int");
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(1);
  auto* c2 = addNode(g, "Constant", {}, {"i2"}, "two");
  a = c2->add_attribute();
  a->set_name("value_int");
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(2);
  addInt(addNode(g, "Gather", {"s", "i0"}, {"n"}, "g0"), "axis", 0);
  addNode(g, "Gather", {"s", "i1"}, {"d1"}, "g1");
  addNode(g, "Gather", {"s", "i2"}, {"d2"}, "g2");
  addNode(g, "Mul", {"d1", "d2"}, {"d12"}, "mul");
  addNode(g, "Reshape", {"n", "ax0"}, {"n1"}, "n_as_1d");
  addNode(g, "Unsqueeze", {"d12", "ax0"}, {"d12u"}, "unsq");
  addInt(addNode(g, "Concat", {"n1", "d12u"}, {"shape2"}, "cat"), "axis", 0);
  addNode(g, "Reshape", {"x", "shape2"}, {"flat"}, "reshape");
  addNode(g, "MatMul", {"flat", "w"}, {"z"}, "mm");
  addNode(g, "Relu", {"z"}, {"y"}, "relu");
  return m;
}

}  // namespace

TEST(Npy, RoundTripsShapesAndBits) {
  for (const std::vector<size_t>& shape :
       std::vector<std::vector<size_t>>{{}, {5}, {2, 3, 4}, {0, 7}}) {
    tx::NpyArray a;
    a.shape = shape;
    a.data.resize(a.size());
    for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = static_cast<float>(i) * 0.37f - 1.0f;
    const std::string p = tempPath("rt.npy");
    tx::writeNpy(p, a);
    const tx::NpyArray b = tx::readNpy(p);
    EXPECT_EQ(b.shape, a.shape);
    ASSERT_EQ(b.data.size(), a.data.size());
    EXPECT_EQ(0, std::memcmp(b.data.data(), a.data.data(), a.data.size() * 4));
    std::filesystem::remove(p);
  }
}

TEST(Npy, RefusesOtherTypesAndShortData) {
  auto write = [](const std::string& header, size_t dataBytes) {
    std::string h = header;
    h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
    h.push_back('\n');
    std::string bytes = "\x93NUMPY";
    bytes += '\x01';
    bytes += '\x00';
    bytes += static_cast<char>(h.size() & 0xff);
    bytes += static_cast<char>(h.size() >> 8);
    bytes += h + std::string(dataBytes, '\0');
    const std::string p = tempPath("bad.npy");
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  };
  auto message = [](const std::string& p) {
    try {
      tx::readNpy(p);
    } catch (const tessera::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string m = message(write("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16));
  EXPECT_NE(m.find("bad.npy"), std::string::npos) << m;
  EXPECT_NE(m.find("float32"), std::string::npos) << m;
  m = message(write("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16));
  EXPECT_NE(m.find("Fortran"), std::string::npos) << m;
  m = message(write("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", 16));
  EXPECT_NE(m.find("24 bytes"), std::string::npos) << m;
  m = message(write("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2", 0));
  EXPECT_NE(m.find("malformed"), std::string::npos) << m;
}

class OnnxInfer : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxInfer, FoldsTheShapeArithmeticAroundReshape) {
  std::vector<float> w(24);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  const std::string path = save(foldingModel(w), "fold.onnx");
  // Integer-valued operands: every sum is exact, whatever order the tiles add in.
  tx::NpyArray x;
  x.shape = {5, 2, 3};
  for (size_t i = 0; i < 30; ++i) x.data.push_back(static_cast<float>(static_cast<int>(i % 5) - 2));
  tx::InferOptions o;
  o.device = GetParam();
  o.tiles = 4;
  o.batch = 2;  // three runs, the last one padded
  const tx::NpyArray y = tx::infer(path, x, o);
  ASSERT_EQ(y.shape, (std::vector<size_t>{5, 4}));
  for (size_t r = 0; r < 5; ++r) {
    for (size_t c = 0; c < 4; ++c) {
      float s = 0;
      for (size_t k = 0; k < 6; ++k) s += x.data[r * 6 + k] * w[k * 4 + c];
      EXPECT_EQ(y.data[r * 4 + c], s > 0 ? s : 0.0f) << r << "," << c;
    }
  }
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Devices, OnnxInfer, ::testing::Values("model", "rtl"));

TEST(OnnxModel, VariablesAndTheirRoles) {
  ::onnx::ModelProto m;
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  io(g->add_input(), "x", {4, 3, 2, 2}, false);
  io(g->add_output(), "y", {4, 3, 2, 2}, false);
  floatInit(g, "scale", {3}, {1, 2, 3});
  floatInit(g, "bias", {3}, {0, 0, 0});
  floatInit(g, "mean", {3}, {0, 0, 0});
  floatInit(g, "var", {3}, {1, 1, 1});
  floatInit(g, "two", {}, {2.0f});
  addNode(g, "BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"b"}, "bn");
  addNode(g, "Pow", {"b", "two"}, {"y"}, "pow");
  const std::string path = save(m, "roles.onnx");
  const tx::OnnxModel model = tx::OnnxModel::load(path);
  ASSERT_EQ(model.variables().size(), 4u);  // the scalar exponent stays a constant
  EXPECT_TRUE(model.variables()[0].trainable);
  EXPECT_TRUE(model.variables()[1].trainable);
  EXPECT_FALSE(model.variables()[2].trainable);  // running statistics: buffers
  EXPECT_FALSE(model.variables()[3].trainable);
  EXPECT_EQ(model.defaultBatch(), 4u);
  std::filesystem::remove(path);
}

TEST(OnnxModel, SavesTrainedValuesBitExact) {
  std::vector<float> w(24, 0.5f);
  const std::string path = save(foldingModel(w), "save.onnx");
  const tx::OnnxModel model = tx::OnnxModel::load(path);
  std::vector<float> trained(24);
  for (size_t i = 0; i < 24; ++i) trained[i] = 1.0f / static_cast<float>(i + 3);
  const std::string out = tempPath("saved.onnx");
  model.save(out, {{"w", trained}});
  const tx::OnnxModel again = tx::OnnxModel::load(out);
  ASSERT_EQ(again.variables().size(), 1u);
  EXPECT_EQ(0, std::memcmp(again.variables()[0].values.data(), trained.data(), 24 * 4));
  EXPECT_EQ(again.inputs().size(), model.inputs().size());
  EXPECT_EQ(again.outputs().size(), model.outputs().size());
  EXPECT_THROW(model.save(out, {{"w", std::vector<float>(3)}}), tessera::Error);
  EXPECT_THROW(model.save(out, {{"nothing", trained}}), tessera::Error);
  std::filesystem::remove(path);
  std::filesystem::remove(out);
}

TEST(OnnxModel, DynamicBatchNeedsOne) {
  const std::string path = save(foldingModel(std::vector<float>(24)), "dyn.onnx");
  const tx::OnnxModel model = tx::OnnxModel::load(path);
  try {
    model.defaultBatch();
    FAIL() << "no error";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"x\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--batch"), std::string::npos) << e.what();
  }
  EXPECT_EQ(model.inputShape(0, 7), (std::vector<size_t>{7, 2, 3}));
  std::filesystem::remove(path);
}

namespace {

void addInts(::onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void addFloat(::onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

::onnx::ModelProto modelAt(int64_t opset) {
  ::onnx::ModelProto m;
  m.set_ir_version(opset < 13 ? 6 : 8);
  m.add_opset_import()->set_version(opset);
  return m;
}

// Softmax or LogSoftmax over x with the semantics of the opset: before 13 x is coerced to 2-D at
// axis ([d0...d(axis-1), d(axis)...]) and normalised over each row of that; from 13 along axis
// alone. In double: the device's float32 result is within 1e-6 of it.
std::vector<double> softmaxReference(const std::vector<float>& x, const std::vector<size_t>& shape,
                                     int64_t axis, bool coerced, bool log) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (axis < 0) axis += rank;
  size_t outer = 1, len = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const size_t s = shape[static_cast<size_t>(d)];
    if (d < axis)
      outer *= s;
    else if (d == axis || coerced)
      len *= s;
    else
      inner *= s;
  }
  std::vector<double> y(x.size());
  for (size_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < inner; ++i) {
      auto at = [&](size_t k) { return (o * len + k) * inner + i; };
      double mx = -1e300, sum = 0;
      for (size_t k = 0; k < len; ++k) mx = std::max(mx, static_cast<double>(x[at(k)]));
      for (size_t k = 0; k < len; ++k) sum += std::exp(x[at(k)] - mx);
      for (size_t k = 0; k < len; ++k)
        y[at(k)] = log ? x[at(k)] - mx - std::log(sum) : std::exp(x[at(k)] - mx) / sum;
    }
  }
  return y;
}

}  // namespace

struct SoftmaxCase {
  std::string op;
  int64_t opset;
  std::vector<size_t> shape;  // with the batch
  int64_t axis;               // INT64_MIN: the attribute absent (the opset's default)
};

void PrintTo(const SoftmaxCase& c, std::ostream* os) {
  *os << c.op << " opset " << c.opset << " rank " << c.shape.size() << " axis "
      << (c.axis == INT64_MIN ? std::string("default") : std::to_string(c.axis));
}

class OnnxOpsets : public ::testing::TestWithParam<SoftmaxCase> {};

// Before opset 13 Softmax and LogSoftmax normalise over everything from axis on (the input coerced
// to 2-D); from 13 over axis alone. Each case's result is checked against its own opset's meaning
// and, where the two meanings differ, shown to differ from the other one.
TEST_P(OnnxOpsets, SoftmaxHasTheMeaningOfItsOpset) {
  const SoftmaxCase& c = GetParam();
  ::onnx::ModelProto m = modelAt(c.opset);
  auto* g = m.mutable_graph();
  std::vector<int64_t> dims(c.shape.begin(), c.shape.end());
  io(g->add_input(), "x", dims, true);
  io(g->add_output(), "y", dims, true);
  auto* n = addNode(g, c.op, {"x"}, {"y"}, "sm");
  if (c.axis != INT64_MIN) addInt(n, "axis", c.axis);
  const std::string path = save(m, "softmax.onnx");
  tx::NpyArray x;
  x.shape = c.shape;
  size_t count = 1;
  for (size_t d : c.shape) count *= d;
  for (size_t i = 0; i < count; ++i)
    x.data.push_back(static_cast<float>(static_cast<int>((i * 7) % 11) - 5) * 0.25f);
  tx::InferOptions o;
  o.device = "model";
  o.tiles = 4;
  o.batch = c.shape[0];
  const tx::NpyArray y = tx::infer(path, x, o);
  ASSERT_EQ(y.shape, c.shape);
  const int64_t axis = c.axis == INT64_MIN ? (c.opset < 13 ? 1 : -1) : c.axis;
  const bool log = c.op == "LogSoftmax";
  const std::vector<double> want = softmaxReference(x.data, c.shape, axis, c.opset < 13, log);
  const std::vector<double> other = softmaxReference(x.data, c.shape, axis, c.opset >= 13, log);
  double err = 0, apart = 0;
  for (size_t i = 0; i < count; ++i) {
    err = std::max(err, std::abs(y.data[i] - want[i]));
    apart = std::max(apart, std::abs(want[i] - other[i]));
  }
  EXPECT_LT(err, 1e-6) << c.op << " opset " << c.opset;
  const int64_t rank = static_cast<int64_t>(c.shape.size());
  if ((axis < 0 ? axis + rank : axis) != rank - 1) {
    EXPECT_GT(apart, 1e-2);  // the two meanings differ here
  }
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Cases, OnnxOpsets,
                         ::testing::Values(SoftmaxCase{"Softmax", 11, {3, 3, 4}, INT64_MIN},
                                           SoftmaxCase{"Softmax", 13, {3, 3, 4}, 1},
                                           SoftmaxCase{"LogSoftmax", 12, {2, 2, 3, 4}, -2},
                                           SoftmaxCase{"LogSoftmax", 13, {2, 2, 3, 4}, -2},
                                           SoftmaxCase{"Softmax", 9, {2, 2, 3, 4}, 2},
                                           SoftmaxCase{"Softmax", 11, {2, 5}, INT64_MIN},
                                           SoftmaxCase{"LogSoftmax", 10, {3, 3, 4}, 0}),
                         [](const auto& info) {
                           const SoftmaxCase& c = info.param;
                           return c.op + "_op" + std::to_string(c.opset) + "_rank" +
                                  std::to_string(c.shape.size()) + "_axis" +
                                  (c.axis == INT64_MIN ? std::string("default")
                                                       : (c.axis < 0 ? "m" : "") +
                                                             std::to_string(std::abs(c.axis)));
                         });

class OnnxLegacyAttributes : public ::testing::TestWithParam<int64_t> {};

// x [N, 1, 6] -> Squeeze(axes [1]) -> Split(axis 1, split [2, 4]) -> a [N, 2], b [N, 4];
// ReduceSum(b, axes [1], keepdims) [N, 1]; Mul(a, that) -> Clip(-20, 25) -> Pad([0, 1, 0, 2], 7)
// -> Dropout(0.3) -> Slice(starts [1], ends [4], axes [1]) -> Unsqueeze(axes [2]) -> y [N, 3, 1].
// Each operator in its form at the opset: axes, split, pads/value, min/max, ratio and
// starts/ends/axes as attributes where that opset has them, as inputs where it does not. The
// values are integers, so the result is exact.
TEST_P(OnnxLegacyAttributes, AttributesOfOlderOpsetsMeanWhatTheInputsMean) {
  const int64_t opset = GetParam();
  ::onnx::ModelProto m = modelAt(opset);
  auto* g = m.mutable_graph();
  io(g->add_input(), "x", {0, 1, 6}, true);
  io(g->add_output(), "y", {0, 3, 1}, true);
  auto scalar = [&](const std::string& name, float v) { floatInit(g, name, {}, {v}); };
  if (opset < 13) {
    addInts(addNode(g, "Squeeze", {"x"}, {"s"}, "squeeze"), "axes", {1});
    auto* sp = addNode(g, "Split", {"s"}, {"a", "b"}, "split");
    addInt(sp, "axis", 1);
    addInts(sp, "split", {2, 4});
    auto* r = addNode(g, "ReduceSum", {"b"}, {"r"}, "sum");
    addInts(r, "axes", {1});
    addInt(r, "keepdims", 1);
  } else {
    intInit(g, "ax1", {1});
    intInit(g, "sizes", {2, 4});
    addNode(g, "Squeeze", {"x", "ax1"}, {"s"}, "squeeze");
    addInt(addNode(g, "Split", {"s", "sizes"}, {"a", "b"}, "split"), "axis", 1);
    addInt(addNode(g, "ReduceSum", {"b", "ax1"}, {"r"}, "sum"), "keepdims", 1);
  }
  addNode(g, "Mul", {"a", "r"}, {"mu"}, "mul");
  if (opset < 11) {
    auto* c = addNode(g, "Clip", {"mu"}, {"c"}, "clip");
    addFloat(c, "min", -20);
    addFloat(c, "max", 25);
    auto* p = addNode(g, "Pad", {"c"}, {"p"}, "pad");
    addInts(p, "pads", {0, 1, 0, 2});
    addFloat(p, "value", 7);
  } else {
    scalar("lo", -20);
    scalar("hi", 25);
    scalar("seven", 7);
    intInit(g, "pads", {0, 1, 0, 2});
    addNode(g, "Clip", {"mu", "lo", "hi"}, {"c"}, "clip");
    addNode(g, "Pad", {"c", "pads", "seven"}, {"p"}, "pad");
  }
  if (opset < 12) {
    addFloat(addNode(g, "Dropout", {"p"}, {"d"}, "dropout"), "ratio", 0.3f);
  } else {
    scalar("ratio", 0.3f);
    addNode(g, "Dropout", {"p", "ratio"}, {"d"}, "dropout");
  }
  if (opset < 10) {
    auto* sl = addNode(g, "Slice", {"d"}, {"sl"}, "slice");
    addInts(sl, "starts", {1});
    addInts(sl, "ends", {4});
    addInts(sl, "axes", {1});
  } else {
    intInit(g, "starts", {1});
    intInit(g, "ends", {4});
    if (opset >= 13) {
      addNode(g, "Slice", {"d", "starts", "ends", "ax1"}, {"sl"}, "slice");
    } else {
      intInit(g, "ax1", {1});
      addNode(g, "Slice", {"d", "starts", "ends", "ax1"}, {"sl"}, "slice");
    }
  }
  if (opset < 13) {
    addInts(addNode(g, "Unsqueeze", {"sl"}, {"y"}, "unsqueeze"), "axes", {2});
  } else {
    intInit(g, "ax2", {2});
    addNode(g, "Unsqueeze", {"sl", "ax2"}, {"y"}, "unsqueeze");
  }
  const std::string path = save(m, "legacy.onnx");
  tx::NpyArray x;
  x.shape = {5, 1, 6};
  for (size_t i = 0; i < 30; ++i) x.data.push_back(static_cast<float>(static_cast<int>(i % 7) - 2));
  tx::InferOptions o;
  o.device = "model";
  o.tiles = 4;
  o.batch = 2;
  const tx::NpyArray y = tx::infer(path, x, o);
  ASSERT_EQ(y.shape, (std::vector<size_t>{5, 3, 1}));
  for (size_t r = 0; r < 5; ++r) {
    const float* row = &x.data[r * 6];
    const float sum = row[2] + row[3] + row[4] + row[5];
    std::vector<float> padded{7};
    for (size_t k = 0; k < 2; ++k) padded.push_back(std::clamp(row[k] * sum, -20.0f, 25.0f));
    padded.push_back(7);
    padded.push_back(7);
    for (size_t k = 0; k < 3; ++k) EXPECT_EQ(y.data[r * 3 + k], padded[1 + k]) << r << "," << k;
  }
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Opsets, OnnxLegacyAttributes, ::testing::Values(9, 10, 11, 12, 13),
                         [](const auto& info) { return "op" + std::to_string(info.param); });

TEST(OnnxModel, OpsetsOutsideTheRangeAndUnsupportedAttributesNameTheOpset) {
  for (int64_t opset : {8, 18}) {
    ::onnx::ModelProto m = modelAt(opset);
    auto* g = m.mutable_graph();
    io(g->add_input(), "x", {2, 3}, false);
    io(g->add_output(), "y", {2, 3}, false);
    addNode(g, "Relu", {"x"}, {"y"}, "r");
    const std::string path = save(m, "opset.onnx");
    try {
      tx::OnnxModel::load(path);
      ADD_FAILURE() << "opset " << opset << " loaded";
    } catch (const tessera::Error& e) {
      EXPECT_NE(std::string(e.what()).find("opset " + std::to_string(opset)), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("opsets 9 to 17"), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
  }
  // An attribute the library cannot honour, at an older opset: the error names the node, the op
  // type, the opset and the attribute.
  ::onnx::ModelProto m = modelAt(11);
  auto* g = m.mutable_graph();
  io(g->add_input(), "x", {2, 1, 4, 4}, false);
  io(g->add_output(), "y", {2, 1, 4, 4}, false);
  auto* n = addNode(g, "MaxPool", {"x"}, {"y"}, "pool");
  addInts(n, "kernel_shape", {3, 3});
  n->add_attribute()->set_name("auto_pad");
  n->mutable_attribute(1)->set_type(::onnx::AttributeProto::STRING);
  n->mutable_attribute(1)->set_s("SAME_UPPER");
  const std::string path = save(m, "autopad.onnx");
  tx::NpyArray x;
  x.shape = {2, 1, 4, 4};
  x.data.assign(32, 1.0f);
  tx::InferOptions o;
  o.tiles = 4;
  try {
    tx::infer(path, x, o);
    ADD_FAILURE() << "auto_pad accepted";
  } catch (const tessera::Error& e) {
    for (const char* s : {"node \"pool\"", "MaxPool", "opset 11", "auto_pad"})
      EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << s << ": " << e.what();
  }
  std::filesystem::remove(path);
}

// Before opset 10 MaxPool and AveragePool have no ceil_mode: PyTorch exports ceil_mode=True as
// more padding at the end than at the beginning. x [N, 1, 5, 7], kernel 2x3, stride 2, pads
// [0, 1, 1, 2] (floor over them: 3 x 4 windows, as ceil mode over [0, 1]): each window's maximum
// over the input elements it covers.
TEST(OnnxOpsetPools, EndPaddingIsCeilModeAtOpset9) {
  ::onnx::ModelProto m = modelAt(9);
  auto* g = m.mutable_graph();
  io(g->add_input(), "x", {0, 1, 5, 7}, true);
  io(g->add_output(), "y", {0, 1, 3, 4}, true);
  auto* n = addNode(g, "MaxPool", {"x"}, {"y"}, "pool");
  addInts(n, "kernel_shape", {2, 3});
  addInts(n, "strides", {2, 2});
  addInts(n, "pads", {0, 1, 1, 2});
  const std::string path = save(m, "ceilpool.onnx");
  tx::NpyArray x;
  x.shape = {3, 1, 5, 7};
  for (size_t i = 0; i < 105; ++i) x.data.push_back(static_cast<float>((i * 37) % 23) - 11.0f);
  tx::InferOptions o;
  o.tiles = 4;
  o.batch = 2;
  const tx::NpyArray y = tx::infer(path, x, o);
  ASSERT_EQ(y.shape, (std::vector<size_t>{3, 1, 3, 4}));
  for (size_t b = 0; b < 3; ++b) {
    for (size_t oy = 0; oy < 3; ++oy) {
      for (size_t ox = 0; ox < 4; ++ox) {
        float mx = -INFINITY;
        for (long ky = 0; ky < 2; ++ky) {
          for (long kx = 0; kx < 3; ++kx) {
            const long iy = static_cast<long>(oy) * 2 + ky, ix = static_cast<long>(ox) * 2 - 1 + kx;
            if (iy >= 0 && iy < 5 && ix >= 0 && ix < 7)
              mx = std::max(mx, x.data[b * 35 + static_cast<size_t>(iy * 7 + ix)]);
          }
        }
        EXPECT_EQ(y.data[(b * 3 + oy) * 4 + ox], mx) << b << "," << oy << "," << ox;
      }
    }
  }
  std::filesystem::remove(path);
}
