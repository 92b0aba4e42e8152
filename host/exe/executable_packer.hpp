// Building an executable from tile ELFs and a JSON description of its streams, host syncs and
// tensors (docs/executable-format.md, "tessera-pack"), until the graph compiler writes them.
#pragma once

#include <string>
#include <vector>

#include "tessera/executable.hpp"

namespace tessera {

/// Build an executable for target from elfPaths (one ELF for every tile, or exactly one per tile)
/// and the JSON text descriptionJson (descriptionName names it in errors; both "" = no
/// description: no streams, host syncs or tensors; a named but empty description is an error).
/// Symbols in the description resolve in each tile's ELF.
Executable packExecutable(const ChipShape& target, const std::vector<std::string>& elfPaths,
                          const std::string& descriptionJson, const std::string& descriptionName);

}  // namespace tessera
