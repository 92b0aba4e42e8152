// The one MPI wrapper of tessera (docs/scale-out.md): a duplicate of MPI_COMM_WORLD with the
// collectives that the sharded model chip (host/shard) and the data-parallel training replicas
// (bench/train) need, and counters of what it sent. Two lifetime policies for MPI itself: a main
// that owns MPI constructs an MpiSession (MPI_Init_thread ... MPI_Finalize around main's body);
// a library that opens MPI on demand (the sharded model inside tessera-run) asks MpiComm to
// initialise it if nobody has (MPI is then finalised at exit). Nothing else is process-wide.
// Every call is collective: every rank makes it, in the same order. <mpi.h> stays out of this
// header, so only this library compiles against MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/shard.hpp"

namespace tessera::mpi {

/// MPI for the lifetime of this object (MPI_Init_thread, funneled: only the constructing thread
/// calls MPI; MPI_Finalize when destroyed). Construct it once, in main.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  /// Whether this process was started by mpirun/mpiexec (its environment names a world size).
  static bool launchedByMpirun();
  /// Print "<who>: rank N: <message>" to stderr and end the whole job (MPI_Abort, code 1), so
  /// that no other rank waits for this one forever.
  [[noreturn]] static void abortJob(const std::string& who, const std::string& message);
};

/// What one rank sent and took part in.
using CommStats = shard::CommStats;

/// A communicator over every rank of the job (a duplicate of MPI_COMM_WORLD, so that other code
/// using MPI never sees these messages).
class MpiComm {
 public:
  /// Who initialises MPI.
  enum class Init {
    Session,   ///< an MpiSession must exist (the communicator refuses to start otherwise)
    OnDemand,  ///< initialise MPI (funneled) if nobody has, and finalise it at exit
  };
  /// `name` starts this communicator's error messages ("replicas", "model shard").
  MpiComm(Init init, std::string name);
  ~MpiComm();
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

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

  /// sum = every rank's `local`, added element by element in rank order (s = x0, s += x1, ...)
  /// after an all-gather: the same bits on every rank whatever the timing. sum.size() ==
  /// local.size(), the same on every rank.
  void sumInRankOrder(std::span<const float> local, std::span<float> sum);
  /// all = every rank's `local` one after the other, in rank order (all.size() == size() x
  /// local.size()).
  void gatherInRankOrder(std::span<const float> local, std::span<float> all);
  /// The sum of an integer over the ranks.
  uint64_t sum(uint64_t value);
  /// The largest of a value over the ranks.
  double max(double value);
  /// Throws tessera::Error naming the first rank whose `text` differs from rank 0's (e.g. the
  /// options every replica must share); every rank throws alike.
  void checkSame(const std::string& what, const std::string& text);

  /// Print "<who>: rank r of n: <what>; ending the job" on stderr and end every rank of the job
  /// with exit status `code` (a failure on one rank must not leave the others waiting).
  [[noreturn]] void abortJob(const std::string& who, const std::string& what, int code = 1) const;

 private:
  struct Handle;  // the MPI_Comm
  void allgatherBytes(const void* mine, void* all, size_t bytes);

  std::unique_ptr<Handle> comm_;
  std::string name_;
  int rank_ = 0;
  int size_ = 1;
  CommStats stats_;
};

/// This process's rank in MPI_COMM_WORLD; 0 when MPI is not initialised (or already finalised).
int worldRank();
/// Ranks in MPI_COMM_WORLD; 1 when MPI is not initialised.
int worldSize();
/// MpiComm::abortJob on MPI_COMM_WORLD (MPI must be initialised).
[[noreturn]] void abortWorld(const std::string& who, const std::string& what, int code);

}  // namespace tessera::mpi
