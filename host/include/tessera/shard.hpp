// Where this process stands in a sharded run (docs/scale-out.md): a chip's tiles split across the
// ranks of an MPI job, every rank running the same host program. Safe to call without MPI.
#pragma once

#include <cstdint>
#include <string>

namespace tessera {
class Device;
}

namespace tessera::shard {

/// This process's rank in the MPI job; 0 when MPI is not initialised (no sharded device opened).
int rank();
/// Ranks in the MPI job; 1 when MPI is not initialised.
int ranks();
/// Print "<who>: rank r of n: <message>; ending the job" on stderr and end every rank of the job
/// with exit status `code` (a failure on one rank must not leave the others waiting).
[[noreturn]] void abortJob(const std::string& who, const std::string& message, int code);

/// What one rank sent and took part in (docs/scale-out.md, "Messages per superstep").
struct CommStats {
  uint64_t collectives = 0;    ///< collective calls this rank made (allgather, bcast, ...)
  uint64_t bytesSent = 0;      ///< payload bytes this rank contributed
  uint64_t bytesReceived = 0;  ///< payload bytes this rank received from the other ranks
};

/// How a device's chip is split over the ranks and what the split costs.
struct ShardInfo {
  unsigned rank = 0;       ///< this process's block
  unsigned ranks = 1;      ///< blocks of the chip (1: the whole chip in this process)
  unsigned firstTile = 0;  ///< the tiles this process simulates: firstTile .. endTile-1
  unsigned endTile = 0;
  uint64_t supersteps = 0;  ///< syncs released since reset (model devices; 0 for others)
  CommStats comm;           ///< the messages of this rank for the chip (none in one process)
};

/// The split of any device openDevice returned: a model device (sharded or not) reports its
/// block, supersteps and messages; any other backend is one whole chip with no messages.
ShardInfo shardInfo(const Device& device);

}  // namespace tessera::shard
