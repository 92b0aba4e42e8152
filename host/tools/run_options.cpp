#include "run_options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <system_error>

namespace tessera::tools {

const char* const kExitCodes =
    "Exit status: the first nonzero tile exit code in tile order (its low 8 bits; a nonzero code\n"
    "whose low 8 bits are 0 gives 1), else 0; 252 = --max-cycles reached, 253 = a tile trapped\n"
    "or the chip stopped with a sync/exchange error (details on stderr), 254 = bad ELF, bad\n"
    "device, a failed output write or other error; command-line usage errors keep CLI11's codes\n"
    "(104 = bad option value, 105 = value out of range, 106 = missing argument, 109 = unknown\n"
    "option, ...).\n"
    "The device comes from --device, else the TESSERA_DEVICE environment variable, else "
    "\"model\".\n"
    "The consoles are printed on stdout when the run ends, each line prefixed with \"[tile k] \"\n"
    "when more than one tile runs.";

void addOptions(CLI::App& app, Options& o) {
  app.add_option("--device", o.device,
                 "Device: model or rtl (default: $TESSERA_DEVICE, else model)");
  app.add_option("--max-cycles", o.maxCyclesText,
                 "Stop after this many cycles, 1 .. 2^64-1 (default: no limit)")
      ->check(CLI::Validator(
          [&o](std::string& v) {
            // Strict: digits only, no sign, no wrap; 0 would mean nothing, so it is refused.
            uint64_t n = 0;
            const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
            if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || n == 0)
              return std::string("must be a whole number from 1 to 18446744073709551615");
            o.maxCycles = n;
            return std::string();
          },
          "CYCLES"));
  app.add_flag("--stats", o.stats,
               "Print cycles, instructions, IPC, idle slots, sync-wait and exchange cycles per "
               "tile, host syncs and host speed on stderr");
  app.add_option("--trace-vcd", o.vcd, "Write a VCD waveform (rtl device only)");
  app.add_option(
      "--tiles", o.tiles,
      fmt::format("Tiles in the chip (default: the device's default, {})", TESS_DEFAULT_TILES));
  app.add_option(
      "--preset", o.preset,
      fmt::format("Chip preset: mk2 = {} tiles x {} KiB, ice40 = the iCE40 board's "
                  "reduced configuration ({} RV32I tile without M and F, {} contexts, "
                  "{} KiB; rtl/params.json); model only",
                  TESS_MK2_NUM_TILES, TESS_MK2_TILE_MEM_BYTES / 1024, TESS_ICE40_NUM_TILES,
                  TESS_ICE40_NUM_CONTEXTS, TESS_ICE40_TILE_MEM_BYTES / 1024));
  app.add_flag("--no-fpu", o.noFpu,
               "Model: integer-only tiles, F instructions trap as illegal (as on the iCE40 board)");
  app.add_flag("--no-muldiv", o.noMulDiv,
               "Model: tiles without the M extension, M instructions trap as illegal (as on the "
               "iCE40 board)");
  app.add_option("--contexts", o.contexts,
                 fmt::format("Model: contexts per tile, 2..{} (the supervisor and 1..{} workers; "
                             "default {}, preset ice40: its own)",
                             TESS_ROUND_CYCLES, TESS_ROUND_CYCLES - 1, TESS_NUM_CONTEXTS))
      ->check(CLI::Range(2u, unsigned{TESS_ROUND_CYCLES}));
  app.add_option("--counter-bits", o.counterBits,
                 "Model: width of the tiles' counters, 32 (as on the iCE40 board: they wrap "
                 "modulo 2^32) or 64 (default: the chip's)")
      ->check(CLI::IsMember({32u, 64u}));
  app.add_option("--matrix-unit", o.matrixUnit,
                 "The tiles' matrix unit, on or off (default: the chip's, rtl/params.json "
                 "MATRIX_UNIT; the model builds either, another device refuses what it lacks)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--threads", o.threads, "Model: host threads (default: one per core)");
  app.add_option("--model-engine", o.modelEngine, kModelEngineHelp)
      ->transform(CLI::CheckedTransformer(modelEngineNames()));
  app.add_option("--max-tiles", o.maxTiles,
                 fmt::format("Refuse chips with more tiles than this (default {}, docs/limits.md)",
                             tessera::kDefaultMaxTiles));
  app.add_option("--max-chip-mib", o.maxChipMiB,
                 fmt::format("Refuse chips whose tiles x tile memory exceed this many MiB (default "
                             "{}, docs/limits.md)",
                             tessera::kDefaultMaxChipBytes >> 20))
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
  app.add_flag("--reset", o.reset,
               "reset the device before anything else: ends a run that another client, or one "
               "that went away, left on a board or server (the device answers Busy until then)");
  app.add_flag("--all-tiles", o.allTiles,
               "Load the program on every tile (default: tile 0 only, the others disabled)");
  app.add_option("--input", o.inputs,
                 "*.tess: feed host-to-device stream STREAM from FILE (STREAM=FILE, repeatable)")
      ->allow_extra_args(false);  // one value per occurrence: the program may follow
  app.add_option("--output", o.outputs,
                 "*.tess: write device-to-host stream STREAM to FILE (STREAM=FILE, repeatable)")
      ->allow_extra_args(false);
  app.add_flag("--unconnected-ok", o.unconnectedOk,
               "*.tess: run with unconnected streams (host-to-device get zeros, device-to-host "
               "data is dropped); default: refuse");
  app.add_flag("--shard", o.shard,
               "Model: split the chip's tiles over the ranks of an MPI job (run under mpirun; "
               "docs/scale-out.md)");
  app.add_option("--checkpoint-at", o.checkpointAt,
                 "Stop at the SYNCth sync since the program start (host syncs and internal "
                 "syncs, 1 = the first) and save a checkpoint there (needs --save)")
      ->check(CLI::PositiveNumber);
  app.add_option("--save", o.save, "Checkpoint file written at --checkpoint-at");
  app.add_option("--restore", o.restore,
                 "Continue from a checkpoint file (a bare program: no prog.elf; a *.tess: give "
                 "the same executable, and the same --output files to continue them)");
  app.add_option("prog.elf", o.elfPath, "The program: an rv32 ELF, or a *.tess executable");
}

DeviceOptions deviceOptions(const Options& o) {
  DeviceOptions options;
  options.traceVcd = o.vcd;
  options.tiles = o.tiles;  // 0 = the backend's default chip (docs/decisions.md: 4 tiles)
  options.preset = o.preset;
  options.noFpu = o.noFpu;
  options.noMulDiv = o.noMulDiv;
  options.contexts = o.contexts;
  options.counterBits = o.counterBits;
  if (!o.matrixUnit.empty()) options.matrixUnit = o.matrixUnit == "on";
  options.threads = o.threads;
  options.modelEngine = o.modelEngine;
  options.maxTiles = o.maxTiles;
  options.maxChipBytes = o.maxChipMiB << 20;
  options.shard = o.shard;
  return options;
}

}  // namespace tessera::tools
