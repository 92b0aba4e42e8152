// Data-parallel replicas over MPI (docs/training.md, "Replicas over MPI"): one process per replica,
// each driving its own device; what they exchange is summed in a fixed order, so that a run gives
// the same bits whatever the MPI timing and every replica holds the same weights.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tessera::bench {

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
  /// Print "tessera-bench: rank N: message" to stderr and end the whole job (MPI_Abort, code 1),
  /// so that no other rank waits for this one forever. Needs MPI initialised.
  [[noreturn]] static void abortJob(const std::string& message);
};

/// The replicas of one job: every process of MPI_COMM_WORLD (a duplicate of it, so that other code
/// using MPI never sees these messages). Every rank must make the same calls in the same order.
class ReplicaComm {
 public:
  /// Needs an MpiSession.
  ReplicaComm();
  ~ReplicaComm();
  ReplicaComm(const ReplicaComm&) = delete;
  ReplicaComm& operator=(const ReplicaComm&) = delete;

  /// This process's replica index, 0-based.
  int rank() const { return rank_; }
  /// Number of replicas.
  int size() const { return size_; }

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

 private:
  struct Comm;
  Comm* comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace tessera::bench
