// The "model" backend with its tiles sharded across the ranks of an MPI job (DeviceOptions::shard,
// tessera-run --shard; docs/scale-out.md): the one chip loop of ModelDevice with an MpiFabric.
// Every rank runs the same host program and opens the same device; each rank holds and simulates
// a contiguous block of tiles, with the same results, consoles, counters, cycles, checkpoint
// registers as the model in one process. Host-port calls are collective; a tile's owner applies
// writes and answers reads for every rank. The retirement trace gives each rank's sink the
// records of that rank's own tiles.
#pragma once

#include <memory>

#include "tessera/device.hpp"

namespace tessera {

/// Create the sharded "model" backend (DeviceOptions::shard): one rank per block of tiles of
/// MPI_COMM_WORLD (MPI initialised if the program has not done it). One host thread per rank
/// unless options.threads says otherwise.
std::unique_ptr<Device> makeShardedModelDevice(const DeviceOptions& options);

}  // namespace tessera
