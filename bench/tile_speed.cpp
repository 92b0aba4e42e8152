// tile_speed: simulation speed of one tile on each backend, side by side in one process.
// Each program runs on tile 0 of the device's default chip, the other tiles disabled, repeatedly
// on each device until at least --seconds of wall time have passed;
// reported: simulated cycles, instructions, IPC, cycles/s and instructions/s per device, and the
// model/RTL speed ratio. Usage: tile_speed [--seconds S] [--devices model,rtl] prog.elf...
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <map>
#include <vector>

#include "program_loader.hpp"
#include "tessera/device.hpp"

namespace {

struct Measurement {
  uint64_t runs = 0;
  uint64_t cycles = 0;        // per run
  uint64_t instructions = 0;  // per run
  double seconds = 0;         // all runs
  double cyclesPerSecond() const { return double(cycles) * double(runs) / seconds; }
  double instructionsPerSecond() const { return double(instructions) * double(runs) / seconds; }
};

Measurement measure(const std::string& spec, const std::string& path, double minSeconds) {
  auto dev = tessera::openDevice(spec);
  Measurement m;
  while (m.seconds < minSeconds) {
    tessera::loadProgram(*dev, path);
    // One busy tile: the others of the (default 4-tile) chip are disabled, as in tessera-run.
    for (unsigned t = 1; t < dev->info().tiles; ++t) dev->setTileEnabled(t, false);
    const auto start = std::chrono::steady_clock::now();
    const tessera::RunResult r = dev->run(~uint64_t{0});
    m.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r.reason != tessera::StopReason::Halted) {
      throw tessera::Error(fmt::format("{} on {} did not halt cleanly", path, spec));
    }
    m.cycles = r.cycles;
    m.instructions = dev->stats(0).instructions;
    m.runs++;
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Simulation speed of one tile on each backend, measured side by side."};
  double seconds = 2.0;
  std::vector<std::string> devices{"model", "rtl"};
  std::vector<std::string> programs;
  app.add_option("--seconds", seconds, "Minimum wall time per program and device (default 2)");
  app.add_option("--devices", devices, "Devices to compare (default model,rtl)")->delimiter(',');
  app.add_option("programs", programs, "Tile programs (ELF) that halt with exit code 0")
      ->required();
  CLI11_PARSE(app, argc, argv);
  try {
    fmt::print("{:<24} {:<6} {:>10} {:>10} {:>6} {:>14} {:>14} {:>6}\n", "program", "device",
               "cycles", "instrs", "IPC", "cycles/s", "instrs/s", "runs");
    for (const std::string& path : programs) {
      std::map<std::string, Measurement> byDevice;
      const std::string name = path.substr(path.find_last_of('/') + 1);
      for (const std::string& d : devices) {
        const Measurement m = measure(d, path, seconds);
        byDevice[d] = m;
        fmt::print("{:<24} {:<6} {:>10} {:>10} {:>6.3f} {:>14.0f} {:>14.0f} {:>6}\n", name, d,
                   m.cycles, m.instructions, double(m.instructions) / double(m.cycles),
                   m.cyclesPerSecond(), m.instructionsPerSecond(), m.runs);
      }
      if (byDevice.count("model") && byDevice.count("rtl")) {
        fmt::print("{:<24} model/rtl speed ratio (cycles/s): {:.1f}\n", name,
                   byDevice["model"].cyclesPerSecond() / byDevice["rtl"].cyclesPerSecond());
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "tile_speed: {}\n", e.what());
    return 1;
  }
  return 0;
}
