#include "cpu_lenet.hpp"

#include <fmt/format.h>

#include <cmath>

#include "cpu_dense.hpp"
#include "tessera/conv_reference.hpp"
#include "tessera/error.hpp"

namespace tessera::bench {
namespace {

namespace ref = ops::reference;

constexpr size_t kSide = 28, kPixels = kSide * kSide, kClasses = 10;
// The dense layers: inputs and outputs of fc0, fc1, fc2.
constexpr size_t kDense[4] = {400, 120, 84, 10};

size_t partsOf(const std::vector<size_t>& splits, size_t l) {
  return l < splits.size() ? splits[l] : 1;
}

ops::Conv2dParams convParams(size_t layer) {
  ops::Conv2dParams p;
  if (layer == 0) p.padding = {2, 2};
  return p;
}

std::vector<float> relu(std::vector<float> v) {
  for (float& x : v) x = x > 0.0f ? x : 0.0f;  // Relu
  return v;
}

// ReluGrad: the gradient where the ReLU's output is > 0, else 0.
std::vector<float> reluGrad(const std::vector<float>& out, const std::vector<float>& g) {
  std::vector<float> d(g.size());
  for (size_t i = 0; i < g.size(); ++i) d[i] = out[i] > 0.0f ? g[i] : 0.0f;
  return d;
}

// [rows, cols] -> [cols, rows].
std::vector<float> transposed(const std::vector<float>& v, size_t rows, size_t cols) {
  std::vector<float> t(v.size());
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) t[j * rows + i] = v[i * cols + j];
  return t;
}

}  // namespace

struct CpuLenet::Pass {
  size_t batch = 0;
  std::vector<float> x;       // [B, 1, 28, 28]
  std::vector<float> r0, p0;  // conv0's ReLU output [B, 6, 28, 28], its pooling [B, 6, 14, 14]
  std::vector<float> r1, p1;  // conv1's ReLU output [B, 16, 10, 10], its pooling [B, 16, 5, 5]
  std::vector<float> h[2];    // fc0's and fc1's ReLU outputs
  std::vector<float> logits, dz;
  StepResult result;
  // The input of fc l: p1 flattened, h[0], h[1].
  const std::vector<float>& denseInput(size_t l) const { return l == 0 ? p1 : h[l - 1]; }
};

