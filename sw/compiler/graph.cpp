#include "tessera/graph.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <link.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <string_view>

#include "codelet_linker.hpp"
#include "exchange_encoding.hpp"
#include "tessera/control.h"
#include "tessera/error.hpp"

// Defined by the source file the installed CMake package adds to every program that links
// tessera::tessera (cmake/tesseraConfig.cmake.in): that SDK's codelet library. Weak and
// undefined everywhere else, so it reads as null (docs/sdk.md, "Where the codelets are").
extern "C" __attribute__((weak)) const char* tessera_sdk_codelets_path();

namespace tessera {

const CodeletField* CodeletInfo::field(const std::string& fieldName) const {
  for (const CodeletField& f : fields) {
    if (f.name == fieldName) return &f;
  }
  return nullptr;
}

namespace {

std::atomic<uint64_t> nextGraphId{1};

bool typeMatches(const std::string& fieldType, ElemType t) {
  if (t == ElemType::Float32) return fieldType == "float";
  if (t == ElemType::Float16) return fieldType == "uint16_t";
  return fieldType == "int32_t" || fieldType == "uint32_t" || fieldType == "int";
}

}  // namespace

struct Graph::Impl {
  uint64_t id = 0;
  Target target;
  std::string codeletsPath;
  std::vector<CodeletInfo> codelets;
  std::map<std::string, size_t, std::less<>> codeletIndex;
  uint32_t imageEnd = 0;
  std::shared_ptr<const CodeletLibrary> library;
  std::vector<GraphVariable> variables;
  std::vector<std::string> computeSets;
  std::vector<GraphVertex> vertices;
  std::vector<GraphStream> streams;
  std::vector<std::pair<std::string, Tensor>> exposed;
  bool spanRuns = false;
  struct TileCopy {
    std::vector<ElementRun> source;
    unsigned tile;
    Tensor copy;
  };
  std::vector<TileCopy> tileCopies;
};

Graph::Graph(Target target, std::string codeletsPath) : impl_(std::make_unique<Impl>()) {
  if (target.tiles == 0 || target.tiles > xchg::kMaxBus + 1 || target.tileMemBytes % 4 != 0 ||
      target.tileMemBytes == 0 || target.tileMemBytes > xchg::kMaxAddr + 1) {
    throw Error(
        fmt::format("graph target of {} tiles x {} bytes is not supported (1..{} tiles, memory a "
                    "multiple of 4 up to {} bytes: the fields of an exchange receive operand)",
                    target.tiles, target.tileMemBytes, xchg::kMaxBus + 1, xchg::kMaxAddr + 1));
  }
  impl_->id = nextGraphId++;
  impl_->target = target;
  impl_->codeletsPath = codeletsPath;
  // The image of every codelet gives the list addVertex checks against and the largest image a
  // compiled graph can have; compile() links each graph's own (codelet_linker.hpp).
  impl_->library = CodeletLibrary::fromFile(codeletsPath);
  const std::shared_ptr<const CodeletImage> all = impl_->library->linkAll();
  impl_->codelets = all->codelets;
  for (size_t i = 0; i < impl_->codelets.size(); ++i)
    impl_->codeletIndex[impl_->codelets[i].name] = i;
  impl_->imageEnd = all->imageEnd;
}

Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

namespace {

// The file of the executable or shared object holding this code: an installed tool, the Python
// module, or a user's program.
std::filesystem::path binaryHoldingCompiler() {
  struct Search {
    uintptr_t address = 0;
    bool found = false;
    std::string file;
  } search;
  search.address = reinterpret_cast<uintptr_t>(&binaryHoldingCompiler);
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        for (unsigned i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
          if (ph.p_type == PT_LOAD && s->address >= start && s->address < start + ph.p_memsz) {
            s->found = true;
            s->file = info->dlpi_name;
            return 1;
          }
        }
        return 0;
      },
      &search);
  if (!search.found) return {};
  std::error_code ec;
  // The main program has no name in the list of loaded objects.
  std::filesystem::path file = search.file.empty()
                                   ? std::filesystem::read_symlink("/proc/self/exe", ec)
                                   : std::filesystem::path(search.file);
  if (ec) return {};
  return std::filesystem::absolute(file, ec);
}

