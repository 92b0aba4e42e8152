// The benchmark MLP compiled and run on devices, on a small synthetic problem.
#include "mlp_trainer.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <random>
#include <sstream>

#include "backends.hpp"
#include "lr_schedule.hpp"
#include "model.hpp"
#include "synthetic_problem.hpp"
#include "tessera/half.hpp"

namespace tessera::bench {
namespace {

constexpr size_t kInputs = kSyntheticInputs, kClasses = kSyntheticClasses;

MlpConfig smallConfig(uint32_t trainSteps, uint32_t evalSteps) {
  MlpConfig c;
  c.inputs = kInputs;
  c.hidden = {16};
  c.classes = kClasses;
  c.batch = 8;
  c.learningRate = 0.5f;
  c.trainSteps = trainSteps;
  c.evalSteps = evalSteps;
  return c;
}

void initialParameters(const MlpConfig& c, std::vector<std::vector<float>>& w,
                       std::vector<std::vector<float>>& b) {
  const std::vector<size_t> sizes = layerSizes(c);
  std::mt19937 rng(5);
  w.clear();
  b.clear();
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    const float limit = std::sqrt(6.0f / static_cast<float>(sizes[l] + sizes[l + 1]));
    std::uniform_real_distribution<float> u(-limit, limit);
    w.emplace_back(sizes[l] * sizes[l + 1]);
    for (float& x : w.back()) x = u(rng);
    b.emplace_back(sizes[l + 1], 0.0f);
  }
}

std::unique_ptr<Device> open(const std::string& spec) {
  DeviceOptions o;
  o.tiles = 4;
  return openDevice(spec, o);
}

// A device of one backend of the one list (host/testing/backends.hpp), with the same 4 tiles.
backends::Opened openBackend(const std::string& backend) {
  DeviceOptions o;
  o.tiles = 4;
  return backends::open(backend, o);
}

TEST(MlpTrainer, LearnsASyntheticProblemAndEvaluates) {
  auto dev = open("model");
  MlpTrainer t(*dev, smallConfig(60, 4));
  std::vector<std::vector<float>> w, b;
  initialParameters(t.config(), w, b);
  t.setParameters(w, b);
  const MlpRunResult first = t.run(syntheticBatch, syntheticBatch);
  ASSERT_EQ(first.stepLoss.size(), 60u);
  float early = 0, late = 0;
  for (size_t i = 0; i < 10; ++i) early += first.stepLoss[i], late += first.stepLoss[50 + i];
  EXPECT_LT(late, 0.8f * early) << "loss did not fall: " << early / 10 << " -> " << late / 10;
  const MlpRunResult second = t.run(syntheticBatch, syntheticBatch);
  EXPECT_GT(second.evalCorrect, first.evalCorrect / 2);  // evaluated 4 x 8 images each run
  EXPECT_LE(second.evalCorrect, 32u);
  ASSERT_EQ(first.tiles.size(), 4u);
  for (const TileCycles& c : first.tiles)
    EXPECT_EQ(c.compute + c.syncWait + c.exchange, first.cycles);
  EXPECT_GT(first.evalCycles, 0u);
  EXPECT_GT(first.trainCycles,
            20 * first.evalCycles / 4);  // 60 training steps against 4 forward-only batches
  EXPECT_EQ(first.trainCycles + first.evalCycles, first.cycles);
}

TEST(MlpTrainer, TwoRunsEqualOneRunOfTheirSteps) {
  auto a = open("model");
  auto b = open("model");
  MlpTrainer four(*a, smallConfig(4, 0));
  MlpTrainer two(*b, smallConfig(2, 0));
  std::vector<std::vector<float>> w, bias;
  initialParameters(four.config(), w, bias);
  four.setParameters(w, bias);
  two.setParameters(w, bias);
  four.run(syntheticBatch, syntheticBatch);
  two.run(syntheticBatch, syntheticBatch);
  two.run(syntheticBatch, syntheticBatch);
  std::vector<std::vector<float>> w4, b4, w2, b2;
  four.parameters(w4, b4);
  two.parameters(w2, b2);
  EXPECT_EQ(w4, w2);
  EXPECT_EQ(b4, b2);
}

// Merging independent compute sets into one superstep (docs/compiler.md, "Merged compute sets")
// changes what runs beside what, not what any vertex computes: with every optimizer the same
// weights, losses and counts as each compute set in its own superstep, in fewer cycles.
TEST(MlpTrainer, MergedComputeSetsGiveTheSameWeightsInFewerCycles) {
  using Kind = autodiff::OptimizerConfig::Kind;
  for (Kind kind : {Kind::Sgd, Kind::Momentum, Kind::Adam}) {
    SCOPED_TRACE(fmt::format("optimizer {}", static_cast<int>(kind)));
    MlpConfig cfg = smallConfig(3, 1);
    cfg.optimizer = kind;
    if (kind == Kind::Momentum) cfg.momentum = 0.9f;
    if (kind == Kind::Adam) cfg.learningRate = 0.01f;
    std::vector<std::vector<float>> w0, b0, w[2], b[2];
    initialParameters(cfg, w0, b0);
    MlpRunResult runs[2];
    for (int merge = 0; merge < 2; ++merge) {
      cfg.mergeComputeSets = merge == 1;
      auto dev = open("model");
      MlpTrainer t(*dev, cfg);
      t.setParameters(w0, b0);
      runs[merge] = t.run(syntheticBatch, syntheticBatch);
      t.parameters(w[merge], b[merge]);
    }
    EXPECT_EQ(w[1], w[0]);
    EXPECT_EQ(b[1], b[0]);
    EXPECT_EQ(runs[1].stepLoss, runs[0].stepLoss);
    EXPECT_EQ(runs[1].evalCorrect, runs[0].evalCorrect);
    EXPECT_LT(runs[1].cycles, runs[0].cycles);
  }
}

TEST(MlpTrainer, EveryBackendGivesTheModelsWeightsAndCycles) {
  std::vector<std::vector<float>> w0, b0, wRef, bRef;
  initialParameters(smallConfig(3, 1), w0, b0);
  auto ref = open("model");
  MlpTrainer tr(*ref, smallConfig(3, 1));
  tr.setParameters(w0, b0);
  const MlpRunResult r = tr.run(syntheticBatch, syntheticBatch);
  tr.parameters(wRef, bRef);
  for (const std::string& spec : backends::names()) {
    if (spec == "model") continue;
    backends::Opened dev = openBackend(spec);
    MlpTrainer t(*dev.device, smallConfig(3, 1));
    t.setParameters(w0, b0);
    const MlpRunResult x = t.run(syntheticBatch, syntheticBatch);
    std::vector<std::vector<float>> w, b;
    t.parameters(w, b);
    EXPECT_EQ(w, wRef) << spec;
    EXPECT_EQ(b, bRef) << spec;
    EXPECT_EQ(x.cycles, r.cycles) << spec;
    EXPECT_EQ(x.stepLoss, r.stepLoss) << spec;
    EXPECT_EQ(x.evalCorrect, r.evalCorrect) << spec;
  }
}

}  // namespace
}  // namespace tessera::bench

