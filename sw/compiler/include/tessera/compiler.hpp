// The graph compiler (docs/compiler.md): lays out every tile's memory, inserts and schedules the
// exchanges that vertex connections and copies need, writes each tile's control program, and
// produces an Executable (*.tess) with a report of what went where.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/executable.hpp"
#include "tessera/graph.hpp"
#include "tessera/program.hpp"

namespace tessera {

/// Memory of one tile by use, in bytes.
struct TileMemoryReport {
  unsigned tile = 0;
  uint32_t code = 0;                    ///< the codelet image (runtime and codelets)
  uint32_t tensors = 0;                 ///< variables and constants
  uint32_t tensorsWithoutLiveness = 0;  ///< what tensors would take if no two shared memory
  uint32_t vertexState = 0;             ///< vertex states and worker vertex lists
  uint32_t exchangePrograms = 0;        ///< exchange programs
  uint32_t control = 0;                 ///< control program, loop counters, flags
  uint32_t exchangeBuffers = 0;         ///< receive buffers (shared by all steps: the largest step)
  uint32_t stacks = 0;                  ///< supervisor and worker stacks
  uint32_t capacity = 0;                ///< tile memory
  /// Bytes in use.
  uint32_t used() const {
    return code + tensors + vertexState + exchangePrograms + control + exchangeBuffers + stacks;
  }
  /// The largest users (name, bytes), largest first.
  std::vector<std::pair<std::string, uint32_t>> largest;
  /// Tensor bytes live at each step of the program (index: ProgramNodeReport::step); with
  /// liveness off every step holds all of `tensors`.
  std::vector<uint32_t> liveTensors;
};

/// One node of the compiled program, in pre-order (a parent before its children).
struct ProgramNodeReport {
  /// Sequence, Execute, Copy, StreamToTensor, TensorToStream, Repeat or RepeatWhile.
  std::string kind;
  std::string name;    ///< the debug name (else the compute set, stream or copy destination)
  int parent = -1;     ///< index of the parent node; -1 for the root
  uint32_t count = 0;  ///< Repeat: iterations
  int step = -1;       ///< position in program order of a step (a RepeatWhile's: its predicate's)
  /// The syncs the node makes itself, in order: an exchange's index in CompileReport::exchanges,
  /// or -id of a host sync.
  std::vector<int32_t> syncs;
  uint64_t flops = 0;  ///< Execute: the floating-point operations of one run (Graph::setFlops)
  /// Execute: how many of its syncs come before its compute (its inputs' exchange: 0 or 1).
  uint32_t computeAfter = 0;
};

/// One scheduled exchange.
struct ExchangeReport {
  std::string name;         ///< what needed it ("inputs of compute set mm", "copy x")
  uint32_t cycles = 0;      ///< from the sync release to the last tile's end of exchange
  uint32_t lowerBound = 0;  ///< max over tiles of max(words sent, words received)
  uint32_t phases = 0;
  uint64_t words = 0;           ///< words received, all tiles
  uint32_t localCopyWords = 0;  ///< words copied by supervisors instead
  uint32_t syncId = 0;          ///< the id its sync reports (RunResult::hostSyncId at a SyncBreak)
};

/// What the compiler did.
struct CompileReport {
  Target target;
  double seconds = 0;        ///< compile time
  unsigned computeSets = 0;  ///< compute sets compiled (each of a merged Execute's)
  /// Compute sets that run in an earlier Execute's superstep (docs/compiler.md, "Merged compute
  /// sets"), and whether a merged program did not fit the tiles and was compiled apart.
  unsigned mergedComputeSets = 0;
  bool mergedDidNotFit = false;
  unsigned vertices = 0;
  unsigned syncs = 0;  ///< internal syncs per pass through the program
  unsigned hostSyncs = 0;
  uint32_t codeImageBytes = 0;        ///< the linked codelet image, loaded on every tile
  std::vector<std::string> codelets;  ///< the codelets it holds (sorted)
  std::vector<TileMemoryReport> tiles;
  std::vector<ExchangeReport> exchanges;
  std::vector<ProgramNodeReport> program;  ///< the program tree, pre-order
  unsigned steps = 0;  ///< steps of the program in program order (liveness positions)
  /// JSON text of the whole report.
  std::string toJson() const;
  /// A readable summary: memory of the fullest tiles, exchanges against their lower bound.
  std::string summary() const;
  /// The FLOPs of one run of program node `node`: its Executes' (Graph::setFlops), a Repeat's body
  /// times its count, a RepeatWhile's body once (its trip count is known only when it runs).
  uint64_t flopsOf(size_t node) const;
  /// The index of the first program node of `kind` named `name`, or -1.
  int findNode(const std::string& kind, const std::string& name) const;
};

/// Options of a compilation.
struct CompileOptions {
  /// Variables whose lifetimes over the program do not overlap share a tile's memory
  /// (docs/compiler.md, "Liveness"); false gives every variable its own bytes.
  bool liveness = true;
  /// An Execute independent of the steps before it joins an earlier one's superstep where their
  /// vertices fit one to a context (docs/compiler.md, "Merged compute sets"); a program that
  /// does not fit the tiles so is compiled again without merging.
  bool mergeComputeSets = true;
};

/// A tile's memory cannot hold what the graph puts on it (the message names the tile and its
/// largest users). A builder can catch it to try a layout that needs less memory.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

/// An executable and its report.
struct Compiled {
  Executable executable;
  CompileReport report;
};

/// Compile prog over graph. Throws tessera::Error naming the tile, vertex, field or tensor at
/// fault.
Compiled compile(const Graph& graph, const Program& prog, const CompileOptions& options = {});

}  // namespace tessera
