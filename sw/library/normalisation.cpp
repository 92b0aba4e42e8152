// Layer and batch normalisation with their gradients (docs/library.md, "Layers"). Both run on
// rows: layer norm on rows of the normalised trailing dimensions, batch norm on one row per
// channel (NCHW viewed as [C, N*H*W]); each row is normalised by one vertex, whole.
#include <fmt/format.h>

#include "rows.hpp"
#include "tessera/error.hpp"
#include "tessera/nn.hpp"

namespace tessera::ops {

namespace {

// A new [n] variable whose elements [begin, end) of each chunk live on the chunk's tile.
Tensor perRow(Graph& graph, size_t n, const std::vector<RowChunk>& chunks, const std::string& name) {
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
    throw Error(fmt::format("{}: the normalised shape {} (\"{}\") is not the trailing dimensions of \"{}\" {}", name,
                            weight.shapeString(), weight.debugName(), x.debugName(), x.shapeString()));
  }
  const size_t len = weight.numElements();
  return x.reshape({x.numElements() / len, len});
}

// Rows of batch normalisation: x [N, C, ...] as [C, N * rest].
Tensor channelRows(const Tensor& x, const std::string& name) {
  if (x.rank() < 2 || x.numElements() == 0) {
    throw Error(fmt::format("{}: batch normalisation needs x [N, C, ...], got \"{}\" {}", name, x.debugName(),
                            x.shapeString()));
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
    throw Error(fmt::format("{}: {} \"{}\" must be [{}], is {}", name, what, t.debugName(), c, t.shapeString()));
  }
}

}  // namespace

NormResult layerNorm(Graph& graph, const Tensor& x, const Tensor& weight, const Tensor& bias, float eps,
                     Sequence& prog, const std::string& name) {
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
                                  {{"in", in.slice(c.begin, c.end).flatten()}, {"weight", weight.flatten()},
                                   {"bias", bias.flatten()}, {"out", out.slice(c.begin, c.end).flatten()},
                                   {"mean", r.mean.slice(c.begin, c.end)}, {"rstd", r.invStd.slice(c.begin, c.end)}});
    graph.setFieldValue(v, "length", static_cast<uint32_t>(len));
    graph.setFieldValue(v, "eps", eps);
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  return r;
}

NormGradients layerNormBackward(Graph& graph, const Tensor& grad, const Tensor& x, const Tensor& weight,
                                const Tensor& mean, const Tensor& invStd, Sequence& prog, const std::string& name) {
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
    VertexRef v = graph.addVertex(
        cs, "LayerNormGrad",
        {{"grad", g.slice(c.begin, c.end).flatten()}, {"in", in.slice(c.begin, c.end).flatten()},
         {"weight", weight.flatten()}, {"mean", mean.slice(c.begin, c.end)}, {"rstd", invStd.slice(c.begin, c.end)},
         {"dx", dx.slice(c.begin, c.end).flatten()}, {"gxhat", gx.slice(c.begin, c.end).flatten()}});
    graph.setFieldValue(v, "length", static_cast<uint32_t>(len));
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  NormGradients out;
  out.input = dx.reshape(x.shape());
  out.weight = reduceSum(graph, gx, 0, prog, name + "/weight").reshape(weight.shape());
  out.bias = reduceSum(graph, g, 0, prog, name + "/bias").reshape(weight.shape());
  return out;
}