#include <cstring>

#include "lockstep.hpp"
#include "tessera/amp_matmul.h"
#include "tessera/ops.hpp"

namespace tessera::bench {
namespace {

// A compiled training step in lockstep: model against rtl at every retirement and every sync, the
// stream data the same on both; then the fast mode (syncs only).
TEST(MlpLockstep, ModelAndRtlAgreeOnACompiledTrainingStep) {
  MlpConfig c = smallConfig(1, 1);
  Graph g(Target{4, 65536, 6});
  MlpGraph mlp = buildMlp(g, c);
  std::vector<std::vector<float>> w, b;
  initialParameters(c, w, b);
  for (size_t l = 0; l < w.size(); ++l) {
    g.setInitialValue(mlp.weights[l], w[l]);
    g.setInitialValue(mlp.biases[l], b[l]);
  }
  const Executable exe = compile(g, mlp.program).executable;
  std::map<std::string, std::vector<uint8_t>> in;
  for (const char* prefix : {"", "eval_"}) {
    std::vector<float> img(3 * c.batch * c.inputs);
    std::vector<int32_t> lab(3 * c.batch);
    for (uint64_t s = 0; s < 3; ++s) {
      syntheticBatch(s, std::span(img).subspan(s * c.batch * c.inputs, c.batch * c.inputs),
                     std::span(lab).subspan(s * c.batch, c.batch));
    }
    auto& bi = in[std::string(prefix) + "images"];
    bi.resize(img.size() * 4);
    std::memcpy(bi.data(), img.data(), bi.size());
    auto& bl = in[std::string(prefix) + "labels"];
    bl.resize(lab.size() * 4);
    std::memcpy(bl.data(), lab.data(), bl.size());
  }
  LockstepOptions o;
  o.maxCycles = 50'000'000;
  const LockstepReport exact = runLockstep(exe, in, "model", "rtl", o);
  EXPECT_TRUE(exact.agree()) << exact.describe();
  EXPECT_GT(exact.a.retired, 10000u);
  EXPECT_GT(exact.a.stops, 10u);
  o.compareRetirements = false;
  const LockstepReport fast = runLockstep(exe, in, "model", "rtl", o);
  EXPECT_TRUE(fast.agree()) << fast.describe();
  EXPECT_EQ(fast.a.retired, 0u);
  EXPECT_EQ(fast.a.result.cycles, exact.a.result.cycles);
  // A stream shorter than the program takes is an error naming it, not zeros.
  std::map<std::string, std::vector<uint8_t>> shortIn = in;
  shortIn["images"].resize(16);
  try {
    runLockstep(exe, shortIn, "model", "model", o);
    ADD_FAILURE() << "a short stream was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stream \"images\" needs bytes"), std::string::npos)
        << e.what();
  }
}

