// Autodiff for Python (tessera.autodiff; docs/autodiff.md, docs/python.md): the Tape with its
// generic apply(type, inputs, attrs, name), the typed builders, gradients and the Optimizer.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <array>
#include <optional>

#include "bindings.hpp"
#include "tessera/autodiff.hpp"
#include "tessera/engine.hpp"
#include "tessera/error.hpp"

namespace tessera::python {
namespace {

namespace ad = autodiff;

// Attributes from a dict of int, float, str and lists of ints (ONNX's attribute types).
ad::Attributes attributesOf(const py::dict& attrs, const std::string& op) {
  ad::Attributes out;
  for (const auto& [key, value] : attrs) {
    const std::string name = py::str(key);
    if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value)) {
      out[name] = value.cast<int64_t>();
    } else if (py::isinstance<py::float_>(value)) {
      out[name] = value.cast<double>();
    } else if (py::isinstance<py::str>(value)) {
      out[name] = value.cast<std::string>();
    } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
      std::vector<int64_t> ints;
      for (const py::handle& item : value) {
        if (!py::isinstance<py::int_>(item)) {
          throw Error(fmt::format("op \"{}\": attribute \"{}\" is a list of {}, not of integers",
                                  op, name,
                                  py::str(item.get_type().attr("__name__")).cast<std::string>()));
        }
        ints.push_back(item.cast<int64_t>());
      }
      out[name] = std::move(ints);
    } else {
      throw Error(
          fmt::format("op \"{}\": attribute \"{}\" is a {}; attributes are int, float, "
                      "str or a list of ints",
                      op, name, py::str(value.get_type().attr("__name__")).cast<std::string>()));
    }
  }
  return out;
}

// A Python None where a Value is optional.
ad::Value optionalValue(const std::optional<ad::Value>& v) {
  return v ? *v : ad::Value();
}

std::array<size_t, 2> pair(const std::vector<size_t>& v, const char* what) {
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() != 2) throw Error(fmt::format("{}: expected one or two values", what));
  return {v[0], v[1]};
}

ad::OptimizerConfig::Kind optimizerKind(const std::string& kind) {
  if (kind == "sgd") return ad::OptimizerConfig::Kind::Sgd;
  if (kind == "momentum") return ad::OptimizerConfig::Kind::Momentum;
  if (kind == "adam") return ad::OptimizerConfig::Kind::Adam;
  throw Error(
      fmt::format("unknown optimizer \"{}\" (valid: \"sgd\", \"momentum\", \"adam\")", kind));
}

// An optimizer and the name its learning rate is exposed under.
struct PyOptimizer {
  ad::Optimizer optimizer;
  std::string lrName;
};

}  // namespace