bool isFile(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

}  // namespace

std::string Graph::defaultCodeletsPath() {
  if (const char* env = std::getenv("TESSERA_CODELETS")) return env;
  // A program built against an installed SDK (its CMake package names the SDK's library).
  if (tessera_sdk_codelets_path != nullptr) {
    if (const char* sdk = tessera_sdk_codelets_path(); sdk != nullptr && isFile(sdk)) return sdk;
  }
  // An installed tool (<prefix>/bin) or the installed Python module: the library is at a fixed
  // place relative to them in the SDK's layout (TESSERA_SDK_CODELETS_RELATIVE, '|'-separated).
  if (const std::filesystem::path self = binaryHoldingCompiler(); !self.empty()) {
    std::string_view rel = TESSERA_SDK_CODELETS_RELATIVE;
    while (!rel.empty()) {
      const size_t bar = rel.find('|');
      const std::filesystem::path candidate =
          (self.parent_path() / std::string(rel.substr(0, bar))).lexically_normal();
      if (isFile(candidate)) return candidate.string();
      rel = bar == std::string_view::npos ? std::string_view{} : rel.substr(bar + 1);
    }
  }
  // The build tree this compiler was built in.
  return TESSERA_DEFAULT_CODELETS;
}

const Target& Graph::target() const {
  return impl_->target;
}
const std::vector<CodeletInfo>& Graph::codelets() const {
  return impl_->codelets;
}
uint32_t Graph::imageEnd() const {
  return impl_->imageEnd;
}
const std::shared_ptr<const CodeletLibrary>& Graph::codeletLibrary() const {
  return impl_->library;
}
uint64_t Graph::id() const {
  return impl_->id;
}
const std::vector<GraphVariable>& Graph::variables() const {
  return impl_->variables;
}
const std::vector<std::string>& Graph::computeSetNames() const {
  return impl_->computeSets;
}
const std::vector<GraphVertex>& Graph::vertices() const {
  return impl_->vertices;
}
const std::vector<GraphStream>& Graph::streams() const {
  return impl_->streams;
}
const std::vector<std::pair<std::string, Tensor>>& Graph::exposedTensors() const {
  return impl_->exposed;
}

const CodeletInfo& Graph::codelet(const std::string& name) const {
  auto it = impl_->codeletIndex.find(name);
  if (it == impl_->codeletIndex.end()) {
    std::string known;
    for (const CodeletInfo& c : impl_->codelets) known += (known.empty() ? "" : ", ") + c.name;
    throw Error(
        fmt::format("unknown codelet \"{}\" in {} (known: {})", name, impl_->codeletsPath, known));
  }
  return impl_->codelets[it->second];
}

void Graph::checkTensor(const Tensor& t, const char* what) const {
  if (!t.valid())
    throw Error(fmt::format("{}: the tensor is not valid (default-constructed)", what));
  if (t.graphId() != impl_->id) {
    throw Error(fmt::format("{}: tensor \"{}\" belongs to another graph", what, t.debugName()));
  }
}

Tensor Graph::addVariable(ElemType type, std::vector<size_t> shape, const std::string& name) {
  // A variable larger than the whole chip is refused here, before its per-element bookkeeping
  // exists, so that a compile that cannot fit says so in time proportional to the graph, not to
  // the tensor's bytes (docs/limits.md). The product is checked for overflow first.
  uint64_t elements = 1;
  bool overflow = false;
  for (size_t d : shape) {
    if (d != 0 && elements > std::numeric_limits<uint64_t>::max() / d) {
      overflow = true;
      break;
    }
    elements *= d;
  }
  const uint64_t chipBytes = uint64_t{impl_->target.tiles} * impl_->target.tileMemBytes;
  const unsigned eb = elemTypeBytes(type);
  if (overflow || elements > chipBytes / eb) {
    throw Error(fmt::format(
        "variable \"{}\" [{}] needs {} bytes, more than the whole chip holds ({} tiles of {} "
        "bytes)",
        name, fmt::join(shape, ","),
        overflow ? std::string("more than 2^64") : std::to_string(elements * eb),
        impl_->target.tiles, impl_->target.tileMemBytes));
  }
  GraphVariable v;
  v.name = name;
  v.type = type;
  v.shape = shape;
  Tensor t = Tensor::ofVariable(impl_->id, type, shape,
                                static_cast<uint32_t>(impl_->variables.size()), name);
  if (t.numElements() == 0) throw Error(fmt::format("variable \"{}\" has no elements", name));
  if (t.numElements() > (1u << 28)) throw Error(fmt::format("variable \"{}\" is too large", name));
  v.tileOf.assign(t.numElements(), -1);
  impl_->variables.push_back(std::move(v));
  return t;
}

