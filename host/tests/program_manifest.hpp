// The list of device programs the sw/ build produced (bin/programs.txt), so the suites need no
// second list.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace tessera::test {

/// One device program from the sw/ manifest.
struct Program {
  std::string kind;    ///< example, isa, trap, workload (one tile); chip, chiperr (multi-tile)
  std::string name;    ///< file stem of the ELF
  unsigned tiles = 1;  ///< tiles the program runs on (the manifest's third field; 1 if absent)
  /// True for the multi-tile kinds (chip, chiperr).
  bool multiTile() const { return kind == "chip" || kind == "chiperr"; }
};

/// Readable test parameters in gtest/ctest output.
void PrintTo(const Program& p, std::ostream* os);

/// Every program in binDir/programs.txt ("<kind> <name> [<tiles>]" per line).
std::vector<Program> readManifest(const std::string& binDir);

/// Backends a suite runs on, from a ","-separated list (the CMake list TESSERA_TEST_DEVICES).
std::vector<std::string> splitDevices(const std::string& list);

}  // namespace tessera::test
