// Runs the benchmark's training graph (mlp_model.hpp; any model of model.hpp, the MLP by default)
// on a Device: compiles it for the device's chip, loads it once, and then trains and evaluates in
// runs of the compiled program, the weights staying on the device between runs
// (Engine::restart). Data comes from callbacks on the Engine's prefetch thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "mlp_model.hpp"
#include "model_parameters.hpp"
#include "tessera/compiler.hpp"
#include "tessera/device.hpp"
#include "tessera/engine.hpp"

namespace tessera::bench {

/// Fills one minibatch (images: batch x inputs floats, labels: batch int32) for step `step`
/// (counted over the whole training, or over the whole evaluation); runs on the prefetch thread.
using BatchSource =
    std::function<void(uint64_t step, std::span<float> images, std::span<int32_t> labels)>;

/// How data-parallel replicas combine a training step (MlpConfig::gradientSync). Both run on the
/// thread in MlpTrainer::run, once per step each, in the same order on every replica, so that an
/// implementation may be a collective operation (host/mpi/mpi_comm.hpp).
struct ReplicaHooks {
  /// summed = the sum of every replica's `local` gradients; the same bits on every replica.
  std::function<void(std::span<const float> local, std::span<float> summed)> sumGradients;
  /// all = every replica's `local` one after the other, in replica order.
  std::function<void(std::span<const float> local, std::span<float> all)> gather;
};

/// Per-tile cycles of one run, split the BSP way.
struct TileCycles {
  uint64_t compute = 0;
  uint64_t syncWait = 0;
  uint64_t exchange = 0;
};

/// What one run measured.
struct MlpRunResult {
  std::vector<float> stepLoss;  ///< mean loss of each training step (over every replica's rows)
  std::vector<uint32_t>
      stepCorrect;                ///< correct predictions of each training step (before its update)
  uint64_t evalCorrect = 0;       ///< correct predictions over the evaluation batches
  uint64_t cycles = 0;            ///< chip cycles of the run
  uint64_t trainCycles = 0;       ///< of which before the first evaluation batch arrived
  uint64_t evalCycles = 0;        ///< and from there to the end
  std::vector<TileCycles> tiles;  ///< per tile
  EngineStats engine;             ///< host-side figures (cumulative since the load)
  double replicaSeconds = 0;   ///< host time in the ReplicaHooks this run (gradient sums, gathers)
  uint64_t gradientBytes = 0;  ///< bytes of one step's gradients (0 without gradientSync)
  bool stopped = false;  ///< the sync hook ended the run at a host sync (only a checkpoint goes on)
};

/// The host side of a run in progress at a host sync: what a training checkpoint keeps beside the
/// chip's state to continue the run (MlpTrainer::resume).
struct MlpRunState {
  std::vector<float> stepLoss;           ///< the run's step losses so far
  std::vector<uint32_t> stepCorrect;     ///< and correct counts
  uint64_t evalCorrect = 0;              ///< correct predictions of the evaluation so far
  std::optional<uint64_t> evalStart;     ///< chip cycle of the run's first evaluation host sync
  uint64_t stepsDone = 0;                ///< training steps over all runs
  std::vector<uint64_t> streamOffsets;   ///< Engine::streamOffsets()
  std::vector<uint64_t> hostSyncCounts;  ///< Engine::hostSyncCounts()
  std::vector<float> gradientSum;        ///< gradientSync: the summed gradients not yet sent back
  uint64_t gradientSteps = 0;            ///< gradientSync: steps whose gradients were summed
  EngineStats engine;                    ///< the Engine's figures since the first load
};

/// The compiled training graph on one device.
class MlpTrainer {
 public:
  /// Compile config for dev's chip and load it. trainSteps and evalSteps are per run.
  MlpTrainer(Device& dev, const MlpConfig& config);
  ~MlpTrainer();

