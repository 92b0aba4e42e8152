// Work division shared by the library's builders.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/graph.hpp"
#include "tessera/ops.hpp"
#include "tessera/program.hpp"

namespace tessera::ops {

/// tileChunks' perTile for one chunk per vertex list a tile runs at once: one per context of the
/// graph's target, its workers and the supervisor (tessera/control.h, EXEC).
inline constexpr size_t kPerContext = 0;

/// Elements [begin, end) (flat, row-major) of a tensor, all on one tile.
struct Chunk {
  unsigned tile = 0;
  size_t begin = 0;
  size_t end = 0;
};

/// t's elements cut into runs on one tile each, each tile's share split into at most `perTile`
/// chunks (kPerContext: the target's contexts) of nearly equal size whose boundaries are multiples
/// of `align` where the runs allow.
std::vector<Chunk> tileChunks(const Graph& graph, const Tensor& t, size_t perTile = kPerContext,
                              size_t align = 1);

/// A tile's share of a flat tensor's elements as ranges [begin, end), in element order.
struct SpanChunk {
  unsigned tile = 0;
  std::vector<std::pair<size_t, size_t>> ranges;
  bool spans = false;  ///< cut across the tile's runs (not one of tileChunks' chunks)
};

/// The chunks of an element-by-element op on flats (flat tensors of one length; flats[0] is the
/// output): tileChunks' chunks of flats[0], one range each, except on a tile where they would be
/// more than `perTile` (many short runs, such as a [rows, n] product's result held in column
/// blocks) while the graph allows it (Graph::setSpanRuns) and every tensor of flats is a whole
/// variable in its own order, all mapped alike. There a tile's elements lie in element order in its
/// memory (docs/compiler.md), so they are cut into `perTile` chunks of nearly equal size that may
/// span runs and still are read in place.
std::vector<SpanChunk> spanChunks(const Graph& graph, const std::vector<Tensor>& flats,
                                  size_t perTile = kPerContext);

/// The elements of flat that chunk c names, in order (one slice, or a concatenation of them).
Tensor spanOf(const Tensor& flat, const SpanChunk& c);

/// The number of elements a chunk names.
size_t spanSize(const SpanChunk& c);

/// The tensors flattened; where all of them hold one whole variable each, stored for the matrix
/// unit (16-byte aligned), in one same order other than the variables' own (a weight stored in the
/// unit's layout and tensors cloned from it), their variables instead, in storage order: what an
/// element-by-element op can run on.
std::vector<Tensor> inStorageOrder(const Graph& graph, const std::vector<Tensor>& ts);

/// out = codelet(inputs...) element by element in one compute set: out (field outField) is a new
/// float32 variable of the inputs' shape mapped like `like` (default: inputs[0]); each tile's
/// elements are cut by tileChunks, and the inputs (any views of that shape, broadcast ones
/// included) are gathered where they are not local. params sets each vertex's Param fields.
Tensor elementwise(Graph& graph, const std::string& codelet,
                   const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::string& outField, Sequence& prog, const std::string& name,
                   const std::function<void(VertexRef)>& params = {}, const Tensor& like = {});
/// elementwise into an existing float32 variable out (mapped) of the inputs' shape.
void elementwiseInto(Graph& graph, const std::string& codelet,
                     const std::vector<std::pair<std::string, Tensor>>& inputs,
                     const std::string& outField, const Tensor& out, Sequence& prog,
                     const std::string& name, const std::function<void(VertexRef)>& params = {});

}  // namespace tessera::ops