CpuLenet::CpuLenet(ModelParameters params, CpuOptimizerConfig optimizer)
    : params_(std::move(params)), opt_(optimizer, params_.values) {
  const std::vector<ParameterShape> want = lenetShapes();
  if (params_.shapes.size() != want.size())
    throw Error(
        fmt::format("cpu lenet: {} arrays, LeNet has {}", params_.shapes.size(), want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    if (params_.shapes[i].name != want[i].name || params_.shapes[i].shape != want[i].shape)
      throw Error(fmt::format("cpu lenet: array {} is {}, LeNet's is {}", i, params_.shapes[i].name,
                              want[i].name));
  }
  params_.validate();
}

void CpuLenet::runForward(Pass& pass, std::span<const float> images,
                          std::span<const int32_t> labels) const {
  const size_t B = labels.size();
  if (B == 0) throw Error("cpu lenet: empty batch");
  if (images.size() != B * kPixels)
    throw Error(fmt::format("cpu lenet: {} input values for a batch of {} x {}", images.size(), B,
                            kPixels));
  pass.batch = B;
  pass.x.assign(images.begin(), images.end());
  const std::vector<float>* in = &pass.x;
  std::vector<size_t> shape = {B, 1, kSide, kSide};
  for (size_t l = 0; l < 2; ++l) {
    const std::vector<float>& w = params_.values[2 * l];
    const std::vector<float>& b = params_.values[2 * l + 1];
    const ref::ConvGeom g(shape, params_.shapes[2 * l].shape, convParams(l));
    std::vector<float>& r = l == 0 ? pass.r0 : pass.r1;
    r = relu(ref::conv2d(g, *in, w, &b));
    const ref::PoolGeom q({B, size_t(g.OC), size_t(g.OH), size_t(g.OW)}, ops::Pool2dParams{});
    std::vector<float>& p = l == 0 ? pass.p0 : pass.p1;
    p = ref::maxPool2d(q, r);
    shape = {B, size_t(g.OC), size_t(q.OH), size_t(q.OW)};
    in = &p;
  }
  // The dense layers as CpuMlp computes them: x W (W stored [in, out] on the device) as split fmaf
  // chains, then + b; ReLU between layers.
  std::vector<float> tmp;
  for (size_t l = 0; l < 3; ++l) {
    const size_t m = kDense[l], n = kDense[l + 1];
    const std::vector<float> w = transposed(params_.values[4 + 2 * l], n, m);
    const std::vector<float>& b = params_.values[5 + 2 * l];
    const std::vector<float>& a = pass.denseInput(l);
    std::vector<float> z(B * n, 0.0f);
    for (size_t r = 0; r < B; ++r)
      cpu::splitDot(m, partsOf(splits_.forward, l), a.data() + r * m, w.data(), n, z.data() + r * n,
                    n, tmp);
    for (size_t r = 0; r < B; ++r)
      for (size_t j = 0; j < n; ++j) z[r * n + j] = z[r * n + j] + b[j];
    if (l < 2)
      pass.h[l] = relu(std::move(z));
    else
      pass.logits = std::move(z);
  }
  StepResult& res = pass.result;
  cpu::softmaxCrossEntropy(pass.logits, labels, kClasses, 1.0f / static_cast<float>(B), pass.dz,
                           res.rowLoss, res.correct);
  float total = 0.0f;
  for (float v : res.rowLoss) total += v;
  res.meanLoss = total / static_cast<float>(B);
}

void CpuLenet::runBackward(Pass& pass) {
  const size_t B = pass.batch;
  const size_t arrays = params_.values.size();
  const bool fusedSgd =
      opt_.config().kind == CpuOptimizerConfig::Kind::Sgd && opt_.config().weightDecay == 0.0f;
  const float lr = opt_.config().learningRate;
  std::vector<std::vector<float>> grads(arrays);  // PyTorch layouts; fc weights [in, out] here
  // Dense layers, last first: the input gradient dz W^T with the weights before their update, the
  // bias gradient (rows added in order), the weight gradient x^T dz (an fmaf chain over the rows
  // from 0) or, for plain SGD, x^T (-lr dz) accumulated straight into the weights.
  std::vector<float> dz = std::move(pass.dz), tmp;
  for (size_t l = 3; l-- > 0;) {
    const size_t m = kDense[l], n = kDense[l + 1];
    const size_t wi = 4 + 2 * l, bi = 5 + 2 * l;
    const std::vector<float>& a = pass.denseInput(l);
    std::vector<float> dAct(B * m, 0.0f);
    const std::vector<float>& wt = params_.values[wi];  // [out, in] = W^T
    for (size_t r = 0; r < B; ++r)
      cpu::splitDot(n, partsOf(splits_.backward, l), dz.data() + r * n, wt.data(), m,
                    dAct.data() + r * m, m, tmp);
    std::vector<float> db(dz.begin(), dz.begin() + static_cast<std::ptrdiff_t>(n));
    for (size_t r = 1; r < B; ++r)
      for (size_t j = 0; j < n; ++j) db[j] += dz[r * n + j];
    if (fusedSgd) {
      std::vector<float> w = transposed(params_.values[wi], n, m);
      std::vector<float> scaled(dz.size());
      for (size_t i = 0; i < dz.size(); ++i) scaled[i] = dz[i] * -lr;
      for (size_t r = 0; r < B; ++r)
        for (size_t i = 0; i < m; ++i)
          cpu::fmaRow(a[r * m + i], scaled.data() + r * n, w.data() + i * n, n);
      params_.values[wi] = transposed(w, m, n);
    } else {
      std::vector<float> gw(m * n, 0.0f);
      for (size_t r = 0; r < B; ++r)
        for (size_t i = 0; i < m; ++i)
          cpu::fmaRow(a[r * m + i], dz.data() + r * n, gw.data() + i * n, n);
      grads[wi] = transposed(gw, m, n);
    }
    grads[bi] = std::move(db);
    dz = l > 0 ? reluGrad(pass.h[l - 1], dAct) : std::move(dAct);
  }
  // The convolutions, last first: pooling's gradient to each window's first maximum, ReluGrad,
  // then the conv's input (conv1 only), weight and bias gradients.
  std::vector<float> dp = std::move(dz);  // [B, 16, 5, 5]: fc0's input gradient, unflattened
  std::vector<size_t> inShape[2] = {{B, 1, kSide, kSide}, {B, 6, 14, 14}};
  for (size_t l = 2; l-- > 0;) {
    const ref::ConvGeom g(inShape[l], params_.shapes[2 * l].shape, convParams(l));
    const std::vector<float>& r = l == 0 ? pass.r0 : pass.r1;
    const ref::PoolGeom q({B, size_t(g.OC), size_t(g.OH), size_t(g.OW)}, ops::Pool2dParams{});
    const std::vector<float> dc = reluGrad(r, ref::maxPool2dBackward(q, r, dp));
    const std::vector<float>& in = l == 0 ? pass.x : pass.p0;
    if (l > 0) dp = ref::conv2dBackwardInput(g, dc, params_.values[2 * l]);
    grads[2 * l] = ref::conv2dBackwardWeights(g, in, dc);
    grads[2 * l + 1] = ref::conv2dBackwardBias(g, dc);
  }
  // The updates (docs/autodiff.md, "Optimizers"), element by element.
  opt_.step(params_.values, grads);
}

CpuLenet::StepResult CpuLenet::trainStep(std::span<const float> images,
                                         std::span<const int32_t> labels) {
  Pass pass;
  runForward(pass, images, labels);
  runBackward(pass);
  return std::move(pass.result);
}

CpuLenet::StepResult CpuLenet::forward(std::span<const float> images,
                                       std::span<const int32_t> labels) const {
  Pass pass;
  runForward(pass, images, labels);
  return std::move(pass.result);
}

std::vector<float> CpuLenet::logits(std::span<const float> images) const {
  if (images.size() % kPixels != 0)
    throw Error(fmt::format("cpu lenet: {} input values is not a whole number of {}-pixel images",
                            images.size(), kPixels));
  Pass pass;
  runForward(pass, images, std::vector<int32_t>(images.size() / kPixels, 0));
  return std::move(pass.logits);
}

}  // namespace tessera::bench
