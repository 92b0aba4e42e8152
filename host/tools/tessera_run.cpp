// tessera-run: load a tile program (an rv32 ELF linked at 0) into a chip, run it, print the
// consoles, and exit with the first nonzero tile exit code (docs/building.md). By default the
// program runs on tile 0 and the other tiles are disabled; --all-tiles runs it on every tile.
// Host syncs are released at once (a bare program has no host side). Exit codes: kExitCodes.
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
    "Exit status: the first nonzero tile exit code in tile order (its low 8 bits; a nonzero code\n"
    "whose low 8 bits are 0 gives 1), else 0; 252 = --max-cycles reached, 253 = a tile trapped\n"
    "or the chip stopped with a sync/exchange error (details on stderr), 254 = bad ELF, bad\n"
    "device or other error; command-line usage errors keep CLI11's codes (104 = bad option\n"
    "value, 106 = missing argument, 109 = unknown option, ...).\n"
    "The device comes from --device, else the TESSERA_DEVICE environment variable, else "
    "\"model\".\n"
    "The consoles are printed on stdout when the run ends, each line prefixed with \"[tile k] \"\n"
    "when more than one tile runs.";

struct Options {
  std::string device;
  uint64_t maxCycles = 0;
  bool stats = false;
  std::string vcd;
  std::string elfPath;
  unsigned tiles = 0;
  std::string preset;
  unsigned threads = 0;
  bool allTiles = false;
};

int tileExitStatus(uint32_t code) {
  const int low = static_cast<int>(code & 0xff);
  return (code != 0 && low == 0) ? 1 : low;
}

