// tessera-bench train (docs/training.md): Fashion-MNIST through the compiled MLP on any device,
// reported like MLPerf. The device trains epoch runs of the compiled program (its weights stay on
// it); the host prepares minibatches on the Engine's prefetch thread and writes the log, the
// result, the per-tile trace and the pictures.
#include "train_command.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "mlp_trainer.hpp"
#include "tessera/chip_params.h"
#include "tessera/error.hpp"
#include "train/all_reduce_model.hpp"
#include "train/chrome_trace.hpp"
#include "train/fashion_mnist.hpp"
#include "train/minibatcher.hpp"
#include "train/mlp_parameters.hpp"
#include "train/mlperf_logger.hpp"
#include "train/npz_file.hpp"
#include "train/progress_bar.hpp"
#include "mpi_comm.hpp"
#include "train/svg_chart.hpp"

namespace tessera::bench {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

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
    if (it == cache_.end()) throw Error(fmt::format("training batch {} was asked for too late", step));
    const auto& e = it->second;
    std::copy_n(e.images.begin() + static_cast<std::ptrdiff_t>(first_ * pixels_), rows_ * pixels_, images.begin());
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
      if (dx) trace_.addInterval(t, ChromeTrace::Phase::Exchange, last_, dx);
      if (span > dx + dw) trace_.addInterval(t, ChromeTrace::Phase::Compute, last_ + dx, span - dx - dw);
      if (dw) trace_.addInterval(t, ChromeTrace::Phase::SyncWait, r.cycles - dw, dw);
      prev_[t] = s;
    }
    if (r.reason == StopReason::HostSync) {
      // Host I/O takes no chip cycles (the chip waits stopped): a one-cycle marker on the host.
      trace_.addHostInterval(fmt::format("host sync {}", r.hostSyncId), r.cycles, 1);
      if (r.hostSyncId == trainSync_ && ++trainSyncs_ > steps_) {
        dev_.setSyncBreak(false);
        done_ = true;
      }
    }
    last_ = r.cycles;
  }

 private:
  Device& dev_;
  ChromeTrace& trace_;
  uint32_t trainSync_;
  uint32_t steps_;
  std::vector<TileStats> prev_;
  uint64_t last_ = 0;
  uint32_t trainSyncs_ = 0;
  bool done_ = false;
};

void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw Error(fmt::format("cannot write {}", path));
}

}  // namespace