// The matrix unit's matmul codelet in lockstep, model against rtl at every retirement: one row
// block and several (rows 44, 48 and 244), an even and an odd number of k blocks (k 40, 36; 44, 48
// accumulating), several column groups, c row-major and in the unit's column groups (weights
// from createMatMulRhs, updated in place by matmulAccumulate with a transposed a: Transpose2d).
TEST(MatMulUnitLockstep, ModelAndRtlAgreeOnTheUnitsProducts) {
  Graph g(Target{4, 65536, 6});
  ASSERT_TRUE(g.target().hasMatrixUnit);
  std::mt19937 rng(25);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto init = [&](const Tensor& t) {
    std::vector<float> v(t.numElements());
    for (float& x : v) x = dist(rng);
    g.setInitialValue(t, v);
  };
  Sequence prog;
  const Tensor a1 = ops::createMatMulLhs(g, 44, 40, 16, "a1");
  const Tensor w1 = ops::createMatMulRhs(g, 44, 40, 16, "w1");
  const Tensor a2 = ops::createMatMulLhs(g, 44, 36, 16, "a2");
  const Tensor w2 = ops::createMatMulRhs(g, 44, 36, 16, "w2");
  const Tensor x5 = ops::createMatMulLhs(g, 40, 40, 16, "x5");
  // 61 rows a tile: four row blocks in the stretch, the last with a partial quad; k = 12: one
  // pair of blocks and an odd one.
  const Tensor a6 = ops::createMatMulLhs(g, 244, 12, 8, "a6");
  const Tensor w6 = ops::createMatMulRhs(g, 244, 12, 8, "w6");
  for (const Tensor& t : {a1, w1, a2, w2, x5, a6, w6}) init(t);
  const Tensor c1 = ops::matmul(g, a1, w1, prog, "mm1");
  const Tensor c2 = ops::matmul(g, a2, w2, prog, "mm2");
  const Tensor d5 = ops::matmul(g, x5, w1, prog, "mm5");
  const Tensor c6 = ops::matmul(g, a6, w6, prog, "mm6");
  g.exposeTensor("c6", c6);
  ops::matmulAccumulate(g, w1, a1, c1, prog, "acc1", {true, false});
  ops::matmulAccumulate(g, w2, a2, c2, prog, "acc2", {true, false});
  ops::matmulAccumulate(g, w1, x5, d5, prog, "acc5", {true, false});
  // Both row-block shapes of the codelet run: four rows a worker and six (flags' R field).
  std::set<uint32_t> rowsPerWorker;
  for (const GraphVertex& v : g.vertices()) {
    if (v.codelet != "MatMulAmp") continue;
    for (const GraphField& f : v.fields) {
      if (f.name == "flags") rowsPerWorker.insert(f.value >> TESSERA_AMP_MATMUL_ROWS_SHIFT & 15u);
    }
  }
  EXPECT_EQ(rowsPerWorker, (std::set<uint32_t>{4, 6}));
  const Compiled compiled = compile(g, prog);
  for (const char* codelet : {"MatMulAmp", "Transpose2d"}) {
    const std::vector<std::string>& used = compiled.report.codelets;
    EXPECT_NE(std::find(used.begin(), used.end(), codelet), used.end()) << codelet;
  }
  LockstepOptions o;
  o.maxCycles = 50'000'000;
  const LockstepReport exact = runLockstep(compiled.executable, {}, "model", "rtl", o);
  EXPECT_TRUE(exact.agree()) << exact.describe();
  // Halted, not stopped at the codelet's EBREAK (a context late for its row block) on both.
  EXPECT_EQ(exact.a.result.reason, StopReason::Halted) << describeTrap(exact.a.result.trap);
  EXPECT_GT(exact.a.retired, 10000u);
}

}  // namespace
}  // namespace tessera::bench

