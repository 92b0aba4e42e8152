// tessera-run: load a tile program (an rv32 ELF linked at 0) into a chip, run it, print the
// consoles, and exit with the first nonzero tile exit code (docs/building.md). By default the
// program runs on tile 0 and the other tiles are disabled; --all-tiles runs it on every tile.
// Host syncs are released at once (a bare program has no host side). A *.tess executable
// (docs/executable-format.md, told apart by its magic) runs through the Engine instead: its streams
// come from --input/--output files, and an unconnected stream is refused unless --unconnected-ok.
// Checkpoints (docs/checkpoint.md): --checkpoint-at N --save FILE stops at the Nth sync since the
// program start and saves the device (and, for a *.tess, the stream positions); --restore FILE
// continues such a checkpoint on any device, printing the whole console as an uninterrupted run.
// Exit codes: kExitCodes.
// The parts: run_options (the command line), run_program (the run), run_checkpoint (checkpoint
// save and restore), run_report (consoles, --stats and the exit status).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>

#include "cli_numbers.hpp"
#include "run_options.hpp"
#include "run_program.hpp"
#include "tessera/error.hpp"
#include "tessera/shard.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "Run a tessera tile program (an rv32 ELF linked at 0) or executable (*.tess) on a device."};
  app.footer(tessera::tools::kExitCodes);
  tessera::tools::Options o;
  tessera::tools::addOptions(app, o);
  tessera::cli::requireFiniteNumbers(app);
  CLI11_PARSE(app, argc, argv);

  if (o.device.empty()) {
    const char* env = std::getenv("TESSERA_DEVICE");
    o.device = (env && *env) ? env : "model";
  }
  if (o.maxCycles == 0) o.maxCycles = ~uint64_t{0};
  try {
    // Under an MPI launcher every rank is one block of one sharded chip and must run the same
    // command line; a rank that differs would leave the others waiting (docs/scale-out.md).
    if (tessera::shard::launchedAsOneOfSeveralRanks() && !o.shard) {
      throw tessera::Error(
          "started as one of several MPI ranks without --shard: every rank of a sharded chip "
          "needs --shard (run separate chips as separate tessera-run processes, not under "
          "mpirun)");
    }
    if (o.shard) {
      std::string line;
      for (int i = 1; i < argc; ++i) line += fmt::format("{}{}", i > 1 ? " " : "", argv[i]);
      tessera::shard::checkSameOnEveryRank("command line", line);
    }
    return tessera::tools::runProgram(o);
  } catch (const tessera::Error& e) {
    // A sharded run ends every rank: the others may be waiting for this one.
    if (tessera::shard::ranks() > 1)
      tessera::shard::abortJob("tessera-run", e.what(), tessera::tools::kExitBadInput);
    fmt::print(stderr, "tessera-run: {}\n", e.what());
    return tessera::tools::kExitBadInput;
  } catch (const std::exception& e) {
    if (tessera::shard::ranks() > 1) {
      tessera::shard::abortJob("tessera-run", std::string("internal error: ") + e.what(),
                               tessera::tools::kExitBadInput);
    }
    fmt::print(stderr, "tessera-run: internal error: {}\n", e.what());
    return tessera::tools::kExitBadInput;
  }
}