int runTrain(const TrainOptions& opt, ReplicaComm* comm) {
  const auto t0 = Clock::now();
  if (opt.batch == 0 || opt.epochs == 0) throw Error("train: --batch and --epochs must be at least 1");
  const unsigned replicas = std::max(1u, opt.replicas);
  const unsigned rank = comm ? static_cast<unsigned>(comm->rank()) : 0;
  if (replicas > 1 || (comm && comm->size() > 1)) {
    if (!comm || static_cast<unsigned>(comm->size()) != replicas) {
      throw Error(fmt::format("train: --replicas {} but {} processes were started (mpirun -np {} tessera-bench train "
                              "--replicas {} ...)", replicas, comm ? comm->size() : 1, replicas, replicas));
    }
    if (opt.batch % replicas != 0) {
      throw Error(fmt::format("train: the global batch {} is not a multiple of --replicas {}", opt.batch, replicas));
    }
    // Every replica must train the same network on the same data; only the device may differ.
    comm->checkSame("options", fmt::format("batch {} epochs {} hidden {} lr {} momentum {} target {} max-steps {} "
                                           "seed {} data '{}' load '{}' eval-images {} tiles {} tile-mem {}",
                                           opt.batch, opt.epochs, fmt::join(opt.hidden, ","), opt.learningRate,
                                           opt.momentum, opt.targetAccuracy, opt.maxSteps, opt.seed, opt.dataDir,
                                           opt.loadWeights, opt.evalImages, opt.tiles, opt.tileMemKiB));
  }
  TrainOptions o = opt;
  if (rank > 0) {
    o.outDir = fmt::format("{}/rank-{}", opt.outDir, rank);
    o.quiet = true;
    o.saveWeights.clear();  // every replica holds the same weights: rank 0 saves them
  }
  const size_t localBatch = o.batch / replicas;  // this replica's share of each global minibatch
  const double clockHz = (o.clockMHz > 0 ? o.clockMHz : double{TESS_NOMINAL_CLOCK_MHZ}) * 1e6;
  std::filesystem::create_directories(o.outDir);
  MlperfLogger log(o.outDir + "/mlperf.log");
  log.submission("fashion_mnist_mlp", "tessera", "open", "research", "tessera " + o.device);
  log.cacheClear();
  log.initStart();
  const FashionMnist data = FashionMnist::load(o.dataDir.empty() ? FashionMnist::defaultDir() : o.dataDir);

  MlpConfig cfg;
  cfg.inputs = FashionMnist::kPixels;
  cfg.hidden = o.hidden;
  cfg.classes = FashionMnist::kClasses;
  cfg.batch = localBatch;
  cfg.replicas = replicas;
  cfg.gradientSync = replicas > 1;
  cfg.learningRate = o.learningRate;
  cfg.momentum = o.momentum;
  MlpParameters params = o.loadWeights.empty() ? MlpParameters::initialize(layerSizes(cfg), o.seed)
                                               : MlpParameters::fromNpz(NpzFile::load(o.loadWeights));
  if (params.sizes != layerSizes(cfg)) {
    throw Error(fmt::format("train: {} holds a {}-layer network that does not match --hidden", o.loadWeights,
                            params.layers()));
  }
  // Different seeds for the initialization (seed) and the minibatch order (seed + 1).
  Minibatcher batches(data.train(), o.batch, o.seed + 1, params.inputScale, params.inputOffset);
  const size_t stepsPerEpoch = batches.stepsPerEpoch();
  cfg.trainSteps = static_cast<uint32_t>(o.maxSteps ? std::min<uint64_t>(stepsPerEpoch, o.maxSteps) : stepsPerEpoch);
  const size_t testCount = o.evalImages ? std::min(o.evalImages, data.test().count()) : data.test().count();
  cfg.evalSteps = static_cast<uint32_t>((testCount + o.batch - 1) / o.batch);

  DeviceOptions dopt;
  dopt.tiles = o.tiles;
  if (o.tileMemKiB) dopt.tileMemBytes = o.tileMemKiB * 1024;
  else if (o.device == "model") dopt.tileMemBytes = 128 * 1024;
  auto dev = openDevice(o.device, dopt);
  MlpTrainer trainer(*dev, cfg);
  if (replicas > 1) {
    trainer.setReplicaHooks({[comm](std::span<const float> local, std::span<float> sum) { comm->sumInRankOrder(local, sum); },
                             [comm](std::span<const float> local, std::span<float> all) { comm->gatherInRankOrder(local, all); }});
  }
  writeText(o.outDir + "/compile-report.json", trainer.report().toJson());
  trainer.setParameters(params.weights, params.biases);

  log.globalBatchSize(o.batch);
  log.optBaseLearningRate(std::stod(fmt::format("{}", o.learningRate)));
  log.point("seed", o.seed);
  log.point("replicas", replicas);
  log.point("replica_batch_size", localBatch);
  log.point("opt_momentum", std::stod(fmt::format("{}", o.momentum)));
  log.point("train_samples", static_cast<uint64_t>(cfg.trainSteps) * o.batch);
  log.point("eval_samples", testCount);
  log.initStop();
  log.runStart();
  const auto runStart = Clock::now();

  TrainBatches train(batches, o.batch, FashionMnist::kPixels, rank * localBatch, localBatch);
  const BatchSource trainSource = [&](uint64_t step, std::span<float> img, std::span<int32_t> lab) {
    train.fill(step, img, lab);
  };
  // Evaluation batch i of every evaluation: test images i*batch...; the last one padded with
  // label -1, which never counts as correct. With replicas, replica r takes its share of the
  // global batch i, images i*batch + r*localBatch..., and the correct counts are summed.
  const BatchSource evalSource = [&](uint64_t step, std::span<float> img, std::span<int32_t> lab) {
    const size_t first = std::min(testCount, (step % cfg.evalSteps) * o.batch + rank * localBatch);
    const size_t n = std::min(localBatch, testCount - first);
    std::vector<uint32_t> idx(n);
    for (size_t i = 0; i < n; ++i) idx[i] = static_cast<uint32_t>(first + i);
    std::fill(img.begin(), img.end(), 0.0f);
    std::fill(lab.begin(), lab.end(), -1);
    Minibatcher::gather(data.test(), idx, params.inputScale, params.inputOffset, img.subspan(0, n * FashionMnist::kPixels),
                        lab.subspan(0, n));
  };

  ChromeTrace trace(o.tiles ? o.tiles : dev->info().tiles, clockHz);
  SuperstepTracer tracer(*dev, trace, trainer.trainSyncId(), o.traceSteps);
  if (o.traceSteps > 0) {
    dev->setSyncBreak(true);
    trainer.setStopObserver([&](const RunResult& r) { tracer.onStop(r); });
  }

  const uint64_t totalSteps = static_cast<uint64_t>(cfg.trainSteps) * o.epochs;
  ProgressBar progress(stdout, totalSteps, o.epochs, o.batch);  // samples: global minibatches
  uint32_t epoch = 1;
  trainer.setStepObserver([&](uint64_t step, float loss) {
    if (!o.quiet) progress.update(step, epoch, loss);
  });

  std::vector<SvgChart::Point> lossCurve, accCurve;
  std::vector<TileCycles> tileTotals(dev->info().tiles);
  uint64_t trainCycles = 0, evalCycles = 0, steps = 0;
  double accuracy = 0, timeToTrain = -1, cyclesToTrain = 0;
  std::string status = "aborted";
  double trainWall = 0, replicaSeconds = 0;
  uint64_t gradientBytes = 0;
  EngineStats engine;
  for (; epoch <= o.epochs; ++epoch) {
    log.epochStart(epoch);
    const auto e0 = Clock::now();
    MlpRunResult r = trainer.run(trainSource, evalSource);
    // This run's training share of the wall time, by this chip's own cycles.
    trainWall += secondsSince(e0) * (r.cycles ? static_cast<double>(r.trainCycles) / static_cast<double>(r.cycles) : 1.0);
    if (replicas > 1) {
      // BSP over the replicas: each step ends at the all-reduce, so the slowest one sets the pace.
      r.trainCycles = static_cast<uint64_t>(comm->max(static_cast<double>(r.trainCycles)));
      r.evalCycles = static_cast<uint64_t>(comm->max(static_cast<double>(r.evalCycles)));
      r.evalCorrect = comm->sum(r.evalCorrect);
    }
    replicaSeconds += r.replicaSeconds;
    gradientBytes = r.gradientBytes;
    log.epochStop(epoch);
    for (size_t i = 0; i < r.stepLoss.size(); ++i) lossCurve.push_back({static_cast<double>(steps + i + 1), r.stepLoss[i]});
    steps += r.stepLoss.size();
    trainCycles += r.trainCycles;
    evalCycles += r.evalCycles;
    for (size_t t = 0; t < r.tiles.size(); ++t) {
      tileTotals[t].compute += r.tiles[t].compute;
      tileTotals[t].syncWait += r.tiles[t].syncWait;
      tileTotals[t].exchange += r.tiles[t].exchange;
    }
    engine = r.engine;
    log.evalStart(epoch);
    accuracy = static_cast<double>(r.evalCorrect) / static_cast<double>(testCount);
    log.evalAccuracy(accuracy, epoch);
    log.evalStop(epoch);
    accCurve.push_back({static_cast<double>(steps), accuracy});
    if (accuracy >= o.targetAccuracy) {
      status = "success";
      timeToTrain = std::chrono::duration<double>(Clock::now() - runStart).count();
      cyclesToTrain = static_cast<double>(trainCycles + evalCycles);
      break;
    }
  }
  if (!o.quiet) progress.finish();
  log.runStop(status);
  const double runWall = secondsSince(runStart);

  // Figures.
  const unsigned tiles = dev->info().tiles;
  uint64_t sumCompute = 0, sumSync = 0, sumExchange = 0;
  for (const TileCycles& t : tileTotals) sumCompute += t.compute, sumSync += t.syncWait, sumExchange += t.exchange;
  const double samples = static_cast<double>(steps * o.batch);
  const double cyclesPerStep = steps ? static_cast<double>(trainCycles) / static_cast<double>(steps) : 0;
  // The replicas' all-reduce over modelled chip-to-chip links, once per step, beside the chip's own
  // cycles (the host syncs that carry it through MPI here take no chip cycles). Every tile waits
  // for it: in the BSP breakdown it is a phase of its own, in cycles at the nominal clock.
  AllReduceModel links;
  links.bytesPerSecond = o.linkGBps * 1e9;
  links.stepLatencySeconds = o.linkStepUs * 1e-6;
  const double interChipPerStep = links.seconds(gradientBytes, replicas);
  const uint64_t interChipCycles = static_cast<uint64_t>(std::llround(interChipPerStep * clockHz * static_cast<double>(steps)));
  const uint64_t sumInterChip = interChipCycles * tiles;
  const double allTileCycles = static_cast<double>(sumCompute + sumSync + sumExchange + sumInterChip);
  auto pct = [&](uint64_t v) { return allTileCycles > 0 ? 100.0 * static_cast<double>(v) / allTileCycles : 0.0; };
  const double chipSecondsPerStep = cyclesPerStep / clockHz;
  const double deviceStepSeconds = chipSecondsPerStep + interChipPerStep;
  const double deviceSeconds = static_cast<double>(trainCycles) / clockHz + interChipPerStep * static_cast<double>(steps);

  nlohmann::ordered_json res;
  res["benchmark"] = "fashion_mnist_mlp";
  res["device"] = o.device;
  res["tiles"] = tiles;
  res["tile_mem_bytes"] = dev->info().tileMemBytes;
  res["layers"] = layerSizes(cfg);
  res["global_batch_size"] = o.batch;
  res["replicas"] = replicas;
  res["replica_batch_size"] = localBatch;
  res["rank"] = rank;
  res["learning_rate"] = std::stod(fmt::format("{}", o.learningRate));
  res["momentum"] = std::stod(fmt::format("{}", o.momentum));
  res["seed"] = o.seed;
  res["epochs_run"] = epoch > o.epochs ? o.epochs : epoch;
  res["steps"] = steps;
  res["status"] = status;
  res["target_accuracy"] = o.targetAccuracy;
  res["eval_images"] = testCount;
  res["eval_accuracy"] = accuracy;
  res["time_to_train_s"] = timeToTrain >= 0 ? nlohmann::ordered_json(timeToTrain) : nlohmann::ordered_json(nullptr);
  res["device_time_to_train_s"] =
      timeToTrain >= 0 ? nlohmann::ordered_json(cyclesToTrain / clockHz + interChipPerStep * static_cast<double>(steps)) : nlohmann::ordered_json(nullptr);
  res["nominal_clock_hz"] = clockHz;
  res["run_wall_s"] = runWall;
  res["samples_per_s_wall"] = trainWall > 0 ? samples / trainWall : 0.0;
  res["samples_per_device_s"] = deviceSeconds > 0 ? samples / deviceSeconds : 0.0;
  res["cycles_per_step"] = cyclesPerStep;
  res["step_wall_s"] = steps ? trainWall / static_cast<double>(steps) : 0.0;
  res["step_device_s"] = deviceStepSeconds;
  res["inter_chip"] = {{"schedule", "ring reduce-scatter + all-gather"},
                       {"formula", "2(R-1)/R * bytes / link_bytes_per_s + 2(R-1) * step_latency_s"},
                       {"gradient_bytes", gradientBytes},
                       {"bytes_sent_per_chip", links.bytesSentPerChip(gradientBytes, replicas)},
                       {"link_bytes_per_s", links.bytesPerSecond},
                       {"step_latency_s", links.stepLatencySeconds},
                       {"seconds_per_step", interChipPerStep},
                       {"pct_of_step", deviceStepSeconds > 0 ? 100.0 * interChipPerStep / deviceStepSeconds : 0.0},
                       {"host_allreduce_s", replicaSeconds},
                       {"host_allreduce_pct_of_train_wall", trainWall > 0 ? 100.0 * replicaSeconds / trainWall : 0.0}};
  res["train_cycles"] = trainCycles;
  res["eval_cycles"] = evalCycles;
  res["bsp"] = {{"compute_cycles", sumCompute}, {"sync_cycles", sumSync}, {"exchange_cycles", sumExchange},
                {"compute_pct", pct(sumCompute)}, {"sync_pct", pct(sumSync)}, {"exchange_pct", pct(sumExchange)},
                {"host_io_s", engine.hostIoSeconds}, {"host_syncs", engine.hostSyncs},
                {"inter_chip_cycles", sumInterChip}, {"inter_chip_pct", pct(sumInterChip)},
                {"inter_chip_s", interChipPerStep * static_cast<double>(steps)}};
  res["device_cycles_waiting_for_host_data"] = 0;
  res["prefetch_waits"] = engine.prefetchWaits;
  res["prefetch_wait_s"] = engine.prefetchWaitSeconds;
  {
    // Every replica must end with the same weights: a hash of them (FNV-1a, 64 bits, over the
    // float32 bytes of w0, b0, w1, ...) to compare the ranks' results.
    std::vector<std::vector<float>> w, b;
    trainer.parameters(w, b);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t l = 0; l < w.size(); ++l) {
      for (const std::vector<float>* v : {&w[l], &b[l]}) {
        for (float x : *v) {
          uint32_t bits;
          std::memcpy(&bits, &x, 4);
          for (int i = 0; i < 4; ++i) h = (h ^ ((bits >> (8 * i)) & 0xffu)) * 0x100000001b3ull;
        }
      }
    }
    res["weights_hash"] = fmt::format("{:016x}", h);
  }
  std::vector<double> curve;
  for (const SvgChart::Point& p : lossCurve) curve.push_back(p.y);
  res["loss_curve"] = curve;
  res["total_wall_s"] = secondsSince(t0);
  writeText(o.outDir + "/result.json", res.dump(2) + "\n");

  std::vector<SvgChart::TileTimes> bars;
  for (const TileCycles& t : tileTotals) bars.push_back({t.compute, t.syncWait, t.exchange, 0, interChipCycles});
  SvgChart::write(o.outDir + "/bsp.svg", SvgChart::bspBreakdown(bars, fmt::format("BSP cycles per tile, {} on {}{}", "MLP", o.device,
                                                  replicas > 1 ? fmt::format(", replica {} of {}", rank, replicas) : "")));
  SvgChart::write(o.outDir + "/curves.svg", SvgChart::trainingCurves(lossCurve, accCurve, "Fashion-MNIST MLP: loss and test accuracy"));
  if (o.traceSteps > 0) trace.write(o.outDir + "/trace.json");
  if (!o.saveWeights.empty()) {
    std::vector<std::vector<float>> w, b;
    trainer.parameters(w, b);
    params.weights = w;
    params.biases = b;
    params.toNpz().save(o.saveWeights);
  }

  const int exitCode = o.requireTarget && status != "success" ? 3 : 0;
  if (rank > 0) return exitCode;  // rank 0 prints the summary; every rank wrote its own result.json
  fmt::print("\n{:<38} {}\n", "device", fmt::format("{} ({} tiles x {} KiB)", o.device, tiles, dev->info().tileMemBytes / 1024));
  fmt::print("{:<38} {}\n", "network", fmt::format("{}", fmt::join(layerSizes(cfg), "-")));
  fmt::print("{:<38} {} steps of {} ({} epoch runs)\n", "trained", steps, o.batch, res["epochs_run"].get<uint32_t>());
  if (replicas > 1) fmt::print("{:<38} {} of {} images each (MPI ranks)\n", "replicas", replicas, localBatch);
  fmt::print("{:<38} {:.2f}% (target {:.2f}%): {}\n", "test accuracy", 100 * accuracy, 100 * o.targetAccuracy, status);
  if (timeToTrain >= 0) {
    fmt::print("{:<38} {:.1f} s wall, {:.4f} s device at {:.0f} MHz\n", "time to train", timeToTrain, cyclesToTrain / clockHz,
               clockHz / 1e6);
  }
  fmt::print("{:<38} {:.1f}\n", "samples/s (wall)", res["samples_per_s_wall"].get<double>());
  fmt::print("{:<38} {:.0f} at {:.0f} MHz\n", "samples per device-second", res["samples_per_device_s"].get<double>(),
             clockHz / 1e6);
  fmt::print("{:<38} {:.0f}\n", "cycles per step", cyclesPerStep);
  fmt::print("{:<38} {:.3f} ms wall, {:.3f} ms device ({:.3f} ms chip + {:.3f} ms inter-chip)\n", "time per step",
             res["step_wall_s"].get<double>() * 1e3, deviceStepSeconds * 1e3, chipSecondsPerStep * 1e3,
             interChipPerStep * 1e3);
  if (replicas > 1) {
    fmt::print("{:<38} {} bytes per step: {:.2f} us modelled ({:.1f}% of the device step), {:.3f} s host (MPI)\n",
               "inter-chip all-reduce", gradientBytes, interChipPerStep * 1e6,
               res["inter_chip"]["pct_of_step"].get<double>(), replicaSeconds);
  }
  fmt::print("{:<38} compute {:.1f}%, sync {:.1f}%, exchange {:.1f}%{} ({} / {} / {}{} tile-cycles)\n",
             "BSP (all tiles)", pct(sumCompute), pct(sumSync), pct(sumExchange),
             replicas > 1 ? fmt::format(", inter-chip {:.1f}%", pct(sumInterChip)) : "", sumCompute, sumSync,
             sumExchange, replicas > 1 ? fmt::format(" / {}", sumInterChip) : "");
  fmt::print("{:<38} {:.3f} s host time at {} host syncs (no chip cycles)\n", "host I/O", engine.hostIoSeconds,
             engine.hostSyncs);
  fmt::print("{:<38} 0 cycles (the chip stops at host syncs); {} prefetch waits, {:.3f} s host time\n",
             "device waiting for host data", engine.prefetchWaits, engine.prefetchWaitSeconds);
  fmt::print("\nwrote {0}/mlperf.log, {0}/result.json, {0}/compile-report.json, {0}/bsp.svg, {0}/curves.svg{1}{2}\n",
             o.outDir, o.traceSteps > 0 ? fmt::format(", {}/trace.json", o.outDir) : "",
             o.saveWeights.empty() ? "" : ", " + o.saveWeights);
  return exitCode;
}

}  // namespace tessera::bench