  /// The compile report.
  const CompileReport& report() const;
  /// The configuration.
  const MlpConfig& config() const;
  /// Write the parameters: weights[l] is fan_in x fan_out row-major, biases[l] fan_out.
  void setParameters(const std::vector<std::vector<float>>& weights,
                     const std::vector<std::vector<float>>& biases);
  /// Read the parameters.
  void parameters(std::vector<std::vector<float>>& weights,
                  std::vector<std::vector<float>>& biases);
  /// Write any model's parameters (its parameterShapes(), .npz layouts; transposed where the
  /// device holds the transpose); throws naming the array whose shape differs.
  void setParameters(const ModelParameters& params);
  /// Read any model's parameters in .npz layouts (the input scaling left at its default).
  ModelParameters modelParameters();
  /// The device.
  Device& device();
  /// Id of the host sync that brings each training minibatch's images (0 without training steps).
  uint32_t trainSyncId() const;
  /// The graph's matmuls run on the matrix unit (the device has it and the graph fit the tiles
  /// with its layouts; compileMlp).
  bool usesMatrixUnit() const;
  /// A dynamic loss scale's state on the device (MlpConfig::dynamicLossScale), between runs.
  struct LossScaleState {
    float scale = 0;      ///< the scale the next step's loss is multiplied by
    int32_t goodRun = 0;  ///< finite steps in a row since the last overflow or growth
    int32_t skipped = 0;  ///< steps whose update was skipped (their gradients overflowed)
  };
  /// The device's dynamic loss scale (nothing without one).
  std::optional<LossScaleState> lossScaleState();
  /// When the device has the unit but the graph did not fit its tiles with the unit's layouts:
  /// the out-of-memory message of that build (the scalar codelets run instead); else empty.
  const std::string& matrixUnitRefusal() const;
  /// Called at every host sync and SyncBreak stop of the runs (after the trainer's own
  /// bookkeeping), e.g. to read the tiles' counters for a trace; turn on Device::setSyncBreak to
  /// see every sync.
  void setStopObserver(std::function<void(const RunResult&)> observer);
  /// Give training step s (counted over all runs, from 0) the learning rate learningRateAt(s):
  /// written into the device's "lr" at the host sync that brings the step's images, before its
  /// update runs and before a checkpoint of that sync (docs/training.md, "Learning-rate
  /// schedule"). Unset, "lr" keeps config().learningRate or what the caller wrote.
  void setLearningRateSchedule(std::function<float(uint64_t step)> learningRateAt);
  /// Called on the caller's thread after each training step's loss arrived: (step counted over all
  /// runs, mean loss of the step).
  void setStepObserver(std::function<void(uint64_t step, float loss)> observer);
  /// How replicas combine steps; needed before the first run when config().replicas > 1 (one
  /// replica sums and gathers by itself).
  void setReplicaHooks(ReplicaHooks hooks);
  /// Called at every host sync after its stream copies, before the device is released (the point
  /// of a checkpoint); returning false ends run() there with MlpRunResult::stopped.
  void setSyncHook(std::function<bool(const RunResult&)> hook);
  /// The run's host-side state; meaningful in the sync hook.
  MlpRunState runState() const;
  /// Training minibatches the device has taken (over all runs); meaningful in the sync hook.
  uint64_t trainBatchesTaken() const;
  /// The chip's checkpoint (tessera/checkpoint.hpp) with appData; only in the sync hook.
  std::vector<uint8_t> saveCheckpoint(std::span<const uint8_t> appData);
  /// Restore a checkpoint saved in the sync hook of a trainer of the same configuration, with the
  /// run state of that moment: the next run() continues that run. Throws tessera::Error if the
  /// checkpoint does not fit the device.
  void resume(std::span<const uint8_t> checkpoint, const MlpRunState& state);
  /// One run: config().trainSteps training steps from `train`, then config().evalSteps evaluation
  /// batches from `eval`. Throws on a trap or if the chip does not halt within maxCycles.
  MlpRunResult run(const BatchSource& train, const BatchSource& eval,
                   uint64_t maxCycles = ~uint64_t{0});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::bench
