// resnet-tiny and transformer-tiny (bench/model.cpp) trained by the command, their saved .npz
// evaluated by NumPy from the file alone, and NumPy's predictions checked against the device's;
// resnet-tiny and transformer-tiny against their CPU references (bench/train/cpu_resnet_tiny.cpp,
// cpu_transformer_tiny.cpp) bit for bit.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "cpu_resnet_tiny.hpp"
#include "cpu_transformer_tiny.hpp"
#include "fashion_mnist.hpp"
#include "minibatcher.hpp"
#include "mlp_trainer.hpp"
#include "npz_file.hpp"
#include "reference_run.hpp"
#include "tessera/nn.hpp"
#include "tessera/ops.hpp"
#include "train_command.hpp"

namespace tessera::bench {
namespace {

constexpr uint32_t kImages = 40;

// Evaluation in NumPy of the arrays of a saved .npz (the model's layers as docs/training.md lists
// them, eval mode): prints the correct count, then one prediction per image.
const char* kNumpyCommon = R"(import sys, math
import numpy as np
w = np.load(sys.argv[1]); io = np.load(sys.argv[2])
x = io['pixels'].astype(np.float32) * w['input_scale'] + w['input_offset']
def linear(v, name):
    return v @ w[name + '.weight'].T + w[name + '.bias']
)";

const char* kNumpyResnet = R"(
def conv(v, wt, stride, pad, groups):
    v = np.pad(v, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = v.shape; o, cg, kh, kw = wt.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    outs = []
    for g in range(groups):
        vg = v[:, g * cg:(g + 1) * cg]
        wg = wt[g * (o // groups):(g + 1) * (o // groups)]
        cols = np.stack([vg[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
                         for i in range(kh) for j in range(kw)], axis=2)
        cols = cols.reshape(n, cg * kh * kw, oh, ow)  # (c, kh, kw) order, as wg.reshape(o, -1)
        outs.append(np.einsum('ok,nkhw->nohw', wg.reshape(len(wg), -1), cols))
    return np.concatenate(outs, axis=1)
def bn(v, name):
    s = lambda a: w[name + '.' + a][None, :, None, None]
    return (v - s('running_mean')) / np.sqrt(s('running_var') + 1e-5) * s('weight') + s('bias')
relu = lambda v: np.maximum(v, 0)
v = x[:, None]
a0 = relu(bn(conv(v, w['conv0.weight'], 2, 1, 1), 'bn0'))
a1 = relu(bn(conv(a0, w['conv1.weight'], 1, 1, 16), 'bn1'))
a2 = relu(bn(conv(a1, w['conv2.weight'], 1, 0, 1), 'bn2') + a0)
n, c, h, wd = a2.shape
p = a2.reshape(n, c, h // 2, 2, wd // 2, 2).max(axis=(3, 5)).reshape(n, -1)
logits = linear(p, 'fc0')
)";

const char* kNumpyTransformer = R"(
def layer_norm(v, name):
    m = v.mean(-1, keepdims=True); var = ((v - m) ** 2).mean(-1, keepdims=True)
    return (v - m) / np.sqrt(var + 1e-5) * w[name + '.weight'] + w[name + '.bias']
erf = np.vectorize(math.erf)
gelu = lambda v: 0.5 * v * (1 + erf(v / math.sqrt(2)))
e = 'encoder.'
n = len(x)
h = linear(x, 'embed') + w['pos_embedding']                      # (n, 28, 32)
qkv = h @ w[e + 'self_attn.in_proj_weight'].T + w[e + 'self_attn.in_proj_bias']
heads = lambda t: t.reshape(n, 28, 2, 16).transpose(0, 2, 1, 3)  # (n, heads, 28, 16)
q, k, v = heads(qkv[..., :32]), heads(qkv[..., 32:64]), heads(qkv[..., 64:])
s = q @ k.transpose(0, 1, 3, 2) / 4.0
s = np.exp(s - s.max(-1, keepdims=True)); s /= s.sum(-1, keepdims=True)
ctx = (s @ v).transpose(0, 2, 1, 3).reshape(n, 28, 32)
h = layer_norm(h + linear(ctx, e + 'self_attn.out_proj'), e + 'norm1')
h = layer_norm(h + linear(gelu(linear(h, e + 'linear1')), e + 'linear2'), e + 'norm2')
logits = linear(h.mean(axis=1), 'fc0')
)";

const char* kNumpyReport = R"(
pred = logits.argmax(axis=1)
print(int((pred == io['labels']).sum()))
print(' '.join(str(int(c)) for c in pred))
)";

// Trains a few steps of `model` with the command (4 tiles, minibatches of `batch`), saves the
// weights, and checks them: PyTorch's names and shapes in order, NumPy's correct count equal to the
// device's evaluation, and NumPy's class for every image the device's (the device, given NumPy's
// classes as labels, counts every image correct).
void expectSavedWeightsEvaluateInNumpy(const std::string& model, const char* numpyLayers,
                                       uint32_t batch) {
  const std::string out = ::testing::TempDir() + "/tessera-" + model + "-test";
  std::filesystem::remove_all(out);
  TrainOptions o;
  o.model = model;
  o.tiles = 4;
  o.batch = batch;
  o.maxSteps = 4;
  o.evalImages = kImages;
  o.traceSteps = 0;
  o.outDir = out;
  o.saveWeights = out + "/" + model + ".npz";
  o.quiet = true;
  ASSERT_EQ(runTrain(o), 0);
  std::ifstream rf(out + "/result.json");
  const nlohmann::json res = nlohmann::json::parse(rf);
  EXPECT_EQ(res["model"], model);
  const std::shared_ptr<const Model> m = makeModel(model);
  const NpzFile npz = NpzFile::load(o.saveWeights);
  std::vector<std::string> names;
  for (const ParameterShape& s : m->parameterShapes()) {
    names.push_back(s.name);
    EXPECT_EQ(npz.get(s.name).shape, s.shape) << s.name;
  }
  names.push_back("input_scale");
  names.push_back("input_offset");
  EXPECT_EQ(npz.names(), names);
  const ModelParameters p = ModelParameters::fromNpz(npz, m->parameterShapes(), o.saveWeights);
  const ModelParameters init = m->initialize(o.seed);
  for (size_t i = 0; i < p.values.size(); ++i)
    EXPECT_NE(p.values[i], init.values[i]) << p.shapes[i].name << " did not change in training";

  const FashionMnist data = FashionMnist::load();
  std::vector<float> pixels, labels;
  for (uint32_t i = 0; i < kImages * 784; ++i) pixels.push_back(data.test().images[i]);
  for (uint32_t i = 0; i < kImages; ++i)
    labels.push_back(static_cast<float>(data.test().labels[i]));
  NpzFile io;
  io.set("pixels", {kImages, 28, 28}, pixels);
  io.set("labels", {kImages}, labels);
  io.save(out + "/io.npz");
  const std::string script = out + "/eval.py";
  std::ofstream(script) << kNumpyCommon << numpyLayers << kNumpyReport;
  const std::string result = out + "/numpy.txt";
  const int rc = std::system(fmt::format("'{}' '{}' '{}' '{}' > '{}' 2>&1", TESSERA_NUMPY_PYTHON,
                                         script, o.saveWeights, out + "/io.npz", result)
                                 .c_str());
  std::ifstream in(result);
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_EQ(rc, 0) << text.str();
  size_t correct = 0;
  text >> correct;
  std::vector<int32_t> predicted(kImages, -1);
  for (int32_t& c : predicted) text >> c;
  ASSERT_TRUE(text) << text.str();
  EXPECT_EQ(static_cast<double>(correct) / kImages, res["eval_accuracy"].get<double>());

  // The device evaluates the same images with NumPy's classes as labels.
  MlpConfig c;
  c.model = m;
  c.batch = batch;
  c.trainSteps = 0;
  c.evalSteps = kImages / batch;
  DeviceOptions dopt;
  dopt.tiles = 4;
  dopt.tileMemBytes = m->defaults().modelTileMemKiB * 1024;
  auto dev = openDevice("model", dopt);
  MlpTrainer t(*dev, c);
  t.setParameters(p);
  const BatchSource none = [](uint64_t, std::span<float>, std::span<int32_t>) {};
  const MlpRunResult r =
      t.run(none, [&](uint64_t step, std::span<float> img, std::span<int32_t> lab) {
        std::vector<uint32_t> idx(batch);
        for (uint32_t i = 0; i < batch; ++i) idx[i] = static_cast<uint32_t>(step) * batch + i;
        Minibatcher::gather(data.test(), idx, p.inputScale, p.inputOffset, img, lab);
        for (uint32_t i = 0; i < batch; ++i) lab[i] = predicted[idx[i]];
      });
  EXPECT_EQ(r.evalCorrect, kImages)
      << "the device's classes differ from NumPy's on " << kImages - r.evalCorrect << " images";
}

// Trains `steps` steps of batch `batch` of `model` with `opt` on the model (4 tiles x 624 KiB) and
// on the CPU reference that makeReference(parameters, device graph) returns: every step's loss and
// correct count, and every array after them, equal the reference's bit for bit.
template <typename Reference, typename MakeReference>
void expectMatchesReference(const std::string& model, size_t batch, uint32_t steps,
                            const CpuOptimizerConfig& opt, const MakeReference& makeReference) {
  DeviceOptions dopt;
  dopt.tiles = 4;
  dopt.tileMemBytes = 624 * 1024;
  auto dev = openDevice("model", dopt);
  const MlpConfig c = referenceTrainConfig(model, batch, steps, opt);
  MlpTrainer t(*dev, c);
  const ModelParameters p = c.model->initialize(11);
  t.setParameters(p);
  Graph g(Target::of(dev->info()));
  Reference cpu = makeReference(p, g);
  expectRunMatchesReference(t, cpu, p, batch, steps);
}

// Three steps of batch 4 on the model (4 tiles x 624 KiB) with plain SGD, momentum with weight
// decay, and Adam: every step's loss and correct count, and every array after them (the running
// statistics included), equal the reference's bit for bit.
TEST(ResnetTinyTrainer, MatchesTheCpuReferenceBitForBitWithEveryOptimizer) {
  constexpr size_t batch = 4;
  for (const auto& [name, opt] : everyOptimizer()) {
    SCOPED_TRACE(name);
    expectMatchesReference<CpuResnetTiny>(
        "resnet-tiny", batch, 3, opt, [&, o = opt](const ModelParameters& p, const Graph& g) {
          CpuResnetTiny::Plans plans;
          plans.fcForward = ops::planMatMul(g, batch, 784, 10).k;
          plans.fcBackward = ops::planMatMul(g, batch, 10, 784).k;
          plans.bnParts = ops::batchNormParts(g, 16, batch * 14 * 14);
          return CpuResnetTiny(p, o, plans);
        });
  }
}

// The same for transformer-tiny, dropout on at the model's rate (the reference draws the device's
// Philox masks under the model's key and the step the device's seed variable counts).
TEST(TransformerTinyTrainer, MatchesTheCpuReferenceBitForBitWithEveryOptimizer) {
  for (const auto& [name, opt] : everyOptimizer()) {
    SCOPED_TRACE(name);
    expectMatchesReference<CpuTransformerTiny>(
        "transformer-tiny", 4, 3, opt, [o = opt](const ModelParameters& p, const Graph& g) {
          const CpuTransformerTiny::KParts kParts = [&g](size_t m, size_t k, size_t n) {
            return ops::planMatMul(g, m, k, n).k;
          };
          return CpuTransformerTiny(
              p, o, kParts, {TransformerTinyModel::kDropout, TransformerTinyModel::kDropoutKey});
        });
  }
}

TEST(ResnetTinyTrainer, SavedWeightsEvaluateInNumpy) {
  expectSavedWeightsEvaluateInNumpy("resnet-tiny", kNumpyResnet, 8);
}

TEST(TransformerTinyTrainer, SavedWeightsEvaluateInNumpy) {
  // Its activations and vertex states at batch 8 want more than 4 tiles of 624 KiB.
  expectSavedWeightsEvaluateInNumpy("transformer-tiny", kNumpyTransformer, 4);
}

}  // namespace
}  // namespace tessera::bench
