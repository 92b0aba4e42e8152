// tessera-run's options (tessera_run.cpp): what the command line sets and how it is parsed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/device.hpp"

// CLI11's header costs every file that includes it seconds of compile time; only the files that
// declare or parse options (run_options.cpp, tessera_run.cpp) include it.
namespace CLI {
class App;
}  // namespace CLI

namespace tessera::tools {

/// tessera-run's own exit codes (the others are the tiles' and CLI11's; kExitCodes).
inline constexpr int kExitMaxCycles = 252;
inline constexpr int kExitTrap = 253;
inline constexpr int kExitBadInput = 254;

/// The exit-status paragraph of --help.
extern const char* const kExitCodes;

/// What the command line asks for.
struct Options {
  std::string device;
  uint64_t maxCycles = 0;
  std::string maxCyclesText;  // --max-cycles as given, parsed strictly into maxCycles
  bool stats = false;
  std::string vcd;
  std::string elfPath;
  unsigned tiles = 0;
  std::string preset;
  bool noFpu = false;
  bool noMulDiv = false;
  unsigned contexts = 0;
  unsigned counterBits = 0;
  std::string matrixUnit;  // "", "on" or "off": DeviceOptions::matrixUnit
  unsigned threads = 0;
  ModelEngine modelEngine = defaultModelEngine();  // --model-engine
  unsigned maxTiles = 0;
  uint64_t maxChipMiB = 0;
  bool allTiles = false;
  std::vector<std::string> inputs;   // name=file, host→device streams of a .tess
  std::vector<std::string> outputs;  // name=file, device→host streams of a .tess
  bool unconnectedOk = false;
  bool shard = false;         // model: tiles split over the MPI ranks (docs/scale-out.md)
  uint64_t checkpointAt = 0;  // save at this sync (1 = the first since the program start)
  std::string save;           // checkpoint file to write
  std::string restore;        // checkpoint file to continue from
  bool reset = false;         // RESET the device once opened (ends a run another client left)
};

/// Declares every option of tessera-run on app, stored into o when app parses.
void addOptions(CLI::App& app, Options& o);
/// The device options the run options ask for.
DeviceOptions deviceOptions(const Options& o);

}  // namespace tessera::tools
