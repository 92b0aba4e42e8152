// The importer's own tests (docs/onnx.md, "Tests"): .npy files, the host folding of the shape
// arithmetic exporters emit around Reshape (on the model and on the RTL), the variables a model
// gets, the write-back of trained values, and errors. Models are written here with libonnx's
// protobuf classes; the PyTorch comparisons are bench/onnx/compare.py.
#include "tessera/onnx.hpp"

#include <gtest/gtest.h>

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