void printConsoles(const tessera::Device& device, unsigned tiles, bool prefixed) {
  std::string out;
  for (unsigned t = 0; t < tiles; ++t) {
    const std::string text = device.console(t);
    if (!prefixed) {
      out += text;
      continue;
    }
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t nl = text.find('\n', pos);
      const size_t end = nl == std::string::npos ? text.size() : nl;
      out += fmt::format("[tile {}] {}\n", t, text.substr(pos, end - pos));
      pos = end + 1;
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

void printStats(const tessera::Device& device, unsigned tiles, uint64_t cycles, double seconds) {
  tessera::TileStats sum;
  for (unsigned t = 0; t < tiles; ++t) {
    const tessera::TileStats s = device.stats(t);
    sum.instructions += s.instructions;
    for (unsigned c = 0; c < 6; ++c) sum.contextInstructions[c] += s.contextInstructions[c];
    sum.idleSlots += s.idleSlots;
    sum.syncWaitCycles += s.syncWaitCycles;
    sum.exchangeCycles += s.exchangeCycles;
  }
  std::string perContext;
  for (unsigned c = 0; c < 6; ++c) {
    perContext += fmt::format("{}{}", c ? " " : "", sum.contextInstructions[c]);
  }
  fmt::print(stderr, "cycles:        {}\n", cycles);
  fmt::print(stderr, "instructions:  {} (per context: {})\n", sum.instructions, perContext);
  fmt::print(stderr, "IPC:           {:.4f}\n",
             cycles ? double(sum.instructions) / double(cycles) : 0.0);
  fmt::print(stderr, "idle slots:    {}\n", sum.idleSlots);
  fmt::print(stderr, "sync wait:     {} cycles\n", sum.syncWaitCycles);
  fmt::print(stderr, "exchange:      {} cycles\n", sum.exchangeCycles);
  if (tiles > 1) {
    for (unsigned t = 0; t < tiles; ++t) {
      const tessera::TileStats s = device.stats(t);
      fmt::print(stderr,
                 "tile {:4}:     instructions {} idle slots {} sync wait {} exchange {}{}\n", t,
                 s.instructions, s.idleSlots, s.syncWaitCycles, s.exchangeCycles,
                 s.halted ? fmt::format(" exit {}", s.exitCode) : std::string());
    }
  }
  fmt::print(stderr, "host time:     {:.3f} s ({:.2f} M simulated chip cycles/s)\n", seconds,
             seconds > 0 ? double(cycles) / seconds / 1e6 : 0.0);
}

int run(const Options& o) {
  tessera::DeviceOptions options;
  options.traceVcd = o.vcd;
  options.tiles = o.tiles;  // 0 = the backend's default chip (docs/decisions.md: 4 tiles)
  options.preset = o.preset;
  options.threads = o.threads;
  if (!o.vcd.empty() && o.device != "rtl") {
    throw tessera::Error(
        fmt::format("--trace-vcd needs --device rtl (device \"{}\" has no waveforms)", o.device));
  }
  auto device = tessera::openDevice(o.device, options);
  const unsigned tiles = device->info().tiles;
  if (o.allTiles) {
    tessera::loadProgramOnAllTiles(*device, o.elfPath);
  } else {
    tessera::loadProgram(*device, o.elfPath, 0);
    for (unsigned t = 1; t < tiles; ++t) device->setTileEnabled(t, false);
  }
  const unsigned enabled = o.allTiles ? tiles : 1;

  const auto start = std::chrono::steady_clock::now();
  tessera::RunResult result = device->run(o.maxCycles);
  while (result.reason == tessera::StopReason::HostSync ||
         result.reason == tessera::StopReason::SyncBreak) {
    if (o.stats) fmt::print(stderr, "host sync {}\n", result.hostSyncId);
    result = device->run(o.maxCycles - result.cycles);  // the limit counts chip cycles in all
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  printConsoles(*device, enabled, enabled > 1);
  if (o.stats) printStats(*device, enabled, result.cycles, seconds);

  switch (result.reason) {
    case tessera::StopReason::Halted:
      for (unsigned t = 0; t < enabled; ++t) {
        const uint32_t code = device->stats(t).exitCode;
        if (code != 0) return tileExitStatus(code);
      }
      return 0;
    case tessera::StopReason::Trap:
      fmt::print(stderr, "tessera-run: {}\n", tessera::describeTrap(result.trap));
      return kExitTrap;
    case tessera::StopReason::MaxCycles:
      fmt::print(stderr,
                 "tessera-run: stopped after {} cycles (--max-cycles) before every tile halted\n",
                 result.cycles);
      return kExitMaxCycles;
    case tessera::StopReason::HostSync:
    case tessera::StopReason::SyncBreak:
      break;  // released above
  }
  return kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Run a tessera tile program (an rv32 ELF linked at 0) on a device."};
  app.footer(kExitCodes);
  Options o;
  app.add_option("--device", o.device,
                 "Device: model or rtl (default: $TESSERA_DEVICE, else model)");
  app.add_option("--max-cycles", o.maxCycles, "Stop after this many cycles (default: no limit)");
  app.add_flag("--stats", o.stats,
               "Print cycles, instructions, IPC, idle slots, sync-wait and exchange cycles per "
               "tile, host syncs and host speed on stderr");
  app.add_option("--trace-vcd", o.vcd, "Write a VCD waveform (rtl device only)");
  app.add_option("--tiles", o.tiles, "Tiles in the chip (default: the device's default, 4)");
  app.add_option("--preset", o.preset, "Chip preset: mk2 = 1472 tiles x 624 KiB (model only)");
  app.add_option("--threads", o.threads, "Model: host threads (default: one per core)");
  app.add_flag("--all-tiles", o.allTiles,
               "Load the program on every tile (default: tile 0 only, the others disabled)");
  app.add_option("prog.elf", o.elfPath, "The program")->required();
  CLI11_PARSE(app, argc, argv);

  if (o.device.empty()) {
    const char* env = std::getenv("TESSERA_DEVICE");
    o.device = (env && *env) ? env : "model";
  }
  if (o.maxCycles == 0) o.maxCycles = ~uint64_t{0};
  try {
    return run(o);
  } catch (const tessera::Error& e) {
    fmt::print(stderr, "tessera-run: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tessera-run: internal error: {}\n", e.what());
    return kExitBadInput;
  }
}
