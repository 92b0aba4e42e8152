// Where this process stands in a sharded run (docs/scale-out.md): a chip's tiles split across the
// ranks of an MPI job, every rank running the same host program. Safe to call without MPI.
#pragma once

#include <string>

namespace tessera::shard {

/// This process's rank in the MPI job; 0 when MPI is not initialised (no sharded device opened).
int rank();
/// Ranks in the MPI job; 1 when MPI is not initialised.
int ranks();
/// Print "<who>: rank r of n: <message>; ending the job" on stderr and end every rank of the job
/// with exit status `code` (a failure on one rank must not leave the others waiting).
[[noreturn]] void abortJob(const std::string& who, const std::string& message, int code);

}  // namespace tessera::shard
