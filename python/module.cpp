// The Python module tessera (docs/python.md): devices, executables and the Engine with NumPy
// arrays, here; the graph API and the op library in graph_bindings.cpp; autodiff in
// autodiff_bindings.cpp; ONNX import in onnx_bindings.cpp. Every tessera::Error becomes
// tessera.Error (a RuntimeError) carrying the C++ message.
#include <fmt/format.h>
#include <pybind11/functional.h>
#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>

#include "bindings.hpp"
#include "program_loader.hpp"
#include "tessera/device.hpp"
#include "tessera/engine.hpp"
#include "tessera/error.hpp"

namespace tessera::python {

ElemType elemTypeOf(const py::object& type, const std::string& what) {
  std::string name;
  if (py::isinstance<py::str>(type)) {
    name = type.cast<std::string>();
  } else {
    name = py::str(py::dtype::from_args(type)).cast<std::string>();
  }
  if (name == "float32") return ElemType::Float32;
  if (name == "float16") return ElemType::Float16;
  if (name == "int32") return ElemType::Int32;
  throw Error(fmt::format("{}: element type {} is not float32, float16 or int32", what, name));
}

py::dtype dtypeOf(ElemType type) {
  // A float16 tensor's bytes are binary16 bit patterns, NumPy's float16.
  if (type == ElemType::Float16) return py::dtype("float16");
  return type == ElemType::Float32 ? py::dtype::of<float>() : py::dtype::of<int32_t>();
}

std::string shapeText(const std::vector<size_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::vector<size_t> arrayShape(const py::array& a) {
  return std::vector<size_t>(a.shape(), a.shape() + a.ndim());
}

py::array toElements(const py::handle& array, ElemType type, const std::string& what) {
  py::array a = py::array::ensure(array);
  if (!a) throw Error(fmt::format("{}: expected a NumPy array or a sequence of numbers", what));
  const char kind = a.dtype().kind();
  if (type == ElemType::Float16) {
    // A float16 tensor holds binary16 bit patterns: NumPy's float16 as it is; other numbers
    // rounded by NumPy's conversion (nearest-even, as AMP.CVTHS rounds).
    if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b') {
      throw Error(fmt::format("{}: a float16 tensor takes numbers, not an array of dtype {}", what,
                              py::str(a.dtype()).cast<std::string>()));
    }
    const py::dtype half("float16");
    if (!a.dtype().is(half)) a = a.attr("astype")(half);
    return py::array::ensure(a, py::array::c_style);
  }
  if (type == ElemType::Float32) {
    if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b') {
      throw Error(fmt::format("{}: a float32 tensor takes numbers, not an array of dtype {}", what,
                              py::str(a.dtype()).cast<std::string>()));
    }
    return py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);
  }
  if (kind != 'i' && kind != 'u' && kind != 'b') {
    throw Error(fmt::format("{}: an int32 tensor takes integers, not an array of dtype {}", what,
                            py::str(a.dtype()).cast<std::string>()));
  }
  if (a.size() > 0 && !a.dtype().is(py::dtype::of<int32_t>())) {
    // Wider integers must fit: compare the extremes (NumPy does the reduction).
    const py::object lo = a.attr("min")(), hi = a.attr("max")();
    if (lo < py::int_(INT32_MIN) || hi > py::int_(INT32_MAX)) {
      throw Error(fmt::format("{}: values from {} to {} do not fit int32", what,
                              py::str(lo).cast<std::string>(), py::str(hi).cast<std::string>()));
    }
  }
  return py::array_t<int32_t, py::array::c_style | py::array::forcecast>::ensure(a);
}

std::vector<float> floatsOf(const py::handle& array, const std::string& what) {
  py::array a = toElements(array, ElemType::Float32, what);
  const auto* p = static_cast<const float*>(a.data());
  return std::vector<float>(p, p + a.size());
}

std::vector<uint16_t> halvesOf(const py::handle& array, const std::string& what) {
  py::array a = toElements(array, ElemType::Float16, what);
  std::vector<uint16_t> v(static_cast<size_t>(a.size()));
  std::memcpy(v.data(), a.data(), v.size() * 2);
  return v;
}

size_t elementBytes(ElemType type) {
  return type == ElemType::Float16 ? 2 : 4;
}

std::vector<int32_t> intsOf(const py::handle& array, const std::string& what) {
  py::array a = toElements(array, ElemType::Int32, what);
  const auto* p = static_cast<const int32_t*>(a.data());
  return std::vector<int32_t>(p, p + a.size());
}

