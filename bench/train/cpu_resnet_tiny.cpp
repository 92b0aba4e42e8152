#include "cpu_resnet_tiny.hpp"

#include <fmt/format.h>

#include <cmath>

#include "cpu_dense.hpp"
#include "tessera/conv_reference.hpp"
#include "tessera/error.hpp"
#include "tessera/nn_reference.hpp"

namespace tessera::bench {
namespace {

namespace ref = ops::reference;
namespace nnref = autodiff::gradcheck::nnref;

constexpr size_t kChannels = 16, kSide = 14, kPooled = 7, kClasses = 10;
constexpr size_t kFcIn = kChannels * kPooled * kPooled;  // 784
constexpr float kEps = 1e-5f, kMomentum = 0.1f;          // PyTorch's BatchNorm2d defaults
// Indices in resnetTinyShapes(): conv l's weight at 5 l, its batch norm's arrays after it.
constexpr size_t kFcW = 15, kFcB = 16;

std::vector<float> relu(std::vector<float> v) {
  for (float& x : v) x = x > 0.0f ? x : 0.0f;
  return v;
}

std::vector<float> reluGrad(const std::vector<float>& out, const std::vector<float>& g) {
  std::vector<float> d(g.size());
  for (size_t i = 0; i < g.size(); ++i) d[i] = out[i] > 0.0f ? g[i] : 0.0f;
  return d;
}

std::vector<float> transposed(const std::vector<float>& v, size_t rows, size_t cols) {
  std::vector<float> t(v.size());
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) t[j * rows + i] = v[i * cols + j];
  return t;
}

ops::Conv2dParams convParams(size_t l) {
  ops::Conv2dParams p;
  if (l == 0) p.stride = {2, 2};
  if (l < 2) p.padding = {1, 1};
  if (l == 1) p.groups = kChannels;
  return p;
}

}  // namespace

