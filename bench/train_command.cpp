// tessera-bench train (docs/training.md): Fashion-MNIST through any model of model.hpp (the MLP by
// default) compiled for any device, reported like MLPerf. The device trains epoch runs of the
// compiled program (its weights stay on it); the host prepares minibatches on the Engine's prefetch
// thread and writes the log, the result, the per-tile trace and the pictures.
#include "train_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "file_io.hpp"
#include "mlp_trainer.hpp"
#include "mpi_comm.hpp"
#include "report_html.hpp"
#include "tessera/checkpoint.hpp"
#include "tessera/chip_params.h"
#include "tessera/error.hpp"
#include "tessera/model_jit.hpp"
#include "train/all_reduce_model.hpp"
#include "train/chrome_trace.hpp"
#include "train/fashion_mnist.hpp"
#include "train/lr_schedule.hpp"
#include "train/minibatcher.hpp"
#include "train/mlperf_logger.hpp"
#include "train/model_parameters.hpp"
#include "train/npz_file.hpp"
#include "train/progress_bar.hpp"
#include "train/svg_chart.hpp"
#include "training_checkpoint.hpp"

namespace tessera::bench {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Minibatches by global step for the prefetch thread: the Engine may ask for a stream's next step
// before another stream's current one, so a few recent steps are kept.
// With replicas, mb makes global minibatches and this replica takes rows [first, first + rows).
class TrainBatches {
 public:
  TrainBatches(Minibatcher& mb, size_t batch, size_t pixels, size_t first, size_t rows)
      : mb_(mb), batch_(batch), pixels_(pixels), first_(first), rows_(rows) {}
  void fill(uint64_t step, std::span<float> images, std::span<int32_t> labels) {
    std::lock_guard lock(mutex_);
    while (made_ <= step) {
      Entry& e = cache_[made_];
      e.images.resize(batch_ * pixels_);
      e.labels.resize(batch_);
      mb_.next(e.images, e.labels);
      ++made_;
      while (cache_.size() > 8) cache_.erase(cache_.begin());
    }
    auto it = cache_.find(step);
    if (it == cache_.end())
      throw Error(fmt::format("training batch {} was asked for too late", step));
    const auto& e = it->second;
    std::copy_n(e.images.begin() + static_cast<std::ptrdiff_t>(first_ * pixels_), rows_ * pixels_,
                images.begin());
    std::copy_n(e.labels.begin() + static_cast<std::ptrdiff_t>(first_), rows_, labels.begin());
  }

 private:
  struct Entry {
    std::vector<float> images;
    std::vector<int32_t> labels;
  };
  Minibatcher& mb_;
  size_t batch_, pixels_, first_, rows_;
  std::mutex mutex_;
  std::map<uint64_t, Entry> cache_;
  uint64_t made_ = 0;
};

// Superstep trace of the first traced steps: at every stop, each tile's counters since the last.
class SuperstepTracer {
 public:
  SuperstepTracer(Device& dev, ChromeTrace& trace, uint32_t trainSyncId, uint32_t steps)
      : dev_(dev), trace_(trace), trainSync_(trainSyncId), steps_(steps), prev_(dev.info().tiles) {}
  void onStop(const RunResult& r) {
    if (done_) return;
    const unsigned tiles = dev_.info().tiles;
    for (unsigned t = 0; t < tiles; ++t) {
      const TileStats s = dev_.stats(t);
      const uint64_t dx = s.exchangeCycles - prev_[t].exchangeCycles;
      const uint64_t dw = s.syncWaitCycles - prev_[t].syncWaitCycles;
      const uint64_t span = r.cycles - last_;
      // The superstep index: the n-th stop is the program's n-th sync (internal or host) in the
      // order it runs, which is how the browser report gives the program tree its cycles.
      if (dx) trace_.addInterval(t, ChromeTrace::Phase::Exchange, last_, dx, "", superstep_);
      if (span > dx + dw)
        trace_.addInterval(t, ChromeTrace::Phase::Compute, last_ + dx, span - dx - dw, "",
                           superstep_);
      if (dw)
        trace_.addInterval(t, ChromeTrace::Phase::SyncWait, r.cycles - dw, dw, "", superstep_);
      prev_[t] = s;
    }
    if (r.reason == StopReason::HostSync) {
      // Host I/O takes no chip cycles (the chip waits stopped): a one-cycle marker on the host.
      trace_.addHostInterval(fmt::format("host sync {}", r.hostSyncId), r.cycles, 1, superstep_);
      if (r.hostSyncId == trainSync_ && ++trainSyncs_ > steps_) {
        dev_.setSyncBreak(false);
        done_ = true;
      }
    } else if (r.reason == StopReason::SyncBreak) {
      trace_.addSyncMarker(r.hostSyncId, r.cycles, superstep_);
    }
    last_ = r.cycles;
    ++superstep_;
  }
  // What a checkpoint keeps; the counters at the last stop are the restored device's own.
  nlohmann::json state() const {
    return {{"syncs", trainSyncs_}, {"done", done_}, {"last", last_}, {"superstep", superstep_}};
  }
  void restore(const nlohmann::json& j) {
    trainSyncs_ = j.at("syncs").get<uint32_t>();
    done_ = j.at("done").get<bool>();
    last_ = j.at("last").get<uint64_t>();
    superstep_ = j.at("superstep").get<int64_t>();
    for (unsigned t = 0; t < prev_.size(); ++t) prev_[t] = dev_.stats(t);
  }