#include "cpu_mlp.hpp"
#include "device_splits.hpp"
#include "mlp_parameters.hpp"
#include "tessera/ops.hpp"

namespace tessera::bench {
namespace {

// The device against the CPU reference (bench/train/cpu_mlp.cpp), which performs the device's
// operations in the device's order, k-split like the compiled matmul plans: the same losses and
// weights, bit for bit, step after step, on every backend, with plain SGD and with momentum.

// Each of the run's c.trainSteps steps (synthetic batches) against cpu's trainStep: the same
// loss and correct count; other (if given) takes the same steps.
void expectStepsOfTheReference(const MlpRunResult& r, const MlpConfig& c, CpuMlp& cpu,
                               CpuMlp* other = nullptr) {
  ASSERT_EQ(r.stepLoss.size(), c.trainSteps);
  for (uint64_t s = 0; s < c.trainSteps; ++s) {
    std::vector<float> img(c.batch * c.inputs);
    std::vector<int32_t> lab(c.batch);
    syntheticBatch(s, img, lab);
    const CpuMlp::StepResult want = cpu.trainStep(img, lab);
    EXPECT_EQ(r.stepLoss[s], want.meanLoss) << "step " << s;
    EXPECT_EQ(r.stepCorrect[s], want.correct) << "step " << s;
    if (other) other->trainStep(img, lab);
  }
}

TEST(MlpTrainer, MatchesTheCpuReferenceBitForBit) {
  for (const float momentum : {0.0f, 0.9f}) {
    SCOPED_TRACE(fmt::format("momentum {}", momentum));
    MlpConfig c = smallConfig(3, 0);
    c.inputs = kInputs;
    c.momentum = momentum;
    const std::vector<size_t> sizes = layerSizes(c);
    // "model+unit": the model with the matrix unit, whose matmuls (MatMulAmp) give the same bits.
    std::vector<std::string> specs = backends::names();
    specs.push_back("model+unit");
    for (const std::string& spec : specs) {
      SCOPED_TRACE(spec);
      backends::Opened opened;
      if (spec == "model+unit") {
        DeviceOptions o;
        o.tiles = 4;
        o.matrixUnit = true;
        opened.device = openDevice("model", o);
      } else {
        opened = openBackend(spec);
      }
      Device* dev = opened.device.get();
      MlpTrainer t(*dev, c);
      if (spec == "model+unit") {
        const std::vector<std::string>& used = t.report().codelets;
        EXPECT_NE(std::find(used.begin(), used.end(), "MatMulAmp"), used.end());
      }
      MlpParameters p = MlpParameters::initialize(sizes, 3);
      t.setParameters(p.weights, p.biases);
      CpuMlp cpu(p, c.learningRate, momentum);
      cpu.setKSplits(compiledKSplits(t.report().target, c));
      expectStepsOfTheReference(t.run(syntheticBatch, syntheticBatch), c, cpu);
      std::vector<std::vector<float>> w, b;
      t.parameters(w, b);
      EXPECT_EQ(w, cpu.parameters().weights);
      EXPECT_EQ(b, cpu.parameters().biases);
    }
  }
}

// Mixed precision (docs/training.md, "Mixed precision"): the MLP's products in float16 with a
// static loss scale, against CpuMlp::setHalf given the device's float16 plans: the same losses and
// weights, bit for bit, on the model and on the RTL, with plain SGD and with momentum.
TEST(MlpTrainer, HalfPrecisionMatchesTheCpuReferenceBitForBit) {
  MlpConfig c = smallConfig(3, 0);
  c.batch = 16;
  c.lossScale = 256;
  c.model = std::make_shared<MlpModel>(c.inputs, c.hidden, c.classes, true);
  const std::vector<size_t> sizes = layerSizes(c);
  const MlpParameters p = MlpParameters::initialize(sizes, 3);
  for (const std::string spec : {"model", "rtl"}) {
    for (const float momentum : {0.0f, 0.9f}) {
      SCOPED_TRACE(fmt::format("{}, momentum {}", spec, momentum));
      DeviceOptions o;
      o.tiles = 4;
      o.matrixUnit = true;
      auto dev = openDevice(spec, o);
      c.momentum = momentum;
      MlpTrainer t(*dev, c);
      const std::vector<std::string>& used = t.report().codelets;
      for (const char* codelet : {"MatMulAmpH", "MatMulHalf", "CastToHalf", "TransposeHalf"})
        EXPECT_NE(std::find(used.begin(), used.end(), codelet), used.end()) << codelet;
      t.setParameters(p.weights, p.biases);
      CpuMlp cpu(p, c.learningRate, momentum);
      cpu.setHalf(c.lossScale, compiledHalfSplits(t.report().target, c));
      CpuMlp fp32(p, c.learningRate, momentum);  // the same steps in float32
      fp32.setKSplits(compiledKSplits(t.report().target, c));
      expectStepsOfTheReference(t.run(syntheticBatch, syntheticBatch), c, cpu, &fp32);
      std::vector<std::vector<float>> w, b;
      t.parameters(w, b);
      EXPECT_EQ(w, cpu.parameters().weights);
      EXPECT_EQ(b, cpu.parameters().biases);
      EXPECT_NE(w, fp32.parameters().weights);  // float16 rounding changed the run
    }
  }
}

// A dynamic loss scale (docs/training.md, "Dynamic loss scale"), against CpuMlp's: started at
// 2^24, the first steps overflow float16 (their updates skipped, the scale halved each time); with
// a growth interval of 2 the scale then doubles after every second finite step until it overflows
// again. Losses, weights and the scale's state equal the reference's bit for bit, with SGD and
// momentum, on the model and (SGD) on the RTL.
TEST(MlpTrainer, DynamicLossScaleSkipsOverflowingStepsAsTheCpuReference) {
  MlpConfig c = smallConfig(10, 0);
  c.batch = 16;
  c.lossScale = 16777216.0f;
  c.dynamicLossScale = true;
  c.lossScaleInterval = 2;
  c.model = std::make_shared<MlpModel>(c.inputs, c.hidden, c.classes, true);
  const MlpParameters p = MlpParameters::initialize(layerSizes(c), 3);
  for (const auto& [spec, momentum] : std::vector<std::pair<std::string, float>>{
           {"model", 0.0f}, {"model", 0.9f}, {"rtl", 0.0f}}) {
    SCOPED_TRACE(fmt::format("{}, momentum {}", spec, momentum));
    DeviceOptions o;
    o.tiles = 4;
    o.matrixUnit = true;
    auto dev = openDevice(spec, o);
    c.momentum = momentum;
    MlpTrainer t(*dev, c);
    t.setParameters(p.weights, p.biases);
    CpuMlp cpu(p, c.learningRate, momentum);
    cpu.setHalf(c.lossScale, compiledHalfSplits(t.report().target, c));
    cpu.setDynamicLossScale(c.lossScaleInterval);
    const MlpRunResult r = t.run(syntheticBatch, syntheticBatch);
    ASSERT_EQ(r.stepLoss.size(), c.trainSteps);
    std::vector<float> scales;  // the reference's scale after each step
    for (uint64_t s = 0; s < c.trainSteps; ++s) {
      std::vector<float> img(c.batch * c.inputs);
      std::vector<int32_t> lab(c.batch);
      syntheticBatch(s, img, lab);
      const CpuMlp::StepResult want = cpu.trainStep(img, lab);
      EXPECT_EQ(r.stepLoss[s], want.meanLoss) << "step " << s;
      EXPECT_TRUE(std::isfinite(r.stepLoss[s])) << "step " << s;
      scales.push_back(cpu.lossScale());
    }
    std::vector<std::vector<float>> w, b;
    t.parameters(w, b);
    EXPECT_EQ(w, cpu.parameters().weights);
    EXPECT_EQ(b, cpu.parameters().biases);
    const std::optional<MlpTrainer::LossScaleState> state = t.lossScaleState();
    ASSERT_TRUE(state.has_value());
    EXPECT_EQ(state->scale, cpu.lossScale());
    EXPECT_EQ(static_cast<uint32_t>(state->skipped), cpu.skippedSteps());
    EXPECT_EQ(static_cast<uint32_t>(state->goodRun), cpu.goodSteps());
    // The run went through every branch: skipped steps, and a scale that grew at least once.
    EXPECT_GE(cpu.skippedSteps(), 2u);
    EXPECT_NE(std::adjacent_find(scales.begin(), scales.end(), std::less<float>()), scales.end())
        << "the scale never grew";
  }
}

// Without an overflow a dynamic scale trains as the static scale of the same value: the same
// losses and weights, bit for bit (the seed times a power of two, the rate divided by it).
TEST(MlpTrainer, DynamicLossScaleWithoutOverflowIsTheStaticScale) {
  for (const float momentum : {0.0f, 0.9f}) {
    SCOPED_TRACE(fmt::format("momentum {}", momentum));
    MlpConfig c = smallConfig(4, 0);
    c.batch = 16;
    c.lossScale = 256;
    c.momentum = momentum;
    c.model = std::make_shared<MlpModel>(c.inputs, c.hidden, c.classes, true);
    const MlpParameters p = MlpParameters::initialize(layerSizes(c), 3);
    DeviceOptions o;
    o.tiles = 4;
    o.matrixUnit = true;
    auto dev = openDevice("model", o);
    MlpTrainer fixed(*dev, c);
    fixed.setParameters(p.weights, p.biases);
    const MlpRunResult a = fixed.run(syntheticBatch, syntheticBatch);
    std::vector<std::vector<float>> wa, ba;
    fixed.parameters(wa, ba);
    EXPECT_FALSE(fixed.lossScaleState().has_value());
    c.dynamicLossScale = true;
    c.lossScaleInterval = 1000;
    MlpTrainer dynamic(*dev, c);
    dynamic.setParameters(p.weights, p.biases);
    const MlpRunResult d = dynamic.run(syntheticBatch, syntheticBatch);
    std::vector<std::vector<float>> wd, bd;
    dynamic.parameters(wd, bd);
    EXPECT_EQ(a.stepLoss, d.stepLoss);
    EXPECT_EQ(wa, wd);
    EXPECT_EQ(ba, bd);
    EXPECT_NE(wa, p.weights);  // the steps ran
    const std::optional<MlpTrainer::LossScaleState> state = dynamic.lossScaleState();
    ASSERT_TRUE(state.has_value());
    EXPECT_EQ(state->scale, 256.0f);
    EXPECT_EQ(state->skipped, 0);
    EXPECT_EQ(state->goodRun, 4);
  }
}

// The loss scale must divide out exactly; the other models have no float16 form.
TEST(MlpTrainer, HalfPrecisionErrors) {
  DeviceOptions o;
  o.tiles = 4;
  o.matrixUnit = true;
  auto dev = openDevice("model", o);
  MlpConfig c = smallConfig(1, 0);
  c.lossScale = 1000;
  try {
    MlpTrainer t(*dev, c);
    ADD_FAILURE() << "a loss scale of 1000 was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos) << e.what();
  }
  try {
    makeModel("lenet", {}, true);
    ADD_FAILURE() << "a float16 LeNet was made";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fp16"), std::string::npos) << e.what();
  }
}

// A learning-rate schedule (train/lr_schedule.hpp) reaches the device's "lr" at each step's host
// sync: the run equals the CPU reference given the same rate at each step, bit for bit.
TEST(MlpTrainer, ACosineScheduleMatchesTheCpuReferenceStepByStep) {
  MlpConfig c = smallConfig(5, 0);
  const std::vector<size_t> sizes = layerSizes(c);
  const LrSchedule schedule{LrSchedule::Kind::Cosine, c.learningRate, 5};
  auto dev = open("model");
  MlpTrainer t(*dev, c);
  MlpParameters p = MlpParameters::initialize(sizes, 3);
  t.setParameters(p.weights, p.biases);
  t.setLearningRateSchedule([&](uint64_t s) { return schedule.at(s); });
  CpuMlp cpu(p, c.learningRate);
  const CpuMlp::KSplits ks = compiledKSplits(t.report().target, c);
  cpu.setKSplits(ks);
  const MlpRunResult r = t.run(syntheticBatch, syntheticBatch);
  ASSERT_EQ(r.stepLoss.size(), 5u);
  for (uint64_t s = 0; s < 5; ++s) {
    std::vector<float> img(c.batch * c.inputs);
    std::vector<int32_t> lab(c.batch);
    syntheticBatch(s, img, lab);
    cpu.setLearningRate(schedule.at(s));
    EXPECT_EQ(r.stepLoss[s], cpu.trainStep(img, lab).meanLoss) << "step " << s;
  }
  std::vector<std::vector<float>> w, b;
  t.parameters(w, b);
  EXPECT_EQ(w, cpu.parameters().weights);
  EXPECT_EQ(b, cpu.parameters().biases);
  // The schedule changed the run: the constant rate gives other weights.
  CpuMlp constant(p, c.learningRate);
  constant.setKSplits(ks);
  for (uint64_t s = 0; s < 5; ++s) {
    std::vector<float> img(c.batch * c.inputs);
    std::vector<int32_t> lab(c.batch);
    syntheticBatch(s, img, lab);
    constant.trainStep(img, lab);
  }
  EXPECT_NE(w, constant.parameters().weights);
}

// The default MLP fits 16 x 128 KiB tiles with the matrix unit's layouts at batch 32 but not at
// 40 (36 fits since the products' partials are temporaries): the trainer then runs the scalar
// codelets and keeps the unit build's out-of-memory message.
TEST(MlpTrainer, SaysWhyTheMatrixUnitIsNotUsed) {
  DeviceOptions o;
  o.tiles = 16;
  o.tileMemBytes = 128 * 1024;
  o.matrixUnit = true;
  auto dev = openDevice("model", o);
  MlpConfig c;
  c.batch = 32;
  c.trainSteps = 1;
  c.evalSteps = 1;  // as tessera-bench train builds it
  MlpTrainer fits(*dev, c);
  EXPECT_TRUE(fits.usesMatrixUnit());
  EXPECT_EQ(fits.matrixUnitRefusal(), "");
  c.batch = 40;
  MlpTrainer scalar(*dev, c);
  EXPECT_FALSE(scalar.usesMatrixUnit());
  EXPECT_NE(scalar.matrixUnitRefusal().find("out of memory"), std::string::npos)
      << scalar.matrixUnitRefusal();
}

TEST(LrSchedule, CosineDecaysFromTheBaseToZero) {
  const LrSchedule cos{LrSchedule::Kind::Cosine, 0.5f, 4};
  EXPECT_EQ(cos.at(0), 0.5f);
  EXPECT_EQ(cos.at(2), 0.25f);
  EXPECT_FLOAT_EQ(cos.at(1), static_cast<float>(0.25 * (1 + std::cos(std::numbers::pi / 4))));
  EXPECT_EQ(cos.at(4), 0.0f);
  EXPECT_EQ(cos.at(9), 0.0f);  // past the end: zero
  const LrSchedule constant{LrSchedule::Kind::Constant, 0.5f, 4};
  EXPECT_EQ(constant.at(3), 0.5f);
  EXPECT_EQ(LrSchedule::parseKind("cosine"), LrSchedule::Kind::Cosine);
  EXPECT_THROW(LrSchedule::parseKind("step"), Error);
}

}  // namespace
}  // namespace tessera::bench

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "fashion_mnist.hpp"
#include "minibatcher.hpp"
#include "npz_file.hpp"
#include "train_command.hpp"

