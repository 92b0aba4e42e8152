// Layer and batch normalisation with their gradients (docs/library.md, "Layers"). Layer norm
// runs on rows of the normalised trailing dimensions, each row by one vertex, whole. Batch norm
// views NCHW as one row per channel ([C, N*H*W]) and splits each row into parts over the tiles'
// workers (batchNormParts), with the partial sums added in part order.
#include <fmt/format.h>

#include <algorithm>

#include "rows.hpp"
#include "tessera/error.hpp"
#include "tessera/nn.hpp"

namespace tessera::ops {

namespace {

// Shortest part of a channel that batch normalisation gives a vertex of its own.
constexpr size_t kMinPart = 32;

// A new [n] variable whose elements [begin, end) of each chunk live on the chunk's tile.
Tensor perRow(Graph& graph, size_t n, const std::vector<RowChunk>& chunks,
              const std::string& name) {
  Tensor t = graph.addVariable(ElemType::Float32, {n}, name);
  for (const RowChunk& c : chunks) graph.setTileMapping(t.slice(c.begin, c.end), c.tile);
  return t;
}

// Rows of layer normalisation: x [..., weight's shape] as [R, L].
Tensor layerRows(const Tensor& x, const Tensor& weight, const std::string& name) {
  const size_t wr = weight.rank(), xr = x.rank();
  bool ok = wr >= 1 && wr <= xr && weight.numElements() > 0;
  for (size_t d = 0; ok && d < wr; ++d) ok = weight.dim(d) == x.dim(xr - wr + d);
  if (!ok) {
    throw Error(fmt::format(
        "{}: the normalised shape {} (\"{}\") is not the trailing dimensions of \"{}\" {}", name,
        weight.shapeString(), weight.debugName(), x.debugName(), x.shapeString()));
  }
  const size_t len = weight.numElements();
  return x.reshape({x.numElements() / len, len});
}

// Rows of batch normalisation: x [N, C, ...] as [C, N * rest].
Tensor channelRows(const Tensor& x, const std::string& name) {
  if (x.rank() < 2 || x.numElements() == 0) {
    throw Error(fmt::format("{}: batch normalisation needs x [N, C, ...], got \"{}\" {}", name,
                            x.debugName(), x.shapeString()));
  }
  const size_t n = x.dim(0), c = x.dim(1), rest = x.numElements() / (n * c);
  return x.reshape({n, c, rest}).dimShuffle({1, 0, 2}).reshape({c, n * rest});
}

Tensor fromChannelRows(const Tensor& rows, const std::vector<size_t>& shape) {
  const size_t n = shape[0], c = shape[1], rest = rows.numElements() / (n * c);
  return rows.reshape({c, n, rest}).dimShuffle({1, 0, 2}).reshape(shape);
}

void requireChannels(const Tensor& t, size_t c, const std::string& what, const std::string& name) {
  requireFloat(t, what, name);
  if (t.rank() != 1 || t.dim(0) != c) {
    throw Error(fmt::format("{}: {} \"{}\" must be [{}], is {}", name, what, t.debugName(), c,
                            t.shapeString()));
  }
}

}  // namespace

NormResult layerNorm(Graph& graph, const Tensor& x, const Tensor& weight, const Tensor& bias,
                     float eps, Sequence& prog, const std::string& name) {
  requireFloat(x, "input", name);
  requireFloat(weight, "weight", name);
  requireFloat(bias, "bias", name);
  requireSameShape(weight, bias, name);
  const Tensor in = layerRows(x, weight, name);
  const size_t rows = in.dim(0), len = in.dim(1);
  const Tensor out = createRows(graph, rows, len, name);
  const std::vector<RowChunk> chunks = rowChunks(graph, out);
  NormResult r{out.reshape(x.shape()), perRow(graph, rows, chunks, name + "/mean"),
               perRow(graph, rows, chunks, name + "/invStd")};
  ComputeSet cs = graph.addComputeSet(name);
  for (const RowChunk& c : chunks) {
    VertexRef v = graph.addVertex(cs, "LayerNorm",
                                  {{"in", in.slice(c.begin, c.end).flatten()},
                                   {"weight", weight.flatten()},
                                   {"bias", bias.flatten()},
                                   {"out", out.slice(c.begin, c.end).flatten()},
                                   {"mean", r.mean.slice(c.begin, c.end)},
                                   {"rstd", r.invStd.slice(c.begin, c.end)}});
    graph.setFieldValue(v, "length", static_cast<uint32_t>(len));
    graph.setFieldValue(v, "eps", eps);
    // Per element: the mean's add, the variance's subtract and multiply-add, normalising's
    // subtract and multiply, the affine multiply-add.
    graph.setFlops(v, 8 * uint64_t{c.end - c.begin} * len);
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  return r;
}

NormGradients layerNormBackward(Graph& graph, const Tensor& grad, const Tensor& x,
                                const Tensor& weight, const Tensor& mean, const Tensor& invStd,
                                Sequence& prog, const std::string& name) {
  requireFloat(grad, "gradient", name);
  requireFloat(x, "input", name);
  requireFloat(weight, "weight", name);
  requireSameShape(grad, x, name);
  const Tensor in = layerRows(x, weight, name), g = layerRows(grad, weight, name);
  const size_t rows = in.dim(0), len = in.dim(1);
  requireChannels(mean, rows, "mean", name);
  requireChannels(invStd, rows, "invStd", name);
  const Tensor dx = createRows(graph, rows, len, name);
  const Tensor gx = createRows(graph, rows, len, name + "/gxhat");
  ComputeSet cs = graph.addComputeSet(name);
  for (const RowChunk& c : rowChunks(graph, dx)) {
    VertexRef v = graph.addVertex(cs, "LayerNormGrad",
                                  {{"grad", g.slice(c.begin, c.end).flatten()},
                                   {"in", in.slice(c.begin, c.end).flatten()},
                                   {"weight", weight.flatten()},
                                   {"mean", mean.slice(c.begin, c.end)},
                                   {"rstd", invStd.slice(c.begin, c.end)},
                                   {"dx", dx.slice(c.begin, c.end).flatten()},
                                   {"gxhat", gx.slice(c.begin, c.end).flatten()}});
    graph.setFieldValue(v, "length", static_cast<uint32_t>(len));
    // Per element: x-hat (2), g * weight (1), the two row sums (3), dx (4).
    graph.setFlops(v, 10 * uint64_t{c.end - c.begin} * len);
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  NormGradients out;
  out.input = dx.reshape(x.shape());
  out.weight = reduceSum(graph, gx, 0, prog, name + "/weight").reshape(weight.shape());
  out.bias = reduceSum(graph, g, 0, prog, name + "/bias").reshape(weight.shape());
  return out;
}

size_t batchNormParts(const Graph& graph, size_t channels, size_t valuesPerChannel) {
  if (channels == 0 || valuesPerChannel == 0) return 1;
  // Enough parts for every worker of every tile, none shorter than kMinPart values.
  const size_t byWorkers =
      std::max<size_t>(1, graph.target().tiles * graph.target().contexts / channels);
  const size_t byLength = std::max<size_t>(1, valuesPerChannel / kMinPart);
  return std::min(byWorkers, byLength);
}

namespace {

// Part k of a channel: its values [begin, end) and its tile (parts spread over the tiles in
// channel-major order, so a channel's parts sit on neighbouring tiles).
struct ChannelPart {
  size_t begin, end;
  unsigned tile;
};

ChannelPart channelPart(const Graph& graph, size_t chans, size_t len, size_t parts, size_t c,
                        size_t k) {
  const size_t g = c * parts + k, total = chans * parts;
  return {len * k / parts, len * (k + 1) / parts,
          static_cast<unsigned>(g * graph.target().tiles / total)};
}

// A new [chans, len] variable, each part on its tile.
Tensor createParts(Graph& graph, size_t chans, size_t len, size_t parts, const std::string& name) {
  Tensor t = graph.addVariable(ElemType::Float32, {chans, len}, name);
  for (size_t c = 0; c < chans; ++c) {
    for (size_t k = 0; k < parts; ++k) {
      const ChannelPart p = channelPart(graph, chans, len, parts, c, k);
      graph.setTileMapping(t[c].slice(p.begin, p.end), p.tile);
    }
  }
  return t;
}

// A new [chans, parts * width] variable: (c, k) on the tile of part k of channel c.
Tensor createPartials(Graph& graph, size_t chans, size_t len, size_t parts, size_t width,
                      const std::string& name) {
  Tensor t = graph.addVariable(ElemType::Float32, {chans, parts * width}, name);
  for (size_t c = 0; c < chans; ++c) {
    for (size_t k = 0; k < parts; ++k) {
      graph.setTileMapping(t[c].slice(k * width, (k + 1) * width),
                           channelPart(graph, chans, len, parts, c, k).tile);
    }
  }
  return t;
}

// A new [chans] variable, channel c on the tile of its first part.
Tensor createPerChannel(Graph& graph, size_t chans, size_t len, size_t parts,
                        const std::string& name) {
  Tensor t = graph.addVariable(ElemType::Float32, {chans}, name);
  for (size_t c = 0; c < chans; ++c)
    graph.setTileMapping(t.slice(c, c + 1), channelPart(graph, chans, len, parts, c, 0).tile);
  return t;
}

}  // namespace

NormResult batchNormTraining(Graph& graph, const Tensor& x, const Tensor& weight,
                             const Tensor& bias, const Tensor& runningMean,
                             const Tensor& runningVar, float eps, float momentum, Sequence& prog,
                             const std::string& name) {
  requireFloat(x, "input", name);
  const Tensor in = channelRows(x, name);
  const size_t chans = in.dim(0), len = in.dim(1);
  requireChannels(weight, chans, "weight", name);
  requireChannels(bias, chans, "bias", name);
  const bool running = runningMean.valid() || runningVar.valid();
  if (running) {
    requireChannels(runningMean, chans, "running mean", name);
    requireChannels(runningVar, chans, "running variance", name);
    if (len < 2) {
      throw Error(
          fmt::format("{}: \"{}\" {} has one value per channel: the unbiased variance is undefined",
                      name, x.debugName(), x.shapeString()));
    }
  }
  // Three compute sets over the parts of each channel: partial sums; the mean, then partial sums
  // of squared deviations; the variance, then the normalised values (and the channels' statistics).
  const size_t parts = batchNormParts(graph, chans, len);
  const Tensor out = createParts(graph, chans, len, parts, name);
  const Tensor sums = createPartials(graph, chans, len, parts, 1, name + "/sums");
  const Tensor squares = createPartials(graph, chans, len, parts, 1, name + "/squares");
  NormResult r{fromChannelRows(out, x.shape()),
               createPerChannel(graph, chans, len, parts, name + "/mean"),
               createPerChannel(graph, chans, len, parts, name + "/invStd")};
  const Tensor var = createPerChannel(graph, chans, len, parts, name + "/var");
  ComputeSet cs1 = graph.addComputeSet(name + "/sum");
  ComputeSet cs2 = graph.addComputeSet(name + "/squares");
  ComputeSet cs3 = graph.addComputeSet(name);
  for (size_t c = 0; c < chans; ++c) {
    for (size_t k = 0; k < parts; ++k) {
      const ChannelPart p = channelPart(graph, chans, len, parts, c, k);
      const Tensor part = in[c].slice(p.begin, p.end);
      VertexRef v1 =
          graph.addVertex(cs1, "BatchNormSum", {{"in", part}, {"sum", sums[c].slice(k, k + 1)}});
      graph.setFlops(v1, p.end - p.begin);
      graph.setTileMapping(v1, p.tile);
      VertexRef v2 = graph.addVertex(
          cs2, "BatchNormSquares",
          {{"in", part}, {"sums", sums[c]}, {"squares", squares[c].slice(k, k + 1)}});
      graph.setFieldValue(v2, "length", static_cast<uint32_t>(len));
      graph.setFlops(v2, 3 * uint64_t{p.end - p.begin});  // subtract the mean, multiply-add
      graph.setTileMapping(v2, p.tile);
      VertexRef v3 = graph.addVertex(cs3, "BatchNormNormalise",
                                     {{"in", part},
                                      {"sums", sums[c]},
                                      {"squares", squares[c]},
                                      {"weight", weight.slice(c, c + 1)},
                                      {"bias", bias.slice(c, c + 1)},
                                      {"out", out[c].slice(p.begin, p.end)}});
      graph.setFieldValue(v3, "length", static_cast<uint32_t>(len));
      graph.setFieldValue(v3, "eps", eps);
      graph.setFlops(v3, 4 * uint64_t{p.end - p.begin});  // subtract, multiply, multiply-add
      graph.setTileMapping(v3, p.tile);
    }
    VertexRef vs = graph.addVertex(cs3, "BatchNormStats",
                                   {{"sums", sums[c]},
                                    {"squares", squares[c]},
                                    {"mean", r.mean.slice(c, c + 1)},
                                    {"var", var.slice(c, c + 1)},
                                    {"invStd", r.invStd.slice(c, c + 1)}});
    graph.setFieldValue(vs, "length", static_cast<uint32_t>(len));
    graph.setFieldValue(vs, "parts", static_cast<uint32_t>(parts));
    graph.setFieldValue(vs, "eps", eps);
    graph.setTileMapping(vs, channelPart(graph, chans, len, parts, c, 0).tile);
  }
  prog.add(Execute(cs1, name + "/sum"));
  prog.add(Execute(cs2, name + "/squares"));
  prog.add(Execute(cs3, name));
  if (running) {
    ComputeSet us = graph.addComputeSet(name + "/running");
    for (const Chunk& c : tileChunks(graph, runningMean)) {
      VertexRef v = graph.addVertex(us, "BatchNormRunning",
                                    {{"runningMean", runningMean.slice(c.begin, c.end)},
                                     {"runningVar", runningVar.slice(c.begin, c.end)},
                                     {"mean", r.mean.slice(c.begin, c.end)},
                                     {"var", var.slice(c.begin, c.end)}});
      graph.setFieldValue(v, "momentum", momentum);
      graph.setFieldValue(v, "unbias", static_cast<float>(len) / static_cast<float>(len - 1));
      graph.setTileMapping(v, c.tile);
    }
    prog.add(Execute(us, name + "/running"));
  }
  return r;
}

NormResult batchNormInference(Graph& graph, const Tensor& x, const Tensor& weight,
                              const Tensor& bias, const Tensor& runningMean,
                              const Tensor& runningVar, float eps, Sequence& prog,
                              const std::string& name) {
  requireFloat(x, "input", name);
  const Tensor in = channelRows(x, name);
  const size_t chans = in.dim(0), len = in.dim(1);
  requireChannels(weight, chans, "weight", name);
  requireChannels(bias, chans, "bias", name);
  requireChannels(runningMean, chans, "running mean", name);
  requireChannels(runningVar, chans, "running variance", name);
  const Tensor out = createRows(graph, chans, len, name);
  const std::vector<RowChunk> chunks = rowChunks(graph, out);
  NormResult r{fromChannelRows(out, x.shape()), runningMean,
               perRow(graph, chans, chunks, name + "/invStd")};
  ComputeSet cs = graph.addComputeSet(name);
  for (const RowChunk& c : chunks) {
    VertexRef v = graph.addVertex(cs, "BatchNormApply",
                                  {{"in", in.slice(c.begin, c.end).flatten()},
                                   {"weight", weight.slice(c.begin, c.end)},
                                   {"bias", bias.slice(c.begin, c.end)},
                                   {"mean", runningMean.slice(c.begin, c.end)},
                                   {"var", runningVar.slice(c.begin, c.end)},
                                   {"out", out.slice(c.begin, c.end).flatten()},
                                   {"invStd", r.invStd.slice(c.begin, c.end)}});
    graph.setFieldValue(v, "length", static_cast<uint32_t>(len));
    graph.setFieldValue(v, "eps", eps);
    graph.setFlops(v, 4 * uint64_t{c.end - c.begin} * len);  // subtract, multiply, multiply-add
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  return r;
}

NormGradients batchNormBackward(Graph& graph, const Tensor& grad, const Tensor& x,
                                const Tensor& weight, const Tensor& mean, const Tensor& invStd,
                                bool training, Sequence& prog, const std::string& name) {
  requireFloat(grad, "gradient", name);
  requireFloat(x, "input", name);
  requireSameShape(grad, x, name);
  const Tensor in = channelRows(x, name), g = channelRows(grad, name);
  const size_t chans = in.dim(0), len = in.dim(1);
  requireChannels(weight, chans, "weight", name);
  requireChannels(mean, chans, "mean", name);
  requireChannels(invStd, chans, "invStd", name);
  // Two compute sets over the parts of each channel: partial sums of dy and dy * xhat; then dx.
  // The weight and bias gradients are those partial sums added over the parts (reduceSum).
  const size_t parts = batchNormParts(graph, chans, len);
  const Tensor dx = createParts(graph, chans, len, parts, name);
  const Tensor sums = createPartials(graph, chans, len, parts, 2, name + "/sums");
  ComputeSet cs1 = graph.addComputeSet(name + "/sums");
  ComputeSet cs2 = graph.addComputeSet(name);
  for (size_t c = 0; c < chans; ++c) {
    for (size_t k = 0; k < parts; ++k) {
      const ChannelPart p = channelPart(graph, chans, len, parts, c, k);
      const Tensor xp = in[c].slice(p.begin, p.end), gp = g[c].slice(p.begin, p.end);
      VertexRef v1 = graph.addVertex(cs1, "BatchNormGradSums",
                                     {{"grad", gp},
                                      {"in", xp},
                                      {"mean", mean.slice(c, c + 1)},
                                      {"invStd", invStd.slice(c, c + 1)},
                                      {"sums", sums[c].slice(2 * k, 2 * k + 2)}});
      graph.setFlops(v1, 5 * uint64_t{p.end - p.begin});  // x-hat, two sums
      graph.setTileMapping(v1, p.tile);
      VertexRef v2 = graph.addVertex(cs2, "BatchNormGradApply",
                                     {{"grad", gp},
                                      {"in", xp},
                                      {"weight", weight.slice(c, c + 1)},
                                      {"mean", mean.slice(c, c + 1)},
                                      {"invStd", invStd.slice(c, c + 1)},
                                      {"sums", sums[c]},
                                      {"dx", dx[c].slice(p.begin, p.end)}});
      graph.setFieldValue(v2, "length", static_cast<uint32_t>(len));
      graph.setFieldValue(v2, "training", training ? 1u : 0u);
      graph.setFlops(v2, 5 * uint64_t{p.end - p.begin});  // x-hat, two multiply-adds, a scale
      graph.setTileMapping(v2, p.tile);
    }
  }
  prog.add(Execute(cs1, name + "/sums"));
  prog.add(Execute(cs2, name));
  const Tensor pairs = sums.reshape({chans, parts, 2});
  NormGradients out;
  out.input = fromChannelRows(dx, x.shape());
  out.bias = reduceSum(graph, pairs.slice(0, 1, 2).reshape({chans, parts}).transpose(), 0, prog,
                       name + "/bias");
  out.weight = reduceSum(graph, pairs.slice(1, 2, 2).reshape({chans, parts}).transpose(), 0, prog,
                         name + "/weight");
  return out;
}

}  // namespace tessera::ops