Tensor Graph::addConstant(std::vector<size_t> shape, std::span<const float> values,
                          const std::string& name) {
  Tensor t = addVariable(ElemType::Float32, std::move(shape), name);
  setInitialValue(t, values);
  impl_->variables.back().constant = true;
  return t;
}

Tensor Graph::addConstant(std::vector<size_t> shape, std::span<const int32_t> values,
                          const std::string& name) {
  Tensor t = addVariable(ElemType::Int32, std::move(shape), name);
  setInitialValue(t, values);
  impl_->variables.back().constant = true;
  return t;
}

void Graph::setTileMapping(const Tensor& t, unsigned tile) {
  checkTensor(t, "setTileMapping");
  if (tile >= impl_->target.tiles) {
    throw Error(fmt::format("setTileMapping: tensor \"{}\" to tile {}, but the target has {} tiles",
                            t.debugName(), tile, impl_->target.tiles));
  }
  for (const ElementRun& r : t.runs()) {
    for (uint32_t i = r.begin; i < r.end; ++i)
      impl_->variables[r.var].tileOf[i] = static_cast<int32_t>(tile);
  }
}

std::vector<int32_t> Graph::tileMapping(const Tensor& t) const {
  checkTensor(t, "tileMapping");
  std::vector<int32_t> out;
  out.reserve(t.numElements());
  for (const ElementRun& r : t.runs()) {
    for (uint32_t i = r.begin; i < r.end; ++i) out.push_back(impl_->variables[r.var].tileOf[i]);
  }
  return out;
}

namespace {
template <typename T>
void setInitial(std::vector<GraphVariable>& vars, const Tensor& t, std::span<const T> values) {
  if (values.size() != t.numElements()) {
    throw Error(fmt::format("setInitialValue: tensor \"{}\" {} has {} elements, got {} values",
                            t.debugName(), t.shapeString(), t.numElements(), values.size()));
  }
  size_t k = 0;
  for (const ElementRun& r : t.runs()) {
    GraphVariable& v = vars[r.var];
    if (v.initial.empty()) v.initial.assign(v.tileOf.size(), 0);
    for (uint32_t i = r.begin; i < r.end; ++i) {
      if constexpr (sizeof(T) == 2)
        v.initial[i] = values[k++];
      else
        v.initial[i] = std::bit_cast<uint32_t>(values[k++]);
    }
  }
}
}  // namespace

void Graph::setInitialValue(const Tensor& t, std::span<const float> values) {
  checkTensor(t, "setInitialValue");
  if (t.elementType() != ElemType::Float32) {
    throw Error(fmt::format("setInitialValue: tensor \"{}\" is {}, got float values", t.debugName(),
                            elemTypeName(t.elementType())));
  }
  setInitial(impl_->variables, t, values);
}

void Graph::setInitialValue(const Tensor& t, std::span<const int32_t> values) {
  checkTensor(t, "setInitialValue");
  if (t.elementType() != ElemType::Int32) {
    throw Error(fmt::format("setInitialValue: tensor \"{}\" is {}, got int32 values", t.debugName(),
                            elemTypeName(t.elementType())));
  }
  setInitial(impl_->variables, t, values);
}

