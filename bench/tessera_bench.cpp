// tessera-bench: benchmarks of compiled programs (docs/library.md, docs/compiler.md).
//   tessera-bench matmul [--device model] [--matrix-unit on|off] [--m M --k K --n N] [--tiles T]:
//   for one shape or a list of shapes and tile counts, compile ops::matmul for the device's chip,
//   run it cycle-exact and print FLOPs per cycle per tile against the tile's peak (32 FLOP a cycle
//   with the matrix unit, one fused multiply-add = 2 without): over the whole program (exchanges
//   and syncs included) and over the compute phases only (each tile's cycles less its sync-wait
//   and exchange cycles). --precision fp16: float16 operands on the unit's AMP.H (peak 64).
//   tessera-bench conv: the same for LeNet's conv layers, and the cycles of its max-pooling layers
//   (bench/conv_bench.hpp).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "cli_numbers.hpp"
#include "conv_bench.hpp"
#include "file_io.hpp"
#include "mlp_model.hpp"
#include "mpi_comm.hpp"
#include "report_html.hpp"
#include "tessera/chip_params.h"
#include "tessera/compiler.hpp"
#include "tessera/engine.hpp"
#include "tessera/half.hpp"
#include "tessera/ops.hpp"
#include "train_command.hpp"

namespace {

// What tessera-bench matmul runs: one shape (--m, --k, --n) or the default list.
struct MatmulOptions {
  std::string device = "model";
  unsigned tiles = 0;   // 0: each default case's own, 16 for a shape given by --m/--k/--n
  uint32_t memKiB = 0;  // 0: each default case's own, 624 for a shape given
  size_t m = 0, k = 0, n = 0;
  std::string precision = "fp32";
  std::string matrixUnit;  // "", "on", "off": DeviceOptions::matrixUnit
  tessera::ModelEngine modelEngine = tessera::defaultModelEngine();
  bool supersteps = false;  // print each superstep's split (compute, exchange, sync wait)
};

int runMatmul(const MatmulOptions& opt) {
  // fp16: a and b float16, c float32 accumulated on the matrix unit (AMP.H; ops::matmulHalf).
  const bool half = opt.precision == "fp16";
  struct Case {
    unsigned tiles;
    uint32_t memBytes;
    size_t m, k, n;
  };
  // 64 KiB tiles are the 4-tile RTL chip's; 624 KiB the IPU's (the mk2 preset; the model runs
  // either).
  constexpr uint32_t kRtl = TESS_TILE_MEM_BYTES, kMk2 = TESS_MK2_TILE_MEM_BYTES;
  std::vector<Case> cases;
  if (opt.m || opt.k || opt.n) {
    if (!opt.m || !opt.k || !opt.n)
      throw tessera::Error("matmul: give all of --m, --k and --n (or none, for the default list)");
    cases.push_back(
        {opt.tiles ? opt.tiles : 16u, opt.memKiB ? opt.memKiB * 1024 : kMk2, opt.m, opt.k, opt.n});
  } else {
    // Small products on 1 and 4 RTL-sized tiles, then the MLP's layers (784-128-10, batch 32),
    // LeNet's fully connected layers (400-120-84-10) and 128 x 256 x 192 on 16 tiles.
    cases = {{1, kRtl, 48, 48, 48},    {1, kRtl, 32, 64, 32},    {4, kRtl, 64, 96, 48},
             {16, kRtl, 32, 128, 10},  {16, kMk2, 32, 784, 128}, {16, kMk2, 32, 128, 10},
             {16, kMk2, 32, 400, 120}, {16, kMk2, 32, 120, 84},  {16, kMk2, 32, 84, 10},
             {16, kMk2, 128, 256, 192}};
    for (Case& c : cases) {
      if (opt.tiles) c.tiles = opt.tiles;
      if (opt.memKiB) c.memBytes = opt.memKiB * 1024;
    }
  }
  int failures = 0;
  for (const Case& c : cases) {
    const std::string what =
        fmt::format("{} tiles x {} KiB, {} x {} x {}:", c.tiles, c.memBytes / 1024, c.m, c.k, c.n);
    try {
      tessera::DeviceOptions o;
      o.tiles = c.tiles;
      o.tileMemBytes = c.memBytes;
      if (!opt.matrixUnit.empty()) o.matrixUnit = opt.matrixUnit == "on";
      o.modelEngine = opt.modelEngine;
      auto dev = tessera::openDevice(opt.device, o);
      if (dev->info().counterBits < 64) {
        // The compute share below is from the tiles' counters, which would wrap (the iCE40 board).
        throw tessera::Error(
            fmt::format("the device's tile counters are {} bits wide", dev->info().counterBits));
      }
      // The device's chip, matrix unit included, is the compiler's target.
      const tessera::Target target = tessera::Target::of(dev->info());
      tessera::Graph g(target);
      tessera::Sequence prog;
      const tessera::ops::MatMulPlan plan = half ? tessera::ops::planMatMulHalf(g, c.m, c.k, c.n)
                                                 : tessera::ops::planMatMul(g, c.m, c.k, c.n);
      // Operands mapped where the plan reads them (createMatMulLhs/Rhs), as a model would create
      // its weights; the cycles include multicasting blocks to the other tiles that read them.
      const tessera::ElemType type = half ? tessera::ElemType::Float16 : tessera::ElemType::Float32;
      tessera::Tensor a = tessera::ops::createMatMulLhs(g, c.m, c.k, c.n, "a", type);
      tessera::Tensor b = tessera::ops::createMatMulRhs(g, c.m, c.k, c.n, "b", type);
      if (half) {
        // Finite binary16 values between 2^-4 and 2^-3 of either sign (bit patterns).
        std::vector<uint16_t> av(c.m * c.k), bv(c.k * c.n);
        for (size_t i = 0; i < av.size(); ++i)
          av[i] = static_cast<uint16_t>((i % 3 == 0 ? 0x8000u : 0u) | (0x2c00u + i % 997));
        for (size_t i = 0; i < bv.size(); ++i)
          bv[i] = static_cast<uint16_t>((i % 5 == 0 ? 0x8000u : 0u) | (0x2c00u + i % 991));
        g.setInitialValue(a, av);
        g.setInitialValue(b, bv);
      } else {
        std::vector<float> av(c.m * c.k), bv(c.k * c.n);
        for (size_t i = 0; i < av.size(); ++i) av[i] = 0.001f * static_cast<float>(i % 997) - 0.3f;
        for (size_t i = 0; i < bv.size(); ++i) bv[i] = 0.002f * static_cast<float>(i % 991) - 0.7f;
        g.setInitialValue(a, av);
        g.setInitialValue(b, bv);
      }
      tessera::ops::matmul(g, a, b, prog, "mm");
      tessera::Compiled comp = tessera::compile(g, prog);
      const bool unit = std::find(comp.report.codelets.begin(), comp.report.codelets.end(),
                                  half ? "MatMulAmpH" : "MatMulAmp") != comp.report.codelets.end();
      tessera::Engine e(*dev, comp.executable);
      // --supersteps: stop at every sync and split each superstep's cycles per tile.
      std::vector<std::string> steps;
      std::vector<tessera::TileStats> prev(c.tiles);
      uint64_t last = 0;
      // The exchange that opens the next superstep: the one run at the sync that ended this one.
      std::string opening;
      const auto exchangeAt = [&](uint32_t syncId) -> std::string {
        for (const auto& x : comp.report.exchanges)
          if (x.syncId == syncId) return fmt::format(" (opened by the exchange \"{}\")", x.name);
        return "";
      };
      if (opt.supersteps) {
        dev->setSyncBreak(true);
        e.setStopObserver([&](const tessera::RunResult& s) {
          uint64_t xMax = 0, cMax = 0, cSum = 0, wMin = UINT64_MAX;
          for (unsigned t = 0; t < c.tiles; ++t) {
            const tessera::TileStats st = dev->stats(t);
            const uint64_t dx = st.exchangeCycles - prev[t].exchangeCycles;
            const uint64_t dw = st.syncWaitCycles - prev[t].syncWaitCycles;
            const uint64_t compute = s.cycles - last - dx - dw;
            xMax = std::max(xMax, dx);
            cMax = std::max(cMax, compute);
            cSum += compute;
            wMin = std::min(wMin, dw);
            prev[t] = st;
          }
          steps.push_back(fmt::format(
              "  superstep {}{}: cycles {}, exchange {} (the most on a tile), compute {} (the "
              "busiest tile; mean {:.0f}), sync wait at least {}",
              steps.size(), opening, s.cycles - last, xMax, cMax,
              static_cast<double>(cSum) / c.tiles, wMin));
          opening = exchangeAt(s.hostSyncId);
          last = s.cycles;
        });
      }
      const tessera::RunResult r = e.run(20'000'000'000ull);
      if (r.reason != tessera::StopReason::Halted) throw tessera::Error("the matmul did not halt");
      uint64_t xc = 0, computeCycles = 0;
      for (const auto& x : comp.report.exchanges) xc += x.cycles;
      for (unsigned t = 0; t < c.tiles; ++t) {
        const tessera::TileStats st = dev->stats(t);
        computeCycles += r.cycles - st.syncWaitCycles - st.exchangeCycles;
      }
      // The tile's fp32 peak: 16 MACs a cycle with the matrix unit, one FMA without; fp16 twice
      // the unit's (32 MACs an AMP.H).
      const double peak = half ? 2.0 * target.peakFlopsPerCycle() : target.peakFlopsPerCycle();
      const double flops = 2.0 * static_cast<double>(c.m * c.k * c.n);
      const double all = flops / (static_cast<double>(c.tiles) * static_cast<double>(r.cycles));
      const double compute = flops / static_cast<double>(computeCycles);
      fmt::print(
          "{} plan {}x{}x{}, {}, cycles: {}, exchange: {}, FLOP/cycle/tile: {:.2f} (compute "
          "phases {:.2f}), % of peak ({:g}): {:.1f}% (compute phases {:.1f}%)\n",
          what, plan.m, plan.n, plan.k,
          unit ? (half ? "matrix unit fp16" : "matrix unit")
               : (target.hasMatrixUnit ? "scalar (shape)" : "scalar"),
          r.cycles, xc, all, compute, peak, 100.0 * all / peak, 100.0 * compute / peak);
      if (opt.supersteps) {
        for (const auto& x : comp.report.exchanges)
          fmt::print("  exchange \"{}\": {} cycles, lower bound {}, {} words received\n", x.name,
                     x.cycles, x.lowerBound, x.words);
      }
      for (const std::string& line : steps) fmt::print("{}\n", line);
      if (opt.supersteps) fmt::print("  to the halt{}: cycles {}\n", opening, r.cycles - last);
    } catch (const std::exception& ex) {
      fmt::print("{} not run: {}\n", what, ex.what());
      ++failures;
    }
  }
  return failures ? 1 : 0;
}

// Compile the benchmark MLP and write its executable and compile report.
int compileMlp(tessera::bench::MlpConfig cfg, const std::string& model, unsigned tiles,
               uint32_t memKiB, const std::string& outDir, const std::string& reportPath) {
  cfg.model = tessera::bench::makeModel(model, cfg.hidden);
  cfg.inputs = cfg.model->inputs();
  cfg.classes = cfg.model->classes();
  // The output directory is made (or refused) before the compile, not after it.
  if (!outDir.empty()) std::filesystem::create_directories(outDir);
  if (memKiB == 0) memKiB = cfg.model->defaults().modelTileMemKiB;  // as train on the model
  bool unit = false;
  tessera::Compiled c =
      tessera::bench::compileMlp(tessera::Target{tiles, memKiB * 1024}, cfg, &unit);
  fmt::print("{}", c.report.summary());
  fmt::print(
      "matrix unit: {}\n",
      unit ? "the matmuls use it"
      : tessera::Target{}.hasMatrixUnit
          ? "not used (the unit's layouts do not fit the tiles; scalar codelets, the same bits)"
          : "absent");
  if (!outDir.empty()) {
    c.executable.writeFile(outDir + "/mlp.tess");
    tessera::writeFileChecked(outDir + "/mlp-report.json", c.report.toJson());
    fmt::print("wrote {0}/mlp.tess and {0}/mlp-report.json\n", outDir);
  }
  if (!reportPath.empty()) {
    tessera::bench::writeReportHtml(
        reportPath, {c.report.toJson(), "", "",
                     fmt::format("compile of {} on {} tiles x {} KiB", model, tiles, memKiB)});
    fmt::print("wrote {}\n", reportPath);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessera-bench: benchmarks of compiled programs"};
  app.require_subcommand(1);
  MatmulOptions mmo;
  CLI::App* mm = app.add_subcommand("matmul",
                                    "matmul: FLOPs per cycle per tile against the tile's peak (32 "
                                    "with the matrix unit, 2 without)");
  mm->add_option("--device", mmo.device, "device string (model, rtl, tcp://HOST:PORT, serial:PATH)")
      ->capture_default_str();
  mm->add_option("--tiles", mmo.tiles,
                 "tiles (default: each listed case's own; 16 for a shape given by --m/--k/--n)")
      ->check(CLI::Range(1u, 1472u));
  mm->add_option("--tile-mem-kib", mmo.memKiB,
                 "memory per tile, KiB (default: each case's own; 624)")
      ->check(CLI::Range(16u, 4096u));
  mm->add_option("--m", mmo.m, "rows of a and c (with --k and --n: one shape instead of the list)")
      ->check(CLI::Range(size_t{1}, size_t{1} << 16));
  mm->add_option("--k", mmo.k, "columns of a, rows of b")
      ->check(CLI::Range(size_t{1}, size_t{1} << 16));
  mm->add_option("--n", mmo.n, "columns of b and c")->check(CLI::Range(size_t{1}, size_t{1} << 16));
  mm->add_option("--precision", mmo.precision,
                 "fp32, or fp16 (float16 a and b, float32 c; peak 64 FLOP/cycle/tile on the unit)")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp32", "fp16"}));
  mm->add_option(
        "--matrix-unit", mmo.matrixUnit,
        "the device's matrix unit, on or off (default: the chip's; the model builds either)")
      ->check(CLI::IsMember({"on", "off"}));
  mm->add_flag("--supersteps", mmo.supersteps,
               "after each shape's line, its exchanges against their lower bounds and one line "
               "per BSP superstep: the exchange that opened it, its cycles, the most exchange "
               "cycles on a tile, the busiest tile's compute cycles and the mean, the least sync "
               "wait");
  mm->add_option("--model-engine", mmo.modelEngine, tessera::kModelEngineHelp)
      ->transform(CLI::CheckedTransformer(tessera::modelEngineNames()));
  tessera::bench::ConvBenchOptions conv;
  CLI::App* cv = app.add_subcommand(
      "conv", "conv2d: LeNet's conv layers, FMAs per cycle per tile against the peak");
  cv->add_option("--device", conv.device, "device string")->capture_default_str();
  cv->add_option("--tiles", conv.tiles, "tiles")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1472u));
  cv->add_option("--tile-mem-kib", conv.memKiB, "memory per tile, KiB")
      ->capture_default_str()
      ->check(CLI::Range(16u, 4096u));
  cv->add_option("--batch", conv.batch, "batch size")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{4096}));
  cv->add_flag("!--no-backward", conv.backward, "forward only");
  cv->add_option(
        "--matrix-unit", conv.matrixUnit,
        "the device's matrix unit, on or off (default: the chip's; the model builds either)")
      ->check(CLI::IsMember({"on", "off"}));
  cv->add_option("--model-engine", conv.modelEngine, tessera::kModelEngineHelp)
      ->transform(CLI::CheckedTransformer(tessera::modelEngineNames()));
  tessera::bench::MlpConfig mlp;
  unsigned tiles = TESS_NUM_TILES;  // the RTL build's chip (rtl/params.json)
  uint32_t memKiB = 0;              // 0: the model's default, as train uses on the model backend
  std::string outDir, compileModel = "mlp";
  CLI::App* cm = app.add_subcommand(
      "compile-mlp", "compile a training model (the MLP by default) and print its compile report");
  cm->add_option("--model", compileModel,
                 "the network: mlp, lenet, resnet-tiny or transformer-tiny")
      ->capture_default_str()
      ->check(CLI::IsMember(tessera::bench::modelNames()));
  cm->add_option("--tiles", tiles, "tiles")->capture_default_str()->check(CLI::Range(1, 4096));
  cm->add_option("--tile-mem", memKiB,
                 "KiB of memory per tile (default: the model's, as train uses on the model "
                 "backend: 128 for mlp, 624 for the others)")
      ->check(CLI::Range(16, 1024));
  cm->add_option("--batch", mlp.batch,
                 "minibatch size (default: the model's: 8 for transformer-tiny, 32 for the others)")
      ->check(CLI::Range(1, 65536));
  cm->add_option("--hidden", mlp.hidden, "hidden layer sizes, comma separated")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  cm->add_option("--momentum", mlp.momentum,
                 "SGD momentum (0 = plain SGD, whose weight gradients are never stored)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.999));
  std::string compileOptimizer;
  cm->add_option("--optimizer", compileOptimizer,
                 "sgd, momentum or adam (default: momentum if --momentum > 0, else sgd)")
      ->check(CLI::IsMember({"sgd", "momentum", "adam"}));
  cm->add_option("--out", outDir, "directory for mlp.tess and mlp-report.json");
  std::string compileReport;
  cm->add_option("--report", compileReport,
                 "FILE.html: the browser report of the compile (docs/report.md)");
  tessera::bench::TrainOptions train;
  CLI::App* tr = app.add_subcommand(
      "train", "train a model on Fashion-MNIST and report like MLPerf (docs/training.md)");
  tr->add_option("--model", train.model, "the network: mlp, lenet, resnet-tiny or transformer-tiny")
      ->capture_default_str()
      ->check(CLI::IsMember(tessera::bench::modelNames()));
  tr->add_option("--device", train.device,
                 "device string: model, rtl, tcp://HOST:PORT, serial:PATH")
      ->capture_default_str();
  tr->add_option("--matrix-unit", train.matrixUnit,
                 "the device's matrix unit, on or off (default: the chip's; the model builds "
                 "either): the matmuls use it where the device has it")
      ->check(CLI::IsMember({"on", "off"}));
  tr->add_option("--merge-compute-sets", train.mergeComputeSets,
                 "on: the compiler runs independent compute sets in one superstep; off: each in "
                 "its own, to compare (the same weights; docs/compiler.md)")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  tr->add_option("--model-engine", train.modelEngine, tessera::kModelEngineHelp)
      ->transform(CLI::CheckedTransformer(tessera::modelEngineNames()));
  tr->add_option("--tiles", train.tiles, "tiles")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  tr->add_option(
        "--tile-mem", train.tileMemKiB,
        "KiB per tile (default on the model: 128 for mlp, 624 for the others; elsewhere the "
        "backend's own)")
      ->check(CLI::Range(16, 1024));
  tr->add_option("--batch", train.batch,
                 "minibatch size (default: the model's: 8 for transformer-tiny, 32 for the others)")
      ->check(CLI::Range(1, 60000));
  tr->add_option("--epochs", train.epochs, "epochs at most")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  tr->add_option("--hidden", train.hidden, "the MLP's hidden layer sizes, comma separated")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  tr->add_option("--optimizer", train.optimizer,
                 "sgd, momentum or adam (default: momentum if --momentum > 0 is given, else the "
                 "model's: sgd for mlp, adam for the others)")
      ->check(CLI::IsMember({"sgd", "momentum", "adam"}));
  tr->add_option("--lr", train.learningRate,
                 "learning rate (default: the model's for the optimizer; mlp 0.05 with sgd and "
                 "momentum, the others 0.05 sgd, 0.01 momentum; 0.001 with adam)")
      ->check(CLI::PositiveNumber);
  tr->add_option("--lr-schedule", train.lrSchedule,
                 "constant, or cosine: each step's rate decays from --lr to 0 over the run's "
                 "epochs x steps per epoch")
      ->check(CLI::IsMember({"constant", "cosine"}))
      ->capture_default_str();
  tr->add_option(
        "--precision", train.precision,
        "fp32, or fp16: mixed precision, the MLP's products in float16 on the matrix "
        "unit with float32 accumulation, float32 master weights and a loss scale (--loss-scale)")
      ->check(CLI::IsMember({"fp32", "fp16"}))
      ->capture_default_str();
  tr->add_option_function<std::string>(
        "--loss-scale",
        [&train](const std::string& v) {
          if (v == "dynamic") {
            train.dynamicLossScale = true;
            return;
          }
          size_t used = 0;
          float s = 0;
          try {
            s = std::stof(v, &used);
          } catch (const std::exception&) {
            used = 0;
          }
          if (used != v.size() || !(s > 0))
            throw CLI::ValidationError("--loss-scale", "a positive number or 'dynamic', got " + v);
          train.lossScale = s;
        },
        "static loss scale, a power of two (default: 1024 with --precision fp16, else 1), or "
        "'dynamic': halved and the step skipped when a gradient overflows, doubled after "
        "--loss-scale-interval finite steps (fp16)")
      ->type_name("S|dynamic");
  tr->add_option("--loss-scale-init", train.lossScaleInit,
                 "the dynamic loss scale's first value, a power of two (default 65536)")
      ->check(CLI::PositiveNumber);
  tr->add_option("--loss-scale-interval", train.lossScaleInterval,
                 "finite steps in a row after which the dynamic loss scale doubles")
      ->check(CLI::Range(1u, 0x7fffffffu))
      ->capture_default_str();
  tr->add_flag("--input-standardize", train.inputStandardize,
               "scale the input to zero mean and unit variance over the training images "
               "(input_scale and input_offset in the .npz) instead of pixel / 255");
  tr->add_option("--momentum", train.momentum,
                 "SGD momentum (default 0.9 with --optimizer momentum; given alone, > 0 selects "
                 "momentum and 0 plain SGD; each weight then also needs a gradient and a "
                 "velocity, e.g. --tile-mem 256 for the default MLP)")
      ->check(CLI::Range(0.0, 0.999));
  tr->add_option("--weight-decay", train.weightDecay,
                 "L2 weight decay, added to the gradient (PyTorch's weight_decay)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  tr->add_option("--adam-beta1", train.beta1, "Adam's beta1")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.999999));
  tr->add_option("--adam-beta2", train.beta2, "Adam's beta2")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.999999));
  tr->add_option("--adam-eps", train.eps, "Adam's epsilon")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  tr->add_option("--target-accuracy", train.targetAccuracy,
                 "stop when the test accuracy reaches this fraction")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  tr->add_option("--max-steps", train.maxSteps,
                 "at most this many steps per epoch run (0 = whole epochs)")
      ->capture_default_str();
  tr->add_option("--seed", train.seed, "seed of the initialization and the minibatch order")
      ->capture_default_str();
  tr->add_option("--out", train.outDir, "directory for the log, result, trace and pictures")
      ->capture_default_str();
  tr->add_option("--data", train.dataDir,
                 "directory of the Fashion-MNIST IDX files (default: the Debian package's)");
  tr->add_option("--save-weights", train.saveWeights, "write the trained parameters to this .npz");
  tr->add_option("--report", train.reportPath,
                 "FILE.html: the browser report of the compile and the run (docs/report.md)");
  tr->add_option("--load-weights", train.loadWeights, "start from the parameters in this .npz");
  tr->add_option("--clock-mhz", train.clockMHz,
                 "nominal clock for device time (default: the chip's)")
      ->check(CLI::PositiveNumber);
  tr->add_option("--trace-steps", train.traceSteps,
                 "training steps traced superstep by superstep (0 = none)")
      ->capture_default_str();
  tr->add_option("--eval-images", train.evalImages,
                 "test images evaluated per epoch (default: all 10,000)");
  tr->add_flag("--quiet", train.quiet, "no progress output");
  tr->add_flag("--require-target", train.requireTarget,
               "exit with 3 when the target accuracy is not reached");
  tr->add_option("--replicas", train.replicas,
                 "data-parallel replicas, one MPI rank each (mpirun -np R); --batch is "
                 "the global batch, split evenly")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  tr->add_option("--link-gbps", train.linkGBps,
                 "modelled chip-to-chip bandwidth per chip, GB/s each way (MK2: 320 "
                 "both ways)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  tr->add_option("--link-step-us", train.linkStepUs,
                 "modelled latency of one all-reduce ring step, microseconds")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  tr->add_option(
        "--checkpoint-every", train.checkpointEvery,
        "save a training checkpoint every N steps and at every epoch end (docs/training.md)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  tr->add_option("--checkpoint-dir", train.checkpointDir,
                 "directory of the checkpoints (default: OUT/checkpoints; the --resume one when "
                 "resuming)");
  tr->add_option("--resume", train.resumeDir,
                 "continue from the newest checkpoint in this directory (same options as the "
                 "saved run)");
  tessera::cli::requireFiniteNumbers(app);
  CLI11_PARSE(app, argc, argv);
  // A minibatch not given is the model's (transformer-tiny's batch 32 does not fit 16 tiles).
  try {
    if (tr->parsed() && tr->count("--batch") == 0 && !train.model.empty())
      train.batch = tessera::bench::makeModel(train.model)->defaults().batch;
    if (cm->parsed() && cm->count("--batch") == 0)
      mlp.batch = tessera::bench::makeModel(compileModel)->defaults().batch;
  } catch (const std::exception& ex) {
    fmt::print(stderr, "tessera-bench: {}\n", ex.what());
    return 1;
  }
  // MPI only for replicas: --replicas > 1, or started by mpirun. Any failure on one rank then ends
  // the whole job with a message naming the rank, instead of leaving the others waiting.
  std::optional<tessera::mpi::MpiSession> mpi;
  std::optional<tessera::bench::ReplicaComm> comm;
  if (tr->parsed() && (train.replicas > 1 || tessera::mpi::MpiSession::launchedByMpirun())) {
    try {
      mpi.emplace(argc, argv);
      comm.emplace(tessera::mpi::MpiComm::Init::Session, "replicas");
    } catch (const std::exception& ex) {
      fmt::print(stderr, "tessera-bench: {}\n", ex.what());
      return 1;
    }
  }
  if (comm) {
    int code = 1;
    try {
      code = tessera::bench::runTrain(train, &*comm);
    } catch (const std::exception& ex) {
      tessera::mpi::MpiSession::abortJob("tessera-bench", ex.what());
    }
    comm.reset();
    return code;
  }
  try {
    if (tr->parsed()) return tessera::bench::runTrain(train);
    if (mm->parsed()) return runMatmul(mmo);
    if (cv->parsed()) return tessera::bench::runConvBench(conv);
    if (cm->parsed()) {
      using Kind = tessera::autodiff::OptimizerConfig::Kind;
      if (!compileOptimizer.empty())
        mlp.optimizer = compileOptimizer == "sgd"        ? Kind::Sgd
                        : compileOptimizer == "momentum" ? Kind::Momentum
                                                         : Kind::Adam;
      if (compileOptimizer == "momentum" && mlp.momentum == 0.0f) mlp.momentum = 0.9f;
      return compileMlp(mlp, compileModel, tiles, memKiB, outDir, compileReport);
    }
  } catch (const std::exception& ex) {
    fmt::print(stderr, "tessera-bench: {}\n", ex.what());
    return 1;
  }
  return 0;
}
