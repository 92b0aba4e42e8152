#include "cpu_mlp.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cpu_dense.hpp"
#include "minibatcher.hpp"
#include "tessera/error.hpp"

namespace tessera::bench {
namespace {

using cpu::fmaRow;

size_t partsOf(const std::vector<size_t>& splits, size_t l) {
  return l < splits.size() ? splits[l] : 1;
}

std::vector<float> narrowed(const float* x, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = cpu::roundToHalf(x[i]);
  return v;
}

}  // namespace

struct CpuMlp::Pass {
  size_t batch = 0;
  std::span<const float> input;            // [batch, sizes[0]]
  std::vector<std::vector<float>> hidden;  // ReLU outputs: the inputs of layers 1, 2, ...
  std::vector<float> logits;               // [batch, classes]
  std::vector<float> dz;                   // d(mean loss)/d(logits), then per layer going back
  StepResult result;

  const float* act(size_t l) const { return l == 0 ? input.data() : hidden[l - 1].data(); }
};

CpuMlp::CpuMlp(MlpParameters params, float learningRate, float momentum)
    : params_(std::move(params)), lr_(learningRate), mu_(momentum) {
  params_.validate();
  if (mu_ != 0.0f) {
    for (size_t l = 0; l < params_.layers(); ++l) {
      velocityW_.emplace_back(params_.weights[l].size(), 0.0f);
      velocityB_.emplace_back(params_.biases[l].size(), 0.0f);
    }
  }
}

void CpuMlp::runForward(Pass& pass, std::span<const float> images, std::span<const int32_t> labels,
                        size_t scaleBatch) const {
  const std::vector<size_t>& sizes = params_.sizes;
  const size_t batch = labels.size();
  if (batch == 0) throw Error("cpu mlp: empty batch");
  if (images.size() != batch * sizes[0])
    throw Error(fmt::format("cpu mlp: {} input values for a batch of {} x {}", images.size(), batch,
                            sizes[0]));
  pass.batch = batch;
  pass.input = images;
  pass.hidden.clear();
  const size_t layers = params_.layers();
  std::vector<float> z;
  std::vector<float> tmp;
  for (size_t l = 0; l < layers; ++l) {
    const size_t m = sizes[l];
    const size_t n = sizes[l + 1];
    const float* a = pass.act(l);
    const float* w = params_.weights[l].data();
    const float* b = params_.biases[l].data();
    // z = a W as an fmaf chain over k from 0.0f per k-part (MatMulBlocked), parts added in order
    // (ReduceSumStrided), then + b (AddBias).
    z.assign(batch * n, 0.0f);
    if (half_) {
      // Both operands narrowed to float16, the product's parts multiples of 8 (MatMulAmpH).
      const std::vector<float> a16 = narrowed(a, batch * m), w16 = narrowed(w, m * n);
      const size_t parts = partsOf(halfSplits_.forward, l);
      for (size_t r = 0; r < batch; ++r)
        cpu::splitDot(m, parts, a16.data() + r * m, w16.data(), n, z.data() + r * n, n, tmp, 8);
    } else {
      const size_t parts = partsOf(splits_.forward, l);
      for (size_t r = 0; r < batch; ++r)
        cpu::splitDot(m, parts, a + r * m, w, n, z.data() + r * n, n, tmp);
    }
    for (size_t r = 0; r < batch; ++r)
      for (size_t j = 0; j < n; ++j) z[r * n + j] = z[r * n + j] + b[j];
    if (l + 1 < layers) {
      for (float& v : z) v = v > 0.0f ? v : 0.0f;  // Relu
      pass.hidden.push_back(z);
    }
  }
  pass.logits = z;
  // Softmax cross-entropy exactly as sw/codelets/nn/SoftmaxCrossEntropy.cpp, scale 1/batch.
  const float sc = 1.0f / static_cast<float>(scaleBatch ? scaleBatch : batch) * lossScale_;
  StepResult& res = pass.result;
  cpu::softmaxCrossEntropy(z, labels, sizes.back(), sc, pass.dz, res.rowLoss, res.correct);
  float total = 0.0f;
  for (float v : res.rowLoss) total += v;
  res.meanLoss = total / static_cast<float>(batch);
}

void CpuMlp::setHalf(float lossScale, HalfSplits splits) {
  int exponent = 0;
  if (!(lossScale > 0.0f) || std::isinf(lossScale) || std::frexp(lossScale, &exponent) != 0.5f)
    throw Error(fmt::format("cpu mlp: the loss scale {} is not a power of two", lossScale));
  half_ = true;
  lossScale_ = lossScale;
  halfSplits_ = std::move(splits);
}

void CpuMlp::setDynamicLossScale(uint32_t interval) {
  if (!half_) throw Error("cpu mlp: a dynamic loss scale needs setHalf first");
  if (interval == 0) throw Error("cpu mlp: the loss scale's growth interval must be at least 1");
  dynamic_ = true;
  interval_ = interval;
  good_ = skipped_ = 0;
}

void CpuMlp::update(size_t l, const std::vector<float>& gw, const std::vector<float>& gb,
                    float lr) {
  std::vector<float>& w = params_.weights[l];
  std::vector<float>& b = params_.biases[l];
  if (mu_ == 0.0f) {
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::fma(-lr, gw[i], w[i]);
    for (size_t j = 0; j < b.size(); ++j) b[j] = std::fma(-lr, gb[j], b[j]);
    return;
  }
  std::vector<float>& vw = velocityW_[l];
  std::vector<float>& vb = velocityB_[l];
  for (size_t i = 0; i < w.size(); ++i) {
    vw[i] = std::fma(mu_, vw[i], gw[i]);
    w[i] = std::fma(-lr, vw[i], w[i]);
  }
  for (size_t j = 0; j < b.size(); ++j) {
    vb[j] = std::fma(mu_, vb[j], gb[j]);
    b[j] = std::fma(-lr, vb[j], b[j]);
  }
}

void CpuMlp::runBackwardHalf(Pass& pass, Gradients* grads, bool update) {
  const std::vector<size_t>& sizes = params_.sizes;
  const size_t batch = pass.batch;
  const size_t layers = params_.layers();
  // Every gradient from the weights before the step; the updates after (Optimizer::update).
  std::vector<std::vector<float>> gws(layers), gbs(layers);
  const float inv = 1.0f / lossScale_;
  std::vector<float> dz = std::move(pass.dz), tmp;
  for (size_t l = layers; l-- > 0;) {
    const size_t m = sizes[l];
    const size_t n = sizes[l + 1];
    const std::vector<float> g16 = narrowed(dz.data(), dz.size());
    // dx = g16 w16^T (k = n), when there is a layer below.
    std::vector<float> dAct;
    if (l > 0) {
      const std::vector<float> w16 = narrowed(params_.weights[l].data(), m * n);
      std::vector<float> wt(n * m);
      for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < n; ++j) wt[j * m + i] = w16[i * n + j];
      dAct.assign(batch * m, 0.0f);
      const size_t parts = partsOf(halfSplits_.backward, l);
      for (size_t r = 0; r < batch; ++r)
        cpu::splitDot(n, parts, g16.data() + r * n, wt.data(), m, dAct.data() + r * m, m, tmp, 8);
    }
    // dW = a16^T g16 (k = the batch), db = the rows of the float32 dz added in order from row 0;
    // both still scaled.
    const std::vector<float> a16 = narrowed(pass.act(l), batch * m);
    std::vector<float> at(m * batch);
    for (size_t r = 0; r < batch; ++r)
      for (size_t i = 0; i < m; ++i) at[i * batch + r] = a16[r * m + i];
    std::vector<float>& gw = gws[l];
    gw.assign(m * n, 0.0f);
    const size_t parts = partsOf(halfSplits_.weight, l);
    for (size_t i = 0; i < m; ++i)
      cpu::splitDot(batch, parts, at.data() + i * batch, g16.data(), n, gw.data() + i * n, n, tmp,
                    8);
    std::vector<float>& db = gbs[l];
    db.assign(dz.begin(), dz.begin() + static_cast<std::ptrdiff_t>(n));
    for (size_t r = 1; r < batch; ++r)
      for (size_t j = 0; j < n; ++j) db[j] += dz[r * n + j];
    if (l > 0) {
      const float* act = pass.act(l);  // ReluGrad: act > 0 ? grad : 0
      dz.assign(batch * m, 0.0f);
      for (size_t i = 0; i < batch * m; ++i) dz[i] = act[i] > 0.0f ? dAct[i] : 0.0f;
    }
  }
  bool unscaled = false;
  if (dynamic_ && update) {
    // LossScaleUpdate: any infinity or NaN skips the step and halves the scale.
    bool finite = true;
    for (auto* gs : {&gws, &gbs})
      for (const std::vector<float>& g : *gs)
        for (float v : g) finite = finite && std::isfinite(v);
    if (!finite) {
      lossScale_ = lossScale_ * 0.5f;
      good_ = 0;
      ++skipped_;
      update = false;
    } else {
      if (mu_ != 0.0f) {
        // Momentum divides the gradients first (ScaleInPlaceByScalar), then updates at lr.
        for (size_t l = 0; l < layers; ++l) {
          for (float& v : gws[l]) v = v * inv;
          for (float& v : gbs[l]) v = v * inv;
          this->update(l, gws[l], gbs[l], lr_);
        }
        update = false;
        unscaled = true;
      }
      if (++good_ == interval_) {
        const float grown = lossScale_ * 2.0f;
        if (std::isfinite(grown)) lossScale_ = grown;
        good_ = 0;
      }
    }
  }
  for (size_t l = 0; l < layers && update; ++l) this->update(l, gws[l], gbs[l], lr_ * inv);
  if (grads != nullptr) {
    for (auto* gs : {&gws, &gbs})
      for (std::vector<float>& g : *gs)
        for (float& v : g) v = unscaled ? v : v * inv;  // ScaleInPlace
    grads->weights = std::move(gws);
    grads->biases = std::move(gbs);
  }
}

