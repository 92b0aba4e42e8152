// Training an ONNX model on Fashion-MNIST (docs/onnx.md, "tessera-onnx train"): the model is one
// more Model of the benchmark (bench/model.hpp), so the trainer, the minibatch order, the MLPerf
// log, the JSON result and the progress bar are tessera-bench train's. Lives in bench/ because it
// uses the benchmark's trainer; library tessera_onnx_train.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/device.hpp"

namespace tessera::onnx {

/// Options of tessera-onnx train.
struct TrainOptions {
  std::string data = "fashion-mnist";  ///< the data set (the only one: Fashion-MNIST)
  std::string dataDir;                 ///< "" = the Debian package's directory
  uint32_t epochs = 1;
  size_t batch = 32;
  std::optional<float> learningRate;  ///< unset: 0.05 (sgd), 0.01 (momentum), 0.001 (adam)
  /// "constant" or "cosine" (tessera-bench train's --lr-schedule: from the rate to 0 over
  /// epochs x steps per epoch)
  std::string lrSchedule = "constant";
  std::string optimizer = "sgd";  ///< "sgd", "momentum" or "adam"
  std::optional<float> momentum;  ///< momentum only (default 0.9)
  uint32_t seed = 1;              ///< the minibatch order is tessera-bench's for this seed
  std::string device = "model";
  unsigned tiles = 16;
  uint32_t tileMemKiB = 0;  ///< 0: 624 KiB on the model, the backend's own elsewhere
  ModelEngine modelEngine = defaultModelEngine();  ///< the model's engine (DeviceOptions)
  uint64_t steps = 0;           ///< 0: whole epochs; else at most this many steps per epoch
  size_t evalImages = 0;        ///< test images evaluated after each epoch (0: all 10,000)
  double targetAccuracy = 1.0;  ///< stop after the epoch that reaches it (1: run every epoch)
  std::string out;              ///< the trained model (.onnx); "" = not written
  std::string logDir = "tessera-onnx-train";  ///< mlperf.log, result.json, pictures
  std::string report;       ///< "" = none; else the browser report's HTML file (docs/report.md)
  uint32_t traceSteps = 0;  ///< steps traced superstep by superstep
  bool quiet = false;       ///< no progress bar or summary
  /// Training checkpoints every this many steps and at epoch ends (tessera-bench train's
  /// --checkpoint-every; 0: none unless checkpointDir or resumeDir is set).
  uint64_t checkpointEvery = 0;
  std::string checkpointDir;  ///< "" = logDir/checkpoints (resumeDir when resuming)
  std::string resumeDir;      ///< continue from the newest checkpoint in this directory
};

/// What a training run gave.
struct TrainResult {
  std::vector<float> losses;  ///< mean loss of each step
  double accuracy = 0;        ///< test accuracy after the last epoch
  uint64_t steps = 0;
  std::string resultPath;   ///< result.json
  int stoppedBySignal = 0;  ///< SIGINT/SIGTERM ended the run at a checkpoint (nothing else is set)
};

/// Train the model at modelPath (first output: logits over 10 classes; softmax cross-entropy,
/// mean over the batch) and write the trained model to options.out. Throws tessera::Error.
TrainResult train(const std::string& modelPath, const TrainOptions& options);

}  // namespace tessera::onnx
