// tile_speed: simulation speed of one tile on each backend, side by side in one process.
// Each program runs on tile 0 of the device's chip (--tiles, default 4), the other tiles disabled,
// repeatedly on each device until at least --seconds of wall time have passed; that measurement is
// taken --repeat times and the median (by CPU time) is reported: simulated cycles, instructions,
// IPC, cycles/s and instructions/s per CPU second (the process's CPU time, every thread) and per
// wall second, and the model/RTL speed ratio. --max-cycles caps a run (the RTL on long kernels):
// the rates are then those of the program's first cycles. --host-mxcsr sets the calling thread's
// MXCSR before the runs, to show that the model's speed does not depend on it. --model-engine
// interp,jit runs the model once per engine (rows model:interp, model:jit) and prints the jit's
// speed against the interpreter's; their cycle and instruction counts must be equal.
// Usage: tile_speed [--seconds S] [--repeat N] [--devices model,rtl] [--tiles T]
//                   [--max-cycles C] [--host-mxcsr HEX] [--model-engine interp,jit] prog.elf...
#include <fmt/format.h>
#include <xmmintrin.h>

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
  uint64_t cycles = 0;        // per run
  uint64_t instructions = 0;  // per run
  double wall = 0;            // all runs
  double cpu = 0;             // all runs, process CPU time
  double cyclesPerCpuSecond() const { return double(cycles) * double(runs) / cpu; }
  double instructionsPerCpuSecond() const { return double(instructions) * double(runs) / cpu; }
  double instructionsPerWallSecond() const { return double(instructions) * double(runs) / wall; }
};

double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

