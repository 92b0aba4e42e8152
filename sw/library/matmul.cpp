// matmul: a 3-D split of the product over tiles (docs/library.md, "matmul").
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>

#include "amp_vertices.hpp"
#include "tessera/amp_matmul.h"
#include "tessera/chip_params.h"
#include "tessera/control.h"
#include "tessera/error.hpp"
#include "tessera/half.hpp"
#include "tessera/ops.hpp"
#include "tile_chunks.hpp"

namespace tessera::ops {

namespace {

// Estimated cycles per multiply-add of one worker running the plain MatMul codelet (about three
// instructions per multiply-add, one issue every six cycles), against one cycle per exchanged word.
constexpr double kCyclesPerMac = 18.0;
// The same for MatMulHalf (float16 operands, two columns at a time): a halfword and a word load,
// three widenings, two fused multiply-adds and the loop's steps, about five instructions a
// multiply-add.
constexpr double kHalfCyclesPerMac = 30.0;

size_t ceilDiv(size_t a, size_t b) {
  return (a + b - 1) / b;
}

// [begin, end) of part p of n split into parts, each a multiple of grain long where n allows
// (the last may be shorter; trailing ones may be empty).
std::pair<size_t, size_t> part(size_t n, size_t parts, size_t p, size_t grain = 1) {
  const size_t per = ceilDiv(ceilDiv(n, parts), grain) * grain;
  return {std::min(n, p * per), std::min(n, (p + 1) * per)};
}

// MatMulAmp's cycles on a tile's mb x nb x kb block (not accumulating): its start, then one
// lock-step stretch over row blocks of 6R - 4 rows (R for each of the five workers, R - 4 for the
// supervisor, which loads the weights in the other rounds), each over the column groups of 4, at
// the R that takes the fewest rounds (sw/codelets/linalg/amp_matmul_rows.hpp; the rounds are
// tessera/amp_matmul.h's, which the codelet runs and addAmpVertices chooses R by).
double ampCycles(size_t mb, size_t nb, size_t kb) {
  const auto rows = static_cast<unsigned>(mb), groups = static_cast<unsigned>(nb / 4),
             blocks = static_cast<unsigned>(kb / 4);
  return static_cast<double>(TESS_ROUND_CYCLES) *
         tessera_amp_matmul_rounds(rows, groups, blocks, 0,
                                   tessera_amp_matmul_best_rows(rows, groups, blocks, 0));
}

// True when every element of t is mapped on tile.
bool allOnTile(const Graph& graph, const Tensor& t, unsigned tile) {
  const std::vector<int32_t> where = graph.tileMapping(t);
  return std::all_of(where.begin(), where.end(),
                     [&](int32_t at) { return at == static_cast<int32_t>(tile); });
}

// op(b)'s block [k, n] with `pad` more columns for the unit: row r's padding is the first columns
// of row r + 1 (of row 0 for the last), so a row of the last column group is one run of
// row-major b. The padding columns' sums are never read.
Tensor withRepeatedColumns(const Tensor& block, size_t pad) {
  const size_t k = block.dim(0);
  const Tensor next =
      concat({block.slice(1, k, 0).slice(0, pad, 1), block.slice(0, 1, 0).slice(0, pad, 1)}, 0);
  return concat({block, next}, 1);
}

bool unitTarget(const Target& t) {
  return t.hasMatrixUnit && t.hasFpu && t.hasMulDiv && t.contexts == TESS_NUM_CONTEXTS;
}

// Parts of an mb x nb block for up to `workers` vertices (one per context: the workers and the
// supervisor run vertex lists): a grid of row groups (4 rows, the
// codelet's register block) by column groups (6 columns) with the smallest largest part.
struct WorkPart {
  size_t row, rows, col, cols;
};

std::vector<WorkPart> splitWork(size_t mb, size_t nb, size_t workers) {
  const size_t rg = ceilDiv(mb, 4), cg = ceilDiv(nb, 6);
  size_t bestR = 1, bestC = 1, bestLoad = SIZE_MAX;
  for (size_t pr = 1; pr <= std::min(rg, workers); ++pr) {
    for (size_t pc = 1; pr * pc <= workers && pc <= cg; ++pc) {
      const size_t load = ceilDiv(rg, pr) * ceilDiv(cg, pc);
      if (load < bestLoad) bestLoad = load, bestR = pr, bestC = pc;
    }
  }
  std::vector<WorkPart> parts;
  for (size_t i = 0; i < bestR; ++i) {
    const size_t g0 = rg * i / bestR, g1 = rg * (i + 1) / bestR;
    const size_t r0 = std::min(mb, 4 * g0), r1 = std::min(mb, 4 * g1);
    for (size_t j = 0; j < bestC; ++j) {
      const size_t h0 = cg * j / bestC, h1 = cg * (j + 1) / bestC;
      const size_t c0 = std::min(nb, 6 * h0), c1 = std::min(nb, 6 * h1);
      if (r0 < r1 && c0 < c1) parts.push_back({r0, r1 - r0, c0, c1 - c0});
    }
  }
  return parts;
}

// A MatMulBlocked vertex on part p of a block: a, b and c are the block's (shared by its vertices).
void addMatMulVertex(Graph& graph, ComputeSet cs, unsigned tile, const Tensor& a, const Tensor& b,
                     const Tensor& c, size_t k, uint32_t flags, const WorkPart& p) {
  VertexRef vx = graph.addVertex(cs, "MatMulBlocked", {{"a", a}, {"b", b}, {"c", c}});
  graph.setFieldValue(vx, "k", static_cast<uint32_t>(k));
  graph.setFieldValue(vx, "flags", flags);
  graph.setFieldValue(vx, "row", static_cast<uint32_t>(p.row));
  graph.setFieldValue(vx, "rows", static_cast<uint32_t>(p.rows));
  graph.setFieldValue(vx, "col", static_cast<uint32_t>(p.col));
  graph.setFieldValue(vx, "cols", static_cast<uint32_t>(p.cols));
  // Without accumulating (flags bit 2) c is only written, so liveness need not keep it.
  if ((flags & 4u) == 0) graph.setFieldWriteOnly(vx, "c");
  graph.setFlops(vx, 2 * uint64_t{p.rows} * p.cols * k);
  graph.setTileMapping(vx, tile);
}

// A 2-D block [rows, cols] (cols a multiple of 4) in the unit's column groups [cols / 4][rows][4].
Tensor columnGroups(const Tensor& block) {
  const size_t rows = block.dim(0), cols = block.dim(1);
  return block.reshape({rows, cols / 4, 4}).dimShuffle({1, 0, 2}).flatten();
}

// True when the 2-D block is stored in column groups (one run of its variable in that order, and
// not also row-major: one group of 4 columns is both): a weight made by createMatMulRhs for the
// unit.
bool inColumnGroups(const Tensor& block) {
  return block.dim(1) % 4 == 0 && block.flatten().runs().size() > 1 &&
         columnGroups(block).runs().size() == 1;
}

}  // namespace

// MatMulAmp vertices computing c [mb, nb] (+)= a [mb, kb] b [kb, nb] on tile: one per context,
// sharing every field (the codelet's roles come from the context id). aRows is op(a)'s block as a
// row-major view, bOp op(b)'s; the unit reads b in column groups [nb / 4][kb][4], gathered so
// unless it is stored so (createMatMulRhs). cBlock must lie in place on the tile, row-major or
// in column groups, 16-byte aligned (the caller's setAlignment). Declared in amp_vertices.hpp.
void addAmpVertices(Graph& graph, ComputeSet cs, unsigned tile, const Tensor& aRows,
                    const Tensor& bOp, const Tensor& cBlock, bool accumulate,
                    const std::string& name, std::optional<uint64_t> flops, const char* codelet) {
  const size_t kb = bOp.dim(0), nb = bOp.dim(1);
  const Tensor bGroups = columnGroups(bOp);
  const bool cGroups = inColumnGroups(cBlock);
  const Tensor c = cGroups ? columnGroups(cBlock) : cBlock.flatten();
  // The word through which the supervisor tells the workers when the first pass starts; 0
  // between runs (the supervisor clears it when its passes end).
  const Tensor sync =
      graph.addVariable(ElemType::Int32, {1}, fmt::format("{}/unit-start@{}", name, tile));
  // The rows a worker streams (4 or 6): the fewest rounds for this block. A block of k is 4
  // floats, or 8 halves for MatMulAmpH (whose a is 2 bytes an element).
  const size_t rows = aRows.numElements() / kb;
  const unsigned blocks =
      static_cast<unsigned>(kb / (aRows.elementType() == ElemType::Float16 ? 8 : 4));
  const uint32_t rowsPerWorker = tessera_amp_matmul_best_rows(
      static_cast<unsigned>(rows), static_cast<unsigned>(nb / 4), blocks, accumulate ? 1 : 0);
  graph.setTileMapping(sync, tile);
  for (unsigned v = 0; v < graph.target().contexts; ++v) {
    VertexRef vx = graph.addVertex(
        cs, codelet, {{"a", aRows.flatten()}, {"b", bGroups}, {"c", c}, {"sync", sync}});
    graph.setFieldValue(vx, "k", static_cast<uint32_t>(kb));
    // a's rows and c's columns, so that no context divides to find them before the meet.
    graph.setFieldValue(vx, "rows", static_cast<uint32_t>(rows));
    graph.setFieldValue(vx, "cols", static_cast<uint32_t>(nb));
    graph.setFieldValue(vx, "flags",
                        (accumulate ? 4u : 0u) | (cGroups ? 8u : 0u) |
                            rowsPerWorker << TESSERA_AMP_MATMUL_ROWS_SHIFT);
    // Without accumulating c is only written (AMP.CLR, then AMP.SA), so liveness need not keep
    // the partials of a product between steps.
    if (!accumulate) graph.setFieldWriteOnly(vx, "c");
    for (const char* f : {"a", "b", "c"}) graph.setFieldAlignment(vx, f, TESS_AMP_STEP_BYTES);
    // The block's multiply-adds, counted once: on the supervisor's vertex (the six share them).
    if (v == 0) graph.setFlops(vx, flops ? *flops : 2 * uint64_t{aRows.dim(0)} * kb * nb);
    graph.setTileMapping(vx, tile);
  }
}

namespace {

// op(a)'s block [r0, r1) x [k0, k1) as row-major rows for the unit. A transposed a (stored
// [k, m]) is transposed on the tile by Transpose2d vertices in the compute set *ts (made on
// first use; the caller runs it before the product): the exchange then brings the stored block
// in runs of r1 - r0 words instead of one word a message, whose programs would not fit a tile.
Tensor ampRows(Graph& graph, std::optional<ComputeSet>& ts, unsigned tile, const Tensor& a,
               bool transposeA, size_t r0, size_t r1, size_t k0, size_t k1, const std::string& name,
               size_t maxVertices = SIZE_MAX) {
  if (!transposeA) return a.slice(r0, r1, 0).slice(k0, k1, 1);
  if (!ts) ts = graph.addComputeSet(name + "/a-rows");
  const size_t mb = r1 - r0, kb = k1 - k0;
  const Tensor stored = a.slice(k0, k1, 0).slice(r0, r1, 1).flatten();
  const Tensor rows =
      graph.addVariable(ElemType::Float32, {mb, kb}, fmt::format("{}/a-rows@{}", name, tile));
  graph.setTileMapping(rows, tile);
  graph.setAlignment(rows, TESS_AMP_STEP_BYTES);
  const size_t vparts = std::min<size_t>({mb, graph.target().contexts, maxVertices});
  for (size_t v = 0; v < vparts; ++v) {
    const auto [p0, p1] = part(mb, vparts, v);
    if (p0 == p1) continue;
    VertexRef vx = graph.addVertex(*ts, "Transpose2d",
                                   {{"in", stored}, {"out", rows.slice(p0, p1, 0).flatten()}});
    graph.setFieldValue(vx, "rows", static_cast<uint32_t>(mb));
    graph.setFieldValue(vx, "cols", static_cast<uint32_t>(kb));
    graph.setFieldValue(vx, "row", static_cast<uint32_t>(p0));
    graph.setTileMapping(vx, tile);
  }
  return rows;
}

// The columns [c0, c1) around [b, e) of a 2-D a stored [k, n] whose block a[:, c0:c1] is all
// that a's variable holds on `tile`, in the variable's order: a tile's own block, which lies in
// place (a tile's elements of a variable are stored in their order). nullopt otherwise.
std::optional<std::pair<size_t, size_t>> ownColumns(const Graph& graph, const Tensor& a, size_t k,
                                                    size_t b, size_t e, unsigned tile) {
  if (a.rank() != 2 || a.dim(0) != k || b >= e) return std::nullopt;
  const size_t n = a.dim(1);
  const std::vector<int32_t> row0 = graph.tileMapping(a.slice(0, 1, 0));
  const auto on = [&](size_t c) { return row0[c] == static_cast<int32_t>(tile); };
  for (size_t c = b; c < e; ++c) {
    if (!on(c)) return std::nullopt;
  }
  size_t c0 = b, c1 = e;
  while (c0 > 0 && on(c0 - 1)) --c0;
  while (c1 < n && on(c1)) ++c1;
  const Tensor block = a.slice(0, k, 0).slice(c0, c1, 1);
  const std::vector<ElementRun>& runs = block.runs();
  uint32_t next = 0;
  for (const ElementRun& r : runs) {
    if (r.var != runs[0].var || r.begin < next) return std::nullopt;
    next = r.end;
  }
  if (!allOnTile(graph, block, tile)) return std::nullopt;
  const std::vector<int32_t>& tileOf = graph.variables()[runs[0].var].tileOf;
  const auto held =
      static_cast<size_t>(std::count(tileOf.begin(), tileOf.end(), static_cast<int32_t>(tile)));
  if (held != block.numElements()) return std::nullopt;
  return std::make_pair(c0, c1);
}

// The transposed a of matmulAccumulate for the tiles whose blocks of c share their rows
// [r0, r1) (`tiles`, all taking the unit): each tile transposes a part of the rows into its own
// aligned [mb, k] variable (the compute set *ts), and the other tiles' parts are added to the
// sources and destinations of one Copy (from, to) that brings every tile the rest. The tiles of a
// row block of the MLP's first weight (four tiles of 196 rows) so transpose a quarter each instead
// of all of it. Returned in the tiles' order. The variables are written whole by the transposes and
// the copy together, so liveness keeps them temporaries.
std::vector<Tensor> sharedAmpRows(Graph& graph, std::optional<ComputeSet>& ts,
                                  std::vector<Tensor>& from, std::vector<Tensor>& to,
                                  const std::vector<unsigned>& tiles, const Tensor& a, size_t r0,
                                  size_t r1, size_t k, const std::string& name, bool useCopies) {
  if (!ts) ts = graph.addComputeSet(name + "/a-rows");
  const size_t mb = r1 - r0, parts = tiles.size();
  std::vector<Tensor> rows;
  for (const unsigned tile : tiles) {
    const Tensor r =
        graph.addVariable(ElemType::Float32, {mb, k}, fmt::format("{}/a-rows@{}", name, tile));
    graph.setTileMapping(r, tile);
    graph.setAlignment(r, TESS_AMP_STEP_BYTES);
    rows.push_back(r);
  }
  for (size_t g = 0; g < parts; ++g) {
    const auto [p0, p1] = part(mb, parts, g);
    if (p0 == p1) continue;
    const size_t pr = p1 - p0;
    // The stored columns, gathered; or, where the tile holds a whole block of them (the tile
    // that holds x's block), read in place from that block (Transpose2d's `rows` is the source
    // row's length, `row` the first column).
    Tensor stored = a.slice(0, k, 0).slice(r0 + p0, r0 + p1, 1).flatten();
    size_t stride = pr, first = 0;
    if (const auto own = ownColumns(graph, a, k, r0 + p0, r0 + p1, tiles[g])) {
      stored = a.slice(0, k, 0).slice(own->first, own->second, 1).flatten();
      stride = own->second - own->first, first = r0 + p0 - own->first;
    } else if (const auto copy = useCopies
                                     ? graph.tileCopy(a.slice(0, k, 0).slice(r0, r1, 1), tiles[g])
                                     : std::nullopt) {
      // The block as the forward product kept it on this tile (keepACopies): no exchange.
      stored = copy->flatten();
      stride = mb, first = p0;
    }
    const Tensor mine = rows[g].slice(p0, p1, 0);
    const size_t vparts = std::min<size_t>(pr, graph.target().contexts);
    for (size_t v = 0; v < vparts; ++v) {
      const auto [q0, q1] = part(pr, vparts, v);
      if (q0 == q1) continue;
      VertexRef vx = graph.addVertex(*ts, "Transpose2d",
                                     {{"in", stored}, {"out", mine.slice(q0, q1, 0).flatten()}});
      graph.setFieldValue(vx, "rows", static_cast<uint32_t>(stride));
      graph.setFieldValue(vx, "cols", static_cast<uint32_t>(k));
      graph.setFieldValue(vx, "row", static_cast<uint32_t>(first + q0));
      graph.setTileMapping(vx, tiles[g]);
    }
    for (size_t t = 0; t < parts; ++t) {
      if (t == g) continue;
      from.push_back(mine.flatten());
      to.push_back(rows[t].slice(p0, p1, 0).flatten());
    }
  }
  return rows;
}

}  // namespace

namespace {

// AmpRegroup vertices on `tile` (sw/codelets/linalg/AmpRegroup.cpp) writing the flat `out`,
// `units` parts of `unit` elements each (a column group [rows][4] or a row), split over the
// contexts.
void addRegroup(Graph& graph, ComputeSet cs, unsigned tile, const Tensor& in, const Tensor& out,
                size_t units, size_t unit, uint32_t mode, size_t rows, size_t realRows,
                size_t realCols, size_t ld, size_t width, float pad,
                size_t maxVertices = SIZE_MAX) {
  const size_t vparts = std::min<size_t>({units, graph.target().contexts, maxVertices});
  for (size_t v = 0; v < vparts; ++v) {
    const auto [u0, u1] = part(units, vparts, v);
    if (u0 == u1) continue;
    VertexRef vx =
        graph.addVertex(cs, "AmpRegroup", {{"in", in}, {"out", out.slice(u0 * unit, u1 * unit)}});
    graph.setFieldValue(vx, "mode", mode);
    graph.setFieldValue(vx, "rows", static_cast<uint32_t>(rows));
    graph.setFieldValue(vx, "realRows", static_cast<uint32_t>(realRows));
    graph.setFieldValue(vx, "realCols", static_cast<uint32_t>(realCols));
    graph.setFieldValue(vx, "ld", static_cast<uint32_t>(ld));
    graph.setFieldValue(vx, "width", static_cast<uint32_t>(width));
    graph.setFieldValue(vx, "begin", static_cast<uint32_t>(u0));
    graph.setFieldValue(vx, "pad", pad);
    graph.setTileMapping(vx, tile);
  }
}

// Vertices for two jobs sharing a tile's contexts in one compute set (so that no context runs
// two): ua units of wa words and ub units of wb words (rows, or column groups), each job's units
// cut evenly over its vertices. The split whose slower job has the fewest words on one vertex
// (then the fewest in all), at least one vertex each: in words alone, the MLP's padded 10-class
// product put 2 of its 4 column groups on one vertex.
std::pair<size_t, size_t> shareContexts(const Graph& graph, size_t ua, size_t wa, size_t ub,
                                        size_t wb) {
  const size_t n = graph.target().contexts;
  if (n < 2) return {1, 1};
  // A job's slowest vertex: its units split evenly over v vertices (at most one a unit).
  const auto slowest = [](size_t units, size_t words, size_t v) {
    const size_t used = std::max<size_t>(1, std::min(v, units));
    return (units + used - 1) / used * words;
  };
  size_t best = 1;
  std::pair<size_t, size_t> bestCost{SIZE_MAX, SIZE_MAX};
  for (size_t va = 1; va < n; ++va) {
    const size_t a = slowest(ua, wa, va), b = slowest(ub, wb, n - va);
    const std::pair<size_t, size_t> cost{std::max(a, b), a + b};
    if (cost < bestCost) bestCost = cost, best = va;
  }
  return {best, n - best};
}

// A 16-byte aligned variable of `elements` floats on tile.
Tensor unitBuffer(Graph& graph, size_t elements, const std::string& name, unsigned tile) {
  const Tensor t = graph.addVariable(ElemType::Float32, {elements}, name);
  graph.setTileMapping(t, tile);
  graph.setAlignment(t, TESS_AMP_STEP_BYTES);
  return t;
}

// The [rows, cols] view of a buffer stored in the unit's column groups [cols / 4][rows][4].
Tensor columnGroupsView(const Tensor& store, size_t rows, size_t cols) {
  return store.reshape({cols / 4, rows, 4}).dimShuffle({1, 0, 2}).reshape({rows, cols});
}

}  // namespace

bool matMulUsesUnit(const Target& target, size_t m, size_t k, size_t n) {
  return unitTarget(target) && m > 0 && n > 0 && n % 4 == 0 && k % 4 == 0 && k >= 8;
}

namespace {

// True when a block of a product split over k (pk > 1) goes to the unit with its columns padded
// to a multiple of 4 (the MLP's 10-column last layer, n > 4): the partials are stored with the
// padded width. The padding columns of op(b) repeat real weights (so the gather moves whole
// 16-byte rows), their sums are never read, and each real column's sum is the same chain as
// without padding: the bits do not change.
bool paddedUnitBlock(const Target& target, size_t m, size_t k, size_t n, size_t pk) {
  return pk > 1 && n > 4 && n % 4 != 0 && matMulUsesUnit(target, m, k, n + 4 - n % 4);
}

size_t roundUp4(size_t n) {
  return (n + 3) / 4 * 4;
}

// True when a product's block [m, k] x [k, n] goes to the unit with k padded to a multiple of 4
// (k parts that are not multiples of 4: LeNet's dense layers, the MLP's 10-class input
// gradient): op(a)'s rows get +0 and op(b)'s rows -0 in the padding, so each padding product is
// (+0)(-0) = -0 and adds nothing to any sum (x + -0 = x for every x, -0 and NaN included): each
// element is the same chain of fused multiply-adds as without padding, the same bits. op(a) must
// be stored row-major (not transposed).
bool paddedKUnitBlock(const Target& target, size_t m, size_t k, size_t n) {
  return k % 4 != 0 && matMulUsesUnit(target, m, roundUp4(k), n);
}

// The plan for target t (planMatMul); kParts != 0 fixes the k split.
// half: a float16 product (MatMulAmpH at twice MatMulAmp's MACs a round, or MatMulHalf; k parts
// multiples of 8, operands 2 bytes an element).
MatMulPlan planFor(const Target& t, uint32_t imageEnd, size_t m, size_t k, size_t n, size_t kParts,
                   bool half = false) {
  const size_t tiles = t.tiles;
  const size_t workers = t.contexts;
  // Bytes a tile can give a matmul: its memory less the codelet image, the stacks and some room
  // for vertex states and programs.
  const double room =
      static_cast<double>(t.tileMemBytes) - imageEnd - TESS_GRAPH_STACK_BYTES - 4096.0;
  const size_t grain = unitTarget(t) ? 4 : 1;
  const size_t kg = half ? 8 : 1;
  MatMulPlan best;
  best.grain = grain;
  best.kGrain = kg;
  double bestCost = std::numeric_limits<double>::max();
  bool bestFits = false;
  for (size_t pm = 1; pm <= std::min(m, tiles); ++pm) {
    for (size_t pn = 1; pn * pm <= tiles && pn <= n; ++pn) {
      for (size_t pk = 1; pk * pn * pm <= tiles && pk <= k; ++pk) {
        if (kParts != 0 && pk != kParts) continue;
        // Every part must be non-empty (so every partial has a tile).
        if (part(m, pm, pm - 1).first >= m || part(n, pn, pn - 1, grain).first >= n ||
            part(k, pk, pk - 1, kg).first >= k)
          continue;
        // On the unit (fp32), no last column block narrower than 4 beside wider ones: the unit
        // cannot take it, and MatMulBlocked is slow on so narrow a block (LeNet's 10 classes as
        // 4 + 4 + 2 took 12,400 cycles on the 2-column tiles against 4,900 modelled).
        const auto [nl0, nl1] = part(n, pn, pn - 1, grain);
        if (!half && grain == 4 && pn > 1 && nl1 - nl0 < 4) continue;
        const size_t mbz = part(m, pm, 0).second, nbz = part(n, pn, 0, grain).second,
                     kbz = part(k, pk, 0, kg).second;
        const double mb = static_cast<double>(mbz), nb = static_cast<double>(nbz),
                     kb = static_cast<double>(kbz);
        // A block's compute cycles on its codelet.
        const auto blockCompute = [&](size_t bm, size_t bn, size_t bk) {
          if (half && matMulHalfUsesUnit(t, bm, bk, bn)) {
            // AMP.H: the same rounds as AMP.S over a block of 8 k instead of 4.
            return ampCycles(bm, bn, bk / 2);
          }
          if (!half && matMulUsesUnit(t, bm, bk, bn)) return ampCycles(bm, bn, bk);
          if (!half && paddedUnitBlock(t, bm, bk, bn, pk)) return ampCycles(bm, roundUp4(bn), bk);
          if (!half && paddedKUnitBlock(t, bm, bk, bn)) {
            // The padded copies of both operands (about three instructions a word on the six
            // contexts) and their compute set, then the product.
            return ampCycles(bm, bn, roundUp4(bk)) +
                   3.0 * static_cast<double>((bm + bn) * roundUp4(bk)) / workers * 6.0 + 600.0;
          }
          // The block's 4 x 6 groups go to the six contexts; one context issues every six cycles.
          size_t load = 0;
          for (const WorkPart& p : splitWork(bm, bn, workers))
            load = std::max(load, p.rows * p.cols);
          return (half ? kHalfCyclesPerMac : kCyclesPerMac) * static_cast<double>(load) *
                 static_cast<double>(bk);
        };
        // The slowest of the first block and the ragged last ones (a last column block or k part
        // that is shorter may go to another codelet).
        const auto [kl0, kl1] = part(k, pk, pk - 1, kg);
        const double compute =
            std::max({blockCompute(mbz, nbz, kbz), blockCompute(mbz, nl1 - nl0, kbz),
                      blockCompute(mbz, nbz, kl1 - kl0), blockCompute(mbz, nl1 - nl0, kl1 - kl0)});
        const double reduce = pk > 1 ? kCyclesPerMac * mb * nb / static_cast<double>(workers) : 0.0;
        const double exchange = mb * kb + kb * nb + (pk > 1 ? 2.0 * mb * nb : 0.0);
        const double cost = compute + reduce + exchange;
        // Memory of the busiest tile: gathered operand blocks, its partial block, a share of the
        // operands and of the result, and the gathered partials of its reduction share.
        const double share =
            (static_cast<double>(m * k + k * n + m * n)) / static_cast<double>(pm * pn * pk);
        const double bytes =
            half ? 2.0 * (mb * kb + kb * nb + share) + 4.0 * mb * nb * (pk > 1 ? 2.0 : 1.0)
                 : 4.0 * (mb * kb + kb * nb + mb * nb * (pk > 1 ? 2.0 : 1.0) + share);
        const bool fits = bytes <= room;
        if ((fits && !bestFits) || (fits == bestFits && cost < bestCost - 1e-9)) {
          bestCost = cost;
          bestFits = fits;
          best = {pm, pn, pk, grain, kg};
        }
      }
    }
  }
  return best;
}

}  // namespace

MatMulPlan planMatMul(const Graph& graph, size_t m, size_t k, size_t n) {
  const Target& t = graph.target();
  if (!unitTarget(t)) return planFor(t, graph.imageEnd(), m, k, n, 0);
  // The unit keeps the k split the scalar codelets would have where it can take every part as
  // it is (a multiple of 4): the parts' sums fix the bits, so such a product gives the same bits
  // with and without the unit; m and n are split for its rate. Where a part is not a multiple of
  // 4 (LeNet's dense layers), keeping the split would pad every block on the tile (AmpRegroup's
  // copies cost more than the product) or leave it to the scalar codelet, so the unit plans its
  // own k split too (docs/decisions.md, "The unit's own k split").
  Target scalar = t;
  scalar.hasMatrixUnit = false;
  const size_t kParts = planFor(scalar, graph.imageEnd(), m, k, n, 0).k;
  bool whole = true;
  for (size_t l = 0; l < kParts; ++l) {
    const auto [k0, k1] = part(k, kParts, l);
    whole = whole && (k1 - k0) % 4 == 0;
  }
  return planFor(t, graph.imageEnd(), m, k, n, whole ? kParts : 0);
}

bool matMulHalfUsesUnit(const Target& target, size_t m, size_t k, size_t n) {
  return unitTarget(target) && m > 0 && n > 0 && n % 4 == 0 && k % 8 == 0 && k >= 16;
}

MatMulPlan planMatMulHalf(const Graph& graph, size_t m, size_t k, size_t n) {
  return planFor(graph.target(), graph.imageEnd(), m, k, n, 0, true);
}

namespace {

// Tile of block (i, j, l) of a plan.
unsigned planTile(const MatMulPlan& plan, size_t i, size_t j, size_t l) {
  return static_cast<unsigned>((i * plan.n + j) * plan.k + l);
}

// The k parts' sums of block [m0, m1) x [n0, n1) of the product stored in c (matmul's and
// matmulHalf's reduction): element part l of the flattened block on the plan's tile (i, j, l),
// each of its workers summing its own columns of the gathered [parts, elements] input in part
// order. FLOPs count the columns below n only (a padded block's extra columns are not counted).
void addBlockReduction(Graph& graph, ComputeSet& rs, const MatMulPlan& plan, const Tensor& partials,
                       size_t parts, const Tensor& c, size_t i, size_t j, size_t m0, size_t m1,
                       size_t n0, size_t n1, size_t n) {
  const Tensor cBlock = c.slice(m0, m1, 0).slice(n0, n1, 1).flatten();
  const size_t elems = cBlock.numElements();
  for (size_t l = 0; l < plan.k; ++l) {
    const auto [e0, e1] = part(elems, plan.k, l);
    if (e0 == e1) continue;
    const unsigned tile = planTile(plan, i, j, l);
    graph.setTileMapping(cBlock.slice(e0, e1), tile);
    const auto partSlice = [&](size_t q) {
      return partials[q].slice(m0, m1, 0).slice(n0, n1, 1).flatten().slice(e0, e1);
    };
    // The tile's own partial (part l, computed here) is read where it lies, the others gathered.
    std::optional<Tensor> own;
    if (l < parts && parts > 1 && allOnTile(graph, partSlice(l), tile)) own = partSlice(l);
    std::vector<Tensor> ins;
    for (size_t q = 0; q < parts; ++q)
      if (!own || q != l) ins.push_back(partSlice(q));
    const Tensor in = concat(ins, 0);
    const size_t vparts = std::min<size_t>(e1 - e0, graph.target().contexts);
    for (size_t v = 0; v < vparts; ++v) {
      const auto [s0, s1] = part(e1 - e0, vparts, v, 4);  // whole quads: no tail loop
      if (s0 == s1) continue;
      const Tensor out = cBlock.slice(e0 + s0, e0 + s1);
      VertexRef vx = own ? graph.addVertex(rs, "ReduceSumStridedOwn",
                                           {{"in", in}, {"mine", *own}, {"out", out}})
                         : graph.addVertex(rs, "ReduceSumStrided", {{"in", in}, {"out", out}});
      if (own) graph.setFieldValue(vx, "own", static_cast<uint32_t>(l));
      graph.setFieldValue(vx, "width", static_cast<uint32_t>(e1 - e0));
      graph.setFieldValue(vx, "offset", static_cast<uint32_t>(s0));
      uint64_t real = 0;
      for (size_t e = e0 + s0; e < e0 + s1; ++e) real += n0 + e % (n1 - n0) < n;
      graph.setFlops(vx, real * (parts - 1));
      graph.setTileMapping(vx, tile);
    }
  }
}

}  // namespace

Tensor createMatMulLhs(Graph& graph, size_t m, size_t k, size_t n, const std::string& name,
                       ElemType type) {
  const bool half = type == ElemType::Float16;
  const MatMulPlan plan = half ? planMatMulHalf(graph, m, k, n) : planMatMul(graph, m, k, n);
  Tensor a = graph.addVariable(type, {m, k}, name);
  // Each tile's block of a is row-major in place; aligned, the unit reads it there too.
  if (unitTarget(graph.target())) graph.setAlignment(a, TESS_AMP_STEP_BYTES);
  for (size_t i = 0; i < plan.m; ++i) {
    for (size_t l = 0; l < plan.k; ++l) {
      const auto [m0, m1] = part(m, plan.m, i);
      const auto [k0, k1] = part(k, plan.k, l, plan.kGrain);
      if (m0 == m1 || k0 == k1) continue;
      graph.setTileMapping(a.slice(m0, m1, 0).slice(k0, k1, 1),
                           planTile(plan, i, (i + l) % plan.n, l));
    }
  }
  return a;
}

Tensor createMatMulRhs(Graph& graph, size_t m, size_t k, size_t n, const std::string& name,
                       ElemType type) {
  const bool half = type == ElemType::Float16;
  const MatMulPlan plan = half ? planMatMulHalf(graph, m, k, n) : planMatMul(graph, m, k, n);
  const auto usesUnit = [&](size_t kb, size_t nb) {
    return half ? matMulHalfUsesUnit(graph.target(), m, kb, nb)
                : matMulUsesUnit(graph.target(), m, kb, nb);
  };
  bool unitBlocks = false;
  for (size_t l = 0; l < plan.k; ++l) {
    for (size_t j = 0; j < plan.n; ++j) {
      const auto [k0, k1] = part(k, plan.k, l, plan.kGrain);
      const auto [n0, n1] = part(n, plan.n, j, plan.grain);
      if (k0 < k1 && n0 < n1 && usesUnit(k1 - k0, n1 - n0)) unitBlocks = true;
    }
  }
  if (unitBlocks) {
    // Each tile's block stored as the unit reads it, [nb / 4][kb][4] (row-major where the unit
    // does not take the block), 16-byte aligned; the [k, n] result is a view over the storage,
    // so the forward product reads b in place and the host sees the logical layout.
    Tensor store = graph.addVariable(type, {k * n}, name);
    graph.setAlignment(store, TESS_AMP_STEP_BYTES);
    const uint32_t var = store.runs().at(0).var;
    std::vector<std::pair<uint32_t, uint32_t>> elements(k * n);
    size_t at = 0;
    for (size_t l = 0; l < plan.k; ++l) {
      for (size_t j = 0; j < plan.n; ++j) {
        const auto [k0, k1] = part(k, plan.k, l, plan.kGrain);
        const auto [n0, n1] = part(n, plan.n, j, plan.grain);
        if (k0 == k1 || n0 == n1) continue;
        const size_t kb = k1 - k0, nb = n1 - n0;
        const bool groups = usesUnit(kb, nb);
        for (size_t r = 0; r < kb; ++r) {
          for (size_t c = 0; c < nb; ++c) {
            const size_t off = groups ? (c / 4) * kb * 4 + r * 4 + c % 4 : r * nb + c;
            elements[(k0 + r) * n + n0 + c] = {var, static_cast<uint32_t>(at + off)};
          }
        }
        graph.setTileMapping(store.slice(at, at + kb * nb), planTile(plan, (j + l) % plan.m, j, l));
        at += kb * nb;
      }
    }
    return Tensor::fromElements(graph.id(), type, {k, n}, elements, name);
  }
  Tensor b = graph.addVariable(type, {k, n}, name);
  for (size_t l = 0; l < plan.k; ++l) {
    for (size_t j = 0; j < plan.n; ++j) {
      const auto [k0, k1] = part(k, plan.k, l, plan.kGrain);
      const auto [n0, n1] = part(n, plan.n, j, plan.grain);
      if (k0 == k1 || n0 == n1) continue;
      graph.setTileMapping(b.slice(k0, k1, 0).slice(n0, n1, 1),
                           planTile(plan, (j + l) % plan.m, j, l));
    }
  }
  return b;
}

Tensor matmul(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog,
              const std::string& name, const MatMulOptions& opt) {
  if (a.elementType() == ElemType::Float16 || b.elementType() == ElemType::Float16)
    return matmulHalf(graph, a, b, prog, name, opt);
  if (a.rank() != 2 || b.rank() != 2 || a.elementType() != ElemType::Float32 ||
      b.elementType() != ElemType::Float32) {
    throw Error(fmt::format("{}: matmul of 2-D float32 tensors, got {} and {}", name,
                            a.shapeString(), b.shapeString()));
  }
  const size_t m = opt.transposeA ? a.dim(1) : a.dim(0);
  const size_t k = opt.transposeA ? a.dim(0) : a.dim(1);
  const size_t kb = opt.transposeB ? b.dim(1) : b.dim(0);
  const size_t n = opt.transposeB ? b.dim(0) : b.dim(1);
  if (k != kb) {
    throw Error(fmt::format("{}: inner dimensions differ: op(a) is [{}, {}], op(b) is [{}, {}]",
                            name, m, k, kb, n));
  }
  const MatMulPlan plan = planMatMul(graph, m, k, n);
  auto tileOf = [&](size_t i, size_t j, size_t l) { return planTile(plan, i, j, l); };
  // op(a)[r0:r1, k0:k1] and op(b)[k0:k1, c0:c1] as stored (the codelet takes the layout flags).
  auto aBlock = [&](size_t r0, size_t r1, size_t k0, size_t k1) {
    return opt.transposeA ? a.slice(k0, k1, 0).slice(r0, r1, 1)
                          : a.slice(r0, r1, 0).slice(k0, k1, 1);
  };
  auto bBlock = [&](size_t k0, size_t k1, size_t c0, size_t c1) {
    return opt.transposeB ? b.slice(c0, c1, 0).slice(k0, k1, 1)
                          : b.slice(k0, k1, 0).slice(c0, c1, 1);
  };
  const uint32_t flags = (opt.transposeA ? 1u : 0u) | (opt.transposeB ? 2u : 0u);
  // op(b) as a view, for the unit's column groups (op(a): ampRows).
  const Tensor bOp = opt.transposeB ? b.transpose() : b;
  const size_t g = plan.grain;

  // With a k split, a last column block whose width is not a multiple of 4 goes to the unit
  // padded (paddedUnitBlock): the partials and the result are then stored [k parts, m, n
  // rounded up to 4] and [m, n rounded up], the reduction sums the padded columns too (so each
  // tile's share of a partial is one run: the exchange moves as many messages as without
  // padding), and the result is the view of the real columns.
  // Every block of the last column must go so.
  bool padded = n % 4 != 0 && plan.k > 1;
  for (size_t i = 0; i < plan.m && padded; ++i) {
    for (size_t l = 0; l < plan.k && padded; ++l) {
      const auto [m0, m1] = part(m, plan.m, i);
      const auto [n0, n1] = part(n, plan.n, plan.n - 1, g);
      const auto [k0, k1] = part(k, plan.k, l);
      if (m0 == m1 || n0 == n1 || k0 == k1) continue;
      padded = paddedUnitBlock(graph.target(), m1 - m0, k1 - k0, n1 - n0, plan.k);
    }
  }
  const size_t np = padded ? roundUp4(n) : n;
  const Tensor cStore = graph.addVariable(ElemType::Float32, {m, np}, name);
  const Tensor c = padded ? cStore.slice(0, n, 1) : cStore;
  Tensor partials = plan.k > 1
                        ? graph.addVariable(ElemType::Float32, {plan.k, m, np}, name + "/partials")
                        : cStore.expand(0);
  ComputeSet cs = graph.addComputeSet(name);
  std::optional<ComputeSet> ts;          // transposes of a's blocks for the unit
  std::optional<ComputeSet> ps;          // padded copies of the operands of blocks with k padded
  std::vector<Tensor> copyFrom, copyTo;  // op(a)'s blocks kept on the tiles (keepACopies)
  bool aligned = false;
  for (size_t i = 0; i < plan.m; ++i) {
    const auto [m0, m1] = part(m, plan.m, i);
    for (size_t j = 0; j < plan.n; ++j) {
      const auto [n0, n1] = part(n, plan.n, j, g);
      for (size_t l = 0; l < plan.k; ++l) {
        const auto [k0, k1] = part(k, plan.k, l);
        if (m0 == m1 || n0 == n1 || k0 == k1) continue;
        const unsigned tile = tileOf(i, j, l);
        const bool padBlock = padded && n1 == n;
        const Tensor pBlock = partials[l].slice(m0, m1, 0).slice(n0, padBlock ? np : n1, 1);
        graph.setTileMapping(pBlock, tile);
        if (padBlock) {
          if (!aligned) graph.setAlignment(partials, TESS_AMP_STEP_BYTES), aligned = true;
          addAmpVertices(graph, cs, tile,
                         ampRows(graph, ts, tile, a, opt.transposeA, m0, m1, k0, k1, name),
                         withRepeatedColumns(bOp.slice(k0, k1, 0).slice(n0, n1, 1), np - n), pBlock,
                         false, name, 2 * uint64_t{m1 - m0} * (k1 - k0) * (n1 - n0));
          continue;
        }
        if (matMulUsesUnit(graph.target(), m1 - m0, k1 - k0, n1 - n0)) {
          if (!aligned) graph.setAlignment(partials, TESS_AMP_STEP_BYTES), aligned = true;
          Tensor aRows = ampRows(graph, ts, tile, a, opt.transposeA, m0, m1, k0, k1, name);
          if (opt.keepACopies && !opt.transposeA) {
            // The block gathered into a variable of the tile that a later product reads.
            if (!allOnTile(graph, aRows, tile)) {
              const Tensor copy = unitBuffer(graph, (m1 - m0) * (k1 - k0),
                                             fmt::format("{}/a-copy@{}", name, tile), tile)
                                      .reshape({m1 - m0, k1 - k0});
              copyFrom.push_back(aRows.flatten());
              copyTo.push_back(copy.flatten());
              graph.addTileCopy(aRows, tile, copy);
              aRows = copy;
            }
          }
          addAmpVertices(graph, cs, tile, aRows, bOp.slice(k0, k1, 0).slice(n0, n1, 1), pBlock,
                         false, name);
          continue;
        }
        if (!opt.transposeA && paddedKUnitBlock(graph.target(), m1 - m0, k1 - k0, n1 - n0)) {
          // k padded to kp (paddedKUnitBlock): op(a)'s rows [mb, kp] and op(b)'s column groups
          // [nb / 4][kp][4] copied on the tile (AmpRegroup, the compute set NAME/pad) from the
          // blocks as stored, b transposed on the way where it is stored [n, k].
          if (!aligned) graph.setAlignment(partials, TESS_AMP_STEP_BYTES), aligned = true;
          if (!ps) ps = graph.addComputeSet(name + "/pad");
          const size_t mb = m1 - m0, kb = k1 - k0, nb = n1 - n0, kp = roundUp4(kb);
          const Tensor aPad =
              unitBuffer(graph, mb * kp, fmt::format("{}/a-pad@{}", name, tile), tile);
          const auto [va, vb] = shareContexts(graph, mb, kp, nb / 4, 4 * kp);
          addRegroup(graph, *ps, tile, aBlock(m0, m1, k0, k1).flatten(), aPad, mb, kp, 2, mb, mb,
                     kb, kb, kp, 0.0f, va);
          const Tensor bPad =
              unitBuffer(graph, nb * kp, fmt::format("{}/b-pad@{}", name, tile), tile);
          addRegroup(graph, *ps, tile, bBlock(k0, k1, n0, n1).flatten(), bPad, nb / 4, kp * 4,
                     opt.transposeB ? 3 : 0, kp, kb, nb, opt.transposeB ? kb : nb, 0, -0.0f, vb);
          addAmpVertices(graph, cs, tile, aPad.reshape({mb, kp}), columnGroupsView(bPad, kp, nb),
                         pBlock, false, name, 2 * uint64_t{mb} * kb * nb);
          continue;
        }
        const Tensor bb = bBlock(k0, k1, n0, n1).flatten();
        // The block's rows of op(a), one gathered copy shared by the tile's vertices.
        const Tensor ab = aBlock(m0, m1, k0, k1).flatten();
        for (const WorkPart& p : splitWork(m1 - m0, n1 - n0, graph.target().contexts)) {
          addMatMulVertex(graph, cs, tile, ab, bb, pBlock.flatten(), k1 - k0, flags, p);
        }
      }
    }
  }
  if (!copyFrom.empty()) prog.add(Copy(concat(copyFrom, 0), concat(copyTo, 0), name + "/a-copy"));
  if (ts) prog.add(Execute(*ts, name + "/a-rows"));
  if (ps) prog.add(Execute(*ps, name + "/pad"));
  prog.add(Execute(cs, name));
  if (plan.k == 1) return c;

  // Reduction: block (i, j) of c is shared among the plan.k tiles that hold its partials.
  ComputeSet rs = graph.addComputeSet(name + "/reduce");
  for (size_t i = 0; i < plan.m; ++i) {
    const auto [m0, m1] = part(m, plan.m, i);
    for (size_t j = 0; j < plan.n; ++j) {
      const auto [n0, nReal] = part(n, plan.n, j, g);
      if (m0 == m1 || n0 == nReal) continue;
      const size_t n1 = padded && nReal == n ? np : nReal;
      size_t parts = 0;
      for (size_t l = 0; l < plan.k; ++l)
        parts += part(k, plan.k, l).first < part(k, plan.k, l).second;
      addBlockReduction(graph, rs, plan, partials, parts, cStore, i, j, m0, m1, n0, n1, n);
    }
  }
  prog.add(Execute(rs, name + "/reduce"));
  return c;
}

namespace {

// matmulAccumulate (accumulate) and matmulInto (not): each tile computes its own block of c.
void matmulBlocks(Graph& graph, const Tensor& c, const Tensor& a, const Tensor& b, Sequence& prog,
                  const std::string& name, const MatMulOptions& opt, bool accumulate) {
  if (a.rank() != 2 || b.rank() != 2 || c.rank() != 2 || a.elementType() != ElemType::Float32 ||
      b.elementType() != ElemType::Float32 || c.elementType() != ElemType::Float32) {
    throw Error(fmt::format("{}: matmulAccumulate of 2-D float32 tensors, got {}, {} and {}", name,
                            c.shapeString(), a.shapeString(), b.shapeString()));
  }
  const size_t m = opt.transposeA ? a.dim(1) : a.dim(0);
  const size_t k = opt.transposeA ? a.dim(0) : a.dim(1);
  const size_t n = opt.transposeB ? b.dim(0) : b.dim(1);
  if ((opt.transposeB ? b.dim(1) : b.dim(0)) != k || c.dim(0) != m || c.dim(1) != n) {
    throw Error(fmt::format("{}: c {} += op(a) [{}, {}] op(b) [{}, {}] does not match", name,
                            c.shapeString(), m, k, opt.transposeB ? b.dim(1) : b.dim(0), n));
  }
  // Each tile's block of c: the bounding box of its elements, which must be exactly those.
  const std::vector<int32_t> map = graph.tileMapping(c);
  struct Box {
    size_t r0 = SIZE_MAX, r1 = 0, c0 = SIZE_MAX, c1 = 0, count = 0;
  };
  std::map<unsigned, Box> boxes;
  for (size_t i = 0; i < map.size(); ++i) {
    if (map[i] < 0)
      throw Error(fmt::format("{}: element {} of \"{}\" is not mapped", name, i, c.debugName()));
    Box& bx = boxes[static_cast<unsigned>(map[i])];
    const size_t r = i / n, col = i % n;
    bx.r0 = std::min(bx.r0, r), bx.r1 = std::max(bx.r1, r + 1);
    bx.c0 = std::min(bx.c0, col), bx.c1 = std::max(bx.c1, col + 1);
    ++bx.count;
  }
  const uint32_t flags =
      (opt.transposeA ? 1u : 0u) | (opt.transposeB ? 2u : 0u) | (accumulate ? 4u : 0u);
  const Tensor bOp = opt.transposeB ? b.transpose() : b;  // op(b), for the unit's column groups
  ComputeSet cs = graph.addComputeSet(name);
  std::optional<ComputeSet> ts;  // transposes of a's blocks for the unit
  std::optional<ComputeSet> us;  // real columns of padded blocks of c back into c
  std::vector<Tensor> from, to;  // the transposed parts to the tiles that share them
  // A transposed a for the unit: the tiles whose blocks share their rows share the transpose.
  std::map<unsigned, Tensor> shared;
  if (opt.transposeA) {
    std::map<std::pair<size_t, size_t>, std::vector<unsigned>> byRows;
    for (const auto& [tile, bx] : boxes) {
      if (matMulUsesUnit(graph.target(), bx.r1 - bx.r0, k, bx.c1 - bx.c0))
        byRows[{bx.r0, bx.r1}].push_back(tile);
    }
    for (const auto& [range, tiles] : byRows) {
      if (tiles.size() < 2) continue;
      const std::vector<Tensor> rows = sharedAmpRows(graph, ts, from, to, tiles, a, range.first,
                                                     range.second, k, name, opt.useACopies);
      for (size_t i = 0; i < tiles.size(); ++i) shared.emplace(tiles[i], rows[i]);
    }
  }
  for (const auto& [tile, bx] : boxes) {
    if (bx.count != (bx.r1 - bx.r0) * (bx.c1 - bx.c0)) {
      throw Error(fmt::format("{}: the elements of \"{}\" on tile {} are not one rectangular block",
                              name, c.debugName(), tile));
    }
    const Tensor bb =
        (opt.transposeB ? b.slice(bx.c0, bx.c1, 0) : b.slice(bx.c0, bx.c1, 1)).flatten();
    // The box's rows of op(a), one gathered copy shared by the tile's vertices.
    const Tensor ab =
        (opt.transposeA ? a.slice(bx.r0, bx.r1, 1) : a.slice(bx.r0, bx.r1, 0)).flatten();
    const Tensor cBlock = c.slice(bx.r0, bx.r1, 0).slice(bx.c0, bx.c1, 1);
    const Tensor cb = cBlock.flatten();
    const size_t rows = bx.r1 - bx.r0, cols = bx.c1 - bx.c0;
    if (cols > 4 && cols % 4 != 0 && matMulUsesUnit(graph.target(), rows, k, roundUp4(cols))) {
      // Columns padded to cp (the MLP's 10-class weight): c's block copied into the unit's
      // column groups [cp / 4][rows][4] (when accumulating; AmpRegroup in NAME/a-rows), the
      // product there with op(b)'s padding columns repeating real ones (as the padded forward
      // block's), and the real columns copied back (NAME/unpad). The padding columns' sums are
      // never read; each real one is the same chain as MatMulBlocked's.
      const size_t cp = roundUp4(cols);
      const Tensor cPad =
          unitBuffer(graph, rows * cp, fmt::format("{}/c-pad@{}", name, tile), tile);
      // The copy and a transposed a's rows share the compute set's contexts (ampRows makes it
      // for a transposed a; the copy, only when accumulating).
      if (!ts && accumulate) ts = graph.addComputeSet(name + "/a-rows");
      const auto it = shared.find(tile);
      const bool transposes = it == shared.end() && opt.transposeA;
      const auto [vt, vc] = accumulate && transposes
                                ? shareContexts(graph, rows, k, cp / 4, 4 * rows)
                                : std::pair<size_t, size_t>{SIZE_MAX, SIZE_MAX};
      if (accumulate)
        addRegroup(graph, *ts, tile, cb, cPad, cp / 4, rows * 4, 0, rows, rows, cols, cols, 0, 0.0f,
                   vc);
      addAmpVertices(
          graph, cs, tile,
          it != shared.end()
              ? it->second
              : ampRows(graph, ts, tile, a, opt.transposeA, bx.r0, bx.r1, 0, k, name, vt),
          withRepeatedColumns(bOp.slice(bx.c0, bx.c1, 1), cp - cols),
          columnGroupsView(cPad, rows, cp), accumulate, name, 2 * uint64_t{rows} * k * cols);
      if (!us) us = graph.addComputeSet(name + "/unpad");
      addRegroup(graph, *us, tile, cPad, cb, rows, cols, 1, rows, rows, cols, 0, 0, 0.0f);
      continue;
    }
    if (matMulUsesUnit(graph.target(), bx.r1 - bx.r0, k, bx.c1 - bx.c0)) {
      graph.setAlignment(cb, TESS_AMP_STEP_BYTES);
      const auto it = shared.find(tile);
      addAmpVertices(graph, cs, tile,
                     it != shared.end()
                         ? it->second
                         : ampRows(graph, ts, tile, a, opt.transposeA, bx.r0, bx.r1, 0, k, name),
                     bOp.slice(bx.c0, bx.c1, 1), cBlock, accumulate, name);
      continue;
    }
    // A block in the unit's column groups that the scalar codelet computes (k not a multiple of
    // 4) is gathered row-major and written back, so one vertex writes it all (vertices may share
    // a block only in place).
    const std::vector<WorkPart> parts =
        inColumnGroups(cBlock) ? std::vector<WorkPart>{{0, bx.r1 - bx.r0, 0, bx.c1 - bx.c0}}
                               : splitWork(bx.r1 - bx.r0, bx.c1 - bx.c0, graph.target().contexts);
    for (const WorkPart& p : parts) addMatMulVertex(graph, cs, tile, ab, bb, cb, k, flags, p);
  }
  if (ts) prog.add(Execute(*ts, name + "/a-rows"));
  if (!from.empty()) prog.add(Copy(concat(from, 0), concat(to, 0), name + "/a-rows/share"));
  prog.add(Execute(cs, name));
  if (us) prog.add(Execute(*us, name + "/unpad"));
}

}  // namespace

void matmulAccumulate(Graph& graph, const Tensor& c, const Tensor& a, const Tensor& b,
                      Sequence& prog, const std::string& name, const MatMulOptions& opt) {
  matmulBlocks(graph, c, a, b, prog, name, opt, true);
}

void matmulInto(Graph& graph, const Tensor& c, const Tensor& a, const Tensor& b, Sequence& prog,
                const std::string& name, const MatMulOptions& opt) {
  matmulBlocks(graph, c, a, b, prog, name, opt, false);
}

Tensor createMatMulHalfResult(Graph& graph, size_t m, size_t k, size_t n, const std::string& name) {
  const MatMulPlan plan = planMatMulHalf(graph, m, k, n);
  const Tensor c = graph.addVariable(ElemType::Float32, {m, n}, name);
  for (size_t i = 0; i < plan.m; ++i) {
    const auto [m0, m1] = part(m, plan.m, i);
    for (size_t j = 0; j < plan.n; ++j) {
      const auto [n0, n1] = part(n, plan.n, j, plan.grain);
      if (m0 == m1 || n0 == n1) continue;
      // Where addBlockReduction puts it (one part: the product's own block).
      const Tensor block = c.slice(m0, m1, 0).slice(n0, n1, 1).flatten();
      for (size_t l = 0; l < plan.k; ++l) {
        const auto [e0, e1] = part(block.numElements(), plan.k, l);
        if (e0 < e1) graph.setTileMapping(block.slice(e0, e1), planTile(plan, i, j, l));
      }
    }
  }
  return c;
}

Tensor matmulHalf(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog,
                  const std::string& name, const MatMulOptions& opt) {
  if (a.rank() != 2 || b.rank() != 2 || a.elementType() != ElemType::Float16 ||
      b.elementType() != ElemType::Float16) {
    throw Error(fmt::format("{}: a float16 matmul takes 2-D float16 a and b, got {} {} and {} {}",
                            name, elemTypeName(a.elementType()), a.shapeString(),
                            elemTypeName(b.elementType()), b.shapeString()));
  }
  if (!unitTarget(graph.target())) {
    throw Error(
        fmt::format("{}: a float16 matmul needs the matrix unit (the target has none)", name));
  }
  // A transposed operand is transposed first (transposeHalf: its dimensions must be even), then
  // the product is the plain one, with the same bits.
  if (opt.transposeA || opt.transposeB) {
    return matmulHalf(graph, opt.transposeA ? transposeHalf(graph, a, prog, name + "/aT") : a,
                      opt.transposeB ? transposeHalf(graph, b, prog, name + "/bT") : b, prog, name);
  }
  const size_t m = a.dim(0), k = a.dim(1), n = b.dim(1);
  if (b.dim(0) != k)
    throw Error(fmt::format("{}: inner dimensions differ: a is [{}, {}], b is [{}, {}]", name, m, k,
                            b.dim(0), n));
  if (k % 2 != 0 || n % 2 != 0) {
    throw Error(
        fmt::format("{}: a float16 matmul needs k and n even (float16 rows move in "
                    "pairs of elements), got k = {}, n = {}",
                    name, k, n));
  }
  const MatMulPlan plan = planMatMulHalf(graph, m, k, n);
  const size_t g = plan.grain, kg = plan.kGrain;
  const Tensor c = graph.addVariable(ElemType::Float32, {m, n}, name);
  const Tensor partials =
      plan.k > 1 ? graph.addVariable(ElemType::Float32, {plan.k, m, n}, name + "/partials")
                 : c.expand(0);
  ComputeSet cs = graph.addComputeSet(name);
  bool aligned = false;
  for (size_t i = 0; i < plan.m; ++i) {
    const auto [m0, m1] = part(m, plan.m, i);
    for (size_t j = 0; j < plan.n; ++j) {
      const auto [n0, n1] = part(n, plan.n, j, g);
      for (size_t l = 0; l < plan.k; ++l) {
        const auto [k0, k1] = part(k, plan.k, l, kg);
        if (m0 == m1 || n0 == n1 || k0 == k1) continue;
        const unsigned tile = planTile(plan, i, j, l);
        const Tensor pBlock = partials[l].slice(m0, m1, 0).slice(n0, n1, 1);
        graph.setTileMapping(pBlock, tile);
        const Tensor ab = a.slice(m0, m1, 0).slice(k0, k1, 1);
        const Tensor bb = b.slice(k0, k1, 0).slice(n0, n1, 1);
        if (matMulHalfUsesUnit(graph.target(), m1 - m0, k1 - k0, n1 - n0)) {
          if (!aligned) graph.setAlignment(partials, TESS_AMP_STEP_BYTES), aligned = true;
          addAmpVertices(graph, cs, tile, ab, bb, pBlock, false, name, std::nullopt, "MatMulAmpH");
          continue;
        }
        const Tensor abf = ab.flatten(), bbf = bb.flatten(), cbf = pBlock.flatten();
        for (const WorkPart& p : splitWork(m1 - m0, n1 - n0, graph.target().contexts)) {
          VertexRef vx = graph.addVertex(cs, "MatMulHalf", {{"a", abf}, {"b", bbf}, {"c", cbf}});
          graph.setFieldValue(vx, "k", static_cast<uint32_t>(k1 - k0));
          graph.setFieldValue(vx, "flags", 0u);
          graph.setFieldValue(vx, "row", static_cast<uint32_t>(p.row));
          graph.setFieldValue(vx, "rows", static_cast<uint32_t>(p.rows));
          graph.setFieldValue(vx, "col", static_cast<uint32_t>(p.col));
          graph.setFieldValue(vx, "cols", static_cast<uint32_t>(p.cols));
          graph.setFieldWriteOnly(vx, "c");
          graph.setFlops(vx, 2 * uint64_t{p.rows} * p.cols * (k1 - k0));
          graph.setTileMapping(vx, tile);
        }
      }
    }
  }
  prog.add(Execute(cs, name));
  if (plan.k == 1) return c;
  // The k parts' sums, in part order, on the tiles that hold them (matmul's reduction).
  ComputeSet rs = graph.addComputeSet(name + "/reduce");
  size_t parts = 0;
  for (size_t l = 0; l < plan.k; ++l)
    parts += part(k, plan.k, l, kg).first < part(k, plan.k, l, kg).second;
  for (size_t i = 0; i < plan.m; ++i) {
    const auto [m0, m1] = part(m, plan.m, i);
    for (size_t j = 0; j < plan.n; ++j) {
      const auto [n0, n1] = part(n, plan.n, j, g);
      if (m0 == m1 || n0 == n1) continue;
      addBlockReduction(graph, rs, plan, partials, parts, c, i, j, m0, m1, n0, n1, n);
    }
  }
  prog.add(Execute(rs, name + "/reduce"));
  return c;
}

}  // namespace tessera::ops
