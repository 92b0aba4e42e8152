// The graph (docs/compiler.md): variables and constants with a tile mapping, compute sets of
// vertices whose fields are connected to tensors, host streams and named tensors. A Graph holds
// only a description; tessera::compile turns it and a Program into an Executable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tessera/chip_shape.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

/// The chip a graph is compiled for; an executable runs only on a device reporting its tiles,
/// tile memory and contexts. Target::of(device.info()) targets an open device,
/// Target::preset("mk2") a named chip; Target{} is the default chip (TESS_DEFAULT_TILES tiles).
using Target = ChipShape;

/// Kinds of vertex fields (tessera/vertex.hpp).
enum class FieldKind : uint8_t { Input, Output, InOut, Param };

/// One field of a codelet, as its TESSERA_VERTEX declares it.
struct CodeletField {
  std::string name;
  FieldKind kind = FieldKind::Input;
  std::string type;  ///< "float", "int32_t" or "uint32_t"
};

class CodeletLibrary;

/// A codelet found in the codelet library.
struct CodeletInfo {
  std::string name;
  uint32_t entry = 0;       ///< address of its entry function in the image it was read from
  uint32_t stateBytes = 0;  ///< 8 bytes per field
  std::vector<CodeletField> fields;
  /// Its vertices use the tile's matrix unit state or meet by context id
  /// (TESSERA_EXCLUSIVE_VERTEX): no other compute set's vertices run beside them on a tile.
  bool exclusive = false;
  /// The field called name, or nullptr.
  const CodeletField* field(const std::string& name) const;
};

/// Handle of a compute set.
struct ComputeSet {
  uint32_t id = 0;
};

/// Handle of a vertex.
struct VertexRef {
  uint32_t id = 0;
};

/// Handle of a host stream.
struct DataStream {
  uint32_t id = 0;
};

/// Graph contents, read by the compiler (docs/compiler.md).
struct GraphVariable {
  std::string name;
  ElemType type = ElemType::Float32;
  std::vector<size_t> shape;
  std::vector<int32_t> tileOf;  ///< tile of each element, -1 = unmapped
  std::vector<uint32_t>
      initial;  ///< initial bits of each element (low 16 for float16); empty = zeros
  bool constant = false;
  uint32_t align = 4;  ///< bytes its first element on each tile is aligned to (setAlignment)
};

/// A vertex connection or value.
struct GraphField {
  std::string name;
  Tensor tensor;       ///< regions
  uint32_t value = 0;  ///< Param fields (bits)
  bool hasValue = false;
  uint32_t align = 4;      ///< bytes the region's start is aligned to (setFieldAlignment)
  bool writeOnly = false;  ///< an InOut field this vertex only writes (setFieldWriteOnly)
  /// The vertex reads its region: an Input, or an InOut it does not only write.
  bool reads(FieldKind kind) const {
    return kind == FieldKind::Input || (kind == FieldKind::InOut && !writeOnly);
  }
};

/// A vertex in a compute set.
struct GraphVertex {
  uint32_t computeSet = 0;
  std::string codelet;
  int32_t tile = -1;
  std::vector<GraphField> fields;
  uint64_t flops = 0;  ///< floating-point operations per run (Graph::setFlops)
};

/// A host stream.
struct GraphStream {
  std::string name;
  ElemType type = ElemType::Float32;
  size_t elements = 0;
  bool toDevice = true;
};

/// A graph for one target.
class Graph {
 public:
  /// A graph for target using the codelet library at codeletsPath (default: the
  /// libtessera_codelets.a of this build; see defaultCodeletsPath()).
  explicit Graph(Target target, std::string codeletsPath = defaultCodeletsPath());
  ~Graph();
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;

  /// Path of the codelet library: $TESSERA_CODELETS, else the installed SDK's (for a program
  /// built with its CMake package, an installed tool or the Python module), else this build's.
  static std::string defaultCodeletsPath();

  /// The target.
  const Target& target() const;
  /// Let the library's element-by-element ops cut a tile's short runs of a tensor into one chunk
  /// per context across the runs (docs/library.md, "Chunks across a tile's runs"). Off by default:
  /// it changes the vertices, hence the cycles, of graphs built without it.
  void setSpanRuns(bool on);
  /// Whether setSpanRuns is on.
  bool spanRuns() const;
  /// Record that `copy` (a variable on `tile`) holds source's elements in source's row-major
  /// order, so that later ops on that tile may read it instead of gathering source again (the
  /// library's matmul keeps op(a)'s gathered blocks so: docs/library.md, "Copies of a on the
  /// tiles"). The graph only keeps the record; the caller writes the copy.
  void addTileCopy(const Tensor& source, unsigned tile, const Tensor& copy);
  /// The copy of exactly source's elements (the same runs) recorded for tile, if any.
  std::optional<Tensor> tileCopy(const Tensor& source, unsigned tile) const;
  /// The codelet called name; throws naming the known ones if it does not exist.
  const CodeletInfo& codelet(const std::string& name) const;
  /// Every codelet of the library (entry: its address in the image of every codelet; a compiled
  /// graph links its own image of the codelets it uses).
  const std::vector<CodeletInfo>& codelets() const;

