// tessera-lockstep: run one program on two backends and compare every retired instruction
// (pc, destination value, retire cycle) per tile, every tile's memory and counters at every
// sync (SYNC_BREAK), and the final state; report the first divergence. The program is a tile ELF
// or a compiled executable (*.tess) whose host-to-device streams come from files.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iterator>
#include <limits>

#include "cli_numbers.hpp"
#include "lockstep.hpp"
#include "tessera/executable.hpp"

namespace {

std::vector<uint8_t> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw tessera::Error(fmt::format("cannot open {}", path));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Run a tile program or a *.tess on two devices and compare them instruction by instruction."};
  app.footer("Exit status: 0 = the devices agree, 1 = they diverge, 2 = error.");
  std::string a = "model", b = "rtl", path;
  std::vector<std::string> inputs;
  bool fast = false;
  tessera::LockstepOptions o;
  app.add_option("--a", a, "First device (default model)");
  app.add_option("--b", b, "Second device (default rtl)");
  app.add_option("--max-cycles", o.maxCycles, "Cycle limit for each run (default 10,000,000)")
      ->check(CLI::Range(uint64_t{1}, std::numeric_limits<uint64_t>::max()));
  app.add_option("--tiles", o.tiles,
                 "Tiles in the chip (default: the devices' default, or the executable's)");
  app.add_flag("--all-tiles", o.allTiles, "Load the ELF on every tile (default: tile 0)");
  app.add_option("--input", inputs,
                 "STREAM=FILE: a host-to-device stream of a *.tess (repeatable)");
  app.add_flag("--fast", fast,
               "Compare memory, counters and stops at every sync only, not every retirement");
  app.add_option("--a-engine", o.engineA,
                 "Model engine of device a: interp (default) or jit (docs/tile.md; a run with "
                 "records interprets, so give --fast to compare the jit)")
      ->transform(CLI::CheckedTransformer(tessera::modelEngineNames()));
  app.add_option("--b-engine", o.engineB, "Model engine of device b: interp (default) or jit")
      ->transform(CLI::CheckedTransformer(tessera::modelEngineNames()));
  app.add_option("program", path, "The program: a tile ELF or a *.tess")->required();
  tessera::cli::requireFiniteNumbers(app);
  CLI11_PARSE(app, argc, argv);
  o.compareRetirements = !fast;
  try {
    const std::vector<uint8_t> bytes = readFile(path);
    tessera::LockstepReport r;
    if (tessera::Executable::hasMagic(bytes)) {
      std::map<std::string, std::vector<uint8_t>> streams;
      for (const std::string& spec : inputs) {
        const auto eq = spec.find('=');
        if (eq == 0 || eq == std::string::npos || eq + 1 == spec.size()) {
          throw tessera::Error(fmt::format("--input \"{}\": expected STREAM=FILE", spec));
        }
        streams[spec.substr(0, eq)] = readFile(spec.substr(eq + 1));
      }
      r = tessera::runLockstep(tessera::Executable::parse(bytes, path), streams, a, b, o);
    } else {
      if (!inputs.empty()) throw tessera::Error("--input applies to a *.tess, not to an ELF");
      r = tessera::runLockstep(path, a, b, o);
    }
    fmt::print("{}\n", r.describe());
    return r.agree() ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tessera-lockstep: {}\n", e.what());
    return 2;
  }
}