void CpuMlp::runBackward(Pass& pass, Gradients* grads, bool update) {
  if (half_) {
    runBackwardHalf(pass, grads, update);
    return;
  }
  const std::vector<size_t>& sizes = params_.sizes;
  const size_t batch = pass.batch;
  const size_t layers = params_.layers();
  if (grads != nullptr) {
    grads->weights.assign(layers, {});
    grads->biases.assign(layers, {});
  }
  std::vector<float> dz = std::move(pass.dz);
  for (size_t l = layers; l-- > 0;) {
    const size_t m = sizes[l];
    const size_t n = sizes[l + 1];
    const float* a = pass.act(l);
    std::vector<float>& w = params_.weights[l];
    std::vector<float>& b = params_.biases[l];
    // dx = dz W^T, an fmaf chain over the output units j from 0.0f (per k-part, parts added in
    // order), with W before its update.
    std::vector<float> dAct;
    if (l > 0) {
      std::vector<float> wt(n * m);
      for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < n; ++j) wt[j * m + i] = w[i * n + j];
      dAct.assign(batch * m, 0.0f);
      std::vector<float> tmp;
      const size_t parts = partsOf(splits_.backward, l);
      for (size_t r = 0; r < batch; ++r)
        cpu::splitDot(n, parts, dz.data() + r * n, wt.data(), m, dAct.data() + r * m, m, tmp);
    }
    // db: rows added in order, from row 0 (ReduceSumStrided).
    std::vector<float> db(dz.begin(), dz.begin() + static_cast<std::ptrdiff_t>(n));
    for (size_t r = 1; r < batch; ++r)
      for (size_t j = 0; j < n; ++j) db[j] += dz[r * n + j];
    std::vector<float> gw;
    if (grads != nullptr || (update && mu_ != 0.0f)) {
      gw.assign(m * n, 0.0f);  // x^T dz: an fmaf chain over the rows from 0.0f
      for (size_t r = 0; r < batch; ++r)
        for (size_t i = 0; i < m; ++i)
          fmaRow(a[r * m + i], dz.data() + r * n, gw.data() + i * n, n);
    }
    if (update && mu_ == 0.0f) {
      // W += x^T (-lr dz): Scale, then matmulAccumulate (fmaf chain over rows starting from W);
      // b = fmaf(-lr, db, b) (ScaledAddTo).
      std::vector<float> scaled(dz.size());
      for (size_t i = 0; i < dz.size(); ++i) scaled[i] = dz[i] * -lr_;
      for (size_t r = 0; r < batch; ++r)
        for (size_t i = 0; i < m; ++i)
          fmaRow(a[r * m + i], scaled.data() + r * n, w.data() + i * n, n);
      for (size_t j = 0; j < n; ++j) b[j] = std::fma(-lr_, db[j], b[j]);
    } else if (update) {
      this->update(l, gw, db, lr_);  // SgdMomentum: v = fmaf(mu, v, g), w = fmaf(-lr, v, w)
    }
    if (grads != nullptr) {
      grads->weights[l] = std::move(gw);
      grads->biases[l] = std::move(db);
    }
    if (l > 0) {
      const float* act = pass.act(l);  // ReluGrad: act > 0 ? grad : 0
      dz.assign(batch * m, 0.0f);
      for (size_t i = 0; i < batch * m; ++i) dz[i] = act[i] > 0.0f ? dAct[i] : 0.0f;
    }
  }
}

