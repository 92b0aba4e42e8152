#include "shard_comm.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "tessera/error.hpp"
#include "tessera/shard.hpp"

namespace tessera::shard {
namespace {

// Finalise MPI at exit if this unit initialised it and nobody finalised it since.
void finalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw Error(fmt::format("MPI: {} failed (error {})", what, rc));
}

int countOf(size_t n, const char* what) {
  if (n > size_t(std::numeric_limits<int>::max())) {
    throw Error(fmt::format("MPI: {} of {} bytes is too large for one message", what, n));
  }
  return static_cast<int>(n);
}

}  // namespace

ShardComm::ShardComm() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    // Only the thread that calls the device talks to MPI (the tile threads never do).
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    std::atexit(finalizeAtExit);
  }
  check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
  // A failing collective ends the job (the default); say so explicitly on our communicator.
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

ShardComm::~ShardComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void ShardComm::allgatherBytes(const void* mine, void* all, size_t bytes) {
  const int n = countOf(bytes, "allgather");
  check(MPI_Allgather(mine, n, MPI_BYTE, all, n, MPI_BYTE, comm_), "MPI_Allgather");
  ++stats_.collectives;
  stats_.bytesSent += bytes;
  stats_.bytesReceived += bytes * static_cast<size_t>(size_ - 1);
}

std::vector<uint32_t> ShardComm::allgatherv(std::span<const uint32_t> mine,
                                            const std::vector<int>& counts) {
  const int n = countOf(mine.size(), "allgatherv");
  if (counts.size() != static_cast<size_t>(size_) || counts[static_cast<size_t>(rank_)] != n) {
    throw Error(
        fmt::format("MPI: allgatherv of {} words on rank {} does not match its counts", n, rank_));
  }
  std::vector<int> displs(counts.size());
  size_t total = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    displs[r] = countOf(total, "allgatherv");
    total += static_cast<size_t>(counts[r]);
  }
  std::vector<uint32_t> all(total);
  if (total == 0) return all;  // nobody has words: the counts said so, no second message
  check(MPI_Allgatherv(mine.data(), n, MPI_UINT32_T, all.data(), counts.data(), displs.data(),
                       MPI_UINT32_T, comm_),
        "MPI_Allgatherv");
  ++stats_.collectives;
  stats_.bytesSent += mine.size() * 4;
  stats_.bytesReceived += (total - mine.size()) * 4;
  return all;
}

void ShardComm::bcast(void* data, size_t bytes, int root) {
  check(MPI_Bcast(data, countOf(bytes, "bcast"), MPI_BYTE, root, comm_), "MPI_Bcast");
  ++stats_.collectives;
  if (rank_ == root) {
    stats_.bytesSent += bytes;
  } else {
    stats_.bytesReceived += bytes;
  }
}

std::string ShardComm::bcastString(const std::string& s, int root) {
  uint64_t n = s.size();
  bcast(&n, sizeof n, root);
  std::string out = rank_ == root ? s : std::string(n, '\0');
  if (n) bcast(out.data(), n, root);
  return out;
}

void ShardComm::abortJob(const std::string& what, int code) const {
  fmt::print(stderr, "tessera shard: rank {} of {}: {}; ending the job\n", rank_, size_, what);
  std::fflush(stderr);
  MPI_Abort(comm_, code);
  std::abort();  // MPI_Abort does not return; this is for the compiler
}

int rank() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int ranks() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return 1;
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

void abortJob(const std::string& who, const std::string& message, int code) {
  fmt::print(stderr, "{}: rank {} of {}: {}; ending the job\n", who, rank(), ranks(), message);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

}  // namespace tessera::shard
