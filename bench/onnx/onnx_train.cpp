// tessera::onnx::train (tessera/onnx_train.hpp): tessera-bench train's runTrain with the ONNX
// model as its Model, then the trained values written back into the file's initializers.
#include "tessera/onnx_train.hpp"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "onnx_bench_model.hpp"
#include "tessera/error.hpp"
#include "train/model_parameters.hpp"
#include "train_command.hpp"

namespace tessera::onnx {

TrainResult train(const std::string& modelPath, const TrainOptions& o) {
  if (o.data != "fashion-mnist")
    throw Error(fmt::format("train: unknown data set \"{}\" (known: fashion-mnist)", o.data));
  if (o.optimizer != "sgd" && o.optimizer != "momentum" && o.optimizer != "adam")
    throw Error(
        fmt::format("train: unknown optimizer \"{}\" (known: sgd, momentum, adam)", o.optimizer));
  auto model = std::make_shared<OnnxBenchModel>(OnnxModel::load(modelPath));
  bench::TrainOptions b;
  b.model = model->name();
  b.modelObject = model;
  b.device = o.device;
  b.tiles = o.tiles;
  b.tileMemKiB = o.tileMemKiB;
  b.modelEngine = o.modelEngine;
  b.batch = o.batch;
  b.epochs = o.epochs;
  b.optimizer = o.optimizer;
  b.learningRate = o.learningRate;
  b.lrSchedule = o.lrSchedule;
  b.momentum = o.momentum;
  b.maxSteps = o.steps;
  b.seed = o.seed;
  b.outDir = o.logDir;
  b.dataDir = o.dataDir;
  b.evalImages = o.evalImages;
  b.quiet = o.quiet;
  b.traceSteps = o.traceSteps;
  b.reportPath = o.report;
  b.targetAccuracy = o.targetAccuracy;
  std::map<std::string, std::vector<float>> trained;
  b.onTrained = [&](const bench::ModelParameters& p) {
    for (size_t i = 0; i < p.shapes.size(); ++i) trained[p.shapes[i].name] = p.values[i];
  };
  b.checkpointEvery = o.checkpointEvery;
  b.checkpointDir = o.checkpointDir;
  b.resumeDir = o.resumeDir;
  TrainResult r;
  const int code = bench::runTrain(b);
  if (code >= 128) {  // stopped by a signal at a checkpoint: nothing trained to write yet
    r.stoppedBySignal = code - 128;
    return r;
  }
  if (!o.out.empty()) model->model().save(o.out, trained);

  r.resultPath = o.logDir + "/result.json";
  std::ifstream in(r.resultPath);
  const nlohmann::json res = nlohmann::json::parse(in, nullptr, false);
  if (res.is_discarded()) throw Error(fmt::format("{}: unreadable result", r.resultPath));
  for (double l : res.at("loss_curve")) r.losses.push_back(static_cast<float>(l));
  r.accuracy = res.at("eval_accuracy").get<double>();
  r.steps = res.at("steps").get<uint64_t>();
  return r;
}

}  // namespace tessera::onnx
