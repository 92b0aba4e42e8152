// checkpoint_ff: the fast-forward demo of docs/checkpoint.md. Compiles the training MLP
// (bench/mlp_model.cpp) for a small chip, trains its first steps on the model, checkpoints at a
// host sync, and continues from that checkpoint on the rtl and on the model side by side: at every
// later sync the two devices must hold the same cycle count and the same memory on every tile, and
// at the end the same streamed-out results and counters. With --full-rtl it also runs the whole
// program on the rtl from the start, to measure the time saved and to check that the
// fast-forwarded rtl ends exactly like the rtl that ran everything.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli_numbers.hpp"
#include "mlp_model.hpp"
#include "tessera/checkpoint.hpp"
#include "tessera/compiler.hpp"
#include "tessera/engine.hpp"
#include "tessera/executable.hpp"
#include "train/fashion_mnist.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Options {
  unsigned tiles = TESS_DEFAULT_TILES;
  unsigned batch = 8;
  unsigned hidden = 16;
  unsigned steps = 12;
  unsigned modelSteps = 8;
  bool fullRtl = false;
};

/// One engine on one device with the MLP's streams: inputs from the training split, outputs kept.
struct Run {
  std::unique_ptr<tessera::Device> dev;
  std::unique_ptr<tessera::Engine> engine;
  std::vector<std::vector<uint8_t>> outputs;  // per stream (device→host ones)
  double seconds = 0;                         // host time inside Engine::run

  Run(const std::string& backend, const tessera::Executable& exe,
      const tessera::bench::LabelledImages& data, const Options& o) {
    tessera::DeviceOptions opts;
    opts.tiles = o.tiles;
    dev = tessera::openDevice(backend, opts);
    engine = std::make_unique<tessera::Engine>(*dev, exe);
    outputs.resize(exe.streams.size());
    const size_t pixels = tessera::bench::FashionMnist::kPixels;
    for (size_t s = 0; s < exe.streams.size(); ++s) {
      const std::string& name = exe.streams[s].name;
      if (exe.streams[s].direction == tessera::StreamDirection::DeviceToHost) {
        engine->connectStream(name, [this, s](uint64_t offset, std::span<uint8_t> bytes) {
          auto& out = outputs[s];
          if (out.size() < offset + bytes.size()) out.resize(offset + bytes.size());
          std::memcpy(out.data() + offset, bytes.data(), bytes.size());
        });
      } else if (name == "images" || name == "eval_images") {
        engine->connectStream(name, [&data, pixels](uint64_t offset, std::span<uint8_t> bytes) {
          for (size_t i = 0; i < bytes.size() / 4; ++i) {
            const size_t v = offset / 4 + i;
            const float x = data.images[v % (data.count() * pixels)] / 255.0f;
            std::memcpy(bytes.data() + 4 * i, &x, 4);
          }
        });
      } else {
        engine->connectStream(name, [&data](uint64_t offset, std::span<uint8_t> bytes) {
          for (size_t i = 0; i < bytes.size() / 4; ++i) {
            const int32_t label = data.labels[(offset / 4 + i) % data.count()];
            std::memcpy(bytes.data() + 4 * i, &label, 4);
          }
        });
      }
    }
  }

  /// Run to the next sync stop (true) or the end (false).
  bool step(tessera::RunResult& r) {
    bool stopped = false;
    engine->setSyncObserver([&](const tessera::RunResult&) {
      stopped = true;
      return false;
    });
    const auto t = Clock::now();
    r = engine->run();
    seconds += since(t);
    return stopped;
  }

  std::vector<uint8_t> memory() {
    const tessera::ChipInfo info = dev->info();
    std::vector<uint8_t> all(size_t{info.tiles} * info.tileMemBytes);
    for (unsigned t = 0; t < info.tiles; ++t) {
      dev->readMemory(t, 0,
                      std::span(all).subspan(size_t{t} * info.tileMemBytes, info.tileMemBytes));
    }
    return all;
  }
};

uint64_t cycleOf(tessera::Device& dev) {
  return dev.readControl(TESS_CR_CYCLE_LO) | uint64_t{dev.readControl(TESS_CR_CYCLE_HI)} << 32;
}

