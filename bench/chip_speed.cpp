// chip_speed: simulation speed of a whole chip on each backend, side by side in one process:
// the same ELF on every tile, run to the halt (host syncs released at once) on model and rtl
// with 4 and 16 tiles, and on the model's mk2 preset (1472 tiles). Reported per configuration:
// chip cycles (the same on every backend for one tile count: checked), chip cycles/s and
// tile-cycles/s, per CPU second (the process's, every thread) and per wall second; the median of
// --repeat measurements (by wall time). A config "model:mk2@2" runs the model on 2 host threads
// (default: --threads). Usage: chip_speed [--seconds S] [--repeat N] [--configs model:4,...]
// prog.elf
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <vector>

#include "cli_numbers.hpp"
#include "program_loader.hpp"
#include "tessera/device.hpp"

namespace {

struct Measurement {
  uint64_t runs = 0;
  uint64_t cycles = 0;  // per run
  unsigned tiles = 0;
  double seconds = 0;  // all runs, wall time
  double cpu = 0;      // all runs, process CPU time
  double wallRate() const { return double(cycles) * double(runs) / seconds; }
  double cpuRate() const { return double(cycles) * double(runs) / cpu; }
};

double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

Measurement measure(const std::string& config, const std::string& path, double minSeconds,
                    unsigned threads, tessera::ModelEngine engine) {
  const size_t colon = config.find(':');
  if (colon == std::string::npos) throw tessera::Error("config \"" + config + "\": want dev:tiles");
  tessera::DeviceOptions options;
  const std::string spec = config.substr(0, colon);
  std::string shape = config.substr(colon + 1);
  if (const size_t at = shape.find('@'); at != std::string::npos) {
    threads = static_cast<unsigned>(std::stoul(shape.substr(at + 1)));
    shape = shape.substr(0, at);
  }
  if (shape == "mk2") {
    options.preset = "mk2";
  } else {
    options.tiles = static_cast<unsigned>(std::stoul(shape));
  }
  options.threads = threads;
  options.modelEngine = engine;
  auto dev = tessera::openDevice(spec, options);
  Measurement m;
  m.tiles = dev->info().tiles;
  while (m.seconds < minSeconds) {
    tessera::loadProgramOnAllTiles(*dev, path);
    const double cpu0 = cpuSeconds();
    const auto start = std::chrono::steady_clock::now();
    tessera::RunResult r = dev->run(~uint64_t{0});
    while (r.reason == tessera::StopReason::HostSync) r = dev->run(~uint64_t{0});
    m.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.cpu += cpuSeconds() - cpu0;
    if (r.reason != tessera::StopReason::Halted) {
      throw tessera::Error(fmt::format("{} on {} did not halt cleanly", path, config));
    }
    m.cycles = r.cycles;
    m.runs++;
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Chip simulation speed of each backend, measured side by side."};
  double seconds = 2.0;
  unsigned repeat = 1;
  unsigned threads = 0;
  std::vector<std::string> configs{"model:4", "rtl:4", "model:16", "rtl:16", "model:mk2"};
  std::string program;
  app.add_option("--seconds", seconds, "Minimum wall time per configuration (default 2)");
  app.add_option("--repeat", repeat, "Measurements per config; the median is shown")
      ->check(CLI::Range(1u, 99u));
  app.add_option("--threads", threads, "Model host threads (default: one per core)");
  tessera::ModelEngine engine = tessera::defaultModelEngine();
  app.add_option("--model-engine", engine, tessera::kModelEngineHelp)
      ->transform(CLI::CheckedTransformer(tessera::modelEngineNames()));
  app.add_option("--configs", configs, "device:tiles or model:mk2 (default: all five)")
      ->delimiter(',')
      ->allow_extra_args(false);
  app.add_option("program", program, "A tile program (ELF) that halts on every tile")->required();
  tessera::cli::requireFiniteNumbers(app);
  CLI11_PARSE(app, argc, argv);
  try {
    fmt::print("{:<12} {:>6} {:>12} {:>14} {:>16} {:>14} {:>6}\n", "config", "tiles", "chip cycles",
               "cycles/wall-s", "tile-cycles/w-s", "cycles/cpu-s", "runs");
    std::map<unsigned, uint64_t> cyclesByTiles;
    for (const std::string& c : configs) {
      std::vector<Measurement> ms;
      for (unsigned i = 0; i < repeat; ++i)
        ms.push_back(measure(c, program, seconds, threads, engine));
      std::sort(ms.begin(), ms.end(), [](const Measurement& x, const Measurement& y) {
        return x.wallRate() < y.wallRate();
      });
      const Measurement m = ms[ms.size() / 2];
      const double cps = m.wallRate();
      fmt::print("{:<12} {:>6} {:>12} {:>14.0f} {:>16.0f} {:>14.0f} {:>6}\n", c, m.tiles, m.cycles,
                 cps, cps * m.tiles, m.cpuRate(), m.runs);
      auto [it, fresh] = cyclesByTiles.emplace(m.tiles, m.cycles);
      if (!fresh && it->second != m.cycles) {
        throw tessera::Error(fmt::format("{}: {} chip cycles, another backend gave {} on {} tiles",
                                         c, m.cycles, it->second, m.tiles));
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "chip_speed: {}\n", e.what());
    return 1;
  }
  return 0;
}
