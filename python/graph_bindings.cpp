// The graph API, programs, compile() and the op library (tessera.ops) for Python
// (docs/python.md, docs/compiler.md, docs/library.md).
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <optional>

#include "bindings.hpp"
#include "tessera/compiler.hpp"
#include "tessera/error.hpp"
#include "tessera/graph.hpp"
#include "tessera/half.hpp"
#include "tessera/ops.hpp"
#include "tessera/program.hpp"

namespace tessera::python {
namespace {

const char* typeName(ElemType t) {
  return elemTypeName(t);
}

// The executable of a compilation with the element types and shapes of the graph's exposed
// tensors and streams, so that Engine.read_tensor returns arrays of the right shape.
ExecutableHandle handleOf(const Graph& graph, Executable exe) {
  ExecutableHandle h{std::move(exe), {}, {}};
  for (const auto& [name, t] : graph.exposedTensors()) {
    h.tensors[name] = TensorMeta{t.elementType(), t.shape()};
  }
  for (const GraphStream& s : graph.streams()) {
    h.streams[s.name] = TensorMeta{s.type, {s.elements}};
  }
  return h;
}

struct PyCompiled {
  ExecutableHandle executable;
  CompileReport report;
};

}  // namespace

void bindGraph(py::module_& m) {
  py::class_<Tensor>(m, "Tensor",
                     "A view of graph variable elements with a shape and an element type.")
      .def_property_readonly("valid", &Tensor::valid, "True for a tensor made by a Graph.")
      .def_property_readonly("shape", &Tensor::shape, "Dimensions, outermost first.")
      .def_property_readonly(
          "dtype", [](const Tensor& t) { return typeName(t.elementType()); },
          "\"float32\" or \"int32\".")
      .def_property_readonly("rank", &Tensor::rank, "Number of dimensions.")
      .def_property_readonly("num_elements", &Tensor::numElements, "Number of elements.")
      .def_property_readonly("name", &Tensor::debugName, "Debug name.")
      .def("slice", &Tensor::slice, py::arg("begin"), py::arg("end"), py::arg("dim") = 0,
           "Elements [begin, end) of dimension dim (a view).")
      .def("__getitem__", &Tensor::operator[], py::arg("index"), "Index of dimension 0 (a view).")
      .def("reshape", &Tensor::reshape, py::arg("shape"), "The same elements with another shape.")
      .def("flatten", &Tensor::flatten, "The elements as one dimension.")
      .def("dim_shuffle", &Tensor::dimShuffle, py::arg("perm"),
           "Dimensions permuted: result dimension i is dimension perm[i].")
      .def("transpose", &Tensor::transpose, "A 2-D tensor transposed.")
      .def("broadcast", &Tensor::broadcast, py::arg("n"), py::arg("dim"),
           "The tensor repeated n times along dimension dim.")
      .def("expand", &Tensor::expand, py::arg("dim"), "A new dimension of size 1 at dim.")
      .def("__repr__", [](const Tensor& t) {
        return fmt::format("Tensor(\"{}\", {}, {})", t.debugName(), t.shapeString(),
                           typeName(t.elementType()));
      });
  m.def("concat", &concat, py::arg("tensors"), py::arg("dim"),
        "Tensors joined along dimension dim (a view).");

  py::class_<ComputeSet>(m, "ComputeSet", "Handle of a compute set.")
      .def_readonly("id", &ComputeSet::id);
  py::class_<VertexRef>(m, "Vertex", "Handle of a vertex.").def_readonly("id", &VertexRef::id);
  py::class_<DataStream>(m, "DataStream", "Handle of a host stream.")
      .def_readonly("id", &DataStream::id);

  py::class_<Graph>(m, "Graph", "A graph for one target (docs/compiler.md).")
      .def(py::init([](const ChipShape& target, std::optional<std::string> codelets) {
             return std::make_unique<Graph>(target,
                                            codelets ? *codelets : Graph::defaultCodeletsPath());
           }),
           py::arg("target") = ChipShape{}, py::arg("codelets") = py::none(),
           "A graph for target, with the codelet library at codelets (default: "
           "Graph.default_codelets_path()).")
      .def_static("default_codelets_path", &Graph::defaultCodeletsPath,
                  "The codelet library the compiler links from ($TESSERA_CODELETS, the SDK's, or "
                  "the build's).")
      .def_property_readonly("target", &Graph::target, "The target.")
      .def_property_readonly(
          "codelets",
          [](const Graph& g) {
            std::vector<std::string> names;
            for (const CodeletInfo& c : g.codelets()) names.push_back(c.name);
            return names;
          },
          "Names of the codelets of the library.")
      .def(
          "add_variable",
          [](Graph& g, const py::object& dtype, std::vector<size_t> shape,
             const std::string& name) {
            return g.addVariable(elemTypeOf(dtype, "variable \"" + name + "\""), std::move(shape),
                                 name);
          },
          py::arg("dtype"), py::arg("shape"), py::arg("name"),
          "A new variable (unmapped: map it before compiling).")
      .def(
          "add_constant",
          [](Graph& g, const py::object& values, const std::string& name, const py::object& dtype) {
            py::array a = py::array::ensure(values);
            if (!a) throw Error(fmt::format("constant \"{}\": expected an array", name));
            const std::string what = fmt::format("constant \"{}\"", name);
            ElemType type = dtype.is_none()
                                ? (a.dtype().kind() == 'f' ? ElemType::Float32 : ElemType::Int32)
                                : elemTypeOf(dtype, what);
            if (type == ElemType::Float32) {
              return g.addConstant(arrayShape(a), floatsOf(a, what), name);
            }
            if (type == ElemType::Float16) {
              throw Error(fmt::format(
                  "{}: constants are float32 or int32; make a float16 one with ops.cast or a "
                  "variable with set_initial_value",
                  what));
            }
            return g.addConstant(arrayShape(a), intsOf(a, what), name);
          },
          py::arg("values"), py::arg("name"), py::arg("dtype") = py::none(),
          "A new constant with the array's shape and values (float32 for a float array, int32 "
          "for an integer one, unless dtype says), unmapped.")
      .def("set_tile_mapping", py::overload_cast<const Tensor&, unsigned>(&Graph::setTileMapping),
           py::arg("tensor"), py::arg("tile"), "Map every element of a tensor to a tile.")
      .def("set_tile_mapping", py::overload_cast<VertexRef, unsigned>(&Graph::setTileMapping),
           py::arg("vertex"), py::arg("tile"), "Place a vertex on a tile.")
      .def("tile_mapping", &Graph::tileMapping, py::arg("tensor"),
           "Tile of each element (-1: unmapped).")
      .def(
          "set_initial_value",
          [](Graph& g, const Tensor& t, const py::object& values) {
            const std::string what = fmt::format("initial value of \"{}\"", t.debugName());
            py::array a = py::array::ensure(values);
            if (a && static_cast<size_t>(a.size()) != t.numElements()) {
              throw Error(fmt::format("{}: the tensor has {} elements {}, the array {} {}", what,
                                      t.numElements(), t.shapeString(), a.size(),
                                      shapeText(arrayShape(a))));
            }
            if (t.elementType() == ElemType::Float32) {
              g.setInitialValue(t, floatsOf(values, what));
            } else if (t.elementType() == ElemType::Float16) {
              g.setInitialValue(t, std::span<const uint16_t>(halvesOf(values, what)));
            } else {
              g.setInitialValue(t, intsOf(values, what));
            }
          },
          py::arg("tensor"), py::arg("values"), "Initial values, loaded with the executable.")
      .def("add_compute_set", &Graph::addComputeSet, py::arg("name"), "A new compute set.")
      .def(
          "add_vertex",
          [](Graph& g, ComputeSet cs, const std::string& codelet,
             const std::map<std::string, Tensor>& connections) {
            std::vector<std::pair<std::string, Tensor>> c(connections.begin(), connections.end());
            return g.addVertex(cs, codelet, std::move(c));
          },
          py::arg("compute_set"), py::arg("codelet"),
          py::arg("connections") = std::map<std::string, Tensor>{},
          "A new vertex of codelet in a compute set, fields connected from a dict.")
      .def("connect", &Graph::connect, py::arg("vertex"), py::arg("field"), py::arg("tensor"),
           "Connect a vertex field to a tensor.")
      .def(
          "set_field_value",
          [](Graph& g, VertexRef v, const std::string& field, const py::object& value) {
            if (py::isinstance<py::float_>(value)) {
              g.setFieldValue(v, field, value.cast<float>());
            } else {
              g.setFieldValue(v, field, value.cast<uint32_t>());
            }
          },
          py::arg("vertex"), py::arg("field"), py::arg("value"),
          "Set a Param field (a float, or an unsigned integer).")
      .def(
          "add_host_to_device_fifo",
          [](Graph& g, const std::string& name, const py::object& dtype, size_t elements) {
            return g.addHostToDeviceFIFO(name, elemTypeOf(dtype, "stream \"" + name + "\""),
                                         elements);
          },
          py::arg("name"), py::arg("dtype"), py::arg("elements"),
          "A host-to-device stream of elements elements per copy.")
      .def(
          "add_device_to_host_fifo",
          [](Graph& g, const std::string& name, const py::object& dtype, size_t elements) {
            return g.addDeviceToHostFIFO(name, elemTypeOf(dtype, "stream \"" + name + "\""),
                                         elements);
          },
          py::arg("name"), py::arg("dtype"), py::arg("elements"), "A device-to-host stream.")
      .def("expose_tensor", &Graph::exposeTensor, py::arg("name"), py::arg("tensor"),
           "Name a tensor so that Engine.read_tensor / write_tensor reach it.");

  py::class_<Program>(m, "Program", "A program: what the tiles do, in order.");
  py::class_<Sequence, Program>(m, "Sequence", "Programs run one after the other.")
      .def(py::init<std::vector<Program>, const std::string&>(),
           py::arg("steps") = std::vector<Program>{}, py::arg("name") = "")
      .def("add", &Sequence::add, py::arg("program"), "Append a step.");
  py::class_<Execute, Program>(m, "Execute", "Run every vertex of a compute set.")
      .def(py::init<ComputeSet, const std::string&>(), py::arg("compute_set"),
           py::arg("name") = "");
  py::class_<Copy, Program>(m, "Copy",
                            "Copy between tensors, or between a host stream and a tensor.")
      .def(py::init<const Tensor&, const Tensor&, const std::string&>(), py::arg("src"),
           py::arg("dst"), py::arg("name") = "")
      .def(py::init<DataStream, const Tensor&, const std::string&>(), py::arg("src"),
           py::arg("dst"), py::arg("name") = "")
      .def(py::init<const Tensor&, DataStream, const std::string&>(), py::arg("src"),
           py::arg("dst"), py::arg("name") = "");
  py::class_<Repeat, Program>(m, "Repeat", "A body run count times.")
      .def(py::init<uint32_t, const Program&, const std::string&>(), py::arg("count"),
           py::arg("body"), py::arg("name") = "");
  py::class_<RepeatWhile, Program>(
      m, "RepeatWhile", "cond, then while the int32 scalar predicate is not 0: body, cond.")
      .def(py::init<const Program&, const Tensor&, const Program&, const std::string&>(),
           py::arg("cond"), py::arg("predicate"), py::arg("body"), py::arg("name") = "");

  py::class_<CompileReport>(m, "CompileReport", "What the compiler did.")
      .def_readonly("seconds", &CompileReport::seconds, "Compile time.")
      .def_readonly("compute_sets", &CompileReport::computeSets)
      .def_readonly("vertices", &CompileReport::vertices)
      .def_readonly("syncs", &CompileReport::syncs, "Internal syncs per pass.")
      .def_readonly("host_syncs", &CompileReport::hostSyncs)
      .def_readonly("code_image_bytes", &CompileReport::codeImageBytes,
                    "The linked codelet image, loaded on every tile.")
      .def_readonly("codelets", &CompileReport::codelets, "The codelets the image holds.")
      .def("summary", &CompileReport::summary, "A readable summary.")
      .def("to_json", &CompileReport::toJson, "JSON text of the whole report.");
  py::class_<PyCompiled>(m, "Compiled", "An executable and its compile report.")
      .def_readonly("executable", &PyCompiled::executable)
      .def_readonly("report", &PyCompiled::report)
      .def(
          "save",
          [](const PyCompiled& c, const std::string& path) {
            c.executable.executable.writeFile(path);
          },
          py::arg("path"), "Write the *.tess file.");
  m.def(
      "compile",
      [](const Graph& g, const Program& prog, bool liveness, bool mergeComputeSets) {
        CompileOptions o;
        o.liveness = liveness;
        o.mergeComputeSets = mergeComputeSets;
        Compiled c = [&] {
          py::gil_scoped_release release;
          return compile(g, prog, o);
        }();
        return PyCompiled{handleOf(g, std::move(c.executable)), std::move(c.report)};
      },
      py::arg("graph"), py::arg("program"), py::arg("liveness") = true,
      py::arg("merge_compute_sets") = true,
      "Compile a program over a graph (Compiled: executable, report; docs/compiler.md for the "
      "options).");

  py::module_ ops = m.def_submodule("ops", "The operation library (docs/library.md).");
  ops.def("map_linearly", &ops::mapLinearly, py::arg("graph"), py::arg("tensor"),
          py::arg("grain") = 1, "Spread a tensor's elements over the tiles in order.");
  ops.def(
      "create_linear",
      [](Graph& g, const py::object& dtype, std::vector<size_t> shape, const std::string& name,
         size_t grain) {
        return ops::createLinear(g, elemTypeOf(dtype, "variable \"" + name + "\""),
                                 std::move(shape), name, grain);
      },
      py::arg("graph"), py::arg("dtype"), py::arg("shape"), py::arg("name"), py::arg("grain") = 1,
      "A new variable mapped with map_linearly.");
  // The operands' element type: float32, or float16 (the float16 product's plan).
  ops.def(
      "create_matmul_lhs",
      [](Graph& g, size_t m, size_t k, size_t n, const std::string& name, const py::object& dtype) {
        return ops::createMatMulLhs(g, m, k, n, name,
                                    elemTypeOf(dtype, "variable \"" + name + "\""));
      },
      py::arg("graph"), py::arg("m"), py::arg("k"), py::arg("n"), py::arg("name"),
      py::arg("dtype") = "float32", "A new [m, k] variable mapped where matmul reads it.");
  ops.def(
      "create_matmul_rhs",
      [](Graph& g, size_t m, size_t k, size_t n, const std::string& name, const py::object& dtype) {
        return ops::createMatMulRhs(g, m, k, n, name,
                                    elemTypeOf(dtype, "variable \"" + name + "\""));
      },
      py::arg("graph"), py::arg("m"), py::arg("k"), py::arg("n"), py::arg("name"),
      py::arg("dtype") = "float32", "A new [k, n] variable mapped where matmul reads it.");
  ops.def(
      "cast",
      [](Graph& g, const Tensor& t, const py::object& dtype, Sequence& prog,
         const std::string& name) {
        return ops::cast(g, t, elemTypeOf(dtype, "cast \"" + name + "\""), prog, name);
      },
      py::arg("graph"), py::arg("tensor"), py::arg("dtype"), py::arg("prog"), py::arg("name"),
      "float32 <-> float16 on the matrix unit's conversions (nearest-even when narrowing).");
  ops.def("cast_stochastic", &ops::castStochastic, py::arg("graph"), py::arg("tensor"),
          py::arg("seed"), py::arg("prog"), py::arg("name"),
          "float32 to float16 with stochastic rounding, seeded (the same bits on every backend).");
  ops.def("transpose_half", &ops::transposeHalf, py::arg("graph"), py::arg("tensor"),
          py::arg("prog"), py::arg("name"), "A float16 [m, n] transposed into a new [n, m].");
  ops.def(
      "matmul",
      [](Graph& g, const Tensor& a, const Tensor& b, Sequence& prog, const std::string& name,
         bool ta, bool tb) {
        return ops::matmul(g, a, b, prog, name, {ta, tb});
      },
      py::arg("graph"), py::arg("a"), py::arg("b"), py::arg("prog"), py::arg("name"),
      py::arg("transpose_a") = false, py::arg("transpose_b") = false,
      "op(a) [m, k] times op(b) [k, n], appended to prog: float32, or float16 operands with a "
      "float32 result (the matrix unit's AMP.H).");
  ops.def("add", &ops::add, py::arg("graph"), py::arg("a"), py::arg("b"), py::arg("prog"),
          py::arg("name"), "a + b.");
  ops.def("sub", &ops::sub, py::arg("graph"), py::arg("a"), py::arg("b"), py::arg("prog"),
          py::arg("name"), "a - b.");
  ops.def("mul", &ops::mul, py::arg("graph"), py::arg("a"), py::arg("b"), py::arg("prog"),
          py::arg("name"), "a * b, element by element.");
  ops.def("scale", &ops::scale, py::arg("graph"), py::arg("a"), py::arg("scale"), py::arg("prog"),
          py::arg("name"), "a * scale.");
  ops.def("relu", &ops::relu, py::arg("graph"), py::arg("a"), py::arg("prog"), py::arg("name"),
          "max(a, 0).");
  ops.def("add_bias", &ops::addBias, py::arg("graph"), py::arg("x"), py::arg("bias"),
          py::arg("prog"), py::arg("name"), "x [rows, n] + bias [n].");
  ops.def("reduce_sum", &ops::reduceSum, py::arg("graph"), py::arg("x"), py::arg("axis"),
          py::arg("prog"), py::arg("name"), "Sum of a 2-D tensor along axis.");
  ops.def("fill", &ops::fill, py::arg("graph"), py::arg("tensor"), py::arg("value"),
          py::arg("prog"), py::arg("name"), "Set every element to value.");
}

}  // namespace tessera::python
