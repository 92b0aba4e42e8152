// LeNet-5 (bench/model.cpp) trained on devices against its CPU reference (bench/train/
// cpu_lenet.cpp), and its saved weights evaluated by NumPy.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "cpu_lenet.hpp"
#include "fashion_mnist.hpp"
#include "minibatcher.hpp"
#include "mlp_trainer.hpp"
#include "npz_file.hpp"
#include "reference_run.hpp"
#include "tessera/ops.hpp"
#include "train_command.hpp"

namespace tessera::bench {
namespace {

std::unique_ptr<Device> open(const std::string& spec, unsigned tiles, uint32_t memKiB) {
  DeviceOptions o;
  o.tiles = tiles;
  o.tileMemBytes = memKiB * 1024;
  return openDevice(spec, o);
}

// The reference with the k splits of the fc matmul plans for the target the trainer compiled
// for (the device's, or the same without the matrix unit where its layouts did not fit: the
// unit plans its own k split where the scalar one does not suit it).
CpuLenet reference(const ModelParameters& p, const CpuOptimizerConfig& opt, const Target& target,
                   size_t batch) {
  CpuLenet cpu(p, opt);
  Graph g(target);
  const size_t dense[4] = {400, 120, 84, 10};
  CpuMlp::KSplits ks;
  for (size_t l = 0; l < 3; ++l) {
    ks.forward.push_back(ops::planMatMul(g, batch, dense[l], dense[l + 1]).k);
    ks.backward.push_back(ops::planMatMul(g, batch, dense[l + 1], dense[l]).k);
  }
  cpu.setKSplits(ks);
  return cpu;
}

// Trains `steps` steps on dev and on the CPU; every step's loss and correct count, and the
// parameters after them, equal bit for bit. Returns the run.
MlpRunResult expectMatchesReference(Device& dev, size_t batch, uint32_t steps,
                                    const CpuOptimizerConfig& opt, ModelParameters* trained,
                                    bool convsOnUnit = false) {
  MlpTrainer t(dev, referenceTrainConfig("lenet", batch, steps, opt));
  if (convsOnUnit) {
    // Convolutions on the matrix unit where it pays (docs/library.md, "conv2d on the matrix
    // unit"): the same bits as the scalar codelets, so the same reference.
    const std::vector<std::string>& used = t.report().codelets;
    EXPECT_NE(std::find(used.begin(), used.end(), "ConvGatherAmp"), used.end());
    EXPECT_NE(std::find(used.begin(), used.end(), "MatMulAmp"), used.end());
  }
  const ModelParameters p = LenetModel().initialize(11);
  t.setParameters(p);
  CpuLenet cpu = reference(p, opt, t.report().target, batch);
  const MlpRunResult r = expectRunMatchesReference(t, cpu, p, batch, steps);
  if (trained) *trained = t.modelParameters();
  return r;
}

TEST(LenetTrainer, MatchesTheCpuReferenceBitForBitWithEveryOptimizer) {
  const auto optimizers = everyOptimizer();
  for (const auto& [name, opt] : optimizers) {
    SCOPED_TRACE(name);
    auto dev = open("model", 4, 624);
    expectMatchesReference(*dev, 4, 3, opt, nullptr);
  }
  // At 624 KiB the 4-tile step does not fit with the matrix unit's layouts (the trainer falls
  // back to the scalar codelets); at 1 MiB the matmuls and convolutions run on the unit.
  SCOPED_TRACE("adam, matrix unit");
  auto dev = open("model", 4, 1024);
  expectMatchesReference(*dev, 4, 3, optimizers.back().second, nullptr, true);
}

// LeNet on the RTL's 16-tile chip (16 tiles of 128 KiB, rtl/params.json FULL_CHIP_TILE_MEM_BYTES;
// LeNet's 61,706 parameters do not fit the 4-tile chip's 64 KiB tiles): two SGD steps of batch 2
// give the CPU reference's losses and weights bit for bit, and the model's cycles on the same chip.
TEST(LenetTrainer, RtlGivesTheReferencesWeightsAndTheModelsCycles) {
  const CpuOptimizerConfig sgd = everyOptimizer().front().second;
  auto model = open("model", 16, 128);
  const MlpRunResult m = expectMatchesReference(*model, 2, 2, sgd, nullptr);
  auto rtl = open("rtl", 16, 128);
  const MlpRunResult r = expectMatchesReference(*rtl, 2, 2, sgd, nullptr);
  EXPECT_EQ(r.cycles, m.cycles);
  EXPECT_EQ(r.tiles.size(), m.tiles.size());
  for (size_t t = 0; t < r.tiles.size() && t < m.tiles.size(); ++t) {
    EXPECT_EQ(r.tiles[t].compute, m.tiles[t].compute) << "tile " << t;
    EXPECT_EQ(r.tiles[t].syncWait, m.tiles[t].syncWait) << "tile " << t;
    EXPECT_EQ(r.tiles[t].exchange, m.tiles[t].exchange) << "tile " << t;
  }
  EXPECT_GT(m.cycles, 0u);
}

// A short run of the command with --model lenet; the saved .npz has PyTorch's state_dict names
// and layouts, and NumPy, from the file alone, predicts the evaluated test images as the device
// did (the same correct count) and computes the reference's logits.
TEST(LenetTrainer, SavedWeightsEvaluateInNumpy) {
  const std::string out = ::testing::TempDir() + "/tessera-lenet-test";
  std::filesystem::remove_all(out);
  TrainOptions o;
  o.model = "lenet";
  o.tiles = 4;
  o.batch = 8;
  o.maxSteps = 4;
  o.evalImages = 40;
  o.traceSteps = 0;
  o.outDir = out;
  o.saveWeights = out + "/lenet.npz";
  o.quiet = true;
  ASSERT_EQ(runTrain(o), 0);
  std::ifstream rf(out + "/result.json");
  const nlohmann::json res = nlohmann::json::parse(rf);
  EXPECT_EQ(res["model"], "lenet");
  EXPECT_EQ(res["optimizer"], "adam");
  EXPECT_EQ(res["tile_mem_bytes"], 624 * 1024);
  EXPECT_EQ(res["parameters"]["fc0.weight"], nlohmann::json::array({120, 400}));
  const NpzFile npz = NpzFile::load(o.saveWeights);
  std::vector<std::string> names;
  for (const ParameterShape& s : lenetShapes()) {
    names.push_back(s.name);
    EXPECT_EQ(npz.get(s.name).shape, s.shape) << s.name;
  }
  names.push_back("input_scale");
  names.push_back("input_offset");
  EXPECT_EQ(npz.names(), names);
  // The first 40 test images and the reference's logits for them, for NumPy.
  const FashionMnist data = FashionMnist::load();
  const ModelParameters p = ModelParameters::fromNpz(npz, lenetShapes(), o.saveWeights);
  std::vector<uint32_t> idx(40);
  for (uint32_t i = 0; i < 40; ++i) idx[i] = i;
  std::vector<float> img(40 * 784);
  std::vector<int32_t> lab(40);
  Minibatcher::gather(data.test(), idx, p.inputScale, p.inputOffset, img, lab);
  CpuOptimizerConfig unused;
  NpzFile io;
  io.set("logits", {40, 10}, CpuLenet(p, unused).logits(img));
  std::vector<float> pixels, labels;
  for (uint32_t i = 0; i < 40 * 784; ++i) pixels.push_back(data.test().images[i]);
  for (uint32_t i = 0; i < 40; ++i) labels.push_back(static_cast<float>(data.test().labels[i]));
  io.set("pixels", {40, 28, 28}, pixels);
  io.set("labels", {40}, labels);
  io.save(out + "/io.npz");
  const std::string script = out + "/lenet.py";
  std::ofstream(script) << R"(import sys
import numpy as np
w = np.load(sys.argv[1]); io = np.load(sys.argv[2])
def conv(x, wt, b, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape; o, _, kh, kw = wt.shape
    oh, ow = h - kh + 1, wd - kw + 1
    cols = np.stack([x[:, :, i:i + oh, j:j + ow] for i in range(kh) for j in range(kw)], axis=2)
    cols = cols.reshape(n, c * kh * kw, oh, ow)  # (c, kh, kw) order, as wt.reshape(o, -1)
    return np.einsum('ok,nkhw->nohw', wt.reshape(o, -1), cols) + b[None, :, None, None]
def pool(x):
    n, c, h, wd = x.shape
    return x.reshape(n, c, h // 2, 2, wd // 2, 2).max(axis=(3, 5))
relu = lambda v: np.maximum(v, 0)
x = io['pixels'].astype(np.float32)[:, None] * w['input_scale'] + w['input_offset']
x = pool(relu(conv(x, w['conv0.weight'], w['conv0.bias'], 2)))
x = pool(relu(conv(x, w['conv1.weight'], w['conv1.bias'], 0))).reshape(len(x), -1)
x = relu(x @ w['fc0.weight'].T + w['fc0.bias'])
x = relu(x @ w['fc1.weight'].T + w['fc1.bias'])
logits = x @ w['fc2.weight'].T + w['fc2.bias']
print(int((logits.argmax(axis=1) == io['labels']).sum()))
print(float(np.abs(logits - io['logits']).max()))
)";
  const std::string result = out + "/numpy.txt";
  const int rc = std::system(fmt::format("'{}' '{}' '{}' '{}' > '{}' 2>&1", TESSERA_NUMPY_PYTHON,
                                         script, o.saveWeights, out + "/io.npz", result)
                                 .c_str());
  std::ifstream in(result);
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_EQ(rc, 0) << text.str();
  size_t correct = 0;
  double maxDiff = 1;
  text >> correct >> maxDiff;
  EXPECT_EQ(static_cast<double>(correct) / 40.0, res["eval_accuracy"].get<double>());
  // NumPy sums in its own order (float32 throughout): the logits agree to float rounding.
  EXPECT_LT(maxDiff, 1e-4) << text.str();
}

}  // namespace
}  // namespace tessera::bench
