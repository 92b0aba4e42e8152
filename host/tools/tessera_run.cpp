// tessera-run: load a single-tile ELF into a device, run it, print the console, and exit with the
// tile's exit code (docs/building.md). Exit codes are listed in kExitCodes below and in --help.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "program_loader.hpp"
#include "tessera/device.hpp"

namespace {

constexpr int kExitMaxCycles = 252;
constexpr int kExitTrap = 253;
constexpr int kExitBadInput = 254;

constexpr const char* kExitCodes =
    "Exit status: the tile's exit code (its low 8 bits; a nonzero code whose low 8 bits are 0\n"
    "gives 1), 252 = --max-cycles reached, 253 = the tile trapped (details on stderr),\n"
    "254 = bad ELF, bad device or other error; command-line usage errors keep CLI11's codes\n"
    "(104 = bad option value, 106 = missing argument, 109 = unknown option, ...).\n"
    "The device comes from --device, else the TESSERA_DEVICE environment variable, else "
    "\"model\".\n"
    "The console is printed on stdout when the run ends.";

int tileExitStatus(uint32_t code) {
  const int low = static_cast<int>(code & 0xff);
  return (code != 0 && low == 0) ? 1 : low;
}

void printStats(const tessera::Device& device, uint64_t cycles, double seconds) {
  const tessera::TileStats s = device.stats(0);
  std::string perContext;
  for (unsigned c = 0; c < 6; ++c) {
    perContext += fmt::format("{}{}", c ? " " : "", s.contextInstructions[c]);
  }
  fmt::print(stderr, "cycles:        {}\n", cycles);
  fmt::print(stderr, "instructions:  {} (per context: {})\n", s.instructions, perContext);
  fmt::print(stderr, "IPC:           {:.4f}\n",
             cycles ? double(s.instructions) / double(cycles) : 0.0);
  fmt::print(stderr, "idle slots:    {}\n", s.idleSlots);
  fmt::print(stderr, "host time:     {:.3f} s ({:.2f} M simulated cycles/s)\n", seconds,
             seconds > 0 ? double(cycles) / seconds / 1e6 : 0.0);
}

int run(const std::string& deviceSpec, uint64_t maxCycles, bool stats, const std::string& vcd,
        const std::string& elfPath) {
  tessera::DeviceOptions options;
  options.traceVcd = vcd;
  if (!vcd.empty() && deviceSpec != "rtl") {
    throw tessera::Error(
        fmt::format("--trace-vcd needs --device rtl (device \"{}\" has no waveforms)", deviceSpec));
  }
  auto device = tessera::openDevice(deviceSpec, options);
  tessera::loadProgram(*device, elfPath);

  const auto start = std::chrono::steady_clock::now();
  const tessera::RunResult result = device->run(maxCycles);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::string console = device->console(0);
  std::fwrite(console.data(), 1, console.size(), stdout);
  std::fflush(stdout);
  if (stats) printStats(*device, result.cycles, seconds);

  switch (result.reason) {
    case tessera::StopReason::Halted:
      return tileExitStatus(result.exitCode);
    case tessera::StopReason::Trap: {
      fmt::print(stderr, "tessera-run: {}\n", tessera::describeTrap(result.trap));
      return kExitTrap;
    }
    case tessera::StopReason::MaxCycles:
      fmt::print(stderr,
                 "tessera-run: stopped after {} cycles (--max-cycles) before the tile halted\n",
                 result.cycles);
      return kExitMaxCycles;
  }
  return kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Run a single-tile tessera program (an rv32 ELF linked at 0) on a device."};
  app.footer(kExitCodes);
  std::string deviceSpec;
  uint64_t maxCycles = 0;
  bool stats = false;
  std::string vcd;
  std::string elfPath;
  app.add_option("--device", deviceSpec,
                 "Device: model or rtl (default: $TESSERA_DEVICE, else model)");
  app.add_option("--max-cycles", maxCycles, "Stop after this many cycles (default: no limit)");
  app.add_flag("--stats", stats,
               "Print cycles, instructions, IPC, idle slots and host speed on stderr");
  app.add_option("--trace-vcd", vcd, "Write a VCD waveform (rtl device only)");
  app.add_option("prog.elf", elfPath, "The program")->required();
  CLI11_PARSE(app, argc, argv);

  if (deviceSpec.empty()) {
    const char* env = std::getenv("TESSERA_DEVICE");
    deviceSpec = (env && *env) ? env : "model";
  }
  try {
    return run(deviceSpec, maxCycles ? maxCycles : ~uint64_t{0}, stats, vcd, elfPath);
  } catch (const tessera::Error& e) {
    fmt::print(stderr, "tessera-run: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tessera-run: internal error: {}\n", e.what());
    return kExitBadInput;
  }
}
