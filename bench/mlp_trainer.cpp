#include "mlp_trainer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstring>
#include <optional>
#include <span>

#include "tessera/checkpoint.hpp"
#include "tessera/error.hpp"

namespace tessera::bench {

namespace {

// One step of a BatchSource, kept while its regions are copied.
struct StepData {
  uint64_t step = ~uint64_t{0};
  std::vector<float> images;
  std::vector<int32_t> labels;
};

}  // namespace

struct MlpTrainer::Impl {
  Device& dev;
  MlpConfig cfg;
  Compiled compiled;
  std::unique_ptr<Engine> engine;
  bool ran = false;
  BatchSource train, eval;
  MlpRunResult current;
  std::vector<uint32_t> evalSyncs;                // host sync ids that bring evaluation images
  uint32_t trainSync = 0;                         // the host sync that brings training images
  size_t trainSyncIndex = 0;                      // its index in Executable::hostSyncs
  std::function<float(uint64_t)> learningRateAt;  // the schedule, if set
  float writtenRate = 0;                          // the "lr" last written by the schedule
  bool rateWritten = false;
  std::optional<uint64_t> evalStart;  // chip cycle of this run's first evaluation host sync
  std::function<void(const RunResult&)> userObserver;
  std::function<void(uint64_t, float)> stepObserver;
  std::array<StepData, 2> trainCache, evalCache;  // used on the prefetch thread only
  std::vector<uint8_t> lossBuf, correctBuf, evalCorrectBuf, gradBuf;
  uint64_t stepsDone = 0;
  ReplicaHooks hooks;
  std::vector<float> rows;     // gradientSync: this step's row losses
  std::vector<float> gradSum;  // gradientSync: the summed gradients of the last step
  uint64_t gradSteps = 0;      // steps whose gradients were summed
  double replicaSeconds = 0;
  bool hooksSet = false;
  std::function<bool(const RunResult&)> syncHook;
  bool stopped = false;     // the sync hook ended the run
  bool resumed = false;     // the next run() continues a restored one
  EngineStats statsBase;    // the figures of the runs before a resume
  bool matrixUnit = false;  // the graph's matmuls run on the matrix unit
  std::string unitRefusal;  // why not, when the device has the unit
  Impl(Device& d, const MlpConfig& c) : dev(d), cfg(c) {}
};

namespace {

std::vector<uint8_t> bytesOf(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

}  // namespace

MlpTrainer::MlpTrainer(Device& dev, const MlpConfig& config)
    : impl_(std::make_unique<Impl>(dev, config)) {
  Impl& m = *impl_;
  // One replica: its own gradients are the sum, its rows all the rows.
  auto copy = [](std::span<const float> local, std::span<float> out) {
    std::copy(local.begin(), local.end(), out.begin());
  };
  m.hooks = {copy, copy};
  // The BSP breakdown is the chip's cycles less each tile's sync-wait and exchange counters, which
  // wrap after 2^counterBits cycles on a chip with narrower counters (the iCE40 board's).
  if (dev.info().counterBits < 64) {
    throw Error(
        fmt::format("mlp: the device's tile counters are {} bits wide and wrap during a "
                    "training run: the BSP breakdown needs 64-bit counters",
                    dev.info().counterBits));
  }
  m.compiled = compileMlp(Target::of(dev.info()), config, &m.matrixUnit, &m.unitRefusal);
  m.engine = std::make_unique<Engine>(dev, m.compiled.executable);
  const Executable& exe = m.compiled.executable;
  const int evalImages = exe.findStream("eval_images"), trainImages = exe.findStream("images");
  for (size_t h = 0; h < exe.hostSyncs.size(); ++h) {
    const ExeHostSync& hs = exe.hostSyncs[h];
    for (const ExeStreamCopy& c : hs.copies) {
      if (evalImages >= 0 && c.stream == static_cast<uint32_t>(evalImages))
        m.evalSyncs.push_back(hs.id);
      if (trainImages >= 0 && c.stream == static_cast<uint32_t>(trainImages)) {
        m.trainSync = hs.id;
        m.trainSyncIndex = h;
      }
    }
  }
  m.engine->setStopObserver([&m](const RunResult& r) {
    if (r.reason == StopReason::HostSync && !m.evalStart &&
        std::find(m.evalSyncs.begin(), m.evalSyncs.end(), r.hostSyncId) != m.evalSyncs.end()) {
      m.evalStart = r.cycles;
    }
    if (m.userObserver) m.userObserver(r);
  });
  m.engine->setSyncObserver([&m](const RunResult& r) {
    // A training step's images have just arrived and its update has not run: its learning rate
    // goes into "lr" now (before a checkpoint of this sync, which must hold it).
    if (r.reason == StopReason::HostSync && m.learningRateAt && m.cfg.trainSteps > 0 &&
        r.hostSyncId == m.trainSync) {
      const uint64_t step = m.engine->hostSyncCounts().at(m.trainSyncIndex) - 1;
      const float lr = m.learningRateAt(step);
      if (!m.rateWritten || std::bit_cast<uint32_t>(lr) != std::bit_cast<uint32_t>(m.writtenRate)) {
        m.engine->writeTensor("lr", std::span(reinterpret_cast<const uint8_t*>(&lr), sizeof lr));
        m.writtenRate = lr;
        m.rateWritten = true;
      }
    }
    if (r.reason != StopReason::HostSync || !m.syncHook || m.syncHook(r)) return true;
    m.stopped = true;
    return false;
  });
  // A stream's offset counts its bytes since the load, and a host sync copies one step's bytes in
  // several regions (one per contiguous run of the tensor on a tile): step = offset / step bytes,
  // the region starts at offset % step bytes. The last two steps of each source are kept, so that
  // the regions of a step and the next step's prefetch do not make the source produce it again.
  auto sourceStream = [&m](BatchSource* src, std::array<StepData, 2>* cache, bool imagesPart) {
    return [&m, src, cache, imagesPart](uint64_t offset, std::span<uint8_t> data) {
      const size_t stepBytes = 4 * (imagesPart ? m.cfg.batch * m.cfg.inputs : m.cfg.batch);
      const uint64_t step = offset / stepBytes;
      StepData* d = (*cache)[0].step == step   ? &(*cache)[0]
                    : (*cache)[1].step == step ? &(*cache)[1]
                                               : nullptr;
      if (!d) {
        d = &(*cache)[step % 2];
        d->images.resize(m.cfg.batch * m.cfg.inputs);
        d->labels.resize(m.cfg.batch);
        (*src)(step, d->images, d->labels);
        d->step = step;
      }
      const uint8_t* bytes = imagesPart ? reinterpret_cast<const uint8_t*>(d->images.data())
                                        : reinterpret_cast<const uint8_t*>(d->labels.data());
      const size_t within = static_cast<size_t>(offset % stepBytes);
      if (within + data.size() > stepBytes)
        throw Error("mlp: a stream copy crosses a step boundary");
      std::memcpy(data.data(), bytes + within, data.size());
    };
  };
  // Device-to-host: collect a step's regions, then hand the whole step on.
  auto collect = [](size_t stepBytes, std::vector<uint8_t>* buf,
                    std::function<void(std::span<const float>)> done) {
    return [stepBytes, buf, done](uint64_t offset, std::span<uint8_t> data) {
      buf->resize(stepBytes);
      const size_t within = static_cast<size_t>(offset % stepBytes);
      std::memcpy(buf->data() + within, data.data(), data.size());
      if (within + data.size() == stepBytes) {
        std::vector<float> f(stepBytes / 4);
        std::memcpy(f.data(), buf->data(), stepBytes);
        done(f);
      }
    };
  };
  if (config.trainSteps > 0) {
    m.engine->connectStream("images", sourceStream(&m.train, &m.trainCache, true));
    m.engine->connectStream("labels", sourceStream(&m.train, &m.trainCache, false));
  }
  auto timed = [&m](auto&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    m.replicaSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  if (config.trainSteps > 0 && config.gradientSync) {
    // Loss and correct count first: every replica's rows gathered in replica order (the order of
    // the global minibatch), summed left to right as the one-chip step's rows are.
    m.engine->connectStream(
        "loss", collect(4 * config.batch, &m.lossBuf,
                        [&m](std::span<const float> l) { m.rows.assign(l.begin(), l.end()); }));
    m.engine->connectStream(
        "correct", collect(4, &m.correctBuf, [&m, timed](std::span<const float> c) {
          std::vector<float> local = m.rows;
          local.push_back(c[0]);
          std::vector<float> all(local.size() * m.cfg.replicas);
          timed([&] { m.hooks.gather(local, all); });
          float sum = 0;
          uint32_t correct = 0;
          for (uint32_t r = 0; r < m.cfg.replicas; ++r) {
            for (size_t i = 0; i < m.cfg.batch; ++i) sum += all[r * local.size() + i];
            correct += static_cast<uint32_t>(all[r * local.size() + m.cfg.batch]);
          }
          m.current.stepLoss.push_back(sum / static_cast<float>(m.cfg.batch * m.cfg.replicas));
          m.current.stepCorrect.push_back(correct);
          ++m.stepsDone;
          if (m.stepObserver) m.stepObserver(m.stepsDone, m.current.stepLoss.back());
        }));
    const size_t gradBytes = 4 * gradientCount(config);
    m.engine->connectStream("grads",
                            collect(gradBytes, &m.gradBuf, [&m, timed](std::span<const float> g) {
                              m.gradSum.resize(g.size());
                              timed([&] { m.hooks.sumGradients(g, m.gradSum); });
                              ++m.gradSteps;
                            }));
    // The sum goes back at the next host sync, produced there (never prefetched: it depends on the
    // gradients the device has just sent).
    m.engine->connectStreamAtSync(
        "grads_sum", [&m, gradBytes](uint64_t offset, std::span<uint8_t> data) {
          const uint64_t step = offset / gradBytes;
          const size_t within = static_cast<size_t>(offset % gradBytes);
          if (step + 1 != m.gradSteps) {
            throw Error(fmt::format("mlp: summed gradients of step {} asked for, {} steps summed",
                                    step + 1, m.gradSteps));
          }
          if (within + data.size() > gradBytes)
            throw Error("mlp: a stream copy crosses a step boundary");
          std::memcpy(data.data(), reinterpret_cast<const uint8_t*>(m.gradSum.data()) + within,
                      data.size());
        });
  } else if (config.trainSteps > 0) {
    m.engine->connectStream(
        "loss", collect(4 * config.batch, &m.lossBuf, [&m](std::span<const float> l) {
          float sum = 0;  // row losses left to right, as the CPU reference sums them
          for (float x : l) sum += x;
          m.current.stepLoss.push_back(sum / static_cast<float>(l.size()));
          ++m.stepsDone;
          if (m.stepObserver) m.stepObserver(m.stepsDone, m.current.stepLoss.back());
        }));
    m.engine->connectStream("correct", collect(4, &m.correctBuf, [&m](std::span<const float> c) {
                              m.current.stepCorrect.push_back(static_cast<uint32_t>(c[0]));
                            }));
  }
  if (config.evalSteps > 0) {
    m.engine->connectStream("eval_images", sourceStream(&m.eval, &m.evalCache, true));
    m.engine->connectStream("eval_labels", sourceStream(&m.eval, &m.evalCache, false));
    m.engine->connectStream("eval_correct",
                            collect(4, &m.evalCorrectBuf, [&m](std::span<const float> c) {
                              m.current.evalCorrect += static_cast<uint64_t>(c[0]);
                            }));
  }
}

MlpTrainer::~MlpTrainer() = default;

void MlpTrainer::setReplicaHooks(ReplicaHooks hooks) {
  if (!hooks.sumGradients || !hooks.gather) throw Error("mlp: replica hooks need both functions");
  impl_->hooks = std::move(hooks);
  impl_->hooksSet = true;
}

const CompileReport& MlpTrainer::report() const {
  return impl_->compiled.report;
}
const MlpConfig& MlpTrainer::config() const {
  return impl_->cfg;
}

void MlpTrainer::setParameters(const std::vector<std::vector<float>>& weights,
                               const std::vector<std::vector<float>>& biases) {
  const std::vector<size_t> sizes = layerSizes(impl_->cfg);
  if (weights.size() + 1 != sizes.size() || biases.size() + 1 != sizes.size()) {
    throw Error(fmt::format("mlp: {} layers, got {} weight and {} bias arrays", sizes.size() - 1,
                            weights.size(), biases.size()));
  }
  for (size_t l = 0; l < weights.size(); ++l) {
    if (weights[l].size() != sizes[l] * sizes[l + 1] || biases[l].size() != sizes[l + 1]) {
      throw Error(fmt::format("mlp: layer {} is {} x {}, got {} weights and {} biases", l, sizes[l],
                              sizes[l + 1], weights[l].size(), biases[l].size()));
    }
    impl_->engine->writeTensor(fmt::format("w{}", l), bytesOf(weights[l]));
    impl_->engine->writeTensor(fmt::format("b{}", l), bytesOf(biases[l]));
  }
}

void MlpTrainer::parameters(std::vector<std::vector<float>>& weights,
                            std::vector<std::vector<float>>& biases) {
  const size_t layers = layerSizes(impl_->cfg).size() - 1;
  weights.assign(layers, {});
  biases.assign(layers, {});
  for (size_t l = 0; l < layers; ++l) {
    for (auto [name, dst] : {std::pair{fmt::format("w{}", l), &weights[l]},
                             std::pair{fmt::format("b{}", l), &biases[l]}}) {
      const std::vector<uint8_t> b = impl_->engine->readTensor(name);
      dst->resize(b.size() / 4);
      std::memcpy(dst->data(), b.data(), b.size());
    }
  }
}

namespace {

// [rows, cols] -> [cols, rows].
std::vector<float> transposed(const std::vector<float>& v, size_t rows, size_t cols) {
  std::vector<float> t(v.size());
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) t[j * rows + i] = v[i * cols + j];
  return t;
}

}  // namespace

void MlpTrainer::setParameters(const ModelParameters& params) {
  const std::shared_ptr<const Model> model = modelOf(impl_->cfg);
  const std::vector<ParameterShape> shapes = model->parameterShapes();
  params.validate();
  if (params.shapes.size() != shapes.size())
    throw Error(fmt::format("{}: {} parameter arrays given, the model has {}", model->name(),
                            params.shapes.size(), shapes.size()));
  for (size_t i = 0; i < shapes.size(); ++i) {
    const ParameterShape& s = params.shapes[i];
    if (s.name != shapes[i].name || s.shape != shapes[i].shape)
      throw Error(fmt::format("{}: parameter {} is {} ({}), the model's is {} ({})", model->name(),
                              i, s.name, fmt::join(s.shape, ", "), shapes[i].name,
                              fmt::join(shapes[i].shape, ", ")));
    const std::vector<float>& v = params.values[i];
    impl_->engine->writeTensor(
        s.name, bytesOf(model->deviceTransposed(i) ? transposed(v, s.shape[0], s.shape[1]) : v));
  }
}

ModelParameters MlpTrainer::modelParameters() {
  const std::shared_ptr<const Model> model = modelOf(impl_->cfg);
  ModelParameters p;
  p.shapes = model->parameterShapes();
  for (size_t i = 0; i < p.shapes.size(); ++i) {
    const ParameterShape& s = p.shapes[i];
    const std::vector<uint8_t> b = impl_->engine->readTensor(s.name);
    std::vector<float> v(b.size() / 4);
    std::memcpy(v.data(), b.data(), b.size());
    p.values.push_back(model->deviceTransposed(i) ? transposed(v, s.shape[1], s.shape[0]) : v);
  }
  p.validate();
  return p;
}

void MlpTrainer::setSyncHook(std::function<bool(const RunResult&)> hook) {
  impl_->syncHook = std::move(hook);
}

MlpRunState MlpTrainer::runState() const {
  const Impl& m = *impl_;
  MlpRunState s;
  s.stepLoss = m.current.stepLoss;
  s.stepCorrect = m.current.stepCorrect;
  s.evalCorrect = m.current.evalCorrect;
  s.evalStart = m.evalStart;
  s.stepsDone = m.stepsDone;
  s.streamOffsets = m.engine->streamOffsets();
  s.hostSyncCounts = m.engine->hostSyncCounts();
  s.gradientSum = m.gradSum;
  s.gradientSteps = m.gradSteps;
  const EngineStats e = m.engine->stats();
  const EngineStats& b = m.statsBase;
  s.engine = {b.hostSyncs + e.hostSyncs,
              b.hostToDeviceBytes + e.hostToDeviceBytes,
              b.deviceToHostBytes + e.deviceToHostBytes,
              b.deviceSeconds + e.deviceSeconds,
              b.hostIoSeconds + e.hostIoSeconds,
              b.prefetchWaits + e.prefetchWaits,
              b.prefetchWaitSeconds + e.prefetchWaitSeconds,
              b.prefetchMissBytes + e.prefetchMissBytes};
  return s;
}

uint64_t MlpTrainer::trainBatchesTaken() const {
  const int images = impl_->compiled.executable.findStream("images");
  if (images < 0) return 0;
  return impl_->engine->streamOffsets().at(static_cast<size_t>(images)) /
         (4 * impl_->cfg.batch * impl_->cfg.inputs);
}

std::vector<uint8_t> MlpTrainer::saveCheckpoint(std::span<const uint8_t> appData) {
  return tessera::saveCheckpoint(impl_->dev, appData);
}

void MlpTrainer::resume(std::span<const uint8_t> checkpoint, const MlpRunState& state) {
  Impl& m = *impl_;
  if (m.ran) throw Error("mlp: resume needs a trainer that has not run");
  if (state.streamOffsets.size() != m.engine->streamOffsets().size())
    throw Error(fmt::format("mlp: the saved run has {} streams, the program {}",
                            state.streamOffsets.size(), m.engine->streamOffsets().size()));
  restoreCheckpoint(m.dev, checkpoint);
  m.engine->resumeFromCheckpoint(state.streamOffsets, state.hostSyncCounts);
  m.current = MlpRunResult{};
  m.current.stepLoss = state.stepLoss;
  m.current.stepCorrect = state.stepCorrect;
  m.current.evalCorrect = state.evalCorrect;
  m.evalStart = state.evalStart;
  m.stepsDone = state.stepsDone;
  m.statsBase = state.engine;
  m.gradSum = state.gradientSum;
  m.gradSteps = state.gradientSteps;
  m.resumed = true;
}

Device& MlpTrainer::device() {
  return impl_->dev;
}

std::optional<MlpTrainer::LossScaleState> MlpTrainer::lossScaleState() {
  const Impl& m = *impl_;
  if (!m.cfg.dynamicLossScale || m.cfg.trainSteps == 0) return std::nullopt;
  const std::vector<uint8_t> scale = m.engine->readTensor(kLossScaleTensor);
  const std::vector<uint8_t> state = m.engine->readTensor(kLossScaleStateTensor);
  if (scale.size() != 4 || state.size() != 8)
    throw Error("mlp: the device's loss scale tensors have unexpected sizes");
  LossScaleState s;
  std::memcpy(&s.scale, scale.data(), 4);
  std::memcpy(&s.goodRun, state.data(), 4);
  std::memcpy(&s.skipped, state.data() + 4, 4);
  return s;
}

bool MlpTrainer::usesMatrixUnit() const {
  return impl_->matrixUnit;
}

const std::string& MlpTrainer::matrixUnitRefusal() const {
  return impl_->unitRefusal;
}

uint32_t MlpTrainer::trainSyncId() const {
  return impl_->trainSync;
}

void MlpTrainer::setLearningRateSchedule(std::function<float(uint64_t step)> learningRateAt) {
  impl_->learningRateAt = std::move(learningRateAt);
  impl_->rateWritten = false;
}

void MlpTrainer::setStepObserver(std::function<void(uint64_t, float)> observer) {
  impl_->stepObserver = std::move(observer);
}

void MlpTrainer::setStopObserver(std::function<void(const RunResult&)> observer) {
  impl_->userObserver = std::move(observer);
}

MlpRunResult MlpTrainer::run(const BatchSource& train, const BatchSource& eval,
                             uint64_t maxCycles) {
  Impl& m = *impl_;
  m.train = train;
  m.eval = eval;
  m.replicaSeconds = 0;
  if (m.cfg.replicas > 1 && !m.hooksSet) {
    throw Error(fmt::format("mlp: {} replicas but no replica hooks (MlpTrainer::setReplicaHooks)",
                            m.cfg.replicas));
  }
  if (m.resumed) {
    m.resumed = false;  // the restored run goes on: its results so far are in m.current
  } else {
    m.current = MlpRunResult{};
    m.evalStart.reset();
    if (m.ran) m.engine->restart();
  }
  m.ran = true;
  m.stopped = false;
  const RunResult r = m.engine->run(maxCycles);
  if (r.reason == StopReason::Trap) throw Error("mlp: " + describeTrap(r.trap));
  if (m.stopped && r.reason == StopReason::HostSync) {
    MlpRunResult out = std::move(m.current);
    out.stopped = true;
    out.cycles = r.cycles;
    out.engine = runState().engine;
    return out;
  }
  if (r.reason != StopReason::Halted)
    throw Error(fmt::format("mlp: the run did not end within {} cycles", maxCycles));
  MlpRunResult out = std::move(m.current);
  out.cycles = r.cycles;
  out.trainCycles = m.evalStart.value_or(r.cycles);
  out.evalCycles = r.cycles - out.trainCycles;
  const unsigned tiles = m.dev.info().tiles;
  for (unsigned t = 0; t < tiles; ++t) {
    const TileStats s = m.dev.stats(t);
    out.tiles.push_back(
        {r.cycles - s.syncWaitCycles - s.exchangeCycles, s.syncWaitCycles, s.exchangeCycles});
  }
  out.engine = runState().engine;
  out.replicaSeconds = m.replicaSeconds;
  out.gradientBytes = m.cfg.gradientSync ? 4 * gradientCount(m.cfg) : 0;
  return out;
}

}  // namespace tessera::bench