void bindAutodiff(py::module_& m) {
  py::module_ a = m.def_submodule(
      "autodiff", "Automatic differentiation and optimizers on the tiles (docs/autodiff.md).");

  py::class_<ad::Value>(a, "Value", "A differentiable value on a tape: a tensor and its origin.")
      .def(py::init<>(), "An absent value (an op's optional input).")
      .def_property_readonly("valid", &ad::Value::valid, "True for a value made by a Tape.")
      .def_property_readonly("tensor", &ad::Value::tensor, "The tensor holding the value.")
      .def_property_readonly("id", &ad::Value::id, "Index of the value on its tape.")
      .def_property_readonly(
          "shape", [](const ad::Value& v) { return v.tensor().shape(); }, "Its tensor's shape.")
      .def("__repr__", [](const ad::Value& v) {
        if (!v.valid()) return std::string("Value()");
        return fmt::format("Value({}, \"{}\", {})", v.id(), v.tensor().debugName(),
                           v.tensor().shapeString());
      });

  py::class_<ad::Tape>(a, "Tape",
                       "Records the forward pass op by op (appending it to the forward "
                       "Sequence) and generates the backward.")
      .def(py::init<Graph&, Sequence&>(), py::arg("graph"), py::arg("forward"),
           py::keep_alive<1, 2>(), py::keep_alive<1, 3>())
      .def("input", &ad::Tape::input, py::arg("tensor"), "A value that is not differentiated.")
      .def("parameter", &ad::Tape::parameter, py::arg("tensor"),
           "A trainable value (a variable of the graph).")
      .def(
          "apply",
          [](ad::Tape& t, const std::string& type, const std::vector<std::optional<ad::Value>>& in,
             const std::optional<py::dict>& attrs, const std::string& name) {
            std::vector<ad::Value> inputs;
            for (const auto& v : in) inputs.push_back(optionalValue(v));
            const std::string opName = name.empty() ? type : name;
            return t.apply(type, inputs, attrs ? attributesOf(*attrs, opName) : ad::Attributes{},
                           opName);
          },
          py::arg("type"), py::arg("inputs"), py::arg("attrs") = py::none(), py::arg("name") = "",
          "Record op type (its registry name, e.g. \"MatMul\") on inputs (None: an absent "
          "optional input) with attributes from a dict of int, float, str and lists of ints; "
          "returns its outputs.")
      .def(
          "apply1",
          [](ad::Tape& t, const std::string& type, const std::vector<std::optional<ad::Value>>& in,
             const std::optional<py::dict>& attrs, const std::string& name) {
            std::vector<ad::Value> inputs;
            for (const auto& v : in) inputs.push_back(optionalValue(v));
            const std::string opName = name.empty() ? type : name;
            return t.apply1(type, inputs, attrs ? attributesOf(*attrs, opName) : ad::Attributes{},
                            opName);
          },
          py::arg("type"), py::arg("inputs"), py::arg("attrs") = py::none(), py::arg("name") = "",
          "apply for an op with one output.")
      .def(
          "gradients",
          [](ad::Tape& t, const ad::Value& loss, const std::vector<ad::Value>& wrt, Sequence& prog,
             float lossScale,
             const std::string& name) { return t.gradients(loss, wrt, prog, lossScale, name); },
          py::arg("loss"), py::arg("wrt"), py::arg("prog"), py::arg("loss_scale") = 1.0f,
          py::arg("name") = "bwd",
          "Gradients of loss_scale * sum(loss) with respect to each of wrt, appended to prog.")
      .def_property_readonly(
          "ops",
          [](const ad::Tape& t) {
            std::vector<std::pair<std::string, std::string>> ops;
            for (const ad::OpNode& n : t.ops()) ops.emplace_back(n.type, n.name);
            return ops;
          },
          "The recorded ops: (type, name), in forward order.");
  a.def(
      "op_types", [] { return ad::OpRegistry::builtin().names(); },
      "Names of every built-in op, sorted.");

  // Typed builders.
  a.def(
      "matmul",
      [](ad::Tape& t, const ad::Value& x, const ad::Value& y, const std::string& name, bool ta,
         bool tb) {
        return ad::matmul(t, x, y, name, {ta, tb});
      },
      py::arg("tape"), py::arg("a"), py::arg("b"), py::arg("name"), py::arg("transpose_a") = false,
      py::arg("transpose_b") = false, "op(a) op(b) (3-D operands: a batched product).");
  a.def(
      "cast",
      [](ad::Tape& t, const ad::Value& x, const py::object& dtype, const std::string& name) {
        return ad::cast(t, x, elemTypeOf(dtype, "cast \"" + name + "\""), name);
      },
      py::arg("tape"), py::arg("x"), py::arg("dtype"), py::arg("name"),
      "float32 <-> float16 (mixed precision); its gradient is the cast back.");
  a.def("scale_gradient", &ad::scaleGradient, py::arg("tape"), py::arg("x"), py::arg("scale"),
        py::arg("name"),
        "x itself; its gradient times the device scalar scale (a tape input): where a dynamic "
        "loss scale enters the backward.");
  py::class_<ops::LossScaler>(a, "LossScaler",
                              "A dynamic loss scale's device state (create_loss_scaler).")
      .def_readonly("scale", &ops::LossScaler::scale, "float32 [1]: the scale, a power of two")
      .def_readonly("state", &ops::LossScaler::state,
                    "int32 [2]: finite steps in a row, steps skipped")
      .def_readonly("inv", &ops::LossScaler::inv, "float32 [1]: 1 / the scale of this step")
      .def_readonly("ok", &ops::LossScaler::ok, "int32 [1]: this step's gradients were finite")
      .def_readonly("interval", &ops::LossScaler::interval,
                    "finite steps in a row before the scale doubles");
  a.def("create_loss_scaler", &ops::createLossScaler, py::arg("graph"),
        py::arg("initial_scale") = 65536.0f, py::arg("growth_interval") = 2000u,
        py::arg("name") = "loss_scale",
        "A dynamic loss scale (PyTorch's GradScaler rule, factors 2 and 1/2) for "
        "Optimizer.update(..., scaler=).");
  a.def("add", &ad::add, py::arg("tape"), py::arg("a"), py::arg("b"), py::arg("name"), "a + b.");
  a.def("sub", &ad::sub, py::arg("tape"), py::arg("a"), py::arg("b"), py::arg("name"), "a - b.");
  a.def("mul", &ad::mul, py::arg("tape"), py::arg("a"), py::arg("b"), py::arg("name"),
        "a * b, element by element.");
  a.def("scale", &ad::scale, py::arg("tape"), py::arg("a"), py::arg("scale"), py::arg("name"),
        "a * scale.");
  a.def("relu", &ad::relu, py::arg("tape"), py::arg("a"), py::arg("name"), "max(a, 0).");
  a.def("add_bias", &ad::addBias, py::arg("tape"), py::arg("x"), py::arg("bias"), py::arg("name"),
        "x [rows, n] + bias [n].");
  a.def("reduce_sum", &ad::reduceSum, py::arg("tape"), py::arg("x"), py::arg("axis"),
        py::arg("name"), "Sum of a 2-D value along axis.");
  a.def("softmax_cross_entropy", &ad::softmaxCrossEntropy, py::arg("tape"), py::arg("logits"),
        py::arg("labels"), py::arg("grad_scale"), py::arg("name"),
        "Per-row softmax cross-entropy of logits [rows, classes] against int32 labels [rows]; "
        "grad_scale is the loss scale it will be differentiated with.");
  a.def("reshape", &ad::reshape, py::arg("tape"), py::arg("x"), py::arg("shape"), py::arg("name"),
        "The same elements with another shape.");
  a.def("transpose", &ad::transpose, py::arg("tape"), py::arg("x"), py::arg("perm"),
        py::arg("name"), "Dimensions permuted.");
  a.def("slice", &ad::slice, py::arg("tape"), py::arg("x"), py::arg("begin"), py::arg("end"),
        py::arg("axis"), py::arg("name"), "Elements [begin, end) of dimension axis.");
  a.def("concat", &ad::concat, py::arg("tape"), py::arg("values"), py::arg("axis"), py::arg("name"),
        "Values joined along axis.");
  a.def(
      "conv2d",
      [](ad::Tape& t, const ad::Value& x, const ad::Value& w, const std::optional<ad::Value>& b,
         const std::string& name, const std::vector<size_t>& stride,
         const std::vector<size_t>& padding, const std::vector<size_t>& dilation, size_t groups) {
        ops::Conv2dParams p;
        p.stride = pair(stride, "conv2d stride");
        p.padding = pair(padding, "conv2d padding");
        p.dilation = pair(dilation, "conv2d dilation");
        p.groups = groups;
        return ad::conv2d(t, x, w, optionalValue(b), name, p);
      },
      py::arg("tape"), py::arg("x"), py::arg("weights"), py::arg("bias"), py::arg("name"),
      py::arg("stride") = std::vector<size_t>{1, 1}, py::arg("padding") = std::vector<size_t>{0, 0},
      py::arg("dilation") = std::vector<size_t>{1, 1}, py::arg("groups") = 1,
      "Convolution of x [N, C, H, W] with weights [OC, C / groups, KH, KW] plus bias [OC] "
      "(None: no bias).");
  for (const char* kind : {"max_pool2d", "avg_pool2d"}) {
    const bool isMax = std::string(kind) == "max_pool2d";
    a.def(
        kind,
        [isMax](ad::Tape& t, const ad::Value& x, const std::string& name,
                const std::vector<size_t>& kernel, const std::vector<size_t>& stride,
                const std::vector<size_t>& padding) {
          ops::Pool2dParams p;
          p.kernel = pair(kernel, "pool kernel");
          p.stride = pair(stride, "pool stride");
          p.padding = pair(padding, "pool padding");
          return isMax ? ad::maxPool2d(t, x, name, p) : ad::avgPool2d(t, x, name, p);
        },
        py::arg("tape"), py::arg("x"), py::arg("name"),
        py::arg("kernel") = std::vector<size_t>{2, 2},
        py::arg("stride") = std::vector<size_t>{0, 0},
        py::arg("padding") = std::vector<size_t>{0, 0},
        isMax ? "Max pooling of x [N, C, H, W] (stride 0: the kernel size)."
              : "Average pooling of x [N, C, H, W] (stride 0: the kernel size).");
  }
  a.def("flatten", &ad::flatten, py::arg("tape"), py::arg("x"), py::arg("axis"), py::arg("name"),
        "x viewed as [product before axis, product of the rest].");
  a.def("tanh", &ad::tanh, py::arg("tape"), py::arg("x"), py::arg("name"), "tanh(x).");
  a.def("sigmoid", &ad::sigmoid, py::arg("tape"), py::arg("x"), py::arg("name"), "1 / (1 + e^-x).");
  a.def("gelu", &ad::gelu, py::arg("tape"), py::arg("x"), py::arg("name"), "GELU, erf form.");
  a.def("softmax", &ad::softmax, py::arg("tape"), py::arg("x"), py::arg("axis"), py::arg("name"),
        "Softmax along axis.");
  a.def("log_softmax", &ad::logSoftmax, py::arg("tape"), py::arg("x"), py::arg("axis"),
        py::arg("name"), "Log-softmax along axis.");
  a.def("layer_norm", &ad::layerNorm, py::arg("tape"), py::arg("x"), py::arg("weight"),
        py::arg("bias"), py::arg("eps"), py::arg("name"),
        "Layer normalisation over the trailing dimensions of weight's shape.");
  a.def(
      "batch_norm",
      [](ad::Tape& t, const ad::Value& x, const ad::Value& w, const ad::Value& b,
         const std::optional<ad::Value>& mean, const std::optional<ad::Value>& var, bool training,
         float eps, float momentum, const std::string& name) {
        return ad::batchNorm(t, x, w, b, optionalValue(mean), optionalValue(var), training, eps,
                             momentum, name);
      },
      py::arg("tape"), py::arg("x"), py::arg("weight"), py::arg("bias"), py::arg("running_mean"),
      py::arg("running_var"), py::arg("training"), py::arg("eps"), py::arg("momentum"),
      py::arg("name"), "Batch normalisation of x [N, C, ...] (PyTorch's semantics).");
  a.def("dropout", &ad::dropout, py::arg("tape"), py::arg("x"), py::arg("seed"), py::arg("p"),
        py::arg("stream"), py::arg("name"),
        "Dropout in training with probability p; seed from create_dropout_seed.");
  a.def("create_dropout_seed", &ops::createDropoutSeed, py::arg("graph"), py::arg("seed"),
        py::arg("name"), "The int32 [2] seed tensor of dropout (use tape.input on it).");
  a.def("embedding", &ad::embedding, py::arg("tape"), py::arg("table"), py::arg("indices"),
        py::arg("name"), "Rows of table [V, D] picked by int32 indices.");

  py::class_<PyOptimizer>(a, "Optimizer",
                          "Updates parameters from their gradients on the tiles (PyTorch's "
                          "semantics); the learning rate is a device tensor.")
      .def(py::init([](Graph& g, const std::string& kind, float lr, float momentum, float beta1,
                       float beta2, float eps, float weightDecay, const std::string& lrName) {
             ad::OptimizerConfig c;
             c.kind = optimizerKind(kind);
             c.learningRate = lr;
             c.momentum = momentum;
             c.beta1 = beta1;
             c.beta2 = beta2;
             c.eps = eps;
             c.weightDecay = weightDecay;
             return std::unique_ptr<PyOptimizer>(
                 new PyOptimizer{ad::Optimizer(g, c, lrName), lrName});
           }),
           py::arg("graph"), py::arg("kind") = "sgd", py::arg("lr") = 0.01f,
           py::arg("momentum") = 0.9f, py::arg("beta1") = 0.9f, py::arg("beta2") = 0.999f,
           py::arg("eps") = 1e-8f, py::arg("weight_decay") = 0.0f, py::arg("lr_name") = "lr",
           py::keep_alive<1, 2>(),
           "An optimizer (\"sgd\", \"momentum\" or \"adam\") whose learning rate is the tensor "
           "exposed as lr_name.")
      .def_property_readonly(
          "learning_rate", [](const PyOptimizer& o) { return o.optimizer.learningRate(); },
          "The learning rate tensor (float32 [1]).")
      .def_readonly("lr_name", &PyOptimizer::lrName, "The name the learning rate is exposed as.")
      .def(
          "minimize",
          [](PyOptimizer& o, ad::Tape& t, const ad::Value& loss,
             const std::vector<ad::Value>& params, Sequence& prog, float lossScale,
             const std::string& name) {
            o.optimizer.minimize(t, loss, params, prog, lossScale, name);
          },
          py::arg("tape"), py::arg("loss"), py::arg("params"), py::arg("prog"),
          py::arg("loss_scale") = 1.0f, py::arg("name") = "opt",
          "Backward of loss (scaled) and the update of every parameter, appended to prog.")
      .def(
          "update",
          [](PyOptimizer& o, const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             Sequence& prog, const std::string& name, float gradScale,
             const std::optional<ops::LossScaler>& scaler) {
            if (scaler && gradScale != 1.0f)
              throw Error(name + ": grad_scale and scaler are exclusive");
            if (scaler)
              o.optimizer.update(params, grads, prog, name, *scaler);
            else
              o.optimizer.update(params, grads, prog, name, gradScale);
          },
          py::arg("params"), py::arg("grads"), py::arg("prog"), py::arg("name") = "opt",
          py::arg("grad_scale") = 1.0f, py::arg("scaler") = py::none(),
          "The update of params from gradients already computed: gradients grad_scale times the "
          "true ones (a static loss scale), or carrying a dynamic scaler's scale (the update is "
          "skipped when some element is infinite or NaN, and the scale moves).");
}

}  // namespace tessera::python