void Graph::setInitialValue(const Tensor& t, std::span<const uint16_t> values) {
  checkTensor(t, "setInitialValue");
  if (t.elementType() != ElemType::Float16) {
    throw Error(fmt::format("setInitialValue: tensor \"{}\" is {}, got float16 values",
                            t.debugName(), elemTypeName(t.elementType())));
  }
  setInitial(impl_->variables, t, values);
}

ComputeSet Graph::addComputeSet(const std::string& name) {
  impl_->computeSets.push_back(name);
  return ComputeSet{static_cast<uint32_t>(impl_->computeSets.size() - 1)};
}

VertexRef Graph::addVertex(ComputeSet cs, const std::string& codeletName,
                           std::vector<std::pair<std::string, Tensor>> connections) {
  if (cs.id >= impl_->computeSets.size()) throw Error("addVertex: unknown compute set");
  const CodeletInfo& c = codelet(codeletName);
  GraphVertex v;
  v.computeSet = cs.id;
  v.codelet = codeletName;
  for (const CodeletField& f : c.fields) v.fields.push_back({f.name, Tensor{}, 0, false});
  impl_->vertices.push_back(std::move(v));
  VertexRef ref{static_cast<uint32_t>(impl_->vertices.size() - 1)};
  for (auto& [field, t] : connections) connect(ref, field, t);
  return ref;
}

void Graph::setFlops(VertexRef ref, uint64_t flops) {
  if (ref.id >= impl_->vertices.size()) throw Error("setFlops: unknown vertex");
  impl_->vertices[ref.id].flops = flops;
}

GraphVertex& Graph::vertex(VertexRef ref, const std::string& field, bool param) {
  if (ref.id >= impl_->vertices.size()) throw Error("unknown vertex");
  GraphVertex& v = impl_->vertices[ref.id];
  const CodeletInfo& c = codelet(v.codelet);
  const CodeletField* f = c.field(field);
  const std::string where = fmt::format("vertex {} ({}, compute set \"{}\")", ref.id, v.codelet,
                                        impl_->computeSets[v.computeSet]);
  if (f == nullptr) {
    std::string known;
    for (const CodeletField& k : c.fields) known += (known.empty() ? "" : ", ") + k.name;
    throw Error(fmt::format("{}: no field \"{}\" (fields: {})", where, field, known));
  }
  if (param != (f->kind == FieldKind::Param)) {
    throw Error(fmt::format("{}: field \"{}\" is {}", where, field,
                            param ? "a region: connect a tensor" : "a Param: set a value"));
  }
  return v;
}

void Graph::connect(VertexRef ref, const std::string& field, const Tensor& t) {
  GraphVertex& v = vertex(ref, field, false);
  checkTensor(t, "connect");
  const CodeletField* f = codelet(v.codelet).field(field);
  if (!typeMatches(f->type, t.elementType())) {
    throw Error(fmt::format("vertex {} ({}): field \"{}\" is {}, tensor \"{}\" is {}", ref.id,
                            v.codelet, field, f->type, t.debugName(),
                            elemTypeName(t.elementType())));
  }
  for (GraphField& gf : v.fields) {
    if (gf.name == field) gf.tensor = t;
  }
}

void Graph::setFieldValue(VertexRef ref, const std::string& field, float value) {
  GraphVertex& v = vertex(ref, field, true);
  const CodeletField* f = codelet(v.codelet).field(field);
  if (f->type != "float") {
    throw Error(fmt::format("vertex {} ({}): field \"{}\" is {}, got a float", ref.id, v.codelet,
                            field, f->type));
  }
  for (GraphField& gf : v.fields) {
    if (gf.name == field) gf.value = std::bit_cast<uint32_t>(value), gf.hasValue = true;
  }
}

void Graph::setFieldValue(VertexRef ref, const std::string& field, uint32_t value) {
  GraphVertex& v = vertex(ref, field, true);
  const CodeletField* f = codelet(v.codelet).field(field);
  if (f->type == "float") {
    throw Error(fmt::format("vertex {} ({}): field \"{}\" is float, got an integer", ref.id,
                            v.codelet, field));
  }
  for (GraphField& gf : v.fields) {
    if (gf.name == field) gf.value = value, gf.hasValue = true;
  }
}

