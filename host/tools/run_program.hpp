// tessera-run's run (tessera_run.cpp): a bare tile program on tile 0 or every tile, or a *.tess
// executable through the Engine with its streams connected to files, each optionally restored
// from or stopped at a checkpoint.
#pragma once

#include "run_options.hpp"

namespace tessera::tools {

/// Runs what o asks for and returns the process exit status (kExitCodes); throws tessera::Error
/// on bad input.
int runProgram(const Options& o);

}  // namespace tessera::tools