namespace tessera::bench {
namespace {

// The train command on real Fashion-MNIST in a short form: the files it writes carry the
// documented keys, the trace is trace-event JSON, and saved weights load back and give the same
// evaluation.
TEST(TrainCommand, WritesTheDocumentedFilesAndWeightsRoundTrip) {
  const std::string out = ::testing::TempDir() + "/tessera-train-test";
  std::filesystem::remove_all(out);
  TrainOptions o;
  o.tiles = 4;
  o.hidden = {16};
  o.batch = 16;
  o.maxSteps = 12;
  o.evalImages = 200;
  o.outDir = out;
  o.saveWeights = out + "/weights.npz";
  o.quiet = true;
  ASSERT_EQ(runTrain(o), 0);
  // result.json
  std::ifstream rf(out + "/result.json");
  const nlohmann::json res = nlohmann::json::parse(rf);
  for (const char* key : {"benchmark", "device", "tiles", "layers", "global_batch_size",
                          "learning_rate", "steps", "status", "eval_accuracy", "time_to_train_s",
                          "device_time_to_train_s", "samples_per_s_wall", "samples_per_device_s",
                          "cycles_per_step", "bsp", "device_cycles_waiting_for_host_data"}) {
    EXPECT_TRUE(res.contains(key)) << key;
  }
  EXPECT_EQ(res["steps"], 12);
  EXPECT_EQ(res["status"], "aborted");  // 12 steps do not reach 85%
  for (const char* key : {"compute_pct", "sync_pct", "exchange_pct", "host_io_s"})
    EXPECT_TRUE(res["bsp"].contains(key)) << key;
  // mlperf.log: every line an :::MLLOG JSON record, with the keys of a run.
  std::ifstream lf(out + "/mlperf.log");
  std::set<std::string> keys;
  for (std::string line; std::getline(lf, line);) {
    ASSERT_EQ(line.rfind(":::MLLOG ", 0), 0u) << line;
    const nlohmann::json j = nlohmann::json::parse(line.substr(9));
    keys.insert(j.at("key").get<std::string>());
    if (j["key"] == "run_stop") {
      EXPECT_EQ(j["metadata"]["status"], "aborted");
    }
  }
  for (const char* key :
       {"submission_benchmark", "cache_clear", "init_start", "init_stop", "run_start",
        "epoch_start", "epoch_stop", "eval_start", "eval_stop", "eval_accuracy", "run_stop",
        "global_batch_size", "opt_base_learning_rate", "seed"}) {
    EXPECT_TRUE(keys.count(key)) << key;
  }
  // trace.json: trace-event JSON with complete events of every BSP phase on tile threads.
  std::ifstream tf(out + "/trace.json");
  const nlohmann::json trace = nlohmann::json::parse(tf);
  std::set<std::string> phases;
  for (const auto& e : trace.at("traceEvents")) {
    if (e["ph"] == "X") {
      phases.insert(e["name"].get<std::string>());
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
  }
  for (const char* p : {"compute", "sync wait", "exchange"}) EXPECT_TRUE(phases.count(p)) << p;
  EXPECT_TRUE(std::filesystem::file_size(out + "/bsp.svg") > 1000);
  EXPECT_TRUE(std::filesystem::file_size(out + "/curves.svg") > 1000);
  // The saved weights, loaded into a fresh device, evaluate like the run's last evaluation.
  const MlpParameters saved = MlpParameters::fromNpz(NpzFile::load(o.saveWeights));
  MlpConfig c;
  c.hidden = {16};
  c.batch = 16;
  c.trainSteps = 0;
  c.evalSteps = 200 / 16 + 1;
  DeviceOptions d;
  d.tiles = 4;
  d.tileMemBytes = 128 * 1024;
  auto dev = openDevice("model", d);
  MlpTrainer t(*dev, c);
  t.setParameters(saved.weights, saved.biases);
  const FashionMnist data = FashionMnist::load();
  const BatchSource evalSource = [&](uint64_t step, std::span<float> img, std::span<int32_t> lab) {
    std::fill(img.begin(), img.end(), 0.0f);
    std::fill(lab.begin(), lab.end(), -1);
    const size_t first = step * 16, n = first < 200 ? std::min<size_t>(16, 200 - first) : 0;
    std::vector<uint32_t> idx(n);
    for (size_t i = 0; i < n; ++i) idx[i] = static_cast<uint32_t>(first + i);
    Minibatcher::gather(data.test(), idx, saved.inputScale, saved.inputOffset,
                        img.subspan(0, n * 784), lab.subspan(0, n));
  };
  const MlpRunResult r = t.run(evalSource, evalSource);
  EXPECT_DOUBLE_EQ(static_cast<double>(r.evalCorrect) / 200.0, res["eval_accuracy"].get<double>());
}

}  // namespace
}  // namespace tessera::bench

#include "server_process.hpp"

namespace tessera::bench {
namespace {

// The same training steps through tessera-server: the model over tcp:// and the RTL over a pty
// (serial:), as a remote simulator and a board would be reached: the model's weights, losses and
// cycles exactly.
TEST(MlpTrainer, OverTheLinkGivesTheModelsWeightsAndCycles) {
  std::vector<std::vector<float>> w0, b0, wRef, bRef;
  initialParameters(smallConfig(2, 1), w0, b0);
  auto ref = open("model");
  MlpTrainer tr(*ref, smallConfig(2, 1));
  tr.setParameters(w0, b0);
  const MlpRunResult r = tr.run(syntheticBatch, syntheticBatch);
  tr.parameters(wRef, bRef);
  struct Case {
    const char* backend;
    bool pty;
  };
  for (const Case& c : {Case{"model", false}, Case{"rtl", true}}) {
    std::vector<std::string> args = {"--device", c.backend, "--tiles", "4"};
    if (c.pty) {
      args.push_back("--pty");
    } else {
      args.insert(args.end(), {"--listen", "127.0.0.1:0"});
    }
    link::ServerProcess server(TESSERA_SERVER_PATH, args);
    SCOPED_TRACE(server.deviceString());
    auto dev = openDevice(server.deviceString());
    MlpTrainer t(*dev, smallConfig(2, 1));
    t.setParameters(w0, b0);
    const MlpRunResult x = t.run(syntheticBatch, syntheticBatch);
    std::vector<std::vector<float>> w, b;
    t.parameters(w, b);
    EXPECT_EQ(w, wRef);
    EXPECT_EQ(b, bRef);
    EXPECT_EQ(x.cycles, r.cycles);
    EXPECT_EQ(x.stepLoss, r.stepLoss);
    EXPECT_EQ(x.evalCorrect, r.evalCorrect);
  }
}

}  // namespace
}  // namespace tessera::bench
