// tessera-onnx: run (infer) or train an ONNX model on a tessera device (docs/onnx.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_numbers.hpp"
#include "report_html.hpp"
#include "tessera/error.hpp"
#include "tessera/npy.hpp"
#include "tessera/onnx.hpp"
#include "tessera/onnx_train.hpp"

int main(int argc, char** argv) {
  namespace tx = tessera::onnx;
  CLI::App app{"tessera-onnx: ONNX models on tessera (docs/onnx.md)"};
  app.require_subcommand(1);

  std::string model, output;
  std::vector<std::string> inputs;
  tx::InferOptions io;
  CLI::App* infer = app.add_subcommand("infer", "the first output of MODEL for every row of X");
  infer->add_option("model", model, "MODEL.onnx")->required();
  infer
      ->add_option("--input", inputs,
                   "X.npy: the model's input (float32; int64 or int32 for an integer input such "
                   "as token ids), its shape with any leading row count; once per graph input, "
                   "in the model's order")
      ->required();
  infer->add_option("--output", output, "Y.npy: the first output")->required();
  infer->add_option("--device", io.device, "device string")->capture_default_str();
  infer->add_option("--tiles", io.tiles, "tiles")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1472u));
  infer->add_option("--batch", io.batch, "rows per run (default: the model's batch)")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  infer->add_option("--tile-mem", io.tileMemKiB, "KiB per tile (model: 624)")
      ->check(CLI::Range(1u, 1u << 20));
  const char* engineHelp = tessera::kModelEngineHelp;
  infer->add_option("--model-engine", io.modelEngine, engineHelp)
      ->transform(CLI::CheckedTransformer(tessera::modelEngineNames()));

  std::string trainModel;
  tx::TrainOptions to;
  float lr = 0, momentum = 0;
  CLI::App* train = app.add_subcommand("train", "train MODEL on Fashion-MNIST");
  train->add_option("model", trainModel, "MODEL.onnx")->required();
  train->add_option("--data", to.data, "data set (fashion-mnist)")->capture_default_str();
  train->add_option("--data-dir", to.dataDir, "its directory (default: Debian's)");
  train->add_option("--epochs", to.epochs, "epochs")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  train->add_option("--batch", to.batch, "minibatch")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{60000}));
  CLI::Option* lrOpt = train
                           ->add_option("--lr", lr,
                                        "learning rate (sgd 0.05, momentum 0.01, "
                                        "adam 0.001)")
                           ->check(CLI::PositiveNumber);
  train
      ->add_option("--lr-schedule", to.lrSchedule,
                   "constant, or cosine: from --lr to 0 over epochs x steps per epoch")
      ->capture_default_str()
      ->check(CLI::IsMember({"constant", "cosine"}));
  train->add_option("--optimizer", to.optimizer, "sgd, momentum or adam")
      ->capture_default_str()
      ->check(CLI::IsMember({"sgd", "momentum", "adam"}));
  CLI::Option* momOpt =
      train->add_option("--momentum", momentum, "momentum (0.9)")->check(CLI::Range(0.0f, 1.0f));
  train->add_option("--seed", to.seed, "minibatch order seed (tessera-bench's)")
      ->capture_default_str();
  train->add_option("--device", to.device, "device string")->capture_default_str();
  train->add_option("--tiles", to.tiles, "tiles")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1472u));
  train->add_option("--tile-mem", to.tileMemKiB, "KiB per tile (model: 624)")
      ->check(CLI::Range(1u, 1u << 20));
  train->add_option("--model-engine", to.modelEngine, engineHelp)
      ->transform(CLI::CheckedTransformer(tessera::modelEngineNames()));
  train->add_option("--steps", to.steps, "at most N steps per epoch (0: whole epochs)");
  train->add_option("--eval-images", to.evalImages, "test images per evaluation (0: all)");
  train
      ->add_option("--target-accuracy", to.targetAccuracy,
                   "stop after the epoch reaching it (1: every epoch runs)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  train->add_option("--out", to.out, "TRAINED.onnx")->required();
  train->add_option("--log-dir", to.logDir, "mlperf.log, result.json, pictures")
      ->capture_default_str();
  train->add_option("--trace-steps", to.traceSteps, "steps traced superstep by superstep");
  train->add_flag("--quiet", to.quiet, "no progress bar");
  std::string inferReport;
  infer->add_option("--report", inferReport,
                    "FILE.html: the browser report of the compile (docs/report.md)");
  train->add_option("--report", to.report,
                    "FILE.html: the browser report of the compile and the run (docs/report.md)");
  train
      ->add_option("--checkpoint-every", to.checkpointEvery,
                   "save a training checkpoint every N steps and at every epoch end")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  train->add_option("--checkpoint-dir", to.checkpointDir,
                    "directory of the checkpoints (default: LOG_DIR/checkpoints)");
  train->add_option("--resume", to.resumeDir,
                    "continue from the newest checkpoint in this directory (same options)");

  tessera::cli::requireFiniteNumbers(app);
  CLI11_PARSE(app, argc, argv);
  try {
    if (infer->parsed()) {
      if (!inferReport.empty()) {
        io.onCompiled = [&](const std::string& json) {
          tessera::bench::writeReportHtml(inferReport, {json, "", "", model});
        };
      }
      std::vector<tx::NpyArray> xs;
      for (const std::string& path : inputs) xs.push_back(tx::readNpy(path));
      const tx::NpyArray y = tx::infer(model, xs, io);
      tx::writeNpy(output, y);
    } else {
      if (*lrOpt) to.learningRate = lr;
      if (*momOpt) to.momentum = momentum;
      const tx::TrainResult r = tx::train(trainModel, to);
      if (r.stoppedBySignal) return 128 + r.stoppedBySignal;
      fmt::print("wrote {} ({} steps, test accuracy {:.2f}%)\n", to.out, r.steps, 100 * r.accuracy);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-onnx: %s\n", e.what());
    return 1;
  }
  return 0;
}