namespace {

const char* reasonName(StopReason r) {
  switch (r) {
    case StopReason::Halted:
      return "halted";
    case StopReason::Trap:
      return "trap";
    case StopReason::MaxCycles:
      return "max_cycles";
    case StopReason::HostSync:
      return "host_sync";
    case StopReason::SyncBreak:
      return "sync_break";
  }
  return "unknown";
}

constexpr uint64_t kNoLimit = ~uint64_t{0};

// An Engine with the arrays its streams read and fill kept alive, and the element types and shapes
// of its tensors when the executable came from a graph.
class PyEngine {
 public:
  PyEngine(Device& dev, const ExecutableHandle& exe)
      : meta_(exe.tensors),
        streamMeta_(exe.streams),
        exe_(exe.executable),
        engine_(dev, exe.executable) {}

  void writeTensor(const std::string& name, const py::handle& array) {
    const TensorMeta m = meta(name, array);
    py::array a = toElements(array, m.type, fmt::format("tensor \"{}\"", name));
    checkSize(name, "tensor", a, engine_.tensorBytes(name));
    engine_.writeTensor(name, std::span(static_cast<const uint8_t*>(a.data()), a.nbytes()));
  }

  py::array readTensor(const std::string& name, const py::object& dtype, const py::object& shape) {
    const uint64_t bytes = engine_.tensorBytes(name);
    auto it = meta_.find(name);
    ElemType type = it != meta_.end() ? it->second.type : ElemType::Float32;
    if (!dtype.is_none()) type = elemTypeOf(dtype, fmt::format("tensor \"{}\"", name));
    const size_t size = elementBytes(type);
    std::vector<size_t> dims{static_cast<size_t>(bytes / size)};
    if (!shape.is_none()) {
      dims = shape.cast<std::vector<size_t>>();
    } else if (it != meta_.end()) {
      dims = it->second.shape;
    }
    size_t elements = 1;
    for (size_t d : dims) elements *= d;
    if (elements * size != bytes) {
      throw Error(fmt::format("tensor \"{}\" has {} {} elements, not the {} of shape {}", name,
                              bytes / size, elemTypeName(type), elements, shapeText(dims)));
    }
    py::array out(dtypeOf(type), dims);
    engine_.readTensor(name, std::span(static_cast<uint8_t*>(out.mutable_data()), bytes));
    return out;
  }

  void connectStream(const std::string& name, const py::handle& array) {
    const int index = exe_.findStream(name);
    if (index < 0) {
      throw Error(
          fmt::format("no stream \"{}\" in the executable (streams: {})", name, streamNames()));
    }
    const bool toDevice = exe_.streams[index].direction == StreamDirection::HostToDevice;
    const std::string what = fmt::format("stream \"{}\"", name);
    ElemType type = ElemType::Float32;
    if (auto it = streamMeta_.find(name); it != streamMeta_.end()) {
      type = it->second.type;
    } else if (py::isinstance<py::array>(array)) {
      type = elemTypeOf(py::reinterpret_borrow<py::array>(array).dtype(), what);
    }
    if (toDevice) {
      // The bytes are copied now: later changes to the array do not reach the device.
      py::array a = toElements(array, type, what);
      auto data = std::make_shared<std::vector<uint8_t>>(
          static_cast<const uint8_t*>(a.data()),
          static_cast<const uint8_t*>(a.data()) + a.nbytes());
      inputs_.push_back(data);
      engine_.connectStream(name, std::span(*data));
      return;
    }
    // Device to host: the array is filled in place as the device sends.
    if (!py::isinstance<py::array>(array)) {
      throw Error(fmt::format("{} goes to the host: give a writable NumPy array to fill", what));
    }
    py::array a = py::reinterpret_borrow<py::array>(array);
    if (!a.dtype().is(dtypeOf(type))) {
      throw Error(fmt::format("{} holds {} elements; the array is {}", what, elemTypeName(type),
                              py::str(a.dtype()).cast<std::string>()));
    }
    if (!a.writeable() || !(a.flags() & py::array::c_style)) {
      throw Error(fmt::format("{}: the array to fill must be writable and C-contiguous", what));
    }
    outputs_.push_back(a);
    engine_.connectStream(name, std::span(static_cast<uint8_t*>(a.mutable_data()), a.nbytes()));
  }

  RunResult run(uint64_t maxCycles) {
    py::gil_scoped_release release;
    RunResult r = engine_.run(maxCycles);
    cycles_ += r.cycles;
    return r;
  }

  Engine& engine() { return engine_; }
  std::string streamNames() const {
    std::vector<std::string> names;
    for (const ExeStream& s : exe_.streams) names.push_back(s.name);
    return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
  }

