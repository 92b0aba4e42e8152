// Shared pieces of the Python module's bindings (docs/python.md): NumPy conversions with the
// checks every binding makes, and the executable with the element types and shapes its tensors and
// streams had in the graph (a *.tess file does not record them).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/executable.hpp"
#include "tessera/tensor.hpp"

namespace tessera::python {

namespace py = pybind11;

/// Element type and shape of a tensor or stream (a stream: one dimension, its elements per copy).
struct TensorMeta {
  ElemType type = ElemType::Float32;
  std::vector<size_t> shape;
};

/// An executable, and what the graph said about its named tensors and streams (empty for a file).
struct ExecutableHandle {
  Executable executable;
  std::map<std::string, TensorMeta> tensors;
  std::map<std::string, TensorMeta> streams;
};

/// ElemType of "float32"/"int32", numpy.float32/numpy.int32 or their dtypes; throws naming what.
ElemType elemTypeOf(const py::object& type, const std::string& what);
/// The numpy dtype of an element type.
py::dtype dtypeOf(ElemType type);
/// "[2, 3]".
std::string shapeText(const std::vector<size_t>& shape);
/// The shape of an array.
std::vector<size_t> arrayShape(const py::array& a);
/// array as a C-contiguous array of type's elements: float32 takes any real or integer array
/// (converted), int32 only integer arrays whose values fit. Throws tessera::Error naming what.
py::array toElements(const py::handle& array, ElemType type, const std::string& what);
/// The float32 values of array (see toElements).
std::vector<float> floatsOf(const py::handle& array, const std::string& what);
/// The int32 values of array.
std::vector<int32_t> intsOf(const py::handle& array, const std::string& what);
/// The binary16 bit patterns of array for a float16 tensor (see toElements: a float16 array as it
/// is, other numbers rounded to float16 by NumPy, nearest-even).
std::vector<uint16_t> halvesOf(const py::handle& array, const std::string& what);
/// Bytes per element: 2 for float16, 4 for float32 and int32.
size_t elementBytes(ElemType type);

/// Bind Device, Executable, Engine, RunResult, counters (module.cpp).
void bindRuntime(py::module_& m);
/// Bind Target, Graph, Tensor, programs, compile and the op library (graph_bindings.cpp).
void bindGraph(py::module_& m);
/// Bind the autodiff submodule: Tape, Value, typed builders, Optimizer (autodiff_bindings.cpp).
void bindAutodiff(py::module_& m);
/// Bind the onnx submodule: Model, infer, train (onnx_bindings.cpp).
void bindOnnx(py::module_& m);

}  // namespace tessera::python