int fastForward(const Options& o) {
  tessera::bench::MlpConfig cfg;
  cfg.batch = o.batch;
  cfg.hidden = {o.hidden};
  cfg.trainSteps = o.steps;
  const tessera::Compiled compiled = tessera::bench::compileMlp(tessera::Target{o.tiles}, cfg);
  const tessera::Executable& exe = compiled.executable;
  const tessera::bench::FashionMnist mnist = tessera::bench::FashionMnist::load();
  const auto& data = mnist.train();
  fmt::print("MLP 784-{}-10, batch {}, {} training steps on {} tiles of {} KiB\n", o.hidden,
             o.batch, o.steps, o.tiles, TESS_TILE_MEM_BYTES / 1024);

  // 1. The first steps on the model, to the checkpoint: the host sync that brings the images of
  // training step modelSteps + 1 (so modelSteps steps are done).
  const int images = exe.findStream("images");
  uint32_t trainSync = 0;
  for (const tessera::ExeHostSync& h : exe.hostSyncs) {
    for (const tessera::ExeStreamCopy& c : h.copies) {
      if (static_cast<int>(c.stream) == images) trainSync = h.id;
    }
  }
  Run model("model", exe, data, o);
  unsigned hostSyncs = 0;
  std::vector<uint8_t> checkpoint;
  std::vector<uint64_t> offsets, counts;
  model.dev->setSyncBreak(true);
  model.engine->setSyncObserver([&](const tessera::RunResult& r) {
    if (r.reason != tessera::StopReason::HostSync || r.hostSyncId != trainSync ||
        ++hostSyncs <= o.modelSteps) {
      return true;
    }
    checkpoint = tessera::saveCheckpoint(*model.dev);
    offsets = model.engine->streamOffsets();
    counts = model.engine->hostSyncCounts();
    return false;
  });
  auto t0 = Clock::now();
  model.engine->run();
  const double modelSeconds = since(t0);
  if (checkpoint.empty()) throw tessera::Error("the program ended before the checkpoint");
  const uint64_t at = cycleOf(*model.dev);
  fmt::print("model:  {} training steps to cycle {} in {:.3f} s; checkpoint {} bytes\n",
             o.modelSteps, at, modelSeconds, checkpoint.size());

  // 2. Continue from the checkpoint on the rtl and on a fresh model, stop by stop.
  Run rtl("rtl", exe, data, o);
  Run cont("model", exe, data, o);
  t0 = Clock::now();
  tessera::restoreCheckpoint(*rtl.dev, checkpoint);
  const double restoreSeconds = since(t0);
  tessera::restoreCheckpoint(*cont.dev, checkpoint);
  rtl.engine->resumeFromCheckpoint(offsets, counts);
  cont.engine->resumeFromCheckpoint(offsets, counts);
  unsigned compared = 0;
  tessera::RunResult rr, mr;
  for (;;) {
    const bool rs = rtl.step(rr), ms = cont.step(mr);
    if (rs != ms || rr.cycles != mr.cycles) {
      throw tessera::Error(fmt::format("after {} syncs: rtl stopped at cycle {}{}, model at {}{}",
                                       compared, rr.cycles, rs ? " (sync)" : " (end)", mr.cycles,
                                       ms ? " (sync)" : " (end)"));
    }
    if (rtl.memory() != cont.memory()) {
      throw tessera::Error(fmt::format("memory differs at the stop at cycle {}", rr.cycles));
    }
    ++compared;
    if (!rs) break;
  }
  if (rtl.outputs != cont.outputs) throw tessera::Error("streamed-out results differ");
  for (unsigned t = 0; t < o.tiles; ++t) {
    const tessera::TileStats a = rtl.dev->stats(t), b = cont.dev->stats(t);
    if (a.instructions != b.instructions || a.idleSlots != b.idleSlots ||
        a.syncWaitCycles != b.syncWaitCycles || a.exchangeCycles != b.exchangeCycles) {
      throw tessera::Error(fmt::format("tile {}: counters differ between rtl and model", t));
    }
  }
  fmt::print(
      "rtl:    restored in {:.3f} s, ran cycles {}..{} in {:.3f} s; model continued in "
      "{:.3f} s\n",
      restoreSeconds, at, rr.cycles, rtl.seconds, cont.seconds);
  fmt::print(
      "        {} later stops compared (cycle count and all {} tiles' memory): identical; "
      "streamed-out results and counters identical\n",
      compared, o.tiles);

  if (o.fullRtl) {
    Run full("rtl", exe, data, o);
    tessera::RunResult fr;
    full.dev->setSyncBreak(true);
    while (full.step(fr)) {
    }
    // What the fast-forwarded run streamed out: the model's part up to the checkpoint, then the
    // rtl's.
    std::vector<std::vector<uint8_t>> joined = rtl.outputs;
    for (size_t s = 0; s < joined.size(); ++s) {
      const size_t n = std::min<size_t>(offsets[s], model.outputs[s].size());
      if (joined[s].size() < n) joined[s].resize(n);
      std::copy(model.outputs[s].begin(), model.outputs[s].begin() + n, joined[s].begin());
    }
    if (fr.cycles != rr.cycles) {
      throw tessera::Error(fmt::format("full rtl run ended at cycle {}, fast-forwarded at {}",
                                       fr.cycles, rr.cycles));
    }
    if (full.memory() != rtl.memory())
      throw tessera::Error("full and fast-forwarded rtl memory differ");
    if (full.outputs != joined) throw tessera::Error("full and fast-forwarded rtl results differ");
    const double ff = modelSeconds + restoreSeconds + rtl.seconds;
    fmt::print(
        "full rtl run: {} cycles in {:.3f} s; fast-forward (model + restore + rtl) {:.3f} s: "
        "{:.1f}x faster, same end state\n",
        fr.cycles, full.seconds, ff, full.seconds / ff);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Fast-forward demo: train on the model, checkpoint, continue on the rtl and compare"};
  Options o;
  app.add_option(
         "--tiles", o.tiles,
         fmt::format("tiles ({} or {}: the verilated chips)", TESS_DEFAULT_TILES, TESS_NUM_TILES))
      ->capture_default_str();
  app.add_option("--batch", o.batch, "minibatch size")->capture_default_str();
  app.add_option("--hidden", o.hidden, "hidden layer size")->capture_default_str();
  app.add_option("--steps", o.steps, "training steps of the program")->capture_default_str();
  app.add_option("--model-steps", o.modelSteps,
                 "training steps run on the model before the checkpoint")
      ->capture_default_str();
  app.add_flag("--full-rtl", o.fullRtl, "also run everything on the rtl, to compare and time it");
  tessera::cli::requireFiniteNumbers(app);
  CLI11_PARSE(app, argc, argv);
  try {
    return fastForward(o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "checkpoint_ff: {}\n", e.what());
    return 1;
  }
}