 private:
  Device& dev_;
  ChromeTrace& trace_;
  uint32_t trainSync_;
  uint32_t steps_;
  std::vector<TileStats> prev_;
  uint64_t last_ = 0;
  uint32_t trainSyncs_ = 0;
  int64_t superstep_ = 0;
  bool done_ = false;
};

// What every phase after the option checks reads: this rank's options and the run's shape.
struct TrainContext {
  TrainOptions o;  // this rank's: rank N writes into outDir/rank-N, quietly
  unsigned replicas = 1;
  unsigned rank = 0;
  size_t localBatch = 0;  // this replica's share of each global minibatch
  double clockHz = 0;
  size_t testCount = 0;
  std::shared_ptr<const Model> model;
  std::string optimizer;  // resolved: "sgd", "momentum" or "adam"
  MlpConfig cfg;
};

// What the epoch runs add up, for the result and the summary.
struct TrainTotals {
  std::vector<SvgChart::Point> lossCurve, accCurve;
  std::vector<TileCycles> tileTotals;
  uint64_t trainCycles = 0, evalCycles = 0, steps = 0;
  double accuracy = 0, timeToTrain = -1, cyclesToTrain = 0;
  std::string status = "aborted";
  double trainWall = 0, replicaSeconds = 0, runWall = 0;
  uint64_t gradientBytes = 0;
  EngineStats engine;
  uint32_t epochsRun = 0;
  int interruptedBy = 0;       // the signal that ended the run at a checkpoint (0: none)
  std::string lastCheckpoint;  // the newest checkpoint this process saved
  uint64_t checkpointsSaved = 0;
  size_t checkpointBytes = 0;                           // of the last one
  double checkpointSeconds = 0;                         // all saves, wall
  std::optional<MlpTrainer::LossScaleState> lossScale;  // a dynamic one's state at the end
};

// The BSP breakdown and the modelled inter-chip all-reduce, from the totals.
struct TrainFigures {
  unsigned tiles = 0;
  uint64_t sumCompute = 0, sumSync = 0, sumExchange = 0;
  double samples = 0, cyclesPerStep = 0;
  AllReduceModel links;
  double interChipPerStep = 0;
  uint64_t interChipCycles = 0, sumInterChip = 0;
  double allTileCycles = 0, chipSecondsPerStep = 0, deviceStepSeconds = 0, deviceSeconds = 0;
  // The FLOPs of one training step on one chip (the compile report's count of the "train" body;
  // 0 when the program has none) and the chip's fp32 peak at the nominal clock.
  double flopsPerStep = 0, peakFlopsPerSecond = 0;
  unsigned peakFlopsPerCycle = 0;
  double pct(uint64_t v) const {
    return allTileCycles > 0 ? 100.0 * static_cast<double>(v) / allTileCycles : 0.0;
  }
};

// An IPU Mk2's fp32 peak: Graphcore's POD64 datasheet gives 3.994 PFLOPS fp32 for 64 IPUs, i.e.
// 32 FLOP per cycle on each of 1,472 tiles at about 1.325 GHz.
constexpr double kIpuMk2Fp32PeakFlops = 3.994e15 / 64;

// Floating-point values go into a checkpoint as their bits (std::bit_cast), so that a resumed
// run continues with exactly the numbers of the uninterrupted one.
constexpr const char* kCheckpointFormat = "tessera-train-checkpoint";
constexpr uint32_t kCheckpointVersion = 1;

// The checks on the options and the MPI ranks; returns the replica count.
unsigned checkTrainOptions(const TrainOptions& opt, ReplicaComm* comm) {
  if (opt.batch == 0 || opt.epochs == 0)
    throw Error("train: --batch and --epochs must be at least 1");
  const unsigned replicas = std::max(1u, opt.replicas);
  if (replicas > 1 || (comm && comm->size() > 1)) {
    if (!comm || static_cast<unsigned>(comm->size()) != replicas) {
      throw Error(fmt::format(
          "train: --replicas {} but {} processes were started (mpirun -np {} tessera-bench train "
          "--replicas {} ...)",
          replicas, comm ? comm->size() : 1, replicas, replicas));
    }
    if (opt.batch % replicas != 0) {
      throw Error(fmt::format("train: the global batch {} is not a multiple of --replicas {}",
                              opt.batch, replicas));
    }
    // Every replica must train the same network on the same data; only the device may differ.
    comm->checkSame(
        "options",
        fmt::format("model {} batch {} epochs {} hidden {} optimizer '{}' lr {} ({}) "
                    "standardize {} precision {} loss-scale {} momentum {} "
                    "weight-decay {} betas {},{} eps {} target {} max-steps {} seed {} data '{}' "
                    "load '{}' eval-images {} tiles {} tile-mem {} checkpoint-every {} "
                    "checkpoints {} resume {}",
                    opt.model, opt.batch, opt.epochs, fmt::join(opt.hidden, ","), opt.optimizer,
                    opt.learningRate ? fmt::format("{}", *opt.learningRate) : "default",
                    opt.lrSchedule, opt.inputStandardize, opt.precision,
                    fmt::format("{}{}/{}/{}", opt.dynamicLossScale ? "dynamic " : "", opt.lossScale,
                                opt.lossScaleInit, opt.lossScaleInterval),
                    opt.momentum ? fmt::format("{}", *opt.momentum) : "default", opt.weightDecay,
                    opt.beta1, opt.beta2, opt.eps, opt.targetAccuracy, opt.maxSteps, opt.seed,
                    opt.dataDir, opt.loadWeights, opt.evalImages, opt.tiles, opt.tileMemKiB,
                    opt.checkpointEvery, !opt.checkpointDir.empty(), !opt.resumeDir.empty()));
  }
  return replicas;
}

// The optimizer of the options: --optimizer, else what --momentum implies, else the model's.
std::string optimizerName(const TrainOptions& o, const ModelDefaults& d) {
  if (!o.optimizer.empty()) return o.optimizer;
  if (o.momentum) return *o.momentum > 0.0f ? "momentum" : "sgd";
  return d.optimizer;
}

// The network of the options, with this replica's share of the batch (steps are set later).
MlpConfig networkConfig(const TrainContext& ctx) {
  const ModelDefaults d = ctx.model->defaults();
  MlpConfig cfg;
  cfg.model = ctx.model;
  cfg.inputs = ctx.model->inputs();
  cfg.hidden = ctx.o.hidden;
  cfg.classes = ctx.model->classes();
  cfg.batch = ctx.localBatch;
  cfg.replicas = ctx.replicas;
  cfg.gradientSync = ctx.replicas > 1;
  cfg.learningRate = ctx.o.learningRate.value_or(d.learningRate(ctx.optimizer));
  using Kind = autodiff::OptimizerConfig::Kind;
  cfg.optimizer = ctx.optimizer == "sgd"        ? Kind::Sgd
                  : ctx.optimizer == "momentum" ? Kind::Momentum
                                                : Kind::Adam;
  cfg.momentum = ctx.optimizer == "momentum" ? ctx.o.momentum.value_or(d.momentum) : 0.0f;
  cfg.weightDecay = ctx.o.weightDecay;
  cfg.mergeComputeSets = ctx.o.mergeComputeSets != "off";
  cfg.beta1 = ctx.o.beta1;
  cfg.beta2 = ctx.o.beta2;
  cfg.eps = ctx.o.eps;
  cfg.lossScale = ctx.o.dynamicLossScale
                      ? (ctx.o.lossScaleInit > 0 ? ctx.o.lossScaleInit : 65536.0f)
                  : ctx.o.lossScale > 0        ? ctx.o.lossScale
                  : ctx.model->halfPrecision() ? 1024.0f
                                               : 1.0f;
  cfg.dynamicLossScale = ctx.o.dynamicLossScale;
  cfg.lossScaleInterval = ctx.o.lossScaleInterval;
  return cfg;
}

// The starting parameters: seeded, or loaded from --load-weights and checked against the model.
ModelParameters initialParameters(const TrainOptions& o, const Model& model,
                                  const FashionMnist& data) {
  if (o.loadWeights.empty()) {
    ModelParameters p = model.initialize(o.seed);
    if (o.inputStandardize) {
      const Standardization z = standardization(data.train());
      p.inputScale = z.scale;
      p.inputOffset = z.offset;
    }
    return p;
  }
  if (o.inputStandardize) {
    throw Error(
        fmt::format("train: --input-standardize with --load-weights: {} carries its own "
                    "input_scale and input_offset",
                    o.loadWeights));
  }
  // Only the model's arrays are read, each at most its expected size, so a file cannot make the
  // loader decode what the network does not use (docs/limits.md, "Files").
  std::map<std::string, uint64_t> wanted{{"input_scale", NpzFile::maxNpyBytes(1)},
                                         {"input_offset", NpzFile::maxNpyBytes(1)}};
  for (const ParameterShape& s : model.parameterShapes())
    wanted[s.name] = NpzFile::maxNpyBytes(s.size());
  return ModelParameters::fromNpz(NpzFile::load(o.loadWeights, &wanted), model.parameterShapes(),
                                  o.loadWeights);
}

// modelKiB: the model's tile memory when --tile-mem is not given (0: the network's default).
std::unique_ptr<Device> openTrainDevice(const TrainOptions& o, const Model& model,
                                        uint32_t modelKiB = 0) {
  DeviceOptions dopt;
  dopt.tiles = o.tiles;
  if (!o.matrixUnit.empty()) dopt.matrixUnit = o.matrixUnit == "on";
  dopt.modelEngine = o.modelEngine;
  if (o.tileMemKiB)
    dopt.tileMemBytes = o.tileMemKiB * 1024;
  else if (o.device == "model")
    dopt.tileMemBytes = (modelKiB ? modelKiB : model.defaults().modelTileMemKiB) * 1024;
  return openDevice(o.device, dopt);
}

// The largest tile memory the model grows to by itself: an IPU Mk2 tile's 624 KiB.
constexpr uint32_t kLargestAutoTileKiB = 624;

// "1024", or "dynamic from 65536, interval 2000".
std::string lossScaleText(const MlpConfig& c) {
  return c.dynamicLossScale
             ? fmt::format("dynamic from {}, interval {}", c.lossScale, c.lossScaleInterval)
             : fmt::format("{}", c.lossScale);
}

// What a resumed run must share with the saved one: everything that decides the bits it computes
// (floating-point values as fmt's shortest round-trip text: equal text is equal bits)
// (the device may differ: a checkpoint moves between backends; the chip's configuration is
// checked by the chip checkpoint itself).

nlohmann::ordered_json optionsRecord(const TrainContext& ctx) {
  const TrainOptions& o = ctx.o;
  nlohmann::ordered_json shapes;
  for (const ParameterShape& s : ctx.model->parameterShapes())
    shapes.push_back(fmt::format("{} ({})", s.name, fmt::join(s.shape, ", ")));
  return {{"model", ctx.model->name()},
          {"parameters", shapes},
          {"replicas", ctx.replicas},
          {"batch", o.batch},
          {"epochs", o.epochs},
          {"optimizer", ctx.optimizer},
          {"lr", fmt::format("{}", ctx.cfg.learningRate)},
          {"lr-schedule", o.lrSchedule},
          {"input-standardize", o.inputStandardize},
          {"precision", o.precision},
          {"loss-scale", lossScaleText(ctx.cfg)},
          {"momentum", fmt::format("{}", ctx.cfg.momentum)},
          {"weight-decay", fmt::format("{}", ctx.cfg.weightDecay)},
          {"adam-beta1", fmt::format("{}", ctx.cfg.beta1)},
          {"adam-beta2", fmt::format("{}", ctx.cfg.beta2)},
          {"adam-eps", fmt::format("{}", ctx.cfg.eps)},
          {"target-accuracy", fmt::format("{}", o.targetAccuracy)},
          {"max-steps", o.maxSteps},
          {"seed", o.seed},
          {"data", o.dataDir},
          {"load-weights", o.loadWeights},
          {"eval-images", o.evalImages},
          {"tiles", o.tiles},
          {"tile-mem", o.tileMemKiB},
          {"clock-mhz", fmt::format("{}", o.clockMHz)},
          {"trace-steps", o.traceSteps},
          {"link-gbps", fmt::format("{}", o.linkGBps)},
          {"link-step-us", fmt::format("{}", o.linkStepUs)}};
}

nlohmann::json curveJson(const std::vector<SvgChart::Point>& c) {
  nlohmann::json j = nlohmann::json::array();
  for (const SvgChart::Point& p : c)
    j.push_back({std::bit_cast<uint64_t>(p.x), std::bit_cast<uint64_t>(p.y)});
  return j;
}

std::vector<SvgChart::Point> curveOf(const nlohmann::json& j) {
  std::vector<SvgChart::Point> c;
  for (const nlohmann::json& p : j)
    c.push_back({std::bit_cast<double>(p.at(0).get<uint64_t>()),
                 std::bit_cast<double>(p.at(1).get<uint64_t>())});
  return c;
}

nlohmann::json engineJson(const EngineStats& e) {
  return {e.hostSyncs,
          e.hostToDeviceBytes,
          e.deviceToHostBytes,
          std::bit_cast<uint64_t>(e.deviceSeconds),
          std::bit_cast<uint64_t>(e.hostIoSeconds),
          e.prefetchWaits,
          std::bit_cast<uint64_t>(e.prefetchWaitSeconds),
          e.prefetchMissBytes};
}

EngineStats engineOf(const nlohmann::json& j) {
  return {j.at(0).get<uint64_t>(),
          j.at(1).get<uint64_t>(),
          j.at(2).get<uint64_t>(),
          std::bit_cast<double>(j.at(3).get<uint64_t>()),
          std::bit_cast<double>(j.at(4).get<uint64_t>()),
          j.at(5).get<uint64_t>(),
          std::bit_cast<double>(j.at(6).get<uint64_t>()),
          j.at(7).get<uint64_t>()};
}

nlohmann::json totalsJson(const TrainTotals& tt) {
  nlohmann::json tiles = nlohmann::json::array();
  for (const TileCycles& t : tt.tileTotals) tiles.push_back({t.compute, t.syncWait, t.exchange});
  return {{"loss_curve", curveJson(tt.lossCurve)},
          {"acc_curve", curveJson(tt.accCurve)},
          {"tiles", tiles},
          {"train_cycles", tt.trainCycles},
          {"eval_cycles", tt.evalCycles},
          {"steps", tt.steps},
          {"accuracy", std::bit_cast<uint64_t>(tt.accuracy)},
          {"train_wall", std::bit_cast<uint64_t>(tt.trainWall)},
          {"replica_seconds", std::bit_cast<uint64_t>(tt.replicaSeconds)},
          {"gradient_bytes", tt.gradientBytes},
          {"engine", engineJson(tt.engine)}};
}

void restoreTotals(TrainTotals& tt, const nlohmann::json& j) {
  tt.lossCurve = curveOf(j.at("loss_curve"));
  tt.accCurve = curveOf(j.at("acc_curve"));
  const nlohmann::json& tiles = j.at("tiles");
  if (tiles.size() != tt.tileTotals.size())
    throw Error(
        fmt::format("{} tiles saved, the device has {}", tiles.size(), tt.tileTotals.size()));
  for (size_t t = 0; t < tiles.size(); ++t)
    tt.tileTotals[t] = {tiles[t].at(0).get<uint64_t>(), tiles[t].at(1).get<uint64_t>(),
                        tiles[t].at(2).get<uint64_t>()};
  tt.trainCycles = j.at("train_cycles").get<uint64_t>();
  tt.evalCycles = j.at("eval_cycles").get<uint64_t>();
  tt.steps = j.at("steps").get<uint64_t>();
  tt.accuracy = std::bit_cast<double>(j.at("accuracy").get<uint64_t>());
  tt.trainWall = std::bit_cast<double>(j.at("train_wall").get<uint64_t>());
  tt.replicaSeconds = std::bit_cast<double>(j.at("replica_seconds").get<uint64_t>());
  tt.gradientBytes = j.at("gradient_bytes").get<uint64_t>();
  tt.engine = engineOf(j.at("engine"));
}

nlohmann::json runStateJson(const MlpRunState& r) {
  nlohmann::json loss = nlohmann::json::array();
  for (float x : r.stepLoss) loss.push_back(std::bit_cast<uint32_t>(x));
  nlohmann::json gradSum = nlohmann::json::array();
  for (float x : r.gradientSum) gradSum.push_back(std::bit_cast<uint32_t>(x));
  return {{"step_loss", loss},
          {"step_correct", r.stepCorrect},
          {"eval_correct", r.evalCorrect},
          {"eval_start", r.evalStart ? nlohmann::json(*r.evalStart) : nlohmann::json(nullptr)},
          {"steps_done", r.stepsDone},
          {"stream_offsets", r.streamOffsets},
          {"host_sync_counts", r.hostSyncCounts},
          {"gradient_sum", gradSum},
          {"gradient_steps", r.gradientSteps},
          {"engine", engineJson(r.engine)}};
}

MlpRunState runStateOf(const nlohmann::json& j) {
  MlpRunState r;
  for (const nlohmann::json& x : j.at("step_loss"))
    r.stepLoss.push_back(std::bit_cast<float>(x.get<uint32_t>()));
  r.stepCorrect = j.at("step_correct").get<std::vector<uint32_t>>();
  r.evalCorrect = j.at("eval_correct").get<uint64_t>();
  if (!j.at("eval_start").is_null()) r.evalStart = j.at("eval_start").get<uint64_t>();
  r.stepsDone = j.at("steps_done").get<uint64_t>();
  r.streamOffsets = j.at("stream_offsets").get<std::vector<uint64_t>>();
  r.hostSyncCounts = j.at("host_sync_counts").get<std::vector<uint64_t>>();
  for (const nlohmann::json& x : j.at("gradient_sum"))
    r.gradientSum.push_back(std::bit_cast<float>(x.get<uint32_t>()));
  r.gradientSteps = j.at("gradient_steps").get<uint64_t>();
  r.engine = engineOf(j.at("engine"));
  return r;
}

// A checkpoint read for --resume: the chip's part and the host's (its APP section).
struct TrainResume {
  std::string path;
  std::vector<uint8_t> bytes;
  nlohmann::json host;
};

// Read and check the newest checkpoint of dir against this run; every refusal names the file.
// With replicas, every rank continues from the same host sync: the newest that all ranks saved (a
// rank killed during a save may be one checkpoint behind the others; each keeps two).
TrainResume loadTrainCheckpoint(const std::string& dir, const TrainContext& ctx,
                                ReplicaComm* comm) {
  TrainResume r;
  if (ctx.replicas > 1 && ctx.rank > 0 && !std::filesystem::is_directory(dir)) {
    throw Error(fmt::format(
        "train: --resume: no checkpoints of rank {} ({}): they were saved by fewer ranks than "
        "this run's {}, and a run resumes only with the rank count it was saved with",
        ctx.rank, dir, ctx.replicas));
  }
  r.path = TrainingCheckpointDir::newest(dir);
  if (ctx.replicas > 1) {
    const double mine = static_cast<double>(TrainingCheckpointDir::hostSyncsOf(r.path));
    r.path = TrainingCheckpointDir::path(dir, static_cast<uint64_t>(-comm->max(-mine)));
  }
  try {
    r.bytes = readRegularFile(r.path, uint64_t{4} << 30, "checkpoint");
    const CheckpointInfo info = readCheckpointInfo(r.bytes);
    r.host = nlohmann::json::parse(info.appData.begin(), info.appData.end());
    if (!r.host.is_object() || r.host.value("format", "") != kCheckpointFormat)
      throw Error("not a training checkpoint (tessera-run's?)");
    if (r.host.at("version").get<uint32_t>() != kCheckpointVersion)
      throw Error(fmt::format("version {}, this build reads version {}",
                              r.host.at("version").dump(), kCheckpointVersion));
    const nlohmann::ordered_json want = optionsRecord(ctx);
    const nlohmann::json& saved = r.host.at("options");
    for (const auto& [key, value] : want.items()) {
      const nlohmann::json got = saved.contains(key) ? saved.at(key) : nlohmann::json(nullptr);
      const nlohmann::json now = value;
      auto text = [](const nlohmann::json& v) {
        return v.is_string() ? v.get<std::string>() : v.dump();
      };
      if (got != now)
        throw Error(
            fmt::format("saved with {} {}, this run has {} {}", key, text(got), key, text(now)));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(
        fmt::format("train: checkpoint {}: malformed training state: {}", r.path, e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("train: checkpoint {}: {}", r.path, e.what()));
  }
  return r;
}

// The MLPerf log's run parameters, up to run_start.
void logRunStart(MlperfLogger& log, const TrainContext& ctx) {
  const TrainOptions& o = ctx.o;
  log.globalBatchSize(o.batch);
  log.optBaseLearningRate(std::stod(fmt::format("{}", ctx.cfg.learningRate)));
  log.point("seed", o.seed);
  log.point("replicas", ctx.replicas);
  log.point("replica_batch_size", ctx.localBatch);
  log.point("model", ctx.model->name());
  log.point("opt_name", ctx.optimizer);
  log.point("opt_momentum", std::stod(fmt::format("{}", ctx.cfg.momentum)));
  log.point("opt_weight_decay", std::stod(fmt::format("{}", ctx.cfg.weightDecay)));
  if (ctx.optimizer == "adam") {
    log.point("opt_adam_beta_1", std::stod(fmt::format("{}", ctx.cfg.beta1)));
    log.point("opt_adam_beta_2", std::stod(fmt::format("{}", ctx.cfg.beta2)));
    log.point("opt_adam_epsilon", std::stod(fmt::format("{}", ctx.cfg.eps)));
  }
  log.point("train_samples", static_cast<uint64_t>(ctx.cfg.trainSteps) * o.batch);
  log.point("eval_samples", ctx.testCount);
  log.initStop();
  log.runStart();
}

// Where and what a run checkpoints (docs/training.md, "Checkpoints and resume").
struct CheckpointPlan {
  TrainingCheckpointDir* dir = nullptr;  // null: no checkpoints
  uint64_t every = 0;                    // steps between checkpoints (0: epoch ends and signals)
  const TrainResume* resume = nullptr;   // the checkpoint this run continues
  SuperstepTracer* tracer = nullptr;
  ChromeTrace* trace = nullptr;
};

// The epoch runs, each followed by its evaluation, until the target accuracy or the last epoch.
TrainTotals trainEpochs(const TrainContext& ctx, MlpTrainer& trainer, MlperfLogger& log,
                        ReplicaComm* comm, const BatchSource& trainSource,
                        const BatchSource& evalSource, unsigned tiles, Clock::time_point runStart,
                        const CheckpointPlan& plan) {
  const TrainOptions& o = ctx.o;
  const uint64_t totalSteps = static_cast<uint64_t>(ctx.cfg.trainSteps) * o.epochs;
  ProgressBar progress(stdout, totalSteps, o.epochs, o.batch);  // samples: global minibatches
  uint32_t epoch = 1;
  trainer.setStepObserver([&](uint64_t step, float loss) {
    if (!o.quiet) progress.update(step, epoch, loss);
    trainTestPause("step", step);
  });

  TrainTotals tt;
  tt.tileTotals.resize(tiles);
  bool midRun = false;  // the first run continues the checkpoint's
  if (plan.resume) {
    const nlohmann::json& h = plan.resume->host;
    try {
      restoreTotals(tt, h.at("totals"));
      epoch = h.at("epoch").get<uint32_t>();
      runStart -= std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(std::bit_cast<double>(h.at("run_wall_s").get<uint64_t>())));
    } catch (const std::exception& e) {
      throw Error(fmt::format("train: checkpoint {}: malformed training state: {}",
                              plan.resume->path, e.what()));
    }
    midRun = true;
  }
  if (plan.dir) {
    // At a training step's host sync every `every` steps, at the first evaluation host sync of a
    // run (the epoch's training is over), and at any host sync after SIGINT/SIGTERM.
    trainer.setSyncHook([&](const RunResult& r) {
      // Every replica stops at the same host sync, whichever got the signal.
      int sig = stopSignal();
      if (ctx.replicas > 1) sig = static_cast<int>(comm->max(sig));
      const MlpRunState state = trainer.runState();
      bool due = false;
      if (r.hostSyncId == trainer.trainSyncId() && ctx.cfg.trainSteps > 0) {
        const uint64_t before = trainer.trainBatchesTaken() - 1;  // steps before this one
        due = plan.every > 0 && before > 0 && before % plan.every == 0;
      } else {
        due = state.evalStart == r.cycles;
      }
      if (!due && sig == 0) return true;
      const auto t0 = Clock::now();
      nlohmann::json host = {{"format", kCheckpointFormat},
                             {"version", kCheckpointVersion},
                             {"options", optionsRecord(ctx)},
                             {"epoch", epoch},
                             {"data_position", trainer.trainBatchesTaken()},
                             {"data_seed", o.seed + 1},
                             {"run", runStateJson(state)},
                             {"totals", totalsJson(tt)},
                             {"run_wall_s", std::bit_cast<uint64_t>(secondsSince(runStart))},
                             {"mllog", ""}};
      if (plan.tracer) {
        host["tracer"] = plan.tracer->state();
        host["trace"] = plan.trace->state();
      }
      const std::vector<uint8_t> mllog =
          readRegularFile(log.path(), uint64_t{1} << 30, "MLPerf log");
      host["mllog"] = std::string(mllog.begin(), mllog.end());
      const std::string text = host.dump();
      const std::vector<uint8_t> bytes =
          trainer.saveCheckpoint({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
      tt.lastCheckpoint = plan.dir->save(state.engine.hostSyncs, bytes);
      ++tt.checkpointsSaved;
      tt.checkpointBytes = bytes.size();
      tt.checkpointSeconds += secondsSince(t0);
      if (sig == 0) return true;
      tt.interruptedBy = sig;
      return false;
    });
  }
  // At the end of the run, finished or stopped at a checkpoint.
  auto endRun = [&] {
    if (!o.quiet) progress.finish();
    trainer.setStepObserver({});  // it refers to this function's progress bar
    trainer.setSyncHook({});
    tt.lossScale = trainer.lossScaleState();
  };
  for (; epoch <= o.epochs; ++epoch) {
    if (!midRun) log.epochStart(epoch);
    midRun = false;
    const auto e0 = Clock::now();
    MlpRunResult r = trainer.run(trainSource, evalSource);
    if (r.stopped) {
      endRun();
      return tt;
    }
    // This run's training share of the wall time, by this chip's own cycles.
    tt.trainWall +=
        secondsSince(e0) *
        (r.cycles ? static_cast<double>(r.trainCycles) / static_cast<double>(r.cycles) : 1.0);
    if (ctx.replicas > 1) {
      // BSP over the replicas: each step ends at the all-reduce, so the slowest one sets the pace.
      r.trainCycles = static_cast<uint64_t>(comm->max(static_cast<double>(r.trainCycles)));
      r.evalCycles = static_cast<uint64_t>(comm->max(static_cast<double>(r.evalCycles)));
      r.evalCorrect = comm->sum(r.evalCorrect);
    }
    tt.replicaSeconds += r.replicaSeconds;
    tt.gradientBytes = r.gradientBytes;
    log.epochStop(epoch);
    for (size_t i = 0; i < r.stepLoss.size(); ++i)
      tt.lossCurve.push_back({static_cast<double>(tt.steps + i + 1), r.stepLoss[i]});
    // A loss that is not finite (the weights are NaN from there on; the run goes on): said once
    // per epoch run, with its step and, in float16, the likely cause.
    for (size_t i = 0; i < r.stepLoss.size() && ctx.rank == 0; ++i) {
      if (std::isfinite(r.stepLoss[i])) continue;
      fmt::print(stderr, "train: the loss of step {} is {}{}\n", tt.steps + i + 1, r.stepLoss[i],
                 ctx.model->halfPrecision() && !ctx.cfg.dynamicLossScale
                     ? fmt::format(" (float16 gradients overflowing 65504 at loss scale {}? a "
                                   "smaller --loss-scale, or --loss-scale dynamic, avoids it)",
                                   ctx.cfg.lossScale)
                     : "");
      break;
    }
    tt.steps += r.stepLoss.size();
    tt.trainCycles += r.trainCycles;
    tt.evalCycles += r.evalCycles;
    for (size_t t = 0; t < r.tiles.size(); ++t) {
      tt.tileTotals[t].compute += r.tiles[t].compute;
      tt.tileTotals[t].syncWait += r.tiles[t].syncWait;
      tt.tileTotals[t].exchange += r.tiles[t].exchange;
    }
    tt.engine = r.engine;
    log.evalStart(epoch);
    tt.accuracy = static_cast<double>(r.evalCorrect) / static_cast<double>(ctx.testCount);
    log.evalAccuracy(tt.accuracy, epoch);
    log.evalStop(epoch);
    tt.accCurve.push_back({static_cast<double>(tt.steps), tt.accuracy});
    if (tt.accuracy >= o.targetAccuracy) {
      tt.status = "success";
      tt.timeToTrain = std::chrono::duration<double>(Clock::now() - runStart).count();
      tt.cyclesToTrain = static_cast<double>(tt.trainCycles + tt.evalCycles);
      break;
    }
  }
  endRun();
  log.runStop(tt.status);
  tt.runWall = secondsSince(runStart);
  tt.epochsRun = epoch > o.epochs ? o.epochs : epoch;
  return tt;
}

TrainFigures trainFigures(const TrainContext& ctx, const TrainTotals& tt, unsigned tiles) {
  TrainFigures f;
  f.tiles = tiles;
  for (const TileCycles& t : tt.tileTotals)
    f.sumCompute += t.compute, f.sumSync += t.syncWait, f.sumExchange += t.exchange;
  f.samples = static_cast<double>(tt.steps * ctx.o.batch);
  f.cyclesPerStep =
      tt.steps ? static_cast<double>(tt.trainCycles) / static_cast<double>(tt.steps) : 0;
  // The replicas' all-reduce over modelled chip-to-chip links, once per step, beside the chip's own
  // cycles (the host syncs that carry it through MPI here take no chip cycles). Every tile waits
  // for it: in the BSP breakdown it is a phase of its own, in cycles at the nominal clock.
  f.links.bytesPerSecond = ctx.o.linkGBps * 1e9;
  f.links.stepLatencySeconds = ctx.o.linkStepUs * 1e-6;
  f.interChipPerStep = f.links.seconds(tt.gradientBytes, ctx.replicas);
  f.interChipCycles = static_cast<uint64_t>(
      std::llround(f.interChipPerStep * ctx.clockHz * static_cast<double>(tt.steps)));
  f.sumInterChip = f.interChipCycles * tiles;
  f.allTileCycles = static_cast<double>(f.sumCompute + f.sumSync + f.sumExchange + f.sumInterChip);
  f.chipSecondsPerStep = f.cyclesPerStep / ctx.clockHz;
  f.deviceStepSeconds = f.chipSecondsPerStep + f.interChipPerStep;
  f.deviceSeconds = static_cast<double>(tt.trainCycles) / ctx.clockHz +
                    f.interChipPerStep * static_cast<double>(tt.steps);
  return f;
}

// Every replica must end with the same weights: a hash of them (FNV-1a, 64 bits, over the
// float32 bytes of the parameters in order and in their .npz layouts: w0, b0, w1, ... for the MLP)
// to compare the ranks' results.
uint64_t weightsHash(const ModelParameters& params) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const std::vector<float>& v : params.values) {
    for (float x : v) {
      uint32_t bits;
      std::memcpy(&bits, &x, 4);
      for (int i = 0; i < 4; ++i) h = (h ^ ((bits >> (8 * i)) & 0xffu)) * 0x100000001b3ull;
    }
  }
  return h;
}

// result.json (docs/training.md, "Outputs").
nlohmann::ordered_json trainResult(const TrainContext& ctx, const TrainTotals& tt,
                                   const TrainFigures& f, uint32_t tileMemBytes) {
  const TrainOptions& o = ctx.o;
  const double clockHz = ctx.clockHz;
  const double steps = static_cast<double>(tt.steps);
  nlohmann::ordered_json res;
  res["benchmark"] = "fashion_mnist_" + ctx.model->name();
  res["model"] = ctx.model->name();
  res["device"] = o.device;
  res["tiles"] = f.tiles;
  res["tile_mem_bytes"] = tileMemBytes;
  if (ctx.model->name() == "mlp") res["layers"] = layerSizes(ctx.cfg);
  nlohmann::ordered_json shapes;
  for (const ParameterShape& s : ctx.model->parameterShapes()) shapes[s.name] = s.shape;
  res["parameters"] = shapes;
  res["global_batch_size"] = o.batch;
  res["replicas"] = ctx.replicas;
  res["replica_batch_size"] = ctx.localBatch;
  res["rank"] = ctx.rank;
  res["optimizer"] = ctx.optimizer;
  res["precision"] = o.precision;
  res["loss_scale"] = ctx.cfg.lossScale;
  if (ctx.cfg.dynamicLossScale) {
    res["loss_scale_dynamic"] = {
        {"initial", ctx.cfg.lossScale},
        {"interval", ctx.cfg.lossScaleInterval},
        {"final", tt.lossScale ? nlohmann::ordered_json(tt.lossScale->scale) : nullptr},
        {"skipped_steps", tt.lossScale ? nlohmann::ordered_json(tt.lossScale->skipped) : nullptr}};
  }
  res["learning_rate"] = std::stod(fmt::format("{}", ctx.cfg.learningRate));
  res["momentum"] = std::stod(fmt::format("{}", ctx.cfg.momentum));
  res["weight_decay"] = std::stod(fmt::format("{}", ctx.cfg.weightDecay));
  res["seed"] = o.seed;
  res["epochs_run"] = tt.epochsRun;
  res["steps"] = tt.steps;
  res["status"] = tt.status;
  res["target_accuracy"] = o.targetAccuracy;
  res["eval_images"] = ctx.testCount;
  res["eval_accuracy"] = tt.accuracy;
  res["time_to_train_s"] = tt.timeToTrain >= 0 ? nlohmann::ordered_json(tt.timeToTrain)
                                               : nlohmann::ordered_json(nullptr);
  res["device_time_to_train_s"] =
      tt.timeToTrain >= 0
          ? nlohmann::ordered_json(tt.cyclesToTrain / clockHz + f.interChipPerStep * steps)
          : nlohmann::ordered_json(nullptr);
  res["nominal_clock_hz"] = clockHz;
  res["run_wall_s"] = tt.runWall;
  res["samples_per_s_wall"] = tt.trainWall > 0 ? f.samples / tt.trainWall : 0.0;
  res["samples_per_device_s"] = f.deviceSeconds > 0 ? f.samples / f.deviceSeconds : 0.0;
  res["cycles_per_step"] = f.cyclesPerStep;
  res["step_wall_s"] = tt.steps ? tt.trainWall / steps : 0.0;
  res["step_device_s"] = f.deviceStepSeconds;
  res["inter_chip"] = {
      {"schedule", "ring reduce-scatter + all-gather"},
      {"formula", "2(R-1)/R * bytes / link_bytes_per_s + 2(R-1) * step_latency_s"},
      {"gradient_bytes", tt.gradientBytes},
      {"bytes_sent_per_chip", f.links.bytesSentPerChip(tt.gradientBytes, ctx.replicas)},
      {"link_bytes_per_s", f.links.bytesPerSecond},
      {"step_latency_s", f.links.stepLatencySeconds},
      {"seconds_per_step", f.interChipPerStep},
      {"pct_of_step",
       f.deviceStepSeconds > 0 ? 100.0 * f.interChipPerStep / f.deviceStepSeconds : 0.0},
      {"host_allreduce_s", tt.replicaSeconds},
      {"host_allreduce_pct_of_train_wall",
       tt.trainWall > 0 ? 100.0 * tt.replicaSeconds / tt.trainWall : 0.0}};
  res["train_cycles"] = tt.trainCycles;
  res["eval_cycles"] = tt.evalCycles;
  res["bsp"] = {{"compute_cycles", f.sumCompute},
                {"sync_cycles", f.sumSync},
                {"exchange_cycles", f.sumExchange},
                {"compute_pct", f.pct(f.sumCompute)},
                {"sync_pct", f.pct(f.sumSync)},
                {"exchange_pct", f.pct(f.sumExchange)},
                {"host_io_s", tt.engine.hostIoSeconds},
                {"host_syncs", tt.engine.hostSyncs},
                {"inter_chip_cycles", f.sumInterChip},
                {"inter_chip_pct", f.pct(f.sumInterChip)},
                {"inter_chip_s", f.interChipPerStep * steps}};
  if (f.flopsPerStep > 0) {
    const double perSample = f.flopsPerStep / static_cast<double>(ctx.localBatch);
    const double achieved = f.chipSecondsPerStep > 0 ? f.flopsPerStep / f.chipSecondsPerStep : 0;
    res["flops"] = {{"per_step", f.flopsPerStep},
                    {"per_sample", perSample},
                    {"per_device_s", achieved},
                    {"chip_peak_per_s", f.peakFlopsPerSecond},
                    {"pct_of_chip_peak",
                     f.peakFlopsPerSecond > 0 ? 100.0 * achieved / f.peakFlopsPerSecond : 0},
                    {"ipu_mk2_fp32_peak_per_s", kIpuMk2Fp32PeakFlops},
                    {"samples_per_s_at_ipu_mk2_fp32_peak", kIpuMk2Fp32PeakFlops / perSample}};
  }
  res["device_cycles_waiting_for_host_data"] = 0;
  res["prefetch_waits"] = tt.engine.prefetchWaits;
  res["prefetch_wait_s"] = tt.engine.prefetchWaitSeconds;
  return res;
}

// The pictures, the trace and the trained weights.
void writeTrainOutputs(const TrainContext& ctx, const TrainTotals& tt, const TrainFigures& f,
                       const ChromeTrace& trace, const ModelParameters& trained) {
  const TrainOptions& o = ctx.o;
  std::vector<SvgChart::TileTimes> bars;
  for (const TileCycles& t : tt.tileTotals)
    bars.push_back({t.compute, t.syncWait, t.exchange, 0, f.interChipCycles});
  SvgChart::write(
      o.outDir + "/bsp.svg",
      SvgChart::bspBreakdown(
          bars,
          fmt::format(
              "BSP cycles per tile, {} on {}{}", ctx.model->name(), o.device,
              ctx.replicas > 1 ? fmt::format(", replica {} of {}", ctx.rank, ctx.replicas) : "")));
  SvgChart::write(o.outDir + "/curves.svg",
                  SvgChart::trainingCurves(
                      tt.lossCurve, tt.accCurve,
                      fmt::format("Fashion-MNIST {}: loss and test accuracy", ctx.model->name())));
  if (o.traceSteps > 0) trace.write(o.outDir + "/trace.json");
  if (!o.saveWeights.empty()) trained.toNpz().save(o.saveWeights);
}

// Rank 0's summary on stdout.
void printTrainSummary(const TrainContext& ctx, const TrainTotals& tt, const TrainFigures& f,
                       const nlohmann::ordered_json& res, uint32_t tileMemBytes) {
  const TrainOptions& o = ctx.o;
  const double clockHz = ctx.clockHz;
  fmt::print("\n{:<38} {}\n", "device",
             fmt::format("{} ({} tiles x {} KiB)", o.device, f.tiles, tileMemBytes / 1024));
  fmt::print("{:<38} {}: {}\n", "network", ctx.model->name(), ctx.model->describe());
  if (ctx.cfg.dynamicLossScale) {
    fmt::print("{:<38} {} -> {}, {} steps skipped (interval {})\n", "dynamic loss scale",
               ctx.cfg.lossScale, tt.lossScale ? fmt::format("{}", tt.lossScale->scale) : "?",
               tt.lossScale ? tt.lossScale->skipped : 0, ctx.cfg.lossScaleInterval);
  } else if (ctx.cfg.lossScale != 1.0f) {
    fmt::print("{:<38} {}\n", "static loss scale", ctx.cfg.lossScale);
  }
  fmt::print("{:<38} {}\n", "matrix unit",
             res["matrix_unit"] == "on" ? "the matmuls run on it"
             : res.contains("matrix_unit_refusal")
                 ? "not used: the graph does not fit the tiles with the unit's layouts; the "
                   "scalar codelets run (the same bits)"
                 : "not used: the scalar codelets (the same bits)");
  fmt::print(
      "{:<38} {}, lr {}{}{}{}\n", "optimizer", ctx.optimizer, ctx.cfg.learningRate,
      o.lrSchedule == "cosine"
          ? fmt::format(" (cosine to 0 over {} steps)", uint64_t{o.epochs} * ctx.cfg.trainSteps)
          : "",
      ctx.optimizer == "momentum" ? fmt::format(", momentum {}", ctx.cfg.momentum) : "",
      ctx.cfg.weightDecay != 0.0f ? fmt::format(", weight decay {}", ctx.cfg.weightDecay) : "");
  fmt::print("{:<38} {} steps of {} ({} epoch runs)\n", "trained", tt.steps, o.batch,
             res["epochs_run"].get<uint32_t>());
  if (ctx.replicas > 1)
    fmt::print("{:<38} {} of {} images each (MPI ranks)\n", "replicas", ctx.replicas,
               ctx.localBatch);
  fmt::print("{:<38} {:.2f}% (target {:.2f}%): {}\n", "test accuracy", 100 * tt.accuracy,
             100 * o.targetAccuracy, tt.status);
  if (tt.timeToTrain >= 0) {
    fmt::print("{:<38} {:.1f} s wall, {:.4f} s device at {:.0f} MHz\n", "time to train",
               tt.timeToTrain, tt.cyclesToTrain / clockHz, clockHz / 1e6);
  }
  fmt::print("{:<38} {:.1f}\n", "samples/s (wall)", res["samples_per_s_wall"].get<double>());
  fmt::print("{:<38} {:.0f} at {:.0f} MHz\n", "samples per device-second",
             res["samples_per_device_s"].get<double>(), clockHz / 1e6);
  fmt::print("{:<38} {:.0f}\n", "cycles per step", f.cyclesPerStep);
  if (res.contains("flops")) {
    const nlohmann::ordered_json& fl = res["flops"];
    fmt::print("{:<38} {:.0f} ({:.0f} per sample; the ops' counts, docs/compiler.md)\n",
               "FLOPs per step", f.flopsPerStep, fl["per_sample"].get<double>());
    fmt::print(
        "{:<38} {:.4g} FLOP/s at {:.0f} MHz: {:.1f}% of the chip's fp32 peak ({:.4g}: {} "
        "tiles x {} FLOP/cycle)\n",
        "FLOP rate", fl["per_device_s"].get<double>(), clockHz / 1e6,
        fl["pct_of_chip_peak"].get<double>(), f.peakFlopsPerSecond, f.tiles, f.peakFlopsPerCycle);
    fmt::print("{:<38} {:.0f} samples/s for the same FLOPs (62.4 TFLOPS fp32)\n",
               "at an IPU Mk2's fp32 peak", fl["samples_per_s_at_ipu_mk2_fp32_peak"].get<double>());
  }
  fmt::print("{:<38} {:.3f} ms wall, {:.3f} ms device ({:.3f} ms chip + {:.3f} ms inter-chip)\n",
             "time per step", res["step_wall_s"].get<double>() * 1e3, f.deviceStepSeconds * 1e3,
             f.chipSecondsPerStep * 1e3, f.interChipPerStep * 1e3);
  if (ctx.replicas > 1) {
    fmt::print(
        "{:<38} {} bytes per step: {:.2f} us modelled ({:.1f}% of the device step), {:.3f} s host "
        "(MPI)\n",
        "inter-chip all-reduce", tt.gradientBytes, f.interChipPerStep * 1e6,
        res["inter_chip"]["pct_of_step"].get<double>(), tt.replicaSeconds);
  }
  fmt::print(
      "{:<38} compute {:.1f}%, sync {:.1f}%, exchange {:.1f}%{} ({} / {} / {}{} tile-cycles)\n",
      "BSP (all tiles)", f.pct(f.sumCompute), f.pct(f.sumSync), f.pct(f.sumExchange),
      ctx.replicas > 1 ? fmt::format(", inter-chip {:.1f}%", f.pct(f.sumInterChip)) : "",
      f.sumCompute, f.sumSync, f.sumExchange,
      ctx.replicas > 1 ? fmt::format(" / {}", f.sumInterChip) : "");
  if (res.contains("model_jit")) {
    const nlohmann::ordered_json& j = res["model_jit"];
    const auto n = j["instructions"].get<uint64_t>(), tr = j["translated"].get<uint64_t>();
    fmt::print("{:<38} {} of {} instructions translated ({:.1f}%); windows {} kept, {} undone\n",
               "model jit", tr, n, 100.0 * static_cast<double>(tr) / static_cast<double>(n),
               j["windows_kept"].get<uint64_t>(), j["windows_undone"].get<uint64_t>());
    // Per kind, the reasons by share, largest first.
    for (const auto& [kind, byReason] : j["stops"].items()) {
      std::vector<std::pair<uint64_t, std::string>> rs;
      uint64_t total = 0;
      for (const auto& [reason, n] : byReason.items()) {
        rs.emplace_back(n.get<uint64_t>(), reason);
        total += n.get<uint64_t>();
      }
      if (total == 0) continue;
      std::sort(rs.rbegin(), rs.rend());
      std::string line;
      for (const auto& [n, reason] : rs) {
        line += fmt::format("{}{} {:.1f}%", line.empty() ? "" : ", ", reason,
                            100.0 * static_cast<double>(n) / static_cast<double>(total));
      }
      fmt::print("{:<38} {} ({})\n", fmt::format("model jit stops: {}", kind), line, total);
    }
  }
  fmt::print("{:<38} {:.3f} s host time at {} host syncs (no chip cycles)\n", "host I/O",
             tt.engine.hostIoSeconds, tt.engine.hostSyncs);
  fmt::print(
      "{:<38} 0 cycles (the chip stops at host syncs); {} prefetch waits, {:.3f} s host time\n",
      "device waiting for host data", tt.engine.prefetchWaits, tt.engine.prefetchWaitSeconds);
  if (tt.checkpointsSaved > 0) {
    fmt::print("{:<38} {} saved, the last {} bytes, {:.3f} s per save (newest {})\n", "checkpoints",
               tt.checkpointsSaved, tt.checkpointBytes,
               tt.checkpointSeconds / static_cast<double>(tt.checkpointsSaved), tt.lastCheckpoint);
  }
  fmt::print(
      "\nwrote {0}/mlperf.log, {0}/result.json, {0}/compile-report.json, {0}/bsp.svg, "
      "{0}/curves.svg{1}{2}\n",
      o.outDir, o.traceSteps > 0 ? fmt::format(", {}/trace.json", o.outDir) : "",
      o.saveWeights.empty() ? "" : ", " + o.saveWeights);
}

}  // namespace

int runTrain(const TrainOptions& opt, ReplicaComm* comm) {
  const auto t0 = Clock::now();
  TrainContext ctx;
  ctx.replicas = checkTrainOptions(opt, comm);
  ctx.rank = comm ? static_cast<unsigned>(comm->rank()) : 0;
  ctx.o = opt;
  if (ctx.rank > 0) {
    ctx.o.outDir = fmt::format("{}/rank-{}", opt.outDir, ctx.rank);
    ctx.o.quiet = true;
    ctx.o.saveWeights.clear();  // every replica holds the same weights: rank 0 saves them
    // Each rank checkpoints into DIR/rank-N of the checkpoint and resume directories.
    const bool checkpoints =
        opt.checkpointEvery > 0 || !opt.checkpointDir.empty() || !opt.resumeDir.empty();
    const std::string base = !opt.checkpointDir.empty() ? opt.checkpointDir
                             : !opt.resumeDir.empty()   ? opt.resumeDir
                                                        : opt.outDir + "/checkpoints";
    if (checkpoints) ctx.o.checkpointDir = fmt::format("{}/rank-{}", base, ctx.rank);
    if (!opt.resumeDir.empty())
      ctx.o.resumeDir = fmt::format("{}/rank-{}", opt.resumeDir, ctx.rank);
  }
  const TrainOptions& o = ctx.o;
  ctx.localBatch = o.batch / ctx.replicas;
  ctx.clockHz = (o.clockMHz > 0 ? o.clockMHz : double{TESS_NOMINAL_CLOCK_MHZ}) * 1e6;

  // Setup: the log, the data, the network, the device.
  std::filesystem::create_directories(o.outDir);
  const bool resuming = !o.resumeDir.empty();
  const bool checkpoints = o.checkpointEvery > 0 || !o.checkpointDir.empty() || resuming;
  // From here SIGINT/SIGTERM end the run at its next host sync, with a checkpoint.
  std::optional<StopSignals> stopSignals;
  if (checkpoints) stopSignals.emplace();
  // A resumed run's log is the saved one continued: it is opened once the checkpoint is read.
  std::optional<MlperfLogger> logFile;
  if (!resuming) logFile.emplace(o.outDir + "/mlperf.log");
  if (o.precision != "fp32" && o.precision != "fp16")
    throw Error(fmt::format("train: --precision {}: fp32 or fp16", o.precision));
  const bool half = o.precision == "fp16";
  if (o.dynamicLossScale && !half)
    throw Error(
        "train: --loss-scale dynamic is for --precision fp16 (float32 gradients need no "
        "loss scale)");
  if (!o.dynamicLossScale && o.lossScaleInit > 0)
    throw Error("train: --loss-scale-init is the first value of --loss-scale dynamic");
  ctx.model = o.modelObject ? o.modelObject : makeModel(o.model, o.hidden, half);
  if (ctx.model->halfPrecision() != half) {
    throw Error(fmt::format("train: --precision {}: the model {} computes in {}", o.precision,
                            ctx.model->name(), ctx.model->halfPrecision() ? "fp16" : "fp32"));
  }
  ctx.optimizer = optimizerName(o, ctx.model->defaults());
  ctx.model->defaults().learningRate(ctx.optimizer);  // an unknown optimizer fails here
  if (o.momentum && *o.momentum != 0.0f && ctx.optimizer != "momentum")
    throw Error(
        fmt::format("train: --momentum {} with --optimizer {} (momentum is for "
                    "--optimizer momentum)",
                    *o.momentum, ctx.optimizer));
  if (!resuming) {
    logFile->submission("fashion_mnist_" + ctx.model->name(), "tessera", "open", "research",
                        "tessera " + o.device);
    logFile->cacheClear();
    logFile->initStart();
  }
  const FashionMnist data =
      FashionMnist::load(o.dataDir.empty() ? FashionMnist::defaultDir() : o.dataDir);
  ctx.cfg = networkConfig(ctx);
  const ModelParameters params = initialParameters(o, *ctx.model, data);
  // Different seeds for the initialization (seed) and the minibatch order (seed + 1).
  Minibatcher batches(data.train(), o.batch, o.seed + 1, params.inputScale, params.inputOffset);
  const size_t stepsPerEpoch = batches.stepsPerEpoch();
  ctx.cfg.trainSteps = static_cast<uint32_t>(
      o.maxSteps ? std::min<uint64_t>(stepsPerEpoch, o.maxSteps) : stepsPerEpoch);
  ctx.testCount = o.evalImages ? std::min(o.evalImages, data.test().count()) : data.test().count();
  ctx.cfg.evalSteps = static_cast<uint32_t>((ctx.testCount + o.batch - 1) / o.batch);
  std::optional<TrainResume> resume;
  if (resuming) {
    resume = loadTrainCheckpoint(o.resumeDir, ctx, comm);
    logFile.emplace(o.outDir + "/mlperf.log");
    logFile->continueFrom(resume->host.at("mllog").get<std::string>());
  }
  MlperfLogger& log = *logFile;
  auto dev = openTrainDevice(o, *ctx.model);
  if (half && !dev->info().hasMatrixUnit) {
    throw Error(fmt::format(
        "train: --precision fp16 needs the matrix unit's float16 products and conversions; the "
        "device {} has no unit{}",
        o.device, o.matrixUnit == "off" ? " (--matrix-unit off)" : ""));
  }
  // The model's default tile memory fits the network with plain SGD; optimizer state (momentum,
  // Adam's moments) or float16 copies may need more. Without --tile-mem the model grows its tiles
  // by 64 KiB until the graph fits (and says so); a backend's own memory is what it is.
  auto tileKiB = [&] { return dev->info().tileMemBytes / 1024; };
  auto canGrow = [&] {
    return o.device == "model" && o.tileMemKiB == 0 && tileKiB() + 64 <= kLargestAutoTileKiB;
  };
  auto grow = [&](std::string_view how) {
    if (ctx.rank == 0) {
      fmt::print(stderr,
                 "train: {} with --optimizer {} does not fit the model's {} KiB tiles{}; trying {} "
                 "KiB (--tile-mem sets the size)\n",
                 ctx.model->name(), ctx.optimizer, tileKiB(), how, tileKiB() + 64);
    }
    dev = openTrainDevice(o, *ctx.model, tileKiB() + 64);
  };
  std::optional<MlpTrainer> made;
  for (;;) {
    try {
      made.emplace(*dev, ctx.cfg);
    } catch (const OutOfMemoryError& e) {
      if (canGrow()) {
        grow("");
        continue;
      }
      if (o.device != "model") throw;
      throw OutOfMemoryError(fmt::format("{} (the model's tiles had {} KiB; --tile-mem sets them)",
                                         e.what(), tileKiB()));
    }
    // The unit's layouts need more room than the scalar codelets: grow for them too.
    if (made->matrixUnitRefusal().empty() || !canGrow()) break;
    made.reset();
    grow(" with the matrix unit's layouts");
  }
  MlpTrainer& trainer = *made;
  // The device has the unit but the graph did not fit with its layouts: say so before the run
  // (the scalar codelets give the same bits, in several times the cycles).
  if (!trainer.matrixUnitRefusal().empty() && ctx.rank == 0) {
    fmt::print(stderr,
               "train: the matrix unit is not used: with its layouts {}; the scalar codelets run "
               "instead (the same bits, more cycles)\n",
               trainer.matrixUnitRefusal());
  }
  const LrSchedule schedule{LrSchedule::parseKind(o.lrSchedule), ctx.cfg.learningRate,
                            uint64_t{o.epochs} * ctx.cfg.trainSteps};
  if (schedule.kind != LrSchedule::Kind::Constant)
    trainer.setLearningRateSchedule([schedule](uint64_t step) { return schedule.at(step); });
  if (ctx.replicas > 1) {
    trainer.setReplicaHooks({[comm](std::span<const float> local, std::span<float> sum) {
                               comm->sumInRankOrder(local, sum);
                             },
                             [comm](std::span<const float> local, std::span<float> all) {
                               comm->gatherInRankOrder(local, all);
                             }});
  }
  writeFileChecked(o.outDir + "/compile-report.json", trainer.report().toJson());
  if (!resuming) {
    trainer.setParameters(params);
    logRunStart(log, ctx);
  }
  const auto runStart = Clock::now();

  // The streams: this replica's rows of each training minibatch, and the evaluation batches.
  TrainBatches train(batches, o.batch, FashionMnist::kPixels, ctx.rank * ctx.localBatch,
                     ctx.localBatch);
  const BatchSource trainSource = [&](uint64_t step, std::span<float> img, std::span<int32_t> lab) {
    train.fill(step, img, lab);
  };
  // Evaluation batch i of every evaluation: test images i*batch...; the last one padded with
  // label -1, which never counts as correct. With replicas, replica r takes its share of the
  // global batch i, images i*batch + r*localBatch..., and the correct counts are summed.
  const BatchSource evalSource = [&](uint64_t step, std::span<float> img, std::span<int32_t> lab) {
    const size_t first =
        std::min(ctx.testCount, (step % ctx.cfg.evalSteps) * o.batch + ctx.rank * ctx.localBatch);
    const size_t n = std::min(ctx.localBatch, ctx.testCount - first);
    std::vector<uint32_t> idx(n);
    for (size_t i = 0; i < n; ++i) idx[i] = static_cast<uint32_t>(first + i);
    std::fill(img.begin(), img.end(), 0.0f);
    std::fill(lab.begin(), lab.end(), -1);
    Minibatcher::gather(data.test(), idx, params.inputScale, params.inputOffset,
                        img.subspan(0, n * FashionMnist::kPixels), lab.subspan(0, n));
  };

  ChromeTrace trace(o.tiles ? o.tiles : dev->info().tiles, ctx.clockHz);
  SuperstepTracer tracer(*dev, trace, trainer.trainSyncId(), o.traceSteps);
  if (o.traceSteps > 0) {
    dev->setSyncBreak(true);
    trainer.setStopObserver([&](const RunResult& r) { tracer.onStop(r); });
  }
  CheckpointPlan plan;
  std::optional<TrainingCheckpointDir> checkpointDir;
  if (checkpoints) {
    checkpointDir.emplace(!o.checkpointDir.empty() ? o.checkpointDir
                          : resuming               ? o.resumeDir
                                                   : o.outDir + "/checkpoints");
    plan.dir = &*checkpointDir;
    plan.every = o.checkpointEvery;
  }
  if (o.traceSteps > 0) {
    plan.tracer = &tracer;
    plan.trace = &trace;
  }
  if (resume) {
    // The chip (weights, optimizer state, cycle and counters) and then the host's side of it.
    try {
      trainer.resume(resume->bytes, runStateOf(resume->host.at("run")));
      if (o.traceSteps > 0) {
        trace.restore(resume->host.at("trace"));
        tracer.restore(resume->host.at("tracer"));
      }
    } catch (const nlohmann::json::exception& e) {
      throw Error(fmt::format("train: checkpoint {}: malformed training state: {}", resume->path,
                              e.what()));
    } catch (const Error& e) {
      throw Error(fmt::format("train: checkpoint {}: {}", resume->path, e.what()));
    }
    plan.resume = &*resume;
    if (!o.quiet)
      fmt::print("resuming from {} (epoch {}, step {})\n", resume->path,
                 resume->host.at("epoch").get<uint32_t>(),
                 resume->host.at("run").at("steps_done").get<uint64_t>());
  }
  const TrainTotals totals = trainEpochs(ctx, trainer, log, comm, trainSource, evalSource,
                                         dev->info().tiles, runStart, plan);
  if (totals.interruptedBy != 0) {
    if (ctx.rank > 0) return 128 + totals.interruptedBy;
    fmt::print(stderr,
               "\ntrain: stopped by {} after step {}: saved {}; continue with the same command and "
               "--resume {}\n",
               totals.interruptedBy == SIGINT ? "SIGINT" : "SIGTERM", trainer.runState().stepsDone,
               totals.lastCheckpoint, checkpointDir->dir());
    return 128 + totals.interruptedBy;
  }

  // Reporting.
  const uint32_t tileMemBytes = dev->info().tileMemBytes;
  TrainFigures figures = trainFigures(ctx, totals, dev->info().tiles);
  {
    const CompileReport& report = trainer.report();
    const int step = report.findNode("Repeat", "train");
    // The Repeat runs its body (one step) count times per run of the program.
    if (step >= 0) {
      const ProgramNodeReport& n = report.program[size_t(step)];
      figures.flopsPerStep = static_cast<double>(report.flopsOf(size_t(step))) /
                             static_cast<double>(std::max<uint32_t>(n.count, 1));
    }
    // The hardware's peak, whether or not this program used the matrix unit.
    figures.peakFlopsPerCycle = dev->info().peakFlopsPerCycle();
    figures.peakFlopsPerSecond =
        static_cast<double>(figures.tiles) * figures.peakFlopsPerCycle * ctx.clockHz;
  }
  nlohmann::ordered_json res = trainResult(ctx, totals, figures, tileMemBytes);
  // The translating engine's share of the run (docs/benchmarks.md): the instructions that ran
  // translated, and the windows of several contexts it kept or undid.
  if (o.modelEngine == ModelEngine::Jit) {
    const ModelJitStatistics js = modelJitStatistics(*dev);
    if (js.instructions > 0) {
      res["model_jit"] = {{"instructions", js.instructions},
                          {"translated", js.translated},
                          {"windows_kept", js.windows},
                          {"windows_undone", js.windowFallbacks}};
      // Why translated code stopped (docs/tile.md, "Why translated code stops"): nonzero
      // counts by reason.
      const std::pair<const char*, const JitStopCounts*> kinds[] = {{"undone", &js.windowUndone},
                                                                    {"cut", &js.windowCut},
                                                                    {"skipped", &js.windowSkipped},
                                                                    {"block_exit", &js.blockExits}};
      nlohmann::ordered_json stops = nlohmann::ordered_json::object();
      for (const auto& [kind, counts] : kinds) {
        nlohmann::ordered_json byReason = nlohmann::ordered_json::object();
        for (unsigned r = 0; r < kJitStopReasons; ++r) {
          if ((*counts)[r] != 0) byReason[jitStopName(static_cast<JitStop>(r))] = (*counts)[r];
        }
        stops[kind] = byReason;
      }
      res["model_jit"]["stops"] = stops;
    }
  }
  ModelParameters trained = trainer.modelParameters();
  trained.inputScale = params.inputScale;
  trained.inputOffset = params.inputOffset;
  res["weights_hash"] = fmt::format("{:016x}", weightsHash(trained));
  // "on": the matmuls ran on the matrix unit; "off": the chip has none, or (--matrix-unit off,
  // or the unit's layouts did not fit the tiles) the scalar codelets ran: the same bits.
  res["matrix_unit"] = trainer.usesMatrixUnit() ? "on" : "off";
  if (!trainer.matrixUnitRefusal().empty())
    res["matrix_unit_refusal"] = trainer.matrixUnitRefusal();
  std::vector<double> curve;
  for (const SvgChart::Point& p : totals.lossCurve) curve.push_back(p.y);
  res["loss_curve"] = curve;
  res["total_wall_s"] = secondsSince(t0);
  writeFileChecked(o.outDir + "/result.json", res.dump(2) + "\n");
  writeTrainOutputs(ctx, totals, figures, trace, trained);
  if (!o.reportPath.empty() && ctx.rank == 0) {
    writeReportHtml(o.reportPath,
                    {trainer.report().toJson(), o.traceSteps > 0 ? trace.json() : "", res.dump(),
                     fmt::format("{} on {}", ctx.model->name(), o.device)});
  }
  if (o.onTrained) o.onTrained(trained);

  const int exitCode = o.requireTarget && totals.status != "success" ? 3 : 0;
  if (ctx.rank > 0)
    return exitCode;  // rank 0 prints the summary; every rank wrote its own result.json
  printTrainSummary(ctx, totals, figures, res, tileMemBytes);
  return exitCode;
}

}  // namespace tessera::bench
