#include "mlp_trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "tessera/error.hpp"

namespace tessera::bench {

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
  const size_t imageFloats = config.batch * config.inputs;
  // A stream's offset counts bytes since the load: step = offset / bytes per step.
  auto images = [&m, imageFloats](BatchSource* src, bool evalStream) {
    return [&m, imageFloats, src, evalStream](uint64_t offset, std::span<uint8_t> data) {
      const uint64_t step = offset / (imageFloats * 4);
      std::vector<float> img(imageFloats);
      std::vector<int32_t> lab(m.cfg.batch);
      (*src)(step, img, lab);
      (void)evalStream;
      std::memcpy(data.data(), img.data(), data.size());
    };
  };
  auto labels = [&m, imageFloats](BatchSource* src) {
    return [&m, imageFloats, src](uint64_t offset, std::span<uint8_t> data) {
      const uint64_t step = offset / (m.cfg.batch * 4);
      std::vector<float> img(imageFloats);
      std::vector<int32_t> lab(m.cfg.batch);
      (*src)(step, img, lab);
      std::memcpy(data.data(), lab.data(), data.size());
    };
  };
  if (config.trainSteps > 0) {
    m.engine->connectStream("images", images(&m.train, false));
    m.engine->connectStream("labels", labels(&m.train));
    m.engine->connectStream("loss", [&m](uint64_t, std::span<uint8_t> data) {
      std::vector<float> l(data.size() / 4);
      std::memcpy(l.data(), data.data(), data.size());
      float sum = 0;
      for (float x : l) sum += x;
      m.current.stepLoss.push_back(sum / static_cast<float>(l.size()));
      ++m.stepsDone;
      if (m.stepObserver) m.stepObserver(m.stepsDone, m.current.stepLoss.back());
    });
    m.engine->connectStream("correct", [&m](uint64_t, std::span<uint8_t> data) {
      float c;
      std::memcpy(&c, data.data(), 4);
      m.current.stepCorrect.push_back(static_cast<uint32_t>(c));
    });
  }
  if (config.evalSteps > 0) {
    m.engine->connectStream("eval_images", images(&m.eval, true));
    m.engine->connectStream("eval_labels", labels(&m.eval));
    m.engine->connectStream("eval_correct", [&m](uint64_t, std::span<uint8_t> data) {
      float c;
      std::memcpy(&c, data.data(), 4);
      m.current.evalCorrect += static_cast<uint64_t>(c);
    });
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