  /// A new variable (unmapped; map it with setTileMapping before compiling).
  Tensor addVariable(ElemType type, std::vector<size_t> shape, const std::string& name);
  /// A new float32 constant with the given values (one per element), unmapped.
  Tensor addConstant(std::vector<size_t> shape, std::span<const float> values,
                     const std::string& name);
  /// A new int32 constant.
  Tensor addConstant(std::vector<size_t> shape, std::span<const int32_t> values,
                     const std::string& name);
  /// Map every element of t to tile.
  void setTileMapping(const Tensor& t, unsigned tile);
  /// Tile of each element of t (-1 = unmapped).
  std::vector<int32_t> tileMapping(const Tensor& t) const;
  /// Initial values of the variable elements of t (loaded with the executable).
  void setInitialValue(const Tensor& t, std::span<const float> values);
  /// Initial values of int32 elements.
  void setInitialValue(const Tensor& t, std::span<const int32_t> values);
  /// Initial values of float16 elements, as binary16 bit patterns.
  void setInitialValue(const Tensor& t, std::span<const uint16_t> values);

  /// A new compute set.
  ComputeSet addComputeSet(const std::string& name);
  /// A new vertex of codelet in cs, with optional field connections.
  VertexRef addVertex(ComputeSet cs, const std::string& codelet,
                      std::vector<std::pair<std::string, Tensor>> connections = {});
  /// Connect a region field to a tensor (its elements in row-major order).
  void connect(VertexRef v, const std::string& field, const Tensor& t);
  /// Set a Param field (float).
  void setFieldValue(VertexRef v, const std::string& field, float value);
  /// Set a Param field (unsigned).
  void setFieldValue(VertexRef v, const std::string& field, uint32_t value);
  /// Place a vertex on a tile.
  void setTileMapping(VertexRef v, unsigned tile);
  /// The floating-point operations one run of v does, for the reports' FLOPs and efficiency
  /// (docs/compiler.md, "FLOPs": a fused or unfused multiply-add counts 2, any other arithmetic
  /// result 1, moves 0). A vertex whose op does not say counts 0.
  void setFlops(VertexRef v, uint64_t flops);
  /// Give a region field a start aligned to `bytes` (a power of two, at least 4): connected
  /// elements in place at another address are gathered into an aligned buffer instead.
  void setFieldAlignment(VertexRef v, const std::string& field, uint32_t bytes);
  /// Declare that this vertex writes its InOut field without reading it (a codelet's mode that
  /// overwrites its output): liveness then takes the field's use for a write, so a variable
  /// that such a vertex writes whole need not keep its value from before.
  void setFieldWriteOnly(VertexRef v, const std::string& field);
  /// Place each variable t refers to so that its elements on every tile start at a multiple of
  /// `bytes` (a power of two, at least 4), as setFieldAlignment's fields read them in place.
  void setAlignment(const Tensor& t, uint32_t bytes);

  /// A host-to-device stream of `elements` elements per copy.
  DataStream addHostToDeviceFIFO(const std::string& name, ElemType type, size_t elements);
  /// A device-to-host stream.
  DataStream addDeviceToHostFIFO(const std::string& name, ElemType type, size_t elements);
  /// Name a tensor so that Engine::readTensor / writeTensor reach it.
  void exposeTensor(const std::string& name, const Tensor& t);

  // Read access for the compiler.
  const std::vector<GraphVariable>& variables() const;
  const std::vector<std::string>& computeSetNames() const;
  const std::vector<GraphVertex>& vertices() const;
  const std::vector<GraphStream>& streams() const;
  const std::vector<std::pair<std::string, Tensor>>& exposedTensors() const;
  /// Where the image of every codelet ends: an upper bound of the image a compiled graph loads,
  /// which holds only the codelets its vertices use (for planning memory before compiling).
  uint32_t imageEnd() const;
  /// The relocatable codelet library the compiler links each graph's image from.
  const std::shared_ptr<const CodeletLibrary>& codeletLibrary() const;
  /// Identity shared by the tensors of this graph.
  uint64_t id() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  void checkTensor(const Tensor& t, const char* what) const;
  GraphVertex& vertex(VertexRef v, const std::string& field, bool param);
};

}  // namespace tessera