 private:
  TensorMeta meta(const std::string& name, const py::handle& array) const {
    if (auto it = meta_.find(name); it != meta_.end()) return it->second;
    TensorMeta m;
    if (py::isinstance<py::array>(array)) {
      m.type = elemTypeOf(py::reinterpret_borrow<py::array>(array).dtype(),
                          fmt::format("tensor \"{}\"", name));
    }
    return m;
  }
  void checkSize(const std::string& name, const char* kind, const py::array& a,
                 uint64_t bytes) const {
    if (static_cast<uint64_t>(a.nbytes()) == bytes) {
      auto it = meta_.find(name);
      if (it == meta_.end() || a.ndim() <= 1 || arrayShape(a) == it->second.shape) return;
    }
    auto it = meta_.find(name);
    const std::string want =
        it != meta_.end() ? shapeText(it->second.shape) : fmt::format("{} elements", bytes / 4);
    throw Error(fmt::format("{} \"{}\" is {}; the array is {} ({} elements)", kind, name, want,
                            shapeText(arrayShape(a)), a.size()));
  }

  std::map<std::string, TensorMeta> meta_, streamMeta_;
  Executable exe_;
  Engine engine_;
  std::vector<std::shared_ptr<std::vector<uint8_t>>> inputs_;
  std::vector<py::array> outputs_;
  uint64_t cycles_ = 0;
};

ExecutableHandle loadExecutable(const std::string& path) {
  return ExecutableHandle{Executable::fromFile(path), {}, {}};
}

py::dict tileStats(const TileStats& s, unsigned contexts) {
  py::dict d;
  d["cycles"] = s.cycles;
  d["instructions"] = s.instructions;
  const size_t n = std::min<size_t>(contexts, std::size(s.contextInstructions));
  std::vector<uint64_t> perContext(s.contextInstructions, s.contextInstructions + n);
  d["context_instructions"] = perContext;
  d["idle_slots"] = s.idleSlots;
  d["sync_wait_cycles"] = s.syncWaitCycles;
  d["exchange_cycles"] = s.exchangeCycles;
  d["halted"] = s.halted;
  d["exit_code"] = s.exitCode;
  return d;
}

}  // namespace

