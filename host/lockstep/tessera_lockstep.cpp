// tessera-lockstep: run one program on two backends and compare every retired instruction
// (pc, destination value, retire cycle) per tile, every tile's memory and counters at every
// sync (SYNC_BREAK), and the final state; report the first divergence.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "lockstep.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Run a tile program on two devices and compare them instruction by instruction."};
  app.footer("Exit status: 0 = the devices agree, 1 = they diverge, 2 = error.");
  std::string a = "model", b = "rtl", path;
  tessera::LockstepOptions o;
  app.add_option("--a", a, "First device (default model)");
  app.add_option("--b", b, "Second device (default rtl)");
  app.add_option("--max-cycles", o.maxCycles, "Cycle limit for each run (default 10,000,000)");
  app.add_option("--tiles", o.tiles, "Tiles in the chip (default: the devices' default)");
  app.add_flag("--all-tiles", o.allTiles, "Load the program on every tile (default: tile 0)");
  app.add_option("prog.elf", path, "The program")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    const tessera::LockstepReport r = tessera::runLockstep(path, a, b, o);
    fmt::print("{}\n", r.describe());
    return r.agree() ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tessera-lockstep: {}\n", e.what());
    return 2;
  }
}
