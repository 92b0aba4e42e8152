#include "mlp_trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

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
  std::vector<uint32_t> evalSyncs;      // host sync ids that bring evaluation images
  uint32_t trainSync = 0;               // the host sync that brings training images
  std::optional<uint64_t> evalStart;    // chip cycle of this run's first evaluation host sync
  std::function<void(const RunResult&)> userObserver;
  std::function<void(uint64_t, float)> stepObserver;
  std::array<StepData, 2> trainCache, evalCache;  // used on the prefetch thread only
  std::vector<uint8_t> lossBuf, correctBuf, evalCorrectBuf;
  uint64_t stepsDone = 0;
  Impl(Device& d, const MlpConfig& c) : dev(d), cfg(c) {}
};

namespace {

std::vector<uint8_t> bytesOf(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

}  // namespace

MlpTrainer::MlpTrainer(Device& dev, const MlpConfig& config) : impl_(std::make_unique<Impl>(dev, config)) {
  Impl& m = *impl_;
  Graph g(Target::of(dev.info()));
  MlpGraph mlp = buildMlp(g, config);
  m.compiled = compile(g, mlp.program);
  m.engine = std::make_unique<Engine>(dev, m.compiled.executable);
  const Executable& exe = m.compiled.executable;
  const int evalImages = exe.findStream("eval_images"), trainImages = exe.findStream("images");
  for (const ExeHostSync& hs : exe.hostSyncs) {
    for (const ExeStreamCopy& c : hs.copies) {
      if (evalImages >= 0 && c.stream == static_cast<uint32_t>(evalImages)) m.evalSyncs.push_back(hs.id);
      if (trainImages >= 0 && c.stream == static_cast<uint32_t>(trainImages)) m.trainSync = hs.id;
    }
  }
  m.engine->setStopObserver([&m](const RunResult& r) {
    if (r.reason == StopReason::HostSync && !m.evalStart &&
        std::find(m.evalSyncs.begin(), m.evalSyncs.end(), r.hostSyncId) != m.evalSyncs.end()) {
      m.evalStart = r.cycles;
    }
    if (m.userObserver) m.userObserver(r);
  });
  // A stream's offset counts its bytes since the load, and a host sync copies one step's bytes in
  // several regions (one per contiguous run of the tensor on a tile): step = offset / step bytes,
  // the region starts at offset % step bytes. The last two steps of each source are kept, so that
  // the regions of a step and the next step's prefetch do not make the source produce it again.
  auto sourceStream = [&m](BatchSource* src, std::array<StepData, 2>* cache, bool imagesPart) {
    return [&m, src, cache, imagesPart](uint64_t offset, std::span<uint8_t> data) {
      const size_t stepBytes = 4 * (imagesPart ? m.cfg.batch * m.cfg.inputs : m.cfg.batch);
      const uint64_t step = offset / stepBytes;
      StepData* d = (*cache)[0].step == step ? &(*cache)[0] : (*cache)[1].step == step ? &(*cache)[1] : nullptr;
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
      if (within + data.size() > stepBytes) throw Error("mlp: a stream copy crosses a step boundary");
      std::memcpy(data.data(), bytes + within, data.size());
    };
  };
  // Device-to-host: collect a step's regions, then hand the whole step on.
  auto collect = [](size_t stepBytes, std::vector<uint8_t>* buf, std::function<void(std::span<const float>)> done) {
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
    m.engine->connectStream("loss", collect(4 * config.batch, &m.lossBuf, [&m](std::span<const float> l) {
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
    m.engine->connectStream("eval_correct", collect(4, &m.evalCorrectBuf, [&m](std::span<const float> c) {
      m.current.evalCorrect += static_cast<uint64_t>(c[0]);
    }));
  }
}

MlpTrainer::~MlpTrainer() = default;

const CompileReport& MlpTrainer::report() const { return impl_->compiled.report; }
const MlpConfig& MlpTrainer::config() const { return impl_->cfg; }

void MlpTrainer::setParameters(const std::vector<std::vector<float>>& weights,
                               const std::vector<std::vector<float>>& biases) {
  const std::vector<size_t> sizes = layerSizes(impl_->cfg);
  if (weights.size() + 1 != sizes.size() || biases.size() + 1 != sizes.size()) {
    throw Error(fmt::format("mlp: {} layers, got {} weight and {} bias arrays", sizes.size() - 1, weights.size(),
                            biases.size()));
  }
  for (size_t l = 0; l < weights.size(); ++l) {
    if (weights[l].size() != sizes[l] * sizes[l + 1] || biases[l].size() != sizes[l + 1]) {
      throw Error(fmt::format("mlp: layer {} is {} x {}, got {} weights and {} biases", l, sizes[l], sizes[l + 1],
                              weights[l].size(), biases[l].size()));
    }
    impl_->engine->writeTensor(fmt::format("w{}", l), bytesOf(weights[l]));
    impl_->engine->writeTensor(fmt::format("b{}", l), bytesOf(biases[l]));
  }
}

void MlpTrainer::parameters(std::vector<std::vector<float>>& weights, std::vector<std::vector<float>>& biases) {
  const size_t layers = layerSizes(impl_->cfg).size() - 1;
  weights.assign(layers, {});
  biases.assign(layers, {});
  for (size_t l = 0; l < layers; ++l) {
    for (auto [name, dst] : {std::pair{fmt::format("w{}", l), &weights[l]}, std::pair{fmt::format("b{}", l), &biases[l]}}) {
      const std::vector<uint8_t> b = impl_->engine->readTensor(name);
      dst->resize(b.size() / 4);
      std::memcpy(dst->data(), b.data(), b.size());
    }
  }
}

Device& MlpTrainer::device() { return impl_->dev; }

uint32_t MlpTrainer::trainSyncId() const { return impl_->trainSync; }

void MlpTrainer::setStepObserver(std::function<void(uint64_t, float)> observer) {
  impl_->stepObserver = std::move(observer);
}

void MlpTrainer::setStopObserver(std::function<void(const RunResult&)> observer) {
  impl_->userObserver = std::move(observer);
}

MlpRunResult MlpTrainer::run(const BatchSource& train, const BatchSource& eval, uint64_t maxCycles) {
  Impl& m = *impl_;
  m.train = train;
  m.eval = eval;
  m.current = MlpRunResult{};
  m.evalStart.reset();
  if (m.ran) m.engine->restart();
  m.ran = true;
  const RunResult r = m.engine->run(maxCycles);
  if (r.reason == StopReason::Trap) throw Error("mlp: " + describeTrap(r.trap));
  if (r.reason != StopReason::Halted) throw Error(fmt::format("mlp: the run did not end within {} cycles", maxCycles));
  MlpRunResult out = std::move(m.current);
  out.cycles = r.cycles;
  out.trainCycles = m.evalStart.value_or(r.cycles);
  out.evalCycles = r.cycles - out.trainCycles;
  const unsigned tiles = m.dev.info().tiles;
  for (unsigned t = 0; t < tiles; ++t) {
    const TileStats s = m.dev.stats(t);
    out.tiles.push_back({r.cycles - s.syncWaitCycles - s.exchangeCycles, s.syncWaitCycles, s.exchangeCycles});
  }
  out.engine = m.engine->stats();
  return out;
}

}  // namespace tessera::bench
