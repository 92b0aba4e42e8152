// A plain C++ CPU reference of the benchmark's training: the MLP of MlpParameters with ReLU,
// softmax cross-entropy (mean over the batch) and SGD, performing the device's operations in the
// device's order (docs/training.md, "The CPU reference"), so the two agree to the last bit
// wherever the device's matmul plans do not split the k dimension.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fashion_mnist.hpp"
#include "mlp_parameters.hpp"

namespace tessera::bench {

/// Trains and evaluates an MLP on the CPU.
class CpuMlp {
 public:
  /// Loss and correct predictions of one batch.
  struct StepResult {
    float meanLoss = 0;          ///< rowLoss summed left to right in float, divided by the batch
    uint32_t correct = 0;        ///< rows whose first maximal logit is the label
    std::vector<float> rowLoss;  ///< each row's loss, as the device's "loss" stream carries it
  };
  /// Accuracy and loss over a data set.
  struct Evaluation {
    size_t count = 0;
    size_t correct = 0;
    double accuracy = 0;  ///< correct / count
    double meanLoss = 0;  ///< row losses summed in double, divided by count
  };
  /// Gradients of the mean loss (same shapes as the parameters).
  struct Gradients {
    std::vector<std::vector<float>> weights;
    std::vector<std::vector<float>> biases;
  };

  /// How the device's matmuls split their k dimension (ops::MatMulPlan::k of each): the device
  /// sums k-parts of ceil(k / parts) terms, each an fmaf chain from 0.0f, then adds the parts in
  /// order. forward[l]: x_l W_l (k = sizes[l]); backward[l]: dz_l W_l^T (k = sizes[l+1], l >= 1).
  /// A missing entry means 1 (one chain over all of k).
  struct KSplits {
    std::vector<size_t> forward;
    std::vector<size_t> backward;
  };

  /// Train `params` with step size learningRate; momentum 0 is plain SGD (w -= lr * grad).
  CpuMlp(MlpParameters params, float learningRate, float momentum = 0.0f);

  /// Follow the device's k splits (default: none), for results equal to the device's bit for bit.
  void setKSplits(KSplits splits) { splits_ = std::move(splits); }

  /// The k splits of the three float16 products of each layer l (the device's
  /// ops::planMatMulHalf: parts are multiples of 8): forward[l] a16 w16 (k = sizes[l]),
  /// backward[l] g16 w16^T (k = sizes[l+1], l >= 1), weight[l] a16^T g16 (k = the batch).
  struct HalfSplits {
    std::vector<size_t> forward, backward, weight;
  };
  /// Mixed precision as MlpModel(..., half = true) trains with MlpConfig::lossScale = lossScale
  /// (docs/training.md, "Mixed precision"): each product's operands narrowed to float16
  /// (nearest-even) and accumulated in float32; the loss's gradient times lossScale, narrowed
  /// to float16 before each layer's two backward products; the update (SgdUpdate,
  /// w = fmaf(-lr', g, w), or SgdMomentumUpdate) takes the scaled gradients with the rate
  /// lr' = lr * (1 / lossScale) (Optimizer::update's gradScale; the velocity holds lossScale
  /// times its value); gradients() gives them divided by lossScale.
  void setHalf(float lossScale, HalfSplits splits);
  /// After setHalf: a dynamic loss scale starting at its lossScale, as MlpConfig::dynamicLossScale
  /// (ops::LossScaler): a step whose gradients hold an infinity or a NaN updates nothing and
  /// halves the scale; after `interval` finite steps in a row the scale doubles (unless that
  /// overflows). SGD takes the scaled gradients at lr * (1 / scale); momentum divides them first.
  void setDynamicLossScale(uint32_t interval);
  /// The loss scale the next step uses.
  float lossScale() const { return lossScale_; }
  /// Steps a dynamic loss scale skipped; finite steps in a row since its last change.
  uint32_t skippedSteps() const { return skipped_; }
  uint32_t goodSteps() const { return good_; }

  /// One SGD step on a batch (images [batch, inputs] already scaled, labels [batch]); returns the
  /// loss and correct count before the update, as the device reports them.
  StepResult trainStep(std::span<const float> images, std::span<const int32_t> labels);
  /// Loss and correct count of a batch without updating.
  StepResult forward(std::span<const float> images, std::span<const int32_t> labels) const;
  /// The logits ([batch, classes] row-major) of a batch of inputs ([batch, inputs]).
  std::vector<float> logits(std::span<const float> images) const;
  /// Gradients of the batch's mean loss (weight gradient: an fmaf chain over rows from 0).
  Gradients gradients(std::span<const float> images, std::span<const int32_t> labels) const;
  /// Data-parallel replicas (docs/training.md, "Replicas over MPI"): the gradients of one
  /// replica's share (images, labels) of a global minibatch of globalBatch images, i.e. of the
  /// loss summed over the share and divided by globalBatch; *result (if given) gets the share's
  /// row losses and correct count. Nothing is updated.
  Gradients replicaGradients(std::span<const float> images, std::span<const int32_t> labels,
                             size_t globalBatch, StepResult* result = nullptr) const;
  /// The replicas' gradients summed in replica order, as every replica sums them: s = g0, then
  /// s += g1, s += g2, ... element by element.
  static Gradients sumInReplicaOrder(const std::vector<Gradients>& replicas);
  /// The update of the replica step from the summed gradients: plain SGD w = fmaf(-lr, g, w) and
  /// b = fmaf(-lr, gb, b) (ScaledAddTo); with momentum v = fmaf(mu, v, g), w = fmaf(-lr, v, w).
  void applyGradients(const Gradients& sum);
  /// Accuracy and mean loss on a data set (pixels scaled by the parameters' input scale and
  /// offset).
  Evaluation evaluate(const LabelledImages& data) const;

  /// The current parameters.
  const MlpParameters& parameters() const { return params_; }
  /// The current parameters, for changes between steps.
  MlpParameters& parameters() { return params_; }
  /// The step size.
  float learningRate() const { return lr_; }
  /// Change the step size (as the host rewrites the device's "lr" between steps).
  void setLearningRate(float lr) { lr_ = lr; }
  /// The momentum (0: plain SGD).
  float momentum() const { return mu_; }

 private:
  struct Pass;
  void runForward(Pass& pass, std::span<const float> images, std::span<const int32_t> labels,
                  size_t scaleBatch = 0) const;
  void runBackward(Pass& pass, Gradients* grads, bool update);
  void runBackwardHalf(Pass& pass, Gradients* grads, bool update);
  void update(size_t layer, const std::vector<float>& gw, const std::vector<float>& gb, float lr);

  MlpParameters params_;
  float lr_;
  float mu_;
  KSplits splits_;
  bool half_ = false;
  float lossScale_ = 1.0f;
  bool dynamic_ = false;
  uint32_t interval_ = 0, good_ = 0, skipped_ = 0;
  HalfSplits halfSplits_;
  std::vector<std::vector<float>> velocityW_;
  std::vector<std::vector<float>> velocityB_;
};

}  // namespace tessera::bench
