// The MPI side of a sharded chip (docs/scale-out.md): one duplicated communicator per device and
// the few collectives the sharded model needs, with counters of what it sent. MPI is initialised
// here if the program has not done it (and finalised at exit); nothing else is process-wide.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace tessera::shard {

/// What one rank sent and took part in (docs/scale-out.md, "Messages per superstep").
struct CommStats {
  uint64_t collectives = 0;    ///< collective calls this rank made (allgather, bcast, ...)
  uint64_t bytesSent = 0;      ///< payload bytes this rank contributed
  uint64_t bytesReceived = 0;  ///< payload bytes this rank received from the other ranks
};

/// A communicator over every rank of the job (a duplicate of MPI_COMM_WORLD).
class ShardComm {
 public:
  /// Initialises MPI if needed and duplicates MPI_COMM_WORLD (collective: every rank calls it).
  ShardComm();
  ~ShardComm();
  ShardComm(const ShardComm&) = delete;
  ShardComm& operator=(const ShardComm&) = delete;

  /// This rank.
  int rank() const { return rank_; }
  /// Ranks in the job.
  int size() const { return size_; }
  /// Counters since construction.
  const CommStats& stats() const { return stats_; }

  /// Every rank's value of a plain struct, indexed by rank.
  template <typename T>
  std::vector<T> allgather(const T& mine) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> all(static_cast<size_t>(size_));
    allgatherBytes(&mine, all.data(), sizeof(T));
    return all;
  }
  /// Every rank's words, concatenated in rank order; counts[r] = words of rank r, known to every
  /// rank beforehand (counts[rank()] == mine.size()).
  std::vector<uint32_t> allgatherv(std::span<const uint32_t> mine, const std::vector<int>& counts);
  /// Copy `bytes` bytes at data from rank root to every rank.
  void bcast(void* data, size_t bytes, int root);
  /// A string from rank root to every rank.
  std::string bcastString(const std::string& s, int root);

  /// Print "tessera shard: rank r of n: what" on stderr and end every rank of the job.
  [[noreturn]] void abortJob(const std::string& what, int code = 1) const;

 private:
  void allgatherBytes(const void* mine, void* all, size_t bytes);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  CommStats stats_;
};

}  // namespace tessera::shard