CpuResnetTiny::CpuResnetTiny(ModelParameters params, CpuOptimizerConfig optimizer, Plans plans)
    : params_(std::move(params)), opt_(optimizer, params_.values), plans_(plans) {
  const std::vector<ParameterShape> want = resnetTinyShapes();
  if (params_.shapes.size() != want.size())
    throw Error(fmt::format("cpu resnet-tiny: {} arrays, the model has {}", params_.shapes.size(),
                            want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    if (params_.shapes[i].name != want[i].name || params_.shapes[i].shape != want[i].shape)
      throw Error(fmt::format("cpu resnet-tiny: array {} is {}, the model's is {}", i,
                              params_.shapes[i].name, want[i].name));
  }
  params_.validate();
}

CpuResnetTiny::StepResult CpuResnetTiny::trainStep(std::span<const float> images,
                                                   std::span<const int32_t> labels) {
  const size_t B = labels.size();
  if (B < 2 || images.size() != B * 784)
    throw Error(fmt::format("cpu resnet-tiny: {} input values for a batch of {} (at least 2)",
                            images.size(), B));
  std::vector<std::vector<float>>& P = params_.values;
  const std::vector<float> x(images.begin(), images.end());
  const std::vector<size_t> inShape[3] = {
      {B, 1, 28, 28}, {B, kChannels, kSide, kSide}, {B, kChannels, kSide, kSide}};
  const size_t spatial = kSide * kSide;
  // Batch normalisation l of c in training: the forward (with a zero gradient) now, the backward
  // with the real one later; the running statistics are updated by the forward, as on the device.
  auto bn = [&](size_t l, const std::vector<float>& c, const std::vector<float>& dy) {
    return nnref::batchNorm(c, P[5 * l + 1], P[5 * l + 2], dy, P[5 * l + 3], P[5 * l + 4], B,
                            kChannels, spatial, kEps, kMomentum, true, plans_.bnParts);
  };
  const std::vector<float> zeros(B * kChannels * spatial, 0.0f);
  std::vector<float> c[3], a[3];  // conv l's output; the ReLU after bn l (a[2]: after the skip)
  const std::vector<float>* in = &x;
  for (size_t l = 0; l < 3; ++l) {
    const ref::ConvGeom g(inShape[l], params_.shapes[5 * l].shape, convParams(l));
    c[l] = ref::conv2d(g, *in, P[5 * l], nullptr);
    nnref::Norm f = bn(l, c[l], zeros);
    P[5 * l + 3] = std::move(f.runMean);
    P[5 * l + 4] = std::move(f.runVar);
    if (l == 2) {
      for (size_t i = 0; i < f.out.size(); ++i) f.out[i] = f.out[i] + a[0][i];  // the skip
    }
    a[l] = relu(std::move(f.out));
    in = &a[l];
  }
  const ref::PoolGeom q({B, kChannels, kSide, kSide}, ops::Pool2dParams{});
  const std::vector<float> pooled = ref::maxPool2d(q, a[2]);  // [B, 784] flattened
  // fc0 as LeNet's dense layers: split fmaf chains, then + b.
  const std::vector<float> w = transposed(P[kFcW], kClasses, kFcIn);  // [in, out]
  std::vector<float> logits(B * kClasses, 0.0f), tmp;
  for (size_t r = 0; r < B; ++r)
    cpu::splitDot(kFcIn, plans_.fcForward, pooled.data() + r * kFcIn, w.data(), kClasses,
                  logits.data() + r * kClasses, kClasses, tmp);
  for (size_t r = 0; r < B; ++r)
    for (size_t j = 0; j < kClasses; ++j)
      logits[r * kClasses + j] = logits[r * kClasses + j] + P[kFcB][j];
  StepResult res;
  std::vector<float> dz;
  cpu::softmaxCrossEntropy(logits, labels, kClasses, 1.0f / static_cast<float>(B), dz, res.rowLoss,
                           res.correct);
  float total = 0.0f;
  for (float v : res.rowLoss) total += v;
  res.meanLoss = total / static_cast<float>(B);

  // The backward, last op first (docs/training.md, "The CPU references").
  const bool fusedSgd =
      opt_.config().kind == CpuOptimizerConfig::Kind::Sgd && opt_.config().weightDecay == 0.0f;
  const float lr = opt_.config().learningRate;
  std::vector<std::vector<float>> grads(P.size());
  std::vector<float> dPool(B * kFcIn, 0.0f);
  for (size_t r = 0; r < B; ++r)
    cpu::splitDot(kClasses, plans_.fcBackward, dz.data() + r * kClasses, P[kFcW].data(), kFcIn,
                  dPool.data() + r * kFcIn, kFcIn, tmp);
  std::vector<float> db(dz.begin(), dz.begin() + static_cast<std::ptrdiff_t>(kClasses));
  for (size_t r = 1; r < B; ++r)
    for (size_t j = 0; j < kClasses; ++j) db[j] += dz[r * kClasses + j];
  if (fusedSgd) {
    std::vector<float> wu = w;
    std::vector<float> scaled(dz.size());
    for (size_t i = 0; i < dz.size(); ++i) scaled[i] = dz[i] * -lr;
    for (size_t r = 0; r < B; ++r)
      for (size_t i = 0; i < kFcIn; ++i)
        cpu::fmaRow(pooled[r * kFcIn + i], scaled.data() + r * kClasses, wu.data() + i * kClasses,
                    kClasses);
    P[kFcW] = transposed(wu, kFcIn, kClasses);
  } else {
    std::vector<float> gw(kFcIn * kClasses, 0.0f);
    for (size_t r = 0; r < B; ++r)
      for (size_t i = 0; i < kFcIn; ++i)
        cpu::fmaRow(pooled[r * kFcIn + i], dz.data() + r * kClasses, gw.data() + i * kClasses,
                    kClasses);
    grads[kFcW] = transposed(gw, kFcIn, kClasses);
  }
  grads[kFcB] = std::move(db);
  // The skip's sum gets ReLU's gradient; it flows to bn2 and, added to conv1's input gradient, to
  // a[0].
  const std::vector<float> dSum = reluGrad(a[2], ref::maxPool2dBackward(q, a[2], dPool));
  std::vector<float> dy = dSum;
  for (size_t l = 3; l-- > 0;) {
    const nnref::Norm b = bn(l, c[l], dy);
    grads[5 * l + 1] = b.dw;
    grads[5 * l + 2] = b.db;
    const ref::ConvGeom g(inShape[l], params_.shapes[5 * l].shape, convParams(l));
    const std::vector<float>& convIn = l == 0 ? x : a[l - 1];
    std::vector<float> dIn;
    if (l > 0) dIn = ref::conv2dBackwardInput(g, b.dx, P[5 * l]);
    grads[5 * l] = ref::conv2dBackwardWeights(g, convIn, b.dx);
    if (l == 1) {
      for (size_t i = 0; i < dIn.size(); ++i) dIn[i] = dSum[i] + dIn[i];
    }
    if (l > 0) dy = reluGrad(a[l - 1], dIn);
  }
  // The updates (docs/autodiff.md, "Optimizers"), element by element; the running statistics
  // have no gradient.
  opt_.step(P, grads);
  return res;
}

}  // namespace tessera::bench
