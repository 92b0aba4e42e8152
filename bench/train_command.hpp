// tessera-bench train: the Fashion-MNIST training benchmark of every model (docs/training.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/device.hpp"

namespace tessera::mpi {
class MpiComm;
}  // namespace tessera::mpi

namespace tessera::bench {

class Model;
struct ModelParameters;

/// Options of tessera-bench train (defaults are the benchmark's).
struct TrainOptions {
  std::string model = "mlp";  ///< "mlp", "lenet" (model.hpp, makeModel)
  /// A model object to train instead of makeModel(model) (tessera-onnx train's ONNX model).
  std::shared_ptr<const Model> modelObject;
  /// Called with the trained parameters (.npz layouts) at the end of the run.
  std::function<void(const ModelParameters&)> onTrained;
  std::string device = "model";
  unsigned tiles = 16;
  /// "on" or "off": CompileOptions::mergeComputeSets (docs/compiler.md, "Merged compute sets").
  std::string mergeComputeSets = "on";
  std::string matrixUnit;                          ///< "", "on" or "off": DeviceOptions::matrixUnit
  ModelEngine modelEngine = defaultModelEngine();  ///< DeviceOptions::modelEngine
  uint32_t tileMemKiB = 0;  ///< 0: the model's default on the model, the backend's own elsewhere
  size_t batch = 32;
  uint32_t epochs = 1;
  std::vector<size_t> hidden = {128};  ///< the MLP's hidden layers
  /// "fp32", or "fp16": mixed precision (docs/training.md, "Mixed precision"), the MLP's products
  /// in float16 on the matrix unit with float32 accumulation and float32 master weights.
  std::string precision = "fp32";
  /// The static loss scale, a power of two; 0: the precision's default (1 for fp32, 1024 for fp16).
  float lossScale = 0;
  /// With dynamicLossScale: the initial scale, a power of two (0: 65536, PyTorch's GradScaler's).
  float lossScaleInit = 0;
  /// `--loss-scale dynamic` (fp16 only): halve the scale and skip the step when a gradient
  /// overflows, double it after lossScaleInterval finite steps in a row (MlpConfig).
  bool dynamicLossScale = false;
  uint32_t lossScaleInterval = 2000;
  /// "sgd", "momentum" or "adam"; "" = "momentum" when --momentum > 0 is given, "sgd" when
  /// --momentum 0 is, else the model's default (ModelDefaults).
  std::string optimizer;
  std::optional<float> learningRate;  ///< unset: the model's default for the optimizer
  /// "constant" or "cosine": the rate of each step (train/lr_schedule.hpp); cosine decays from
  /// the rate to zero over epochs x steps per epoch.
  std::string lrSchedule = "constant";
  /// Scale the input to zero mean and unit variance over the training images (input_scale and
  /// input_offset from their mean and standard deviation) instead of pixel / 255.
  bool inputStandardize = false;
  std::optional<float> momentum;                    ///< unset: the model's default (momentum only)
  float weightDecay = 0.0f;                         ///< L2 weight decay (PyTorch's weight_decay)
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;  ///< Adam
  double targetAccuracy = 0.85;
  uint64_t maxSteps = 0;  ///< 0 = whole epochs; else at most this many steps per epoch run
  uint32_t seed = 1;
  std::string outDir = "tessera-train";
  std::string dataDir;  ///< "" = the Debian package's directory
  std::string saveWeights, loadWeights;
  std::string reportPath;      ///< "" = none; else the browser report (docs/report.md), rank 0 only
  double clockMHz = 0;         ///< nominal clock for device time; 0 = the chip's (params.json)
  uint32_t traceSteps = 1;     ///< training steps traced superstep by superstep
  size_t evalImages = 0;       ///< test images evaluated each epoch (0 = all 10,000)
  bool quiet = false;          ///< no progress output
  bool requireTarget = false;  ///< exit code 3 when the target accuracy is not reached
  unsigned replicas = 1;  ///< data-parallel replicas, one MPI rank each; batch is the global batch
  double linkGBps = 160;  ///< modelled chip-to-chip bandwidth, GB/s each way per chip
  double linkStepUs = 1.0;  ///< modelled latency of one ring step of the all-reduce, microseconds
  /// Save a training checkpoint every this many steps and at every epoch end (0: at epoch ends
  /// and on SIGINT/SIGTERM only, when checkpointDir or resumeDir is set; docs/training.md).
  uint64_t checkpointEvery = 0;
  std::string checkpointDir;  ///< "" = outDir/checkpoints (resumeDir when resuming)
  std::string resumeDir;      ///< continue from the newest checkpoint in this directory
};

/// The replicas of a job: the one MPI communicator of host/mpi (mpi_comm.hpp).
using ReplicaComm = mpi::MpiComm;

/// Run the benchmark; returns the process exit code: 0 when it ran (the run_stop status says
/// whether the target was reached), 3 when requireTarget is set and it was not. Throws
/// tessera::Error on bad input. With replicas > 1, comm holds that many ranks, each of which
/// calls runTrain with the same options (the device may differ); rank 0 writes into outDir, rank
/// N into outDir/rank-N.
int runTrain(const TrainOptions& options, ReplicaComm* comm = nullptr);

}  // namespace tessera::bench
