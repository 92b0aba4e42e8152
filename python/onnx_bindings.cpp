// ONNX import for Python (tessera.onnx; docs/onnx.md, docs/python.md): inference on a device with
// NumPy arrays in and out, and training on Fashion-MNIST with tessera-onnx train's trainer.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <cstring>
#include <optional>

#include "bindings.hpp"
#include "tessera/error.hpp"
#include "tessera/npy.hpp"
#include "tessera/onnx.hpp"
#include "tessera/onnx_train.hpp"

namespace tessera::python {
namespace {

py::list shapesOf(const std::vector<onnx::ValueShape>& values) {
  py::list out;
  for (const onnx::ValueShape& v : values) out.append(py::make_tuple(v.name, v.dims));
  return out;
}

}  // namespace

void bindOnnx(py::module_& m) {
  py::module_ o = m.def_submodule("onnx", "ONNX models: inference and training (docs/onnx.md).");

  py::class_<onnx::OnnxModel>(o, "Model", "A parsed and checked ONNX model.")
      .def_static("load", &onnx::OnnxModel::load, py::arg("path"),
                  "Read and check a model: opset, operators, initializers.")
      .def_property_readonly("path", &onnx::OnnxModel::path, "The file it was read from.")
      .def_property_readonly("opset", &onnx::OnnxModel::opset, "The ai.onnx opset it imports.")
      .def_property_readonly(
          "inputs", [](const onnx::OnnxModel& mo) { return shapesOf(mo.inputs()); },
          "Graph inputs that are not initializers: (name, dims), -1 for an open dimension.")
      .def_property_readonly(
          "outputs", [](const onnx::OnnxModel& mo) { return shapesOf(mo.outputs()); },
          "Graph outputs: (name, dims).")
      .def_property_readonly(
          "variables",
          [](const onnx::OnnxModel& mo) {
            std::vector<std::string> names;
            for (const onnx::Variable& v : mo.variables()) names.push_back(v.name);
            return names;
          },
          "Names of the float initializers that become device variables.");
  o.def("load", &onnx::OnnxModel::load, py::arg("path"), "Read and check a model (Model).");

  o.def(
      "infer",
      [](const std::string& path, const py::object& x, const std::string& device, unsigned tiles,
         size_t batch, uint32_t tileMemKiB) {
        // One array, or a list or tuple of them (one per graph input); integer arrays feed
        // integer inputs (token ids), whose values must fit int32.
        std::vector<py::object> arrays;
        if (py::isinstance<py::list>(x) || py::isinstance<py::tuple>(x)) {
          for (const py::handle& h : x) arrays.push_back(py::reinterpret_borrow<py::object>(h));
        } else {
          arrays.push_back(x);
        }
        std::vector<onnx::NpyArray> in;
        for (size_t i = 0; i < arrays.size(); ++i) {
          const std::string what = fmt::format("infer: input {}", i);
          py::array raw = py::array::ensure(arrays[i]);
          onnx::NpyArray na;
          if (raw && (raw.dtype().kind() == 'i' || raw.dtype().kind() == 'u')) {
            py::array a = toElements(raw, ElemType::Int32, what);
            const auto* p = static_cast<const int32_t*>(a.data());
            na.shape = arrayShape(a);
            na.integer = true;
            na.ints.assign(p, p + a.size());
          } else {
            py::array a = toElements(arrays[i], ElemType::Float32, what);
            const auto* p = static_cast<const float*>(a.data());
            na.shape = arrayShape(a);
            na.data.assign(p, p + a.size());
          }
          in.push_back(std::move(na));
        }
        onnx::InferOptions opts;
        opts.device = device;
        opts.tiles = tiles;
        opts.batch = batch;
        opts.tileMemKiB = tileMemKiB;
        onnx::NpyArray out;
        {
          py::gil_scoped_release release;
          out = onnx::infer(path, in, opts);
        }
        py::array_t<float> result(out.shape);
        std::memcpy(result.mutable_data(), out.data.data(), out.data.size() * sizeof(float));
        return result;
      },
      py::arg("path"), py::arg("x"), py::kw_only(), py::arg("device") = "model",
      py::arg("tiles") = 16, py::arg("batch") = 0, py::arg("tile_mem_kib") = 0,
      "The model's first output for every row of x (an array with the model's input shape after a "
      "leading row count, or a list of them, one per graph input: float32, or integers for an "
      "integer input such as token ids), computed on a device in batches of batch rows (0: the "
      "model's own).");

  o.def(
      "train",
      [](const std::string& path, const std::string& out, uint32_t epochs, size_t batch,
         std::optional<float> lr, const std::string& optimizer, std::optional<float> momentum,
         uint32_t seed, const std::string& device, unsigned tiles, uint32_t tileMemKiB,
         uint64_t steps, size_t evalImages, const std::string& dataDir, const std::string& logDir,
         bool quiet) {
        onnx::TrainOptions t;
        t.out = out;
        t.epochs = epochs;
        t.batch = batch;
        t.learningRate = lr;
        t.optimizer = optimizer;
        t.momentum = momentum;
        t.seed = seed;
        t.device = device;
        t.tiles = tiles;
        t.tileMemKiB = tileMemKiB;
        t.steps = steps;
        t.evalImages = evalImages;
        t.dataDir = dataDir;
        t.logDir = logDir;
        t.quiet = quiet;
        onnx::TrainResult r;
        {
          py::gil_scoped_release release;
          r = onnx::train(path, t);
        }
        py::dict d;
        d["losses"] =
            py::array_t<float>(static_cast<py::ssize_t>(r.losses.size()), r.losses.data());
        d["accuracy"] = r.accuracy;
        d["steps"] = r.steps;
        d["result_path"] = r.resultPath;
        return d;
      },
      py::arg("path"), py::kw_only(), py::arg("out") = "", py::arg("epochs") = 1,
      py::arg("batch") = 32, py::arg("lr") = py::none(), py::arg("optimizer") = "sgd",
      py::arg("momentum") = py::none(), py::arg("seed") = 1, py::arg("device") = "model",
      py::arg("tiles") = 16, py::arg("tile_mem_kib") = 0, py::arg("steps") = 0,
      py::arg("eval_images") = 0, py::arg("data_dir") = "",
      py::arg("log_dir") = "tessera-onnx-train", py::arg("quiet") = true,
      "Train the model on Fashion-MNIST as tessera-onnx train does (first output: logits over "
      "10 classes, softmax cross-entropy); writes the trained model to out. Returns a dict of "
      "losses (per step), accuracy, steps, result_path.");
}

}  // namespace tessera::python