NormResult batchNormTraining(Graph& graph, const Tensor& x, const Tensor& weight, const Tensor& bias,
                             const Tensor& runningMean, const Tensor& runningVar, float eps, float momentum,
                             Sequence& prog, const std::string& name) {
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
      throw Error(fmt::format("{}: \"{}\" {} has one value per channel: the unbiased variance is undefined", name,
                              x.debugName(), x.shapeString()));
    }
  }
  const Tensor out = createRows(graph, chans, len, name);
  const std::vector<RowChunk> chunks = rowChunks(graph, out);
  NormResult r{fromChannelRows(out, x.shape()), perRow(graph, chans, chunks, name + "/mean"),
               perRow(graph, chans, chunks, name + "/invStd")};
  const Tensor var = perRow(graph, chans, chunks, name + "/var");
  ComputeSet cs = graph.addComputeSet(name);
  for (const RowChunk& c : chunks) {
    VertexRef v = graph.addVertex(
        cs, "BatchNormTrain",
        {{"in", in.slice(c.begin, c.end).flatten()}, {"weight", weight.slice(c.begin, c.end)},
         {"bias", bias.slice(c.begin, c.end)}, {"out", out.slice(c.begin, c.end).flatten()},
         {"mean", r.mean.slice(c.begin, c.end)}, {"var", var.slice(c.begin, c.end)},
         {"invStd", r.invStd.slice(c.begin, c.end)}});
    graph.setFieldValue(v, "length", static_cast<uint32_t>(len));
    graph.setFieldValue(v, "eps", eps);
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  if (running) {
    ComputeSet us = graph.addComputeSet(name + "/running");
    for (const Chunk& c : tileChunks(graph, runningMean)) {
      VertexRef v = graph.addVertex(us, "BatchNormRunning",
                                    {{"runningMean", runningMean.slice(c.begin, c.end)},
                                     {"runningVar", runningVar.slice(c.begin, c.end)},
                                     {"mean", r.mean.slice(c.begin, c.end)}, {"var", var.slice(c.begin, c.end)}});
      graph.setFieldValue(v, "momentum", momentum);
      graph.setFieldValue(v, "unbias", static_cast<float>(len) / static_cast<float>(len - 1));
      graph.setTileMapping(v, c.tile);
    }
    prog.add(Execute(us, name + "/running"));
  }
  return r;
}

NormResult batchNormInference(Graph& graph, const Tensor& x, const Tensor& weight, const Tensor& bias,
                              const Tensor& runningMean, const Tensor& runningVar, float eps, Sequence& prog,
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
  NormResult r{fromChannelRows(out, x.shape()), runningMean, perRow(graph, chans, chunks, name + "/invStd")};
  ComputeSet cs = graph.addComputeSet(name);
  for (const RowChunk& c : chunks) {
    VertexRef v = graph.addVertex(
        cs, "BatchNormApply",
        {{"in", in.slice(c.begin, c.end).flatten()}, {"weight", weight.slice(c.begin, c.end)},
         {"bias", bias.slice(c.begin, c.end)}, {"mean", runningMean.slice(c.begin, c.end)},
         {"var", runningVar.slice(c.begin, c.end)}, {"out", out.slice(c.begin, c.end).flatten()},
         {"invStd", r.invStd.slice(c.begin, c.end)}});
    graph.setFieldValue(v, "length", static_cast<uint32_t>(len));
    graph.setFieldValue(v, "eps", eps);
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  return r;
}

NormGradients batchNormBackward(Graph& graph, const Tensor& grad, const Tensor& x, const Tensor& weight,
                                const Tensor& mean, const Tensor& invStd, bool training, Sequence& prog,
                                const std::string& name) {
  requireFloat(grad, "gradient", name);
  requireFloat(x, "input", name);
  requireSameShape(grad, x, name);
  const Tensor in = channelRows(x, name), g = channelRows(grad, name);
  const size_t chans = in.dim(0), len = in.dim(1);
  requireChannels(weight, chans, "weight", name);
  requireChannels(mean, chans, "mean", name);
  requireChannels(invStd, chans, "invStd", name);
  const Tensor dx = createRows(graph, chans, len, name);
  const std::vector<RowChunk> chunks = rowChunks(graph, dx);
  NormGradients out{fromChannelRows(dx, x.shape()), perRow(graph, chans, chunks, name + "/weight"),
                    perRow(graph, chans, chunks, name + "/bias")};
  ComputeSet cs = graph.addComputeSet(name);
  for (const RowChunk& c : chunks) {
    VertexRef v = graph.addVertex(
        cs, "BatchNormGrad",
        {{"grad", g.slice(c.begin, c.end).flatten()}, {"in", in.slice(c.begin, c.end).flatten()},
         {"weight", weight.slice(c.begin, c.end)}, {"mean", mean.slice(c.begin, c.end)},
         {"invStd", invStd.slice(c.begin, c.end)}, {"dx", dx.slice(c.begin, c.end).flatten()},
         {"dweight", out.weight.slice(c.begin, c.end)}, {"dbias", out.bias.slice(c.begin, c.end)}});
    graph.setFieldValue(v, "length", static_cast<uint32_t>(len));
    graph.setFieldValue(v, "training", training ? 1u : 0u);
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  return out;
}

}  // namespace tessera::ops