CpuMlp::StepResult CpuMlp::trainStep(std::span<const float> images,
                                     std::span<const int32_t> labels) {
  Pass pass;
  runForward(pass, images, labels);
  runBackward(pass, nullptr, true);
  return std::move(pass.result);
}

CpuMlp::StepResult CpuMlp::forward(std::span<const float> images,
                                   std::span<const int32_t> labels) const {
  Pass pass;
  runForward(pass, images, labels);
  return std::move(pass.result);
}

std::vector<float> CpuMlp::logits(std::span<const float> images) const {
  const size_t inputs = params_.sizes[0];
  if (images.size() % inputs != 0)
    throw Error(fmt::format("cpu mlp: {} input values is not a whole number of {}-value rows",
                            images.size(), inputs));
  Pass pass;
  runForward(pass, images, std::vector<int32_t>(images.size() / inputs, 0));
  return std::move(pass.logits);
}

CpuMlp::Gradients CpuMlp::gradients(std::span<const float> images,
                                    std::span<const int32_t> labels) const {
  Pass pass;
  runForward(pass, images, labels);
  CpuMlp copy = *this;  // runBackward needs a mutable object; nothing is updated
  Gradients g;
  copy.runBackward(pass, &g, false);
  return g;
}

CpuMlp::Gradients CpuMlp::replicaGradients(std::span<const float> images,
                                           std::span<const int32_t> labels, size_t globalBatch,
                                           StepResult* result) const {
  if (globalBatch < labels.size())
    throw Error(
        fmt::format("cpu mlp: a replica's share of {} rows is larger than the global batch of {}",
                    labels.size(), globalBatch));
  Pass pass;
  runForward(pass, images, labels, globalBatch);
  if (result != nullptr) *result = pass.result;
  CpuMlp copy = *this;  // runBackward needs a mutable object; nothing is updated
  Gradients g;
  copy.runBackward(pass, &g, false);
  return g;
}