void bindRuntime(py::module_& m) {
  py::enum_<StopReason>(m, "StopReason", "Why a run stopped.")
      .value("HALTED", StopReason::Halted)
      .value("TRAP", StopReason::Trap)
      .value("MAX_CYCLES", StopReason::MaxCycles)
      .value("HOST_SYNC", StopReason::HostSync)
      .value("SYNC_BREAK", StopReason::SyncBreak);

  py::class_<RunResult>(m, "RunResult", "What a run ended with.")
      .def_readonly("reason", &RunResult::reason, "Why it stopped (StopReason).")
      .def_readonly("cycles", &RunResult::cycles, "Chip cycles simulated.")
      .def_readonly("exit_code", &RunResult::exitCode, "Tile 0's exit code when halted.")
      .def_readonly("host_sync_id", &RunResult::hostSyncId, "The pending sync's id.")
      .def_property_readonly(
          "halted", [](const RunResult& r) { return r.reason == StopReason::Halted; },
          "True when every tile halted.")
      .def_property_readonly(
          "trap",
          [](const RunResult& r) -> py::object {
            if (r.reason != StopReason::Trap) return py::none();
            return py::str(describeTrap(r.trap));
          },
          "The trap's description when reason is TRAP, else None.")
      .def("__repr__", [](const RunResult& r) {
        return fmt::format("RunResult(reason={}, cycles={}, exit_code={}{})", reasonName(r.reason),
                           r.cycles, r.exitCode,
                           r.reason == StopReason::Trap ? ", trap=" + describeTrap(r.trap) : "");
      });

  py::class_<ChipShape>(m, "Target",
                        "The shape of a chip (tessera::ChipShape): what a graph is compiled for.")
      .def(py::init([](unsigned tiles, uint32_t tileMemBytes, unsigned contexts) {
             ChipShape s;
             if (tiles != 0) s.tiles = tiles;
             if (tileMemBytes != 0) s.tileMemBytes = tileMemBytes;
             if (contexts != 0) s.contexts = contexts;
             return s;
           }),
           py::arg("tiles") = 0, py::arg("tile_mem_bytes") = 0, py::arg("contexts") = 0,
           "A chip of tiles tiles (0: the default chip's values for every argument left 0).")
      .def_static("preset", &ChipShape::preset, py::arg("name"),
                  "A named chip: \"default\", \"mk2\" or \"ice40\".")
      .def_readwrite("tiles", &ChipShape::tiles, "Tiles in the chip.")
      .def_readwrite("tile_mem_bytes", &ChipShape::tileMemBytes, "SRAM bytes per tile.")
      .def_readwrite("contexts", &ChipShape::contexts, "Contexts per tile.")
      .def_readwrite("has_fpu", &ChipShape::hasFpu, "False: integer-only tiles.")
      .def_readwrite("has_muldiv", &ChipShape::hasMulDiv, "False: tiles without M.")
      .def_readwrite("counter_bits", &ChipShape::counterBits, "Width of the tile counters.")
      .def_readwrite("has_matrix_unit", &ChipShape::hasMatrixUnit,
                     "True: the tiles have the matrix unit (docs/tile.md).")
      .def(py::self == py::self)
      .def("__repr__", [](const ChipShape& s) {
        return fmt::format("Target(tiles={}, tile_mem_bytes={}, contexts={})", s.tiles,
                           s.tileMemBytes, s.contexts);
      });

  py::class_<ChipInfo, ChipShape>(m, "ChipInfo", "What a device reports about its chip.")
      .def_readonly("backend", &ChipInfo::backend, "\"model\", \"rtl\", \"link:model\", ...")
      .def_readonly("max_payload", &ChipInfo::maxPayload, "Largest link frame payload (0: none).");

  py::class_<Device, std::unique_ptr<Device>>(
      m, "Device", "A simulated or physical tessera chip; open one with tessera.open_device().")
      .def_property_readonly("info", &Device::info, "The chip's parameters (ChipInfo).")
      .def_property_readonly(
          "target", [](const Device& d) { return ChipShape::of(d.info()); },
          "The Target a graph for this device is compiled for.")
      .def("reset", &Device::reset, "Reset registers, counters and consoles (memory is kept).")
      .def(
          "run",
          [](Device& d, uint64_t maxCycles) {
            py::gil_scoped_release release;
            return d.run(maxCycles);
          },
          py::arg("max_cycles") = kNoLimit, "Run from the current state (RunResult).")
      .def("console", &Device::console, py::arg("tile") = 0,
           "Console text a tile wrote since reset.")
      .def(
          "stats",
          [](const Device& d, unsigned tile) {
            if (tile >= d.info().tiles) {
              throw Error(fmt::format("tile {} does not exist: the chip has {} tiles", tile,
                                      d.info().tiles));
            }
            return tileStats(d.stats(tile), d.info().contexts);
          },
          py::arg("tile") = 0,
          "Counters of a tile since reset: a dict of cycles, instructions, "
          "context_instructions, idle_slots, sync_wait_cycles, exchange_cycles, halted, "
          "exit_code.")
      .def(
          "read_memory",
          [](Device& d, unsigned tile, uint32_t addr, uint32_t size) {
            std::string bytes(size, '\0');
            d.readMemory(tile, addr,
                         std::span(reinterpret_cast<uint8_t*>(bytes.data()), bytes.size()));
            return py::bytes(bytes);
          },
          py::arg("tile"), py::arg("addr"), py::arg("size"), "Bytes of a tile's SRAM.")
      .def(
          "write_memory",
          [](Device& d, unsigned tile, uint32_t addr, const py::bytes& data) {
            const std::string s = data;
            d.writeMemory(tile, addr,
                          std::span(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
          },
          py::arg("tile"), py::arg("addr"), py::arg("data"), "Write bytes into a tile's SRAM.")
      .def(
          "run_elf",
          [](Device& d, const std::string& path, bool allTiles, uint64_t maxCycles) {
            if (allTiles) {
              loadProgramOnAllTiles(d, path);
            } else {
              loadProgram(d, path, 0);
              // As tessera-run: the other tiles hold no program.
              for (unsigned t = 1; t < d.info().tiles; ++t) d.setTileEnabled(t, false);
            }
            py::gil_scoped_release release;
            return d.run(maxCycles);
          },
          py::arg("path"), py::arg("all_tiles") = false, py::arg("max_cycles") = kNoLimit,
          "Load a tile program (ELF) on tile 0 (the other tiles disabled, as tessera-run does), or "
          "on every tile, reset and run it; the console is console(tile).")
      .def(
          "run_tess",
          [](Device& d, const py::object& exe, uint64_t maxCycles) {
            const ExecutableHandle h = py::isinstance<py::str>(exe)
                                           ? loadExecutable(exe.cast<std::string>())
                                           : exe.cast<ExecutableHandle>();
            PyEngine engine(d, h);
            return engine.run(maxCycles);
          },
          py::arg("executable"), py::arg("max_cycles") = kNoLimit,
          "Load a *.tess (a path or an Executable) and run it with an Engine; streams must be "
          "unneeded (use Engine to connect them).");

  m.def(
      "open_device",
      [](const std::string& spec, unsigned tiles, uint32_t tileMemBytes, const std::string& preset,
         unsigned threads, const std::string& traceVcd) {
        DeviceOptions o;
        o.tiles = tiles;
        o.tileMemBytes = tileMemBytes;
        o.preset = preset;
        o.threads = threads;
        o.traceVcd = traceVcd;
        return openDevice(spec, o);
      },
      py::arg("spec") = "model", py::kw_only(), py::arg("tiles") = 0, py::arg("tile_mem_bytes") = 0,
      py::arg("preset") = "", py::arg("threads") = 0, py::arg("trace_vcd") = "",
      "Open a device by its string: \"model\", \"rtl\", \"tcp://HOST:PORT\", "
      "\"serial:PATH[?baud=N]\" (tiles 0 = the default chip).");

  py::class_<ExecutableHandle>(m, "Executable", "A compiled program (*.tess).")
      .def_static("load", &loadExecutable, py::arg("path"), "Read and check a *.tess file.")
      .def(
          "save",
          [](const ExecutableHandle& h, const std::string& path) { h.executable.writeFile(path); },
          py::arg("path"), "Write the *.tess file.")
      .def_property_readonly(
          "target", [](const ExecutableHandle& h) { return h.executable.target; },
          "The chip it was built for.")
      .def_property_readonly(
          "tensors",
          [](const ExecutableHandle& h) {
            std::vector<std::string> names;
            for (const ExeTensor& t : h.executable.tensors) names.push_back(t.name);
            return names;
          },
          "Names of its tensors.")
      .def_property_readonly(
          "streams",
          [](const ExecutableHandle& h) {
            std::vector<std::pair<std::string, std::string>> s;
            for (const ExeStream& x : h.executable.streams) {
              s.emplace_back(x.name, streamDirectionName(x.direction));
            }
            return s;
          },
          "Its streams: (name, \"host-to-device\" or \"device-to-host\").");
  m.def("load", &loadExecutable, py::arg("path"), "Read and check a *.tess file (Executable).");

  py::class_<PyEngine>(m, "Engine", "Runs an Executable on a Device, with NumPy arrays in and out.")
      .def(py::init<Device&, const ExecutableHandle&>(), py::arg("device"), py::arg("executable"),
           py::keep_alive<1, 2>(), "Check the executable against the device, load it, reset.")
      .def("write_tensor", &PyEngine::writeTensor, py::arg("name"), py::arg("array"),
           "Write a tensor from an array of its element count (and shape, when known).")
      .def("read_tensor", &PyEngine::readTensor, py::arg("name"), py::arg("dtype") = py::none(),
           py::arg("shape") = py::none(),
           "Read a tensor as an array (its graph's type and shape, else float32 and flat, unless "
           "given).")
      .def("connect_stream", &PyEngine::connectStream, py::arg("name"), py::arg("array"),
           "Connect a stream: a host-to-device stream reads a copy of the array from its start; "
           "a device-to-host stream fills the (writable) array from its start.")
      .def("run", &PyEngine::run, py::arg("max_cycles") = kNoLimit,
           "Run until every tile halts, servicing host syncs (RunResult).")
      .def(
          "restart", [](PyEngine& e) { e.engine().restart(); },
          "Start the program again on the memory as it is (streams continue).")
      .def(
          "set_unconnected_ok", [](PyEngine& e, bool ok) { e.engine().setUnconnectedOk(ok); },
          py::arg("ok") = true,
          "Let run() proceed with unconnected streams (zeros in, data out dropped).")
      .def(
          "stats",
          [](PyEngine& e) {
            const EngineStats s = e.engine().stats();
            py::dict d;
            d["host_syncs"] = s.hostSyncs;
            d["host_to_device_bytes"] = s.hostToDeviceBytes;
            d["device_to_host_bytes"] = s.deviceToHostBytes;
            d["device_seconds"] = s.deviceSeconds;
            d["host_io_seconds"] = s.hostIoSeconds;
            return d;
          },
          "Host-side measurements since construction (dict).");
}

}  // namespace tessera::python

PYBIND11_MODULE(_tessera, m) {
  namespace tp = tessera::python;
  m.doc() = "tessera: devices, the graph compiler, the op library and autodiff (docs/python.md)";
  pybind11::register_exception<tessera::Error>(m, "Error", PyExc_RuntimeError);
  tp::bindRuntime(m);
  tp::bindGraph(m);
  tp::bindAutodiff(m);
  tp::bindOnnx(m);
}