void Graph::setTileMapping(VertexRef ref, unsigned tile) {
  if (ref.id >= impl_->vertices.size()) throw Error("setTileMapping: unknown vertex");
  if (tile >= impl_->target.tiles) {
    throw Error(
        fmt::format("setTileMapping: vertex {} ({}) to tile {}, but the target has {} tiles",
                    ref.id, impl_->vertices[ref.id].codelet, tile, impl_->target.tiles));
  }
  impl_->vertices[ref.id].tile = static_cast<int32_t>(tile);
}

namespace {

void checkAlignment(uint32_t bytes, const std::string& what) {
  if (bytes < 4 || (bytes & (bytes - 1)) != 0)
    throw Error(fmt::format("{}: alignment {} is not a power of two of at least 4", what, bytes));
}

}  // namespace

void Graph::setFieldAlignment(VertexRef ref, const std::string& field, uint32_t bytes) {
  GraphVertex& v = vertex(ref, field, false);
  checkAlignment(bytes, fmt::format("vertex {} ({}): field \"{}\"", ref.id, v.codelet, field));
  for (GraphField& gf : v.fields) {
    if (gf.name == field) gf.align = bytes;
  }
}

void Graph::setSpanRuns(bool on) {
  impl_->spanRuns = on;
}

bool Graph::spanRuns() const {
  return impl_->spanRuns;
}

void Graph::addTileCopy(const Tensor& source, unsigned tile, const Tensor& copy) {
  checkTensor(source, "tile copy's source");
  checkTensor(copy, "tile copy");
  if (copy.numElements() != source.numElements()) {
    throw Error(fmt::format("tile copy \"{}\" has {} elements, its source \"{}\" {}",
                            copy.debugName(), copy.numElements(), source.debugName(),
                            source.numElements()));
  }
  impl_->tileCopies.push_back({source.runs(), tile, copy});
}

std::optional<Tensor> Graph::tileCopy(const Tensor& source, unsigned tile) const {
  for (const Impl::TileCopy& c : impl_->tileCopies)
    if (c.tile == tile && c.source == source.runs()) return c.copy;
  return std::nullopt;
}

void Graph::setFieldWriteOnly(VertexRef ref, const std::string& field) {
  GraphVertex& v = vertex(ref, field, false);
  if (codelet(v.codelet).field(field)->kind != FieldKind::InOut) {
    throw Error(fmt::format("vertex {} ({}): field \"{}\" is not InOut", ref.id, v.codelet, field));
  }
  for (GraphField& gf : v.fields) {
    if (gf.name == field) gf.writeOnly = true;
  }
}

void Graph::setAlignment(const Tensor& t, uint32_t bytes) {
  checkTensor(t, "setAlignment");
  checkAlignment(bytes, fmt::format("setAlignment of \"{}\"", t.debugName()));
  for (const ElementRun& r : t.runs()) {
    GraphVariable& var = impl_->variables[r.var];
    var.align = std::max(var.align, bytes);
  }
}

DataStream Graph::addHostToDeviceFIFO(const std::string& name, ElemType type, size_t elements) {
  for (const GraphStream& s : impl_->streams) {
    if (s.name == name) throw Error(fmt::format("stream \"{}\" exists already", name));
  }
  impl_->streams.push_back({name, type, elements, true});
  return DataStream{static_cast<uint32_t>(impl_->streams.size() - 1)};
}

DataStream Graph::addDeviceToHostFIFO(const std::string& name, ElemType type, size_t elements) {
  DataStream s = addHostToDeviceFIFO(name, type, elements);
  impl_->streams.back().toDevice = false;
  return s;
}

void Graph::exposeTensor(const std::string& name, const Tensor& t) {
  checkTensor(t, "exposeTensor");
  for (const auto& [n, _] : impl_->exposed) {
    if (n == name) throw Error(fmt::format("exposeTensor: \"{}\" is exposed already", name));
  }
  impl_->exposed.emplace_back(name, t);
}

}  // namespace tessera