CpuMlp::Gradients CpuMlp::sumInReplicaOrder(const std::vector<Gradients>& replicas) {
  if (replicas.empty()) throw Error("cpu mlp: no replicas to sum");
  Gradients s = replicas[0];
  for (size_t r = 1; r < replicas.size(); ++r) {
    const Gradients& g = replicas[r];
    if (g.weights.size() != s.weights.size() || g.biases.size() != s.biases.size())
      throw Error(fmt::format("cpu mlp: replica {} has {} layers of gradients, replica 0 {}", r,
                              g.weights.size(), s.weights.size()));
    for (size_t l = 0; l < s.weights.size(); ++l) {
      if (g.weights[l].size() != s.weights[l].size() || g.biases[l].size() != s.biases[l].size())
        throw Error(fmt::format(
            "cpu mlp: replica {}: layer {} gradients differ in size from replica 0's", r, l));
      for (size_t i = 0; i < s.weights[l].size(); ++i) s.weights[l][i] += g.weights[l][i];
      for (size_t i = 0; i < s.biases[l].size(); ++i) s.biases[l][i] += g.biases[l][i];
    }
  }
  return s;
}

void CpuMlp::applyGradients(const Gradients& sum) {
  const size_t layers = params_.layers();
  if (sum.weights.size() != layers || sum.biases.size() != layers)
    throw Error(fmt::format("cpu mlp: gradients of {} layers for a {}-layer network",
                            sum.weights.size(), layers));
  for (size_t l = 0; l < layers; ++l) {
    std::vector<float>& w = params_.weights[l];
    std::vector<float>& b = params_.biases[l];
    if (sum.weights[l].size() != w.size() || sum.biases[l].size() != b.size())
      throw Error(fmt::format(
          "cpu mlp: layer {}: {} weight and {} bias gradients for {} weights and {} biases", l,
          sum.weights[l].size(), sum.biases[l].size(), w.size(), b.size()));
    update(l, sum.weights[l], sum.biases[l], lr_);
  }
}

CpuMlp::Evaluation CpuMlp::evaluate(const LabelledImages& data) const {
  if (data.pixels != params_.sizes[0])
    throw Error(fmt::format("cpu mlp: images have {} pixels, the network {} inputs", data.pixels,
                            params_.sizes[0]));
  Evaluation e;
  constexpr size_t kChunk = 500;
  std::vector<uint32_t> idx;
  std::vector<float> images;
  std::vector<int32_t> labels;
  double lossSum = 0;
  for (size_t start = 0; start < data.count(); start += kChunk) {
    const size_t n = std::min(kChunk, data.count() - start);
    idx.resize(n);
    for (size_t i = 0; i < n; ++i) idx[i] = static_cast<uint32_t>(start + i);
    images.resize(n * data.pixels);
    labels.resize(n);
    Minibatcher::gather(data, idx, params_.inputScale, params_.inputOffset, images, labels);
    const StepResult r = forward(images, labels);
    e.correct += r.correct;
    for (float v : r.rowLoss) lossSum += v;
  }
  e.count = data.count();
  e.accuracy = e.count > 0 ? static_cast<double>(e.correct) / static_cast<double>(e.count) : 0.0;
  e.meanLoss = e.count > 0 ? lossSum / static_cast<double>(e.count) : 0.0;
  return e;
}

}  // namespace tessera::bench
