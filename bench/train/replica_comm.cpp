#include "replica_comm.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tessera/error.hpp"

namespace tessera::bench {

namespace {

int countOf(size_t n, const char* what) {
  if (n > static_cast<size_t>(INT_MAX))
    throw Error(fmt::format("replicas: {} of {} values is too large for MPI", what, n));
  return static_cast<int>(n);
}

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    throw Error("replicas: MPI_Init_thread failed");
  }
  // Funneled is enough: the Engine's prefetch thread never calls MPI, every collective runs on the
  // thread in Engine::run (the main thread).
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw Error("replicas: the MPI library does not support MPI_THREAD_FUNNELED");
  }
}

MpiSession::~MpiSession() {
  MPI_Finalize();
}

bool MpiSession::launchedByMpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

void MpiSession::abortJob(const std::string& message) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "tessera-bench: rank %d: %s\n", rank, message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest if it did
}

struct ReplicaComm::Comm {
  MPI_Comm comm = MPI_COMM_NULL;
};

ReplicaComm::ReplicaComm() : comm_(new Comm) {
  int init = 0;
  MPI_Initialized(&init);
  if (!init) {
    delete comm_;
    throw Error("replicas: MPI is not initialised (construct an MpiSession first)");
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_->comm);
  MPI_Comm_rank(comm_->comm, &rank_);
  MPI_Comm_size(comm_->comm, &size_);
}

ReplicaComm::~ReplicaComm() {
  MPI_Comm_free(&comm_->comm);
  delete comm_;
}

void ReplicaComm::gatherInRankOrder(std::span<const float> local, std::span<float> all) {
  if (all.size() != local.size() * static_cast<size_t>(size_)) {
    throw Error(fmt::format("replicas: gathering {} values from each of {} ranks into {}",
                            local.size(), size_, all.size()));
  }
  const int n = countOf(local.size(), "a gather");
  MPI_Allgather(local.data(), n, MPI_FLOAT, all.data(), n, MPI_FLOAT, comm_->comm);
}

void ReplicaComm::sumInRankOrder(std::span<const float> local, std::span<float> sum) {
  if (sum.size() != local.size()) {
    throw Error(fmt::format("replicas: summing {} values into {}", local.size(), sum.size()));
  }
  if (size_ == 1) {
    std::copy(local.begin(), local.end(), sum.begin());
    return;
  }
  std::vector<float> all(local.size() * static_cast<size_t>(size_));
  gatherInRankOrder(local, all);
  // Rank order, from rank 0's values (not from 0.0f, which would turn a -0 into +0).
  std::copy(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(local.size()), sum.begin());
  for (int r = 1; r < size_; ++r) {
    const float* x = all.data() + static_cast<size_t>(r) * local.size();
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += x[i];
  }
}

uint64_t ReplicaComm::sum(uint64_t value) {
  uint64_t out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_UINT64_T, MPI_SUM, comm_->comm);
  return out;
}

double ReplicaComm::max(double value) {
  double out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, comm_->comm);
  return out;
}

void ReplicaComm::checkSame(const std::string& what, const std::string& text) {
  int len = countOf(text.size(), what.c_str());
  std::vector<int> lens(static_cast<size_t>(size_));
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm_->comm);
  std::vector<int> displs(static_cast<size_t>(size_));
  size_t total = 0;
  for (int r = 0; r < size_; ++r) {
    displs[static_cast<size_t>(r)] = countOf(total, what.c_str());
    total += static_cast<size_t>(lens[static_cast<size_t>(r)]);
  }
  std::string all(total, '\0');
  MPI_Allgatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR,
                 comm_->comm);
  const std::string first = all.substr(0, static_cast<size_t>(lens[0]));
  for (int r = 1; r < size_; ++r) {
    const std::string mine = all.substr(static_cast<size_t>(displs[static_cast<size_t>(r)]),
                                        static_cast<size_t>(lens[static_cast<size_t>(r)]));
    if (mine != first) {
      throw Error(fmt::format("replicas: rank {}'s {} ({}) differ from rank 0's ({})", r, what,
                              mine, first));
    }
  }
}

}  // namespace tessera::bench
