// tessera-pack: build a *.tess executable from tile ELFs and a JSON description of streams, host
// syncs and tensors (docs/executable-format.md). Exit status 0, or 1 with the reason on stderr.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli_numbers.hpp"
#include "executable_packer.hpp"
#include "file_io.hpp"
#include "tessera/chip_params.h"

namespace {
/// Largest description file (docs/limits.md).
constexpr uint64_t kMaxDescriptionBytes = uint64_t{64} << 20;
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Build a tessera executable (*.tess) from tile ELFs and a JSON description."};
  std::vector<std::string> elfs;
  std::string description;
  std::string output;
  tessera::ChipShape target;  // the default chip (rtl/params.json)
  app.add_option("elfs", elfs, "One ELF for every tile, or one ELF per tile in tile order")
      ->required();
  app.add_option("-o,--output", output, "The executable to write")->required();
  app.add_option("-d,--description", description,
                 "JSON description of streams, host syncs and tensors (docs/executable-format.md)");
  app.add_option("--tiles", target.tiles, "Target tiles")->capture_default_str();
  app.add_option("--tile-mem-bytes", target.tileMemBytes, "Target SRAM bytes per tile")
      ->capture_default_str();
  app.add_option("--contexts", target.contexts, "Target contexts per tile")->capture_default_str();
  tessera::cli::requireFiniteNumbers(app);
  CLI11_PARSE(app, argc, argv);
  try {
    std::string json;
    if (!description.empty()) {
      const auto bytes =
          tessera::readRegularFile(description, kMaxDescriptionBytes, "a JSON description");
      json.assign(bytes.begin(), bytes.end());
    }
    tessera::packExecutable(target, elfs, json, description).writeFile(output);
    return 0;
  } catch (const tessera::Error& e) {
    fmt::print(stderr, "tessera-pack: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tessera-pack: internal error: {}\n", e.what());
    return 1;
  }
}
