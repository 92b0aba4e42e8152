// conv2d and pooling, forward and backward (docs/library.md, "conv2d and pooling").
#include "tessera/conv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <limits>
#include <string_view>

#include "amp_vertices.hpp"
#include "tessera/chip_params.h"
#include "tessera/error.hpp"
#include "tessera/ops.hpp"
#include "tile_chunks.hpp"

namespace tessera::ops {

namespace {

size_t ceilDiv(size_t a, size_t b) {
  return (a + b - 1) / b;
}

// ceil(a / b) for a signed a, b > 0.
long ceilDivS(long a, long b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}
// floor(a / b) for a signed a, b > 0.
long floorDivS(long a, long b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

std::string shapeText(const std::vector<size_t>& s) {
  return fmt::format("[{}]", fmt::join(s, ","));
}

// One tile's share of an [N, C, R, *] result: sample n, channels [c0, c1), rows [r0, r1).
struct Block {
  unsigned tile;
  size_t n, c0, c1, r0, r1;
};

// The result cut into units (sample, channel range, row range), as many as the tiles need
// (rows first, then channels, when the batch is smaller than the tile count), dealt to the tiles
// in runs of consecutive units; a tile's consecutive row ranges of one sample and channel range
// merge into one block. So each tile's elements of a block are contiguous in its memory.
std::vector<Block> planBlocks(size_t tiles, size_t N, size_t C, size_t R) {
  const size_t qh = std::min(R, ceilDiv(tiles, N));
  const size_t qc = std::min(C, ceilDiv(tiles, N * qh));
  const size_t units = N * qc * qh;
  std::vector<Block> out;
  for (size_t t = 0; t < tiles; ++t) {
    for (size_t u = units * t / tiles; u < units * (t + 1) / tiles; ++u) {
      const size_t n = u / (qc * qh), ci = u / qh % qc, ri = u % qh;
      const Block b{static_cast<unsigned>(t), n,           C * ci / qc,
                    C * (ci + 1) / qc,        R * ri / qh, R * (ri + 1) / qh};
      Block* last = out.empty() ? nullptr : &out.back();
      if (last && last->tile == b.tile && last->n == b.n && last->c0 == b.c0 && last->r1 == b.r0) {
        last->r1 = b.r1;
      } else {
        out.push_back(b);
      }
    }
  }
  return out;
}

// Parts of a block for its vertices: rows [row, row + rows) by channels [c, c + n), a grid with
// the smallest largest part; channels in groups of `grain` (the forward codelet's 6-channel block).
struct Part {
  size_t row, rows, c, n;
};

std::vector<Part> splitBlock(size_t R, size_t C, size_t parts, size_t grain) {
  const size_t cg = ceilDiv(C, grain);
  size_t bestR = 1, bestC = 1, bestLoad = SIZE_MAX;
  for (size_t pr = 1; pr <= std::min(R, parts); ++pr) {
    for (size_t pc = 1; pr * pc <= parts && pc <= cg; ++pc) {
      const size_t load = ceilDiv(R, pr) * std::min(C, ceilDiv(cg, pc) * grain);
      if (load < bestLoad) bestLoad = load, bestR = pr, bestC = pc;
    }
  }
  std::vector<Part> out;
  for (size_t i = 0; i < bestR; ++i) {
    const size_t r0 = R * i / bestR, r1 = R * (i + 1) / bestR;
    for (size_t j = 0; j < bestC; ++j) {
      const size_t c0 = std::min(C, grain * (cg * j / bestC)),
                   c1 = std::min(C, grain * (cg * (j + 1) / bestC));
      if (r0 < r1 && c0 < c1) out.push_back({r0, r1 - r0, c0, c1 - c0});
    }
  }
  return out;
}

// Vertices per block so that each tile has about one per context.
std::vector<size_t> partsPerBlock(const std::vector<Block>& blocks, size_t tiles, size_t contexts) {
  std::vector<size_t> count(tiles, 0);
  for (const Block& b : blocks) ++count[b.tile];
  std::vector<size_t> out;
  for (const Block& b : blocks) out.push_back(std::max<size_t>(1, contexts / count[b.tile]));
  return out;
}

uint32_t pack(size_t lo, size_t hi) {
  return static_cast<uint32_t>(lo | (hi << 16));
}
uint32_t bits(long v) {
  return static_cast<uint32_t>(static_cast<int32_t>(v));
}

void check4d(const Tensor& t, const char* what, const std::string& name) {
  if (t.rank() != 4 || t.elementType() != ElemType::Float32) {
    throw Error(fmt::format("{}: {} \"{}\" must be a float32 [N, C, H, W] tensor, got {} {}", name,
                            what, t.debugName(), elemTypeName(t.elementType()), t.shapeString()));
  }
}

// Every size a codelet receives packed in 16 bits.
void checkPacked(const std::string& name, std::initializer_list<size_t> sizes) {
  for (size_t s : sizes) {
    if (s > 0xffff)
      throw Error(fmt::format("{}: size {} exceeds the codelets' 16-bit fields (65535)", name, s));
  }
}

struct Geom {
  size_t N, C, H, W, OC, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, G, icg, ocg;
};

Geom convGeom(const std::vector<size_t>& in, const std::vector<size_t>& w, const Conv2dParams& p,
              const std::string& name) {
  const std::vector<size_t> o = conv2dOutputShape(in, w, p, name);
  Geom g{in[0],
         in[1],
         in[2],
         in[3],
         w[0],
         w[2],
         w[3],
         o[2],
         o[3],
         p.stride[0],
         p.stride[1],
         p.padding[0],
         p.padding[1],
         p.dilation[0],
         p.dilation[1],
         p.groups,
         in[1] / p.groups,
         w[0] / p.groups};
  checkPacked(
      name, {g.N, g.C, g.H, g.W, g.OC, g.KH, g.KW, g.OH, g.OW, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw});
  return g;
}

// Rows [lo, hi) of a dimension of size `size`, clamped; an empty range becomes one row that no
// tap reaches (the codelets bound every tap by the range they are told).
std::pair<size_t, size_t> clampRows(long lo, long hi, size_t size) {
  const long s = static_cast<long>(size);
  long a = std::clamp(lo, 0L, s), b = std::clamp(hi, 0L, s);
  if (a >= b) a = std::min(a, s - 1), b = a + 1;
  return {static_cast<size_t>(a), static_cast<size_t>(b)};
}

// conv2d on the matrix unit (docs/library.md, "conv2d on the matrix unit"). A result
// [N, R, RH, Wres] whose element (n, r, y, x) is a chain over K taps of a source [N, Q, SH, SW]
// (the geometry of sw/codelets/conv/conv_amp.h) with weights wmat [R, K], from bias [R].
struct AmpConv {
  size_t K, KH, KW, R, RH, Wres, SH, SW;
  long mY, mX, kY, kX, offY, offX, divY, divX;
};

size_t roundUp4(size_t v) {
  return (v + 3) / 4 * 4;
}

// True when the unit takes the op: a target with the unit (matMulUsesUnit's conditions for a k of
// Kpad), and every geometry value fits the codelets' 16-bit fields.
bool ampConvFits(const Target& target, const AmpConv& a) {
  if (!matMulUsesUnit(target, 1, roundUp4(a.K), 4)) return false;
  const long lim = 0x7fff;
  for (long v : {a.mY, a.mX, a.kY, a.kX, a.offY, a.offX, a.divY, a.divX}) {
    if (v < -lim || v > lim) return false;
  }
  const size_t rowGroups = (a.Wres + 3) / 4;
  return roundUp4(a.K) <= 0xffff && a.RH * rowGroups <= 0xffff && a.RH <= 0xffff;
}

// Bytes of the unit operand (the gathered taps of a chunk of positions) per tile: bounded, so that
// a conv costs at most this much more memory than the scalar codelets.
size_t ampColBudget(const Target& t) {
  return std::min<size_t>(64 * 1024, t.tileMemBytes / 32);
}

// Steps (three compute sets each) a tile runs at most: on small tiles a chunk takes more than the
// budget rather than more steps, whose vertex states and control cost memory too.
constexpr size_t kMaxAmpSteps = 24;

// Units (position or tap groups of `bytes` each) per chunk for a tile with `units` of them: what
// the budget holds, in multiples of the contexts where it holds that many (the chunk's vertices
// then take equal shares).
size_t ampChunk(const Target& t, size_t bytes, size_t units) {
  size_t n = ampColBudget(t) / bytes;
  if (n >= t.contexts) n -= n % t.contexts;
  return std::max<size_t>({1, n, ceilDiv(units, kMaxAmpSteps)});
}

// The most position groups of 4 any tile holds.
size_t ampMaxGroups(const std::vector<Block>& blocks, size_t tiles, size_t XG) {
  std::vector<size_t> groups(tiles, 0);
  for (const Block& b : blocks) groups[b.tile] += (b.r1 - b.r0) * XG;
  return *std::max_element(groups.begin(), groups.end());
}

// Estimated cycles of the unit's path on its busiest tile: the gather and the store at about 10
// cycles per gathered element (measured on LeNet's layers with `tessera-bench conv`), the
// products at MatMulAmp's pass rate (4 rows a worker: ceil(rows / 20) row blocks).
double ampConvCycles(const Target& t, const AmpConv& a, size_t N) {
  const size_t Kpad = roundUp4(a.K), XG = (a.Wres + 3) / 4;
  const std::vector<Block> blocks = planBlocks(t.tiles, N, a.R, a.RH);
  const size_t maxGroups = ampMaxGroups(blocks, t.tiles, XG);
  // More steps than kMaxAmpSteps within the budget: small tiles, where the chunks' memory and the
  // steps' vertex states crowd the tile; the scalar codelets there.
  if (ampColBudget(t) / (16 * (Kpad + a.R)) * kMaxAmpSteps < maxGroups)
    return std::numeric_limits<double>::infinity();
  const size_t ngMax = ampChunk(t, 16 * (Kpad + a.R), maxGroups);
  std::vector<size_t> groups(t.tiles, 0), steps(t.tiles, 0), rows(t.tiles, 0);
  for (const Block& b : blocks) {
    const size_t g = (b.r1 - b.r0) * XG;
    groups[b.tile] += g;
    steps[b.tile] += ceilDiv(g, ngMax);
    rows[b.tile] = std::max(rows[b.tile], b.c1 - b.c0);
  }
  const size_t kBlocks = Kpad / 4;
  const double period = 4.0 + 9.0 * double(kBlocks / 2) + 4.0 * double(kBlocks % 2) + 40.0;
  double worst = 0;
  for (size_t i = 0; i < t.tiles; ++i) {
    const double rowBlocks = double(ceilDiv(std::max<size_t>(rows[i], 1), 20));
    worst = std::max(worst, 10.0 * double(groups[i] * Kpad * 4) +
                                6.0 * period * rowBlocks * double(groups[i]) +
                                1200.0 * double(steps[i]));
  }
  return worst;
}

// The result's blocks (planBlocks, as the scalar codelets map it) in chunks of position groups:
// per step a compute set gathering the unit's operand, one of MatMulAmp, one storing the results
// (and recomputing by the scalar chain those the unit may have given otherwise: ConvFixAmp).
// flopsNum / flopsDen: the op's FLOPs per result element and tap (1 for the forward).
void ampConv(Graph& graph, Sequence& prog, const std::string& name, const Tensor& src,
             const Tensor& wmat, const Tensor& bias, const Tensor& out, const AmpConv& a,
             uint64_t flopsNum, uint64_t flopsDen) {
  const Target& target = graph.target();
  const size_t tiles = target.tiles, N = src.dim(0);
  const size_t Kpad = roundUp4(a.K), XG = (a.Wres + 3) / 4;
  const std::vector<Block> blocks = planBlocks(tiles, N, a.R, a.RH);
  // A group of 4 positions takes Kpad x 4 floats of the operand and rows x 4 of accumulators.
  const size_t ngMax = ampChunk(target, 16 * (Kpad + a.R), ampMaxGroups(blocks, tiles, XG));
  struct Chunk {
    size_t block, g0, ng;
  };
  std::vector<std::vector<Chunk>> chunks(tiles);
  std::vector<size_t> cmin(tiles, SIZE_MAX), cmax(tiles, 0), rowsMax(tiles, 0);
  for (size_t bi = 0; bi < blocks.size(); ++bi) {
    const Block& bk = blocks[bi];
    graph.setTileMapping(out[bk.n].slice(bk.c0, bk.c1, 0).slice(bk.r0, bk.r1, 1), bk.tile);
    const size_t groups = (bk.r1 - bk.r0) * XG;
    for (size_t g0 = 0; g0 < groups; g0 += ngMax)
      chunks[bk.tile].push_back({bi, g0, std::min(ngMax, groups - g0)});
    cmin[bk.tile] = std::min(cmin[bk.tile], bk.c0);
    cmax[bk.tile] = std::max(cmax[bk.tile], bk.c1);
    rowsMax[bk.tile] = std::max(rowsMax[bk.tile], bk.c1 - bk.c0);
  }
  const uint32_t kernel = pack(a.KH, a.KW);
  auto half = [](long v) { return static_cast<uint32_t>(static_cast<uint16_t>(v)); };
  const uint32_t mul = half(a.mY) | half(a.mX) << 16, step = half(a.kY) | half(a.kX) << 16,
                 offset = half(a.offY) | half(a.offX) << 16,
                 div = half(a.divY) | half(a.divX) << 16, srcSize = pack(a.SH, a.SW),
                 taps = pack(a.K, Kpad), res = pack(a.Wres, 1);
  // Per tile: the weights' rows the tile's blocks use, padded to Kpad (ConvWeightsAmp), and the
  // chunk's operand and accumulators, reused by every step.
  std::vector<Tensor> aRows(tiles), biasT(tiles), col(tiles), acc(tiles);
  ComputeSet prep = graph.addComputeSet(name + "/weights");
  size_t steps = 0;
  for (unsigned t = 0; t < tiles; ++t) {
    if (chunks[t].empty()) continue;
    steps = std::max(steps, chunks[t].size());
    aRows[t] = graph.addVariable(ElemType::Float32, {cmax[t] - cmin[t], Kpad},
                                 fmt::format("{}/unit-a@{}", name, t));
    col[t] = graph.addVariable(ElemType::Float32, {ngMax * Kpad * 4},
                               fmt::format("{}/unit-b@{}", name, t));
    acc[t] = graph.addVariable(ElemType::Float32, {rowsMax[t] * ngMax * 4},
                               fmt::format("{}/unit-c@{}", name, t));
    biasT[t] = graph.addVariable(ElemType::Float32, {cmax[t] - cmin[t]},
                                 fmt::format("{}/unit-bias@{}", name, t));
    graph.setTileMapping(biasT[t], t);
    for (const Tensor& v : {aRows[t], col[t], acc[t]}) {
      graph.setTileMapping(v, t);
      graph.setAlignment(v, TESS_AMP_STEP_BYTES);
    }
    // The tile's bias slice, copied once rather than gathered at every step.
    VertexRef bv = graph.addVertex(prep, "ConvWeightsAmp",
                                   {{"in", bias.slice(cmin[t], cmax[t])}, {"out", biasT[t]}});
    graph.setFieldValue(bv, "taps", pack(cmax[t] - cmin[t], cmax[t] - cmin[t]));
    graph.setTileMapping(bv, t);
    const size_t R = cmax[t] - cmin[t], parts = std::min<size_t>(R, target.contexts);
    for (size_t p = 0; p < parts; ++p) {
      const size_t r0 = R * p / parts, r1 = R * (p + 1) / parts;
      VertexRef v = graph.addVertex(prep, "ConvWeightsAmp",
                                    {{"in", wmat.slice(cmin[t] + r0, cmin[t] + r1, 0).flatten()},
                                     {"out", aRows[t].slice(r0, r1, 0).flatten()}});
      graph.setFieldValue(v, "taps", taps);
      graph.setTileMapping(v, t);
    }
  }
  prog.add(Execute(prep, name + "/weights"));
  for (size_t s = 0; s < steps; ++s) {
    ComputeSet gather = graph.addComputeSet(name + "/gather");
    ComputeSet unit = graph.addComputeSet(name);
    ComputeSet fix = graph.addComputeSet(name + "/store");
    for (unsigned t = 0; t < tiles; ++t) {
      if (s >= chunks[t].size()) continue;
      const Chunk& ch = chunks[t][s];
      const Block& bk = blocks[ch.block];
      const size_t rows = bk.c1 - bk.c0;
      const Tensor srcN = src[bk.n].flatten();
      const Tensor b = biasT[t].slice(bk.c0 - cmin[t], bk.c1 - cmin[t]);
      const Tensor colT = col[t].slice(0, ch.ng * Kpad * 4);
      const Tensor cT = acc[t].slice(0, rows * ch.ng * 4);
      const Tensor aT = aRows[t].slice(bk.c0 - cmin[t], bk.c1 - cmin[t], 0);
      const Tensor ob = out[bk.n].slice(bk.c0, bk.c1, 0).slice(bk.r0, bk.r1, 1).flatten();
      const uint32_t origin = pack(bk.r0, ch.g0);
      const size_t parts = std::min<size_t>(ch.ng, target.contexts);
      size_t valid = 0;  // result positions of the chunk (the groups' columns inside a row)
      for (size_t gi = ch.g0; gi < ch.g0 + ch.ng; ++gi)
        valid += std::min<size_t>(4, a.Wres - gi % XG * 4);
      for (size_t p = 0; p < parts; ++p) {
        const size_t p0 = ch.ng * p / parts, p1 = ch.ng * (p + 1) / parts;
        if (p0 == p1) continue;
        const uint32_t part = pack(p0, p1 - p0);
        VertexRef gv = graph.addVertex(gather, "ConvGatherAmp",
                                       {{"src", srcN}, {"bias", b}, {"col", colT}, {"c", cT}});
        VertexRef fv = graph.addVertex(
            fix, "ConvFixAmp",
            {{"src", srcN}, {"a", aT.flatten()}, {"bias", b}, {"c", cT}, {"out", ob}});
        for (VertexRef v : {gv, fv}) {
          graph.setFieldValue(v, "kernel", kernel);
          graph.setFieldValue(v, "mul", mul);
          graph.setFieldValue(v, "step", step);
          graph.setFieldValue(v, "offset", offset);
          graph.setFieldValue(v, "div", div);
          graph.setFieldValue(v, "srcSize", srcSize);
          graph.setFieldValue(v, "taps", taps);
          graph.setFieldValue(v, "res", res);
          graph.setFieldValue(v, "origin", origin);
          graph.setFieldValue(v, "part", part);
          graph.setTileMapping(v, t);
        }
      }
      // The unit's operand b as the logical [Kpad, 4 ng] view of col's column groups.
      const Tensor bOp =
          colT.reshape({ch.ng, Kpad, 4}).dimShuffle({1, 0, 2}).reshape({Kpad, ch.ng * 4});
      // The op's multiply-adds (every tap of every stored result, as the scalar codelets count).
      addAmpVertices(graph, unit, t, aT, bOp, cT.reshape({rows, ch.ng * 4}), true,
                     fmt::format("{}/{}", name, s),
                     2 * uint64_t{rows} * valid * a.K * flopsNum / flopsDen);
    }
    prog.add(Execute(gather, name + "/gather"));
    prog.add(Execute(unit, name));
    prog.add(Execute(fix, name + "/store"));
  }
}

// conv2dBackwardWeights on the matrix unit: per sample, partials [rows, K] = dy [rows, P] times
// the taps' inputs [P, K] (gathered by ConvGatherWAmp in chunks of tap groups), from +0, k = the
// output positions in increasing order (padded to Ppad with -0 x +0); ConvFixWAmp stores them.
// Tile (i, j) of the scalar plan takes the same samples and output channels.
struct AmpWeights {
  size_t pn, po, K, Kpad, P, Ppad, ntgMax;
};

AmpWeights ampWeightsPlan(const Target& t, const Geom& g) {
  AmpWeights w;
  w.pn = std::min<size_t>(g.N, t.tiles);
  w.po = std::min<size_t>(g.OC, std::max<size_t>(1, t.tiles / w.pn));
  w.K = g.icg * g.KH * g.KW, w.Kpad = roundUp4(w.K);
  w.P = g.OH * g.OW, w.Ppad = std::max<size_t>(8, roundUp4(w.P));
  // Tap groups per chunk; a tile has ceil(N / pn) samples of Kpad / 4 tap groups.
  w.ntgMax = ampChunk(t, 16 * (w.Ppad + ceilDiv(g.OC, w.po)), ceilDiv(g.N, w.pn) * (w.Kpad / 4));
  return w;
}

bool ampWeightsFits(const Target& t, const Geom& g, const AmpWeights& w) {
  return g.G == 1 && matMulUsesUnit(t, 1, w.Ppad, 4) && w.Kpad <= 0xffff && w.Ppad <= 0xffff &&
         g.ph <= 0x7fff && g.pw <= 0x7fff;
}

// Estimated cycles on the busiest tile (ampConvCycles' rates).
double ampWeightsCycles(const Target& t, const Geom& g, const AmpWeights& w) {
  const size_t samples = ceilDiv(g.N, w.pn), rows = ceilDiv(g.OC, w.po);
  const size_t tgs = w.Kpad / 4, chunks = ceilDiv(tgs, w.ntgMax), blocks = w.Ppad / 4;
  if (ampColBudget(t) / (16 * (w.Ppad + rows)) * kMaxAmpSteps < samples * tgs)
    return std::numeric_limits<double>::infinity();  // as ampConvCycles
  const double period = 4.0 + 9.0 * double(blocks / 2) + 4.0 * double(blocks % 2) + 40.0;
  return double(samples) * (10.0 * double(w.Kpad * w.Ppad) +
                            6.0 * period * double(ceilDiv(rows, 20) * tgs) + 1200.0 * chunks);
}

void ampWeights(Graph& graph, Sequence& prog, const std::string& name, const Tensor& in,
                const Tensor& gradOut, const Tensor& partials, const Geom& g, const AmpWeights& w) {
  const Target& target = graph.target();
  const size_t tgs = w.Kpad / 4;
  auto half = [](long v) { return static_cast<uint32_t>(static_cast<uint16_t>(v)); };
  const uint32_t kernel = pack(g.KH, g.KW), mul = pack(g.sh, g.sw), step = pack(g.dh, g.dw),
                 offset = half(-static_cast<long>(g.ph)) | half(-static_cast<long>(g.pw)) << 16,
                 srcSize = pack(g.H, g.W), taps = pack(w.K, w.Kpad), outSize = pack(g.OH, g.OW);
  // The fields ConvGatherWAmp and ConvFixWAmp share.
  auto setGeometry = [&](VertexRef v, uint32_t groups) {
    for (const auto& [field, value] :
         {std::pair{"kernel", kernel}, std::pair{"mul", mul}, std::pair{"step", step},
          std::pair{"offset", offset}, std::pair{"srcSize", srcSize}, std::pair{"taps", taps},
          std::pair{"outSize", outSize}, std::pair{"groups", groups}})
      graph.setFieldValue(v, field, value);
  };
  struct Chunk {
    size_t n, tg0, ntg;
  };
  struct TilePlan {
    size_t o0, o1;
    std::vector<Chunk> chunks;
    Tensor aPad, col, acc;
  };
  std::vector<TilePlan> plan(target.tiles);
  size_t steps = 0;
  for (size_t i = 0; i < w.pn; ++i) {
    const size_t n0 = g.N * i / w.pn, n1 = g.N * (i + 1) / w.pn;
    for (size_t j = 0; j < w.po; ++j) {
      const unsigned tile = static_cast<unsigned>(i * w.po + j);
      TilePlan& tp = plan[tile];
      tp.o0 = g.OC * j / w.po, tp.o1 = g.OC * (j + 1) / w.po;
      graph.setTileMapping(partials.slice(n0, n1, 0).slice(tp.o0, tp.o1, 1), tile);
      for (size_t n = n0; n < n1; ++n) {
        for (size_t tg0 = 0; tg0 < tgs; tg0 += w.ntgMax)
          tp.chunks.push_back({n, tg0, std::min(w.ntgMax, tgs - tg0)});
      }
      const size_t rows = tp.o1 - tp.o0;
      tp.aPad = graph.addVariable(ElemType::Float32, {rows, w.Ppad},
                                  fmt::format("{}/unit-a@{}", name, tile));
      tp.col = graph.addVariable(ElemType::Float32, {w.ntgMax * w.Ppad * 4},
                                 fmt::format("{}/unit-b@{}", name, tile));
      tp.acc = graph.addVariable(ElemType::Float32, {rows * w.ntgMax * 4},
                                 fmt::format("{}/unit-c@{}", name, tile));
      for (const Tensor& v : {tp.aPad, tp.col, tp.acc}) {
        graph.setTileMapping(v, tile);
        graph.setAlignment(v, TESS_AMP_STEP_BYTES);
      }
      steps = std::max(steps, tp.chunks.size());
    }
  }
  for (size_t s = 0; s < steps; ++s) {
    ComputeSet gather = graph.addComputeSet(name + "/gather");
    ComputeSet unit = graph.addComputeSet(name);
    ComputeSet fix = graph.addComputeSet(name + "/store");
    for (unsigned t = 0; t < target.tiles; ++t) {
      const TilePlan& tp = plan[t];
      if (s >= tp.chunks.size()) continue;
      const Chunk& ch = tp.chunks[s];
      const size_t rows = tp.o1 - tp.o0;
      const Tensor dyRows = gradOut[ch.n].slice(tp.o0, tp.o1, 0).reshape({rows, w.P});
      const Tensor srcN = in[ch.n].flatten();
      const Tensor colT = tp.col.slice(0, ch.ntg * w.Ppad * 4);
      const Tensor cT = tp.acc.slice(0, rows * ch.ntg * 4);
      const uint32_t groups = pack(ch.tg0, ch.ntg);
      // The sample's gradient rows, padded with -0 to Ppad positions, once per sample.
      if (ch.tg0 == 0) {
        const size_t parts = std::min<size_t>(rows, target.contexts);
        for (size_t p = 0; p < parts; ++p) {
          const size_t r0 = rows * p / parts, r1 = rows * (p + 1) / parts;
          VertexRef v = graph.addVertex(gather, "ConvWeightsAmp",
                                        {{"in", dyRows.slice(r0, r1, 0).flatten()},
                                         {"out", tp.aPad.slice(r0, r1, 0).flatten()}});
          graph.setFieldValue(v, "taps", pack(w.P, w.Ppad));
          graph.setTileMapping(v, t);
        }
      }
      // The gather: tap groups by position ranges, about one part per context.
      const size_t pt = std::min<size_t>(ch.ntg, target.contexts);
      const size_t pp = std::max<size_t>(1, target.contexts / pt);
      for (size_t a = 0; a < pt; ++a) {
        const size_t t0 = ch.ntg * a / pt, t1 = ch.ntg * (a + 1) / pt;
        for (size_t c = 0; c < pp; ++c) {
          const size_t q0 = w.Ppad * c / pp, q1 = w.Ppad * (c + 1) / pp;
          if (t0 == t1 || q0 == q1) continue;
          VertexRef v = graph.addVertex(gather, "ConvGatherWAmp", {{"src", srcN}, {"b", colT}});
          setGeometry(v, groups);
          graph.setFieldValue(v, "part", pack(t0, t1 - t0));
          graph.setFieldValue(v, "positions", pack(q0, q1 - q0));
          graph.setTileMapping(v, t);
        }
      }
      const Tensor bOp =
          colT.reshape({ch.ntg, w.Ppad, 4}).dimShuffle({1, 0, 2}).reshape({w.Ppad, ch.ntg * 4});
      const size_t kChunk = std::min(w.K, 4 * (ch.tg0 + ch.ntg)) - 4 * ch.tg0;
      // The op's multiply-adds: every output position for every weight of the chunk.
      addAmpVertices(graph, unit, t, tp.aPad, bOp, cT.reshape({rows, ch.ntg * 4}), false,
                     fmt::format("{}/{}", name, s), 2 * uint64_t{rows} * kChunk * w.P);
      const Tensor outRows = partials[ch.n].slice(tp.o0, tp.o1, 0).flatten();
      const size_t parts = std::min<size_t>(rows, target.contexts);
      for (size_t p = 0; p < parts; ++p) {
        const size_t r0 = rows * p / parts, r1 = rows * (p + 1) / parts;
        VertexRef v =
            graph.addVertex(fix, "ConvFixWAmp",
                            {{"src", srcN}, {"dy", dyRows.flatten()}, {"c", cT}, {"out", outRows}});
        setGeometry(v, groups);
        graph.setFieldValue(v, "rows", pack(r0, r1 - r0));
        graph.setTileMapping(v, t);
      }
    }
    prog.add(Execute(gather, name + "/gather"));
    prog.add(Execute(unit, name));
    prog.add(Execute(fix, name + "/store"));
  }
}

}  // namespace

std::vector<size_t> conv2dOutputShape(const std::vector<size_t>& in, const std::vector<size_t>& w,
                                      const Conv2dParams& p, const std::string& name) {
  auto bad = [&](const std::string& why) {
    return Error(fmt::format(
        "{}: conv2d of input {} with weights {} (stride {}x{}, padding {}x{}, dilation {}x{}, "
        "groups {}): {}",
        name, shapeText(in), shapeText(w), p.stride[0], p.stride[1], p.padding[0], p.padding[1],
        p.dilation[0], p.dilation[1], p.groups, why));
  };
  if (in.size() != 4 || w.size() != 4) throw bad("input and weights must be 4-D");
  if (p.groups == 0 || p.stride[0] == 0 || p.stride[1] == 0 || p.dilation[0] == 0 ||
      p.dilation[1] == 0) {
    throw bad("groups, strides and dilations must be at least 1");
  }
  if (in[1] % p.groups || w[0] % p.groups)
    throw bad("channels and output channels must be multiples of groups");
  if (w[1] != in[1] / p.groups)
    throw bad(fmt::format("weights must have {} input channels", in[1] / p.groups));
  for (size_t v : {in[0], in[1], in[2], in[3], w[0], w[2], w[3]}) {
    if (v == 0) throw bad("every dimension must be at least 1");
  }
  const long eh = static_cast<long>(in[2] + 2 * p.padding[0]) -
                  static_cast<long>(p.dilation[0] * (w[2] - 1)) - 1;
  const long ew = static_cast<long>(in[3] + 2 * p.padding[1]) -
                  static_cast<long>(p.dilation[1] * (w[3] - 1)) - 1;
  if (eh < 0 || ew < 0) throw bad("the dilated kernel is larger than the padded input");
  return {in[0], w[0], static_cast<size_t>(eh) / p.stride[0] + 1,
          static_cast<size_t>(ew) / p.stride[1] + 1};
}

std::vector<size_t> pool2dOutputShape(const std::vector<size_t>& in, const Pool2dParams& p,
                                      const std::string& name) {
  const size_t sh = p.stride[0] ? p.stride[0] : p.kernel[0],
               sw = p.stride[1] ? p.stride[1] : p.kernel[1];
  auto bad = [&](const std::string& why) {
    return Error(fmt::format(
        "{}: pooling of input {} (kernel {}x{}, stride {}x{}, padding {}x{}): {}", name,
        shapeText(in), p.kernel[0], p.kernel[1], sh, sw, p.padding[0], p.padding[1], why));
  };
  if (in.size() != 4) throw bad("the input must be 4-D");
  if (p.kernel[0] == 0 || p.kernel[1] == 0) throw bad("the kernel must be at least 1x1");
  if (2 * p.padding[0] > p.kernel[0] || 2 * p.padding[1] > p.kernel[1]) {
    throw bad("padding must be at most half the kernel");
  }
  for (size_t v : in) {
    if (v == 0) throw bad("every dimension must be at least 1");
  }
  if (p.dilation[0] == 0 || p.dilation[1] == 0) throw bad("the dilation must be at least 1");
  // A dilated window spans (K - 1) * d + 1 elements (PyTorch's and ONNX's output size).
  const size_t eh = (p.kernel[0] - 1) * p.dilation[0] + 1,
               ew = (p.kernel[1] - 1) * p.dilation[1] + 1;
  if (in[2] + 2 * p.padding[0] < eh || in[3] + 2 * p.padding[1] < ew) {
    throw bad("the kernel is larger than the padded input");
  }
  // PyTorch's pooling_output_shape: with ceil_mode, drop a last window that would start in the
  // trailing padding.
  auto out = [&](size_t size, size_t pad, size_t k, size_t s) {
    const size_t span = size + 2 * pad - k;
    size_t o = (p.ceilMode ? ceilDiv(span, s) : span / s) + 1;
    if (p.ceilMode && (o - 1) * s >= size + pad) --o;
    return o;
  };
  return {in[0], in[1], out(in[2], p.padding[0], eh, sh), out(in[3], p.padding[1], ew, sw)};
}

Tensor createConv2dInput(Graph& graph, const std::vector<size_t>& shape, const std::string& name) {
  if (shape.size() != 4)
    throw Error(fmt::format("{}: a conv2d input is [N, C, H, W], got {}", name, shapeText(shape)));
  Tensor t = graph.addVariable(ElemType::Float32, shape, name);
  for (const Block& b : planBlocks(graph.target().tiles, shape[0], shape[1], shape[2])) {
    graph.setTileMapping(t[b.n].slice(b.c0, b.c1, 0).slice(b.r0, b.r1, 1), b.tile);
  }
  return t;
}

Tensor conv2d(Graph& graph, const Tensor& in, const Tensor& weights, const Tensor& bias,
              Sequence& prog, const std::string& name, const Conv2dParams& p) {
  check4d(in, "input", name);
  check4d(weights, "weights", name);
  const Geom g = convGeom(in.shape(), weights.shape(), p, name);
  Tensor b = bias;
  if (b.valid()) {
    if (b.rank() != 1 || b.dim(0) != g.OC || b.elementType() != ElemType::Float32) {
      throw Error(fmt::format("{}: bias \"{}\" must be float32 [{}], got {}", name, b.debugName(),
                              g.OC, b.shapeString()));
    }
  } else {
    // Starting the chain from +0 is what no bias means (fmaf(a, b, +0) == a * b).
    const std::vector<float> zeros(g.OC, 0.0f);
    b = graph.addConstant({g.OC}, zeros, name + "/nobias");
    mapLinearly(graph, b);
  }
  const size_t tiles = graph.target().tiles;
  Tensor out = graph.addVariable(ElemType::Float32, {g.N, g.OC, g.OH, g.OW}, name);
  if (g.G == 1 && p.unit != Conv2dParams::Unit::Never) {
    const long ph = static_cast<long>(g.ph), pw = static_cast<long>(g.pw);
    const AmpConv a{g.C * g.KH * g.KW,
                    g.KH,
                    g.KW,
                    g.OC,
                    g.OH,
                    g.OW,
                    g.H,
                    g.W,
                    static_cast<long>(g.sh),
                    static_cast<long>(g.sw),
                    static_cast<long>(g.dh),
                    static_cast<long>(g.dw),
                    -ph,
                    -pw,
                    1,
                    1};
    // The scalar codelet's rate, about 0.39 multiply-adds a cycle per tile (docs/library.md).
    const double scalar = double(g.N * g.OC * g.OH * g.OW * a.K) / 0.39 / double(tiles);
    if (ampConvFits(graph.target(), a) &&
        (p.unit == Conv2dParams::Unit::Always || ampConvCycles(graph.target(), a, g.N) < scalar)) {
      ampConv(graph, prog, name, in, weights.reshape({g.OC, a.K}), b, out, a, 1, 1);
      return out;
    }
  }
  // Weights as [taps, OC]: a block's columns gather tap-major, as the codelet reads them.
  const Tensor wT = weights.reshape({g.OC, g.icg * g.KH * g.KW}).transpose();
  ComputeSet cs = graph.addComputeSet(name);
  const std::vector<Block> blocks = planBlocks(tiles, g.N, g.OC, g.OH);
  const std::vector<size_t> parts = partsPerBlock(blocks, tiles, graph.target().contexts);
  for (size_t bi = 0; bi < blocks.size(); ++bi) {
    const Block& bk = blocks[bi];
    const Tensor ob = out[bk.n].slice(bk.c0, bk.c1, 0).slice(bk.r0, bk.r1, 1);
    graph.setTileMapping(ob, bk.tile);
    const size_t g0 = bk.c0 / g.ocg, g1 = (bk.c1 - 1) / g.ocg + 1;
    const long top = static_cast<long>(bk.r0 * g.sh) - static_cast<long>(g.ph);
    const auto [y0, y1] = clampRows(
        top,
        static_cast<long>((bk.r1 - 1) * g.sh + (g.KH - 1) * g.dh + 1) - static_cast<long>(g.ph),
        g.H);
    const Tensor slab = in[bk.n].slice(g0 * g.icg, g1 * g.icg, 0).slice(y0, y1, 1).flatten();
    const Tensor wb = wT.slice(bk.c0, bk.c1, 1).flatten();
    const Tensor bb = b.slice(bk.c0, bk.c1);
    for (const Part& pt : splitBlock(bk.r1 - bk.r0, bk.c1 - bk.c0, parts[bi], 6)) {
      VertexRef v = graph.addVertex(cs, "Conv2d",
                                    {{"in", slab}, {"w", wb}, {"bias", bb}, {"out", ob.flatten()}});
      graph.setFieldValue(v, "kernel", pack(g.KH, g.KW));
      graph.setFieldValue(v, "stride", pack(g.sh, g.sw));
      graph.setFieldValue(v, "dilation", pack(g.dh, g.dw));
      graph.setFieldValue(v, "colPad", static_cast<uint32_t>(g.pw));
      graph.setFieldValue(v, "inSize", pack(y1 - y0, g.W));
      graph.setFieldValue(v, "outSize", pack(bk.r1 - bk.r0, g.OW));
      graph.setFieldValue(v, "channels", pack(g.icg, g.ocg));
      graph.setFieldValue(v, "rowBase", bits(top - static_cast<long>(y0)));
      graph.setFieldValue(v, "ocFirst", static_cast<uint32_t>(bk.c0 % g.ocg));
      graph.setFieldValue(v, "rows", pack(pt.row, pt.rows));
      graph.setFieldValue(v, "ocs", pack(pt.c, pt.n));
      // A multiply-add per output element and kernel tap (padding taps counted, as usual).
      graph.setFlops(v, 2 * uint64_t{pt.rows} * g.OW * pt.n * g.icg * g.KH * g.KW);
      graph.setTileMapping(v, bk.tile);
    }
  }
  prog.add(Execute(cs, name));
  return out;
}

Tensor conv2dBackwardInput(Graph& graph, const Tensor& gradOut, const Tensor& weights,
                           const std::vector<size_t>& inShape, Sequence& prog,
                           const std::string& name, const Conv2dParams& p) {
  check4d(gradOut, "gradient", name);
  check4d(weights, "weights", name);
  const Geom g = convGeom(inShape, weights.shape(), p, name);
  if (gradOut.shape() != std::vector<size_t>{g.N, g.OC, g.OH, g.OW}) {
    throw Error(fmt::format("{}: gradient \"{}\" is {}, conv2d's output is [{},{},{},{}]", name,
                            gradOut.debugName(), gradOut.shapeString(), g.N, g.OC, g.OH, g.OW));
  }
  const size_t tiles = graph.target().tiles;
  Tensor dx = graph.addVariable(ElemType::Float32, inShape, name);
  if (g.G == 1 && p.unit != Conv2dParams::Unit::Never) {
    // The gradient as a chain over the taps (o, kh, kw) of the outputs each element reached.
    const AmpConv a{g.OC * g.KH * g.KW,
                    g.KH,
                    g.KW,
                    g.C,
                    g.H,
                    g.W,
                    g.OH,
                    g.OW,
                    1,
                    1,
                    -static_cast<long>(g.dh),
                    -static_cast<long>(g.dw),
                    static_cast<long>(g.ph),
                    static_cast<long>(g.pw),
                    static_cast<long>(g.sh),
                    static_cast<long>(g.sw)};
    // The scalar codelet's rate, about 0.15 multiply-adds a cycle per tile (docs/library.md).
    const double scalar =
        double(g.N * g.OC * g.OH * g.OW * g.C * g.KH * g.KW) / 0.15 / double(tiles);
    if (ampConvFits(graph.target(), a) &&
        (p.unit == Conv2dParams::Unit::Always || ampConvCycles(graph.target(), a, g.N) < scalar)) {
      const std::vector<float> zeros(g.C, 0.0f);
      Tensor zero = graph.addConstant({g.C}, zeros, name + "/zero");
      mapLinearly(graph, zero);
      const Tensor wmat =
          weights.reshape({g.OC, g.C, g.KH * g.KW}).dimShuffle({1, 0, 2}).reshape({g.C, a.K});
      ampConv(graph, prog, name, gradOut, wmat, zero, dx, a, uint64_t{g.OH} * g.OW,
              uint64_t{g.H} * g.W);
      return dx;
    }
  }
  // Stride 1, one group and at least 4 input channels: the channel-blocked codelet (6 input
  // channels of two elements per pair of gradient loads, then single channels), which reads the
  // weights tap-major [OC, KH, KW, C]. They are copied so once (a word at a time, spread over the
  // tiles) and gathered from the copy in runs: gathering the transposed view itself would take an
  // exchange of single words into every tile (larger exchange programs everywhere).
  const bool blocked = g.G == 1 && g.sh == 1 && g.sw == 1 && g.C >= 4;
  Tensor wT;
  if (blocked) {
    wT = createLinear(graph, ElemType::Float32, {g.OC * g.KH * g.KW, g.C}, name + "/wT");
    prog.add(Copy(weights.reshape({g.OC, g.C, g.KH * g.KW})
                      .dimShuffle({0, 2, 1})
                      .reshape({g.OC * g.KH * g.KW, g.C}),
                  wT, name + "/wT"));
  }
  ComputeSet cs = graph.addComputeSet(name);
  const std::vector<Block> blocks = planBlocks(tiles, g.N, g.C, g.H);
  std::vector<size_t> parts = partsPerBlock(blocks, tiles, graph.target().contexts);
  // Two blocks of one tile over the same channels (a multiple of 6) and rows of two samples run
  // together on Conv2dBackwardInputTwoSamples (every weight load feeds both samples), split
  // over all the contexts; `second` marks the block a pair's vertices also write.
  std::vector<size_t> partner(blocks.size(), SIZE_MAX);
  std::vector<bool> second(blocks.size(), false);
  if (blocked) {
    for (size_t bi = 0; bi + 1 < blocks.size(); ++bi) {
      const Block &a = blocks[bi], &b = blocks[bi + 1];
      if (second[bi] || a.tile != b.tile || a.c0 != b.c0 || a.c1 != b.c1 || a.r0 != b.r0 ||
          a.r1 != b.r1 || (a.c1 - a.c0) % 6 != 0)
        continue;
      partner[bi] = bi + 1, second[bi + 1] = true;
      parts[bi] = std::min<size_t>(graph.target().contexts, 2 * parts[bi]);
    }
  }
  for (size_t bi = 0; bi < blocks.size(); ++bi) {
    const Block& bk = blocks[bi];
    const Tensor db = dx[bk.n].slice(bk.c0, bk.c1, 0).slice(bk.r0, bk.r1, 1);
    graph.setTileMapping(db, bk.tile);
    if (second[bi]) continue;
    const bool two = partner[bi] != SIZE_MAX;
    Tensor db2, dys2;
    const size_t g0 = bk.c0 / g.icg, g1 = (bk.c1 - 1) / g.icg + 1;
    // Output rows oy with oy * sh - ph + kh * dh in [r0, r1) for some kh.
    const long lo = ceilDivS(static_cast<long>(bk.r0 + g.ph) - static_cast<long>((g.KH - 1) * g.dh),
                             static_cast<long>(g.sh));
    const long hi = floorDivS(static_cast<long>(bk.r1 - 1 + g.ph), static_cast<long>(g.sh)) + 1;
    const auto [y0, y1] = clampRows(lo, hi, g.OH);
    const Tensor dys = gradOut[bk.n].slice(g0 * g.ocg, g1 * g.ocg, 0).slice(y0, y1, 1).flatten();
    if (two) {
      const Block& b2 = blocks[partner[bi]];
      db2 = dx[b2.n].slice(b2.c0, b2.c1, 0).slice(b2.r0, b2.r1, 1);
      dys2 = gradOut[b2.n].slice(g0 * g.ocg, g1 * g.ocg, 0).slice(y0, y1, 1).flatten();
    }
    const Tensor wb = blocked ? wT.flatten() : weights.slice(g0 * g.ocg, g1 * g.ocg, 0).flatten();
    std::vector<Part> pts = splitBlock(bk.r1 - bk.r0, bk.c1 - bk.c0, parts[bi], blocked ? 6 : 1);
    // The blocked codelet's vertices take every rowStep-th row from their first: rows near the
    // borders reach fewer outputs (LeNet's conv1, no padding: 1 to 5 rows of taps), so
    // contiguous row ranges would be uneven (the middle vertex of three had 2.5 times the
    // first's work).
    size_t rowStep = 1;
    if (blocked) {
      std::vector<size_t> starts;
      for (const Part& pt : pts) starts.push_back(pt.row);
      std::sort(starts.begin(), starts.end());
      starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
      rowStep = starts.size();
      for (Part& pt : pts) {
        pt.row = static_cast<size_t>(std::lower_bound(starts.begin(), starts.end(), pt.row) -
                                     starts.begin());
        pt.rows = (bk.r1 - bk.r0 - pt.row + rowStep - 1) / rowStep;
      }
    }
    for (const Part& pt : pts) {
      VertexRef v =
          two ? graph.addVertex(cs, "Conv2dBackwardInputTwoSamples",
                                {{"dy", dys},
                                 {"dy2", dys2},
                                 {"w", wb},
                                 {"dx", db.flatten()},
                                 {"dx2", db2.flatten()}})
              : graph.addVertex(cs, blocked ? "Conv2dBackwardInputBlocked" : "Conv2dBackwardInput",
                                {{"dy", dys}, {"w", wb}, {"dx", db.flatten()}});
      graph.setFieldValue(v, "kernel", pack(g.KH, g.KW));
      graph.setFieldValue(v, "padding", pack(g.ph, g.pw));
      graph.setFieldValue(v, "dilation", pack(g.dh, g.dw));
      graph.setFieldValue(v, "dySize", pack(y1 - y0, g.OW));
      graph.setFieldValue(v, "dxSize", pack(bk.r1 - bk.r0, g.W));
      graph.setFieldValue(v, "rowBase", static_cast<uint32_t>(bk.r0 + g.ph));
      graph.setFieldValue(v, "dyRow0", static_cast<uint32_t>(y0));
      graph.setFieldValue(v, "cFirst", static_cast<uint32_t>(bk.c0 % g.icg));
      if (blocked) {
        graph.setFieldValue(v, "rowStep", static_cast<uint32_t>(rowStep));
      } else {
        graph.setFieldValue(v, "stride", pack(g.sh, g.sw));
        graph.setFieldValue(v, "channels", pack(g.icg, g.ocg));
      }
      graph.setFieldValue(v, "rows", pack(pt.row, pt.rows));
      graph.setFieldValue(v, "chans", pack(pt.c, pt.n));
      // The forward's multiply-adds again, shared over dx by elements.
      graph.setFlops(v, (two ? 4 : 2) * uint64_t{pt.rows} * g.W * pt.n * g.ocg * g.KH * g.KW *
                            g.OH * g.OW / (uint64_t{g.H} * g.W));
      graph.setTileMapping(v, bk.tile);
    }
  }
  prog.add(Execute(cs, name));
  return dx;
}

Tensor conv2dBackwardWeights(Graph& graph, const Tensor& in, const Tensor& gradOut,
                             const std::vector<size_t>& weightsShape, Sequence& prog,
                             const std::string& name, const Conv2dParams& p) {
  check4d(in, "input", name);
  check4d(gradOut, "gradient", name);
  const Geom g = convGeom(in.shape(), weightsShape, p, name);
  if (gradOut.shape() != std::vector<size_t>{g.N, g.OC, g.OH, g.OW}) {
    throw Error(fmt::format("{}: gradient \"{}\" is {}, conv2d's output is [{},{},{},{}]", name,
                            gradOut.debugName(), gradOut.shapeString(), g.N, g.OC, g.OH, g.OW));
  }
  const size_t tiles = graph.target().tiles;
  const size_t E = g.icg * g.KH * g.KW;
  if (p.unit != Conv2dParams::Unit::Never) {
    const AmpWeights aw = ampWeightsPlan(graph.target(), g);
    // The scalar codelet's rate, about 0.15 multiply-adds a cycle per tile (docs/library.md).
    const double scalar = double(g.N * g.OC * g.OH * g.OW * E) / 0.15 / double(tiles);
    if (ampWeightsFits(graph.target(), g, aw) &&
        (p.unit == Conv2dParams::Unit::Always ||
         ampWeightsCycles(graph.target(), g, aw) < scalar)) {
      Tensor partials =
          graph.addVariable(ElemType::Float32, {g.N, g.OC, g.icg, g.KH, g.KW}, name + "/samples");
      ampWeights(graph, prog, name, in, gradOut, partials, g, aw);
      if (g.N == 1) return partials.reshape(weightsShape);
      return reduceSum(graph, partials.reshape({g.N, g.OC * E}), 0, prog, name + "/sum")
          .reshape(weightsShape);
    }
  }
  // One partial per sample; tiles take sample ranges, and output channel ranges when the batch is
  // smaller than the tile count.
  const size_t pn = std::min(g.N, tiles), po = std::min(g.OC, std::max<size_t>(1, tiles / pn));
  Tensor partials =
      graph.addVariable(ElemType::Float32, {g.N, g.OC, g.icg, g.KH, g.KW}, name + "/samples");
  ComputeSet cs = graph.addComputeSet(name);
  for (size_t i = 0; i < pn; ++i) {
    const size_t n0 = g.N * i / pn, n1 = g.N * (i + 1) / pn;
    for (size_t j = 0; j < po; ++j) {
      const size_t o0 = g.OC * j / po, o1 = g.OC * (j + 1) / po;
      const unsigned tile = static_cast<unsigned>(i * po + j);
      const Tensor pb = partials.slice(n0, n1, 0).slice(o0, o1, 1);
      graph.setTileMapping(pb, tile);
      const size_t g0 = o0 / g.ocg, g1 = (o1 - 1) / g.ocg + 1;
      const Tensor xs = in.slice(n0, n1, 0).slice(g0 * g.icg, g1 * g.icg, 1).flatten();
      const Tensor dys = gradOut.slice(n0, n1, 0).slice(o0, o1, 1).flatten();
      const size_t count = pb.numElements();
      const size_t vparts = std::min<size_t>(count, graph.target().contexts);
      for (size_t v = 0; v < vparts; ++v) {
        const size_t e0 = count * v / vparts, e1 = count * (v + 1) / vparts;
        VertexRef vx = graph.addVertex(cs, "Conv2dBackwardWeights",
                                       {{"x", xs}, {"dy", dys}, {"dw", pb.flatten()}});
        graph.setFieldValue(vx, "kernel", pack(g.KH, g.KW));
        graph.setFieldValue(vx, "stride", pack(g.sh, g.sw));
        graph.setFieldValue(vx, "padding", pack(g.ph, g.pw));
        graph.setFieldValue(vx, "dilation", pack(g.dh, g.dw));
        graph.setFieldValue(vx, "inSize", pack(g.H, g.W));
        graph.setFieldValue(vx, "outSize", pack(g.OH, g.OW));
        graph.setFieldValue(vx, "channels", pack(g.icg, g.ocg));
        graph.setFieldValue(vx, "ocFirst", static_cast<uint32_t>(o0 % g.ocg));
        graph.setFieldValue(vx, "outChannels", static_cast<uint32_t>(o1 - o0));
        graph.setFieldValue(vx, "first", static_cast<uint32_t>(e0));
        graph.setFieldValue(vx, "count", static_cast<uint32_t>(e1 - e0));
        // Each partial weight sums one sample's output positions.
        graph.setFlops(vx, 2 * uint64_t{e1 - e0} * g.OH * g.OW);
        graph.setTileMapping(vx, tile);
      }
    }
  }
  prog.add(Execute(cs, name));
  if (g.N == 1) return partials.reshape(weightsShape);
  return reduceSum(graph, partials.reshape({g.N, g.OC * E}), 0, prog, name + "/sum")
      .reshape(weightsShape);
}

Tensor conv2dBackwardBias(Graph& graph, const Tensor& gradOut, Sequence& prog,
                          const std::string& name) {
  check4d(gradOut, "gradient", name);
  const size_t N = gradOut.dim(0), OC = gradOut.dim(1), S = gradOut.dim(2) * gradOut.dim(3);
  const Tensor perSample =
      reduceSum(graph, gradOut.reshape({N * OC, S}), 1, prog, name + "/planes");
  if (N == 1) return perSample;
  return reduceSum(graph, perSample.reshape({N, OC}), 0, prog, name + "/samples");
}

namespace {

struct PoolGeom {
  size_t N, C, H, W, KH, KW, sh, sw, ph, pw, OH, OW;
  // Average pooling divides some window by other than KH * KW (AvgPoolDiv): windows that reach
  // padding which count_include_pad leaves out, or ceil mode's partial last window.
  bool perWindowDivisor;
  size_t dh = 1, dw = 1;  // max pooling's dilation (MaxPoolDilated)
  size_t EH = 0;          // a window's extent in rows: (KH - 1) * dh + 1
};

PoolGeom poolGeom(const std::vector<size_t>& in, const Pool2dParams& p, const std::string& name) {
  const std::vector<size_t> o = pool2dOutputShape(in, p, name);
  PoolGeom g{in[0],
             in[1],
             in[2],
             in[3],
             p.kernel[0],
             p.kernel[1],
             p.stride[0] ? p.stride[0] : p.kernel[0],
             p.stride[1] ? p.stride[1] : p.kernel[1],
             p.padding[0],
             p.padding[1],
             o[2],
             o[3],
             false,
             1,
             1,
             0};
  g.dh = p.dilation[0];
  g.dw = p.dilation[1];
  g.EH = (g.KH - 1) * g.dh + 1;
  Pool2dParams floor = p;
  floor.ceilMode = false;
  g.perWindowDivisor = (p.ceilMode && pool2dOutputShape(in, floor, name) != o) ||
                       (!p.countIncludePad && (g.ph != 0 || g.pw != 0));
  checkPacked(name,
              {g.N, g.C, g.H, g.W, g.KH, g.KW, g.sh, g.sw, g.ph, g.pw, g.OH, g.OW, g.dh, g.dw});
  return g;
}

Tensor poolForward(Graph& graph, const Tensor& in, Sequence& prog, const std::string& name,
                   const Pool2dParams& p, const char* codelet) {
  check4d(in, "input", name);
  const PoolGeom g = poolGeom(in.shape(), p, name);
  const bool dilated = g.dh != 1 || g.dw != 1;
  if (dilated && std::string_view(codelet) != "MaxPool")
    throw Error(fmt::format("{}: dilation {}x{}: only max pooling is dilated", name, g.dh, g.dw));
  if (dilated) codelet = "MaxPoolDilated";
  const size_t tiles = graph.target().tiles;
  Tensor out = graph.addVariable(ElemType::Float32, {g.N, g.C, g.OH, g.OW}, name);
  ComputeSet cs = graph.addComputeSet(name);
  const std::vector<Block> blocks = planBlocks(tiles, g.N, g.C, g.OH);
  const std::vector<size_t> parts = partsPerBlock(blocks, tiles, graph.target().contexts);
  for (size_t bi = 0; bi < blocks.size(); ++bi) {
    const Block& bk = blocks[bi];
    const Tensor ob = out[bk.n].slice(bk.c0, bk.c1, 0).slice(bk.r0, bk.r1, 1);
    graph.setTileMapping(ob, bk.tile);
    const long top = static_cast<long>(bk.r0 * g.sh) - static_cast<long>(g.ph);
    const auto [y0, y1] =
        clampRows(top, static_cast<long>((bk.r1 - 1) * g.sh + g.EH) - static_cast<long>(g.ph), g.H);
    const Tensor slab = in[bk.n].slice(bk.c0, bk.c1, 0).slice(y0, y1, 1).flatten();
    const bool divisor = std::string_view(codelet) == "AvgPool" && g.perWindowDivisor;
    for (const Part& pt : splitBlock(bk.r1 - bk.r0, bk.c1 - bk.c0, parts[bi], 1)) {
      VertexRef v = graph.addVertex(cs, divisor ? "AvgPoolDiv" : codelet,
                                    {{"in", slab}, {"out", ob.flatten()}});
      if (divisor) {
        graph.setFieldValue(v, "limits", pack(y0, g.H));
        graph.setFieldValue(v, "pad", pack(g.ph, g.pw));
        graph.setFieldValue(v, "include", static_cast<uint32_t>(p.countIncludePad));
      }
      if (dilated) graph.setFieldValue(v, "dilation", pack(g.dh, g.dw));
      graph.setFieldValue(v, "kernel", pack(g.KH, g.KW));
      graph.setFieldValue(v, "stride", pack(g.sh, g.sw));
      graph.setFieldValue(v, "colPad", static_cast<uint32_t>(g.pw));
      graph.setFieldValue(v, "inSize", pack(y1 - y0, g.W));
      graph.setFieldValue(v, "outSize", pack(bk.r1 - bk.r0, g.OW));
      graph.setFieldValue(v, "rowBase", bits(top - static_cast<long>(y0)));
      graph.setFieldValue(v, "rows", pack(pt.row, pt.rows));
      graph.setFieldValue(v, "chans", pack(pt.c, pt.n));
      // Max pooling compares (no FLOPs); average pooling adds its window and scales once.
      if (std::string_view(codelet) == "AvgPool")
        graph.setFlops(v, uint64_t{pt.rows} * g.OW * pt.n * g.KH * g.KW);
      graph.setTileMapping(v, bk.tile);
    }
  }
  prog.add(Execute(cs, name));
  return out;
}

// The gradient of a pooling layer: dx blocks, the gradient rows of the windows that reach each
// (and, for max pooling, the input rows of those windows).
Tensor poolBackward(Graph& graph, const Tensor* in, const Tensor& gradOut,
                    const std::vector<size_t>& inShape, Sequence& prog, const std::string& name,
                    const Pool2dParams& p) {
  check4d(gradOut, "gradient", name);
  const PoolGeom g = poolGeom(inShape, p, name);
  const bool dilated = g.dh != 1 || g.dw != 1;
  if (dilated && !in)
    throw Error(fmt::format("{}: dilation {}x{}: only max pooling is dilated", name, g.dh, g.dw));
  if (gradOut.shape() != std::vector<size_t>{g.N, g.C, g.OH, g.OW}) {
    throw Error(fmt::format("{}: gradient \"{}\" is {}, the pooling's output is [{},{},{},{}]",
                            name, gradOut.debugName(), gradOut.shapeString(), g.N, g.C, g.OH,
                            g.OW));
  }
  const size_t tiles = graph.target().tiles;
  Tensor dx = graph.addVariable(ElemType::Float32, inShape, name);
  ComputeSet cs = graph.addComputeSet(name);
  const std::vector<Block> blocks = planBlocks(tiles, g.N, g.C, g.H);
  const std::vector<size_t> parts = partsPerBlock(blocks, tiles, graph.target().contexts);
  for (size_t bi = 0; bi < blocks.size(); ++bi) {
    const Block& bk = blocks[bi];
    const Tensor db = dx[bk.n].slice(bk.c0, bk.c1, 0).slice(bk.r0, bk.r1, 1);
    graph.setTileMapping(db, bk.tile);
    // Windows oy with oy * sh - ph <= iy < oy * sh - ph + EH for some iy in [r0, r1).
    const long lo = ceilDivS(static_cast<long>(bk.r0 + g.ph) - static_cast<long>(g.EH) + 1,
                             static_cast<long>(g.sh));
    const long hi = floorDivS(static_cast<long>(bk.r1 - 1 + g.ph), static_cast<long>(g.sh)) + 1;
    const auto [d0, d1] = clampRows(lo, hi, g.OH);
    const Tensor dys = gradOut[bk.n].slice(bk.c0, bk.c1, 0).slice(d0, d1, 1).flatten();
    const auto [x0, x1] =
        clampRows(static_cast<long>(d0 * g.sh) - static_cast<long>(g.ph),
                  static_cast<long>((d1 - 1) * g.sh + g.EH) - static_cast<long>(g.ph), g.H);
    for (const Part& pt : splitBlock(bk.r1 - bk.r0, bk.c1 - bk.c0, parts[bi], 1)) {
      VertexRef v;
      if (in) {
        const Tensor xs = (*in)[bk.n].slice(bk.c0, bk.c1, 0).slice(x0, x1, 1).flatten();
        v = graph.addVertex(cs, dilated ? "MaxPoolDilatedGrad" : "MaxPoolGrad",
                            {{"x", xs}, {"dy", dys}, {"dx", db.flatten()}});
        if (dilated) graph.setFieldValue(v, "dilation", pack(g.dh, g.dw));
        graph.setFieldValue(v, "xSize", pack(x1 - x0, g.W));
        graph.setFieldValue(v, "dxRow0", pack(bk.r0, bk.r1 - bk.r0));
        graph.setFieldValue(v, "origin", pack(x0, d0));
      } else {
        v = graph.addVertex(cs, g.perWindowDivisor ? "AvgPoolDivGrad" : "AvgPoolGrad",
                            {{"dy", dys}, {"dx", db.flatten()}});
        if (g.perWindowDivisor) {
          graph.setFieldValue(v, "height", static_cast<uint32_t>(g.H));
          graph.setFieldValue(v, "include", static_cast<uint32_t>(p.countIncludePad));
        }
        graph.setFieldValue(v, "dxSize", pack(bk.r1 - bk.r0, g.W));
        graph.setFieldValue(v, "origin", pack(bk.r0, d0));
        // Each gradient element reaches its window with a multiply-add, shared over dx.
        graph.setFlops(v, 2 * uint64_t{pt.rows} * g.W * pt.n * g.OH * g.OW * g.KH * g.KW /
                              (uint64_t{g.H} * g.W));
      }
      graph.setFieldValue(v, "kernel", pack(g.KH, g.KW));
      graph.setFieldValue(v, "stride", pack(g.sh, g.sw));
      graph.setFieldValue(v, "padding", pack(g.ph, g.pw));
      graph.setFieldValue(v, "dySize", pack(d1 - d0, g.OW));
      graph.setFieldValue(v, "rows", pack(pt.row, pt.rows));
      graph.setFieldValue(v, "chans", pack(pt.c, pt.n));
      graph.setTileMapping(v, bk.tile);
    }
  }
  prog.add(Execute(cs, name));
  return dx;
}

}  // namespace

Tensor maxPool2d(Graph& graph, const Tensor& in, Sequence& prog, const std::string& name,
                 const Pool2dParams& p) {
  return poolForward(graph, in, prog, name, p, "MaxPool");
}

Tensor avgPool2d(Graph& graph, const Tensor& in, Sequence& prog, const std::string& name,
                 const Pool2dParams& p) {
  return poolForward(graph, in, prog, name, p, "AvgPool");
}

Tensor maxPool2dBackward(Graph& graph, const Tensor& in, const Tensor& gradOut, Sequence& prog,
                         const std::string& name, const Pool2dParams& p) {
  check4d(in, "input", name);
  return poolBackward(graph, &in, gradOut, in.shape(), prog, name, p);
}

Tensor avgPool2dBackward(Graph& graph, const Tensor& gradOut, const std::vector<size_t>& inShape,
                         Sequence& prog, const std::string& name, const Pool2dParams& p) {
  return poolBackward(graph, nullptr, gradOut, inShape, prog, name, p);
}

}  // namespace tessera::ops