Measurement measureOnce(tessera::Device& dev, const std::string& spec, const std::string& path,
                        double minSeconds, uint64_t maxCycles) {
  Measurement m;
  while (m.wall < minSeconds) {
    tessera::loadProgram(dev, path);
    // One busy tile: the others of the chip are disabled, as in tessera-run.
    for (unsigned t = 1; t < dev.info().tiles; ++t) dev.setTileEnabled(t, false);
    const double cpu0 = cpuSeconds();
    const auto start = std::chrono::steady_clock::now();
    const tessera::RunResult r = dev.run(maxCycles);
    m.wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.cpu += cpuSeconds() - cpu0;
    const bool capped = r.reason == tessera::StopReason::MaxCycles;
    if (r.reason != tessera::StopReason::Halted && !capped) {
      throw tessera::Error(fmt::format("{} on {} did not halt cleanly", path, spec));
    }
    if (r.reason == tessera::StopReason::Halted && r.exitCode != 0) {
      throw tessera::Error(fmt::format("{} on {} exited with code {}", path, spec, r.exitCode));
    }
    m.cycles = r.cycles;
    m.instructions = dev.stats(0).instructions;
    m.runs++;
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Simulation speed of one tile on each backend, measured side by side."};
  double seconds = 2.0;
  unsigned repeat = 1;
  unsigned tiles = 0;
  uint64_t maxCycles = ~uint64_t{0};
  std::string mxcsr;
  std::vector<std::string> devices{"model", "rtl"};
  std::vector<std::string> programs;
  std::vector<tessera::ModelEngine> engines{tessera::defaultModelEngine()};
  app.add_option("--seconds", seconds, "Minimum wall time per measurement (default 2)");
  app.add_option("--repeat", repeat, "Measurements per program and device; the median is shown")
      ->check(CLI::Range(1u, 99u));
  app.add_option("--tiles", tiles, "Tiles of the chip (default: the device's default, 4)");
  app.add_option("--max-cycles", maxCycles, "Stop each run after this many cycles");
  app.add_option("--host-mxcsr", mxcsr, "Set the calling thread's MXCSR (hex) before the runs");
  app.add_option("--devices", devices, "Devices to compare (default model,rtl)")
      ->delimiter(',')
      ->allow_extra_args(false);
  app.add_option(
         "--model-engine", engines,
         "Model engines to measure, interp and/or jit (default: jit where the build has it; "
         "docs/tile.md)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->transform(CLI::CheckedTransformer(tessera::modelEngineNames()));
  app.add_option("programs", programs, "Tile programs (ELF) that halt with exit code 0")
      ->required();
  tessera::cli::requireFiniteNumbers(app);
  CLI11_PARSE(app, argc, argv);
  try {
    if (!mxcsr.empty()) _mm_setcsr(static_cast<unsigned>(std::stoul(mxcsr, nullptr, 16)));
    // One row per device, and per engine for the model when several are asked for.
    std::vector<std::pair<std::string, tessera::ModelEngine>> runs;
    for (const std::string& d : devices) {
      if (d != "model" || engines.size() == 1) {
        runs.emplace_back(d, engines.front());
        continue;
      }
      for (tessera::ModelEngine e : engines) runs.emplace_back(d, e);
    }
    auto label = [&](const std::pair<std::string, tessera::ModelEngine>& r) {
      if (r.first != "model" || engines.size() == 1) return r.first;
      return r.first + (r.second == tessera::ModelEngine::Jit ? ":jit" : ":interp");
    };
    fmt::print("{:<24} {:<12} {:>11} {:>11} {:>6} {:>14} {:>14} {:>14} {:>5}\n", "program",
               "device", "cycles", "instrs", "IPC", "cycles/cpu-s", "instrs/cpu-s", "instrs/wall-s",
               "runs");
    for (const std::string& path : programs) {
      std::map<std::string, Measurement> byDevice;
      const std::string name = path.substr(path.find_last_of('/') + 1);
      for (const auto& run : runs) {
        const std::string& d = run.first;
        const std::string row = label(run);
        tessera::DeviceOptions options;
        options.tiles = tiles;
        options.modelEngine = run.second;
        auto dev = tessera::openDevice(d, options);
        std::vector<Measurement> ms;
        for (unsigned i = 0; i < repeat; ++i) {
          ms.push_back(measureOnce(*dev, d, path, seconds, maxCycles));
        }
        std::sort(ms.begin(), ms.end(), [](const Measurement& x, const Measurement& y) {
          return x.cyclesPerCpuSecond() < y.cyclesPerCpuSecond();
        });
        const Measurement m = ms[ms.size() / 2];
        byDevice[row] = m;
        fmt::print("{:<24} {:<12} {:>11} {:>11} {:>6.3f} {:>14.0f} {:>14.0f} {:>14.0f} {:>5}\n",
                   name, row, m.cycles, m.instructions, double(m.instructions) / double(m.cycles),
                   m.cyclesPerCpuSecond(), m.instructionsPerCpuSecond(),
                   m.instructionsPerWallSecond(), m.runs);
      }
      if (byDevice.count("model:interp") && byDevice.count("model:jit")) {
        const Measurement& i = byDevice["model:interp"];
        const Measurement& j = byDevice["model:jit"];
        if (i.cycles != j.cycles || i.instructions != j.instructions) {
          throw tessera::Error(
              fmt::format("{}: the jit ran {} cycles and {} instructions, the "
                          "interpreter {} and {}",
                          name, j.cycles, j.instructions, i.cycles, i.instructions));
        }
        fmt::print("{:<24} jit/interp speed ratio (instrs/cpu-s): {:.2f}\n", name,
                   j.instructionsPerCpuSecond() / i.instructionsPerCpuSecond());
      }
      if (byDevice.count("model") && byDevice.count("rtl")) {
        fmt::print("{:<24} model/rtl speed ratio (cycles/cpu-s): {:.1f}\n", name,
                   byDevice["model"].cyclesPerCpuSecond() / byDevice["rtl"].cyclesPerCpuSecond());
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "tile_speed: {}\n", e.what());
    return 1;
  }
  return 0;
}
