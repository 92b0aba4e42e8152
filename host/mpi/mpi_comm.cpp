#include "mpi_comm.hpp"

#include <fmt/format.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>

#include "tessera/error.hpp"

namespace tessera::mpi {
namespace {

// Finalise MPI at exit if MpiComm initialised it and nobody finalised it since.
void finalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

bool initialized() {
  int init = 0, finalized = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&finalized);
  return init && !finalized;
}

// Open MPI keeps the session directory of a process that mpirun did not start (a singleton)
// under TMPDIR/ompi.HOST.UID, shared by every such process of the user: one that ends removes it
// when it is empty, and one starting at that moment fails in MPI_Init ("orte_session_dir failed",
// seen with the test suites' processes side by side). A singleton gets a base directory of its
// own (unless OMPI_MCA_orte_tmpdir_base is set), removed at exit after MPI is finalised.
void ownSessionDirectory() {
  if (MpiSession::launchedByMpirun() || std::getenv("OMPI_MCA_orte_tmpdir_base") != nullptr) return;
  static std::string dir;
  const char* tmp = std::getenv("TMPDIR");
  dir = fmt::format("{}/tessera-mpi-{}", tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", getpid());
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return;  // Open MPI's default then
  setenv("OMPI_MCA_orte_tmpdir_base", dir.c_str(), 1);
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  });
}

[[noreturn]] void abortOn(MPI_Comm comm, const std::string& who, const std::string& what,
                          int code) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  fmt::print(stderr, "{}: rank {} of {}: {}; ending the job\n", who, rank, size, what);
  std::fflush(stderr);
  MPI_Abort(comm, code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest if it did
}

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
  ownSessionDirectory();
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    throw Error("MPI: MPI_Init_thread failed");
  }
  // Funneled is enough: only the thread that calls the device or the trainer talks to MPI (tile
  // threads and the Engine's prefetch thread never do).
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw Error("MPI: the MPI library does not support MPI_THREAD_FUNNELED");
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

void MpiSession::abortJob(const std::string& who, const std::string& message) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "%s: rank %d: %s\n", who.c_str(), rank, message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest if it did
}

struct MpiComm::Handle {
  MPI_Comm comm = MPI_COMM_NULL;
};

MpiComm::MpiComm(Init init, std::string name)
    : comm_(std::make_unique<Handle>()), name_(std::move(name)) {
  if (!initialized()) {
    if (init == Init::Session) {
      throw Error(fmt::format("{}: MPI is not initialised (construct an MpiSession first)", name_));
    }
    ownSessionDirectory();  // before finalizeAtExit: the directory goes after MPI
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      throw Error(fmt::format("{}: MPI_Init_thread failed", name_));
    }
    std::atexit(finalizeAtExit);
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_->comm);
  // A failing collective ends the job (the default); say so explicitly on our communicator.
  MPI_Comm_set_errhandler(comm_->comm, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_rank(comm_->comm, &rank_);
  MPI_Comm_size(comm_->comm, &size_);
}

MpiComm::~MpiComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_->comm != MPI_COMM_NULL) MPI_Comm_free(&comm_->comm);
}

namespace {

int countOf(const std::string& name, size_t n, const char* what) {
  if (n > size_t(std::numeric_limits<int>::max())) {
    throw Error(fmt::format("{}: {} of {} values is too large for one MPI message", name, what, n));
  }
  return static_cast<int>(n);
}

}  // namespace

void MpiComm::allgatherBytes(const void* mine, void* all, size_t bytes) {
  const int n = countOf(name_, bytes, "an allgather");
  MPI_Allgather(mine, n, MPI_BYTE, all, n, MPI_BYTE, comm_->comm);
  ++stats_.collectives;
  stats_.bytesSent += bytes;
  stats_.bytesReceived += bytes * static_cast<size_t>(size_ - 1);
}

std::vector<uint32_t> MpiComm::allgatherv(std::span<const uint32_t> mine,
                                          const std::vector<int>& counts) {
  const int n = countOf(name_, mine.size(), "an allgatherv");
  if (counts.size() != static_cast<size_t>(size_) || counts[static_cast<size_t>(rank_)] != n) {
    throw Error(fmt::format("{}: allgatherv of {} words on rank {} does not match its counts",
                            name_, n, rank_));
  }
  std::vector<int> displs(counts.size());
  size_t total = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    displs[r] = countOf(name_, total, "an allgatherv");
    total += static_cast<size_t>(counts[r]);
  }
  std::vector<uint32_t> all(total);
  if (total == 0) return all;  // nobody has words: the counts said so, no second message
  MPI_Allgatherv(mine.data(), n, MPI_UINT32_T, all.data(), counts.data(), displs.data(),
                 MPI_UINT32_T, comm_->comm);
  ++stats_.collectives;
  stats_.bytesSent += mine.size() * 4;
  stats_.bytesReceived += (total - mine.size()) * 4;
  return all;
}

void MpiComm::bcast(void* data, size_t bytes, int root) {
  MPI_Bcast(data, countOf(name_, bytes, "a bcast"), MPI_BYTE, root, comm_->comm);
  ++stats_.collectives;
  if (rank_ == root) {
    stats_.bytesSent += bytes;
  } else {
    stats_.bytesReceived += bytes;
  }
}

std::string MpiComm::bcastString(const std::string& s, int root) {
  uint64_t n = s.size();
  bcast(&n, sizeof n, root);
  std::string out = rank_ == root ? s : std::string(n, '\0');
  if (n) bcast(out.data(), n, root);
  return out;
}

void MpiComm::gatherInRankOrder(std::span<const float> local, std::span<float> all) {
  if (all.size() != local.size() * static_cast<size_t>(size_)) {
    throw Error(fmt::format("{}: gathering {} values from each of {} ranks into {}", name_,
                            local.size(), size_, all.size()));
  }
  const int n = countOf(name_, local.size(), "a gather");
  MPI_Allgather(local.data(), n, MPI_FLOAT, all.data(), n, MPI_FLOAT, comm_->comm);
  ++stats_.collectives;
  stats_.bytesSent += local.size() * sizeof(float);
  stats_.bytesReceived += (all.size() - local.size()) * sizeof(float);
}

void MpiComm::sumInRankOrder(std::span<const float> local, std::span<float> sum) {
  if (sum.size() != local.size()) {
    throw Error(fmt::format("{}: summing {} values into {}", name_, local.size(), sum.size()));
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

uint64_t MpiComm::sum(uint64_t value) {
  uint64_t out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_UINT64_T, MPI_SUM, comm_->comm);
  ++stats_.collectives;
  return out;
}

double MpiComm::max(double value) {
  double out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, comm_->comm);
  ++stats_.collectives;
  return out;
}

void MpiComm::checkSame(const std::string& what, const std::string& text) {
  int len = countOf(name_, text.size(), what.c_str());
  std::vector<int> lens(static_cast<size_t>(size_));
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm_->comm);
  std::vector<int> displs(static_cast<size_t>(size_));
  size_t total = 0;
  for (int r = 0; r < size_; ++r) {
    displs[static_cast<size_t>(r)] = countOf(name_, total, what.c_str());
    total += static_cast<size_t>(lens[static_cast<size_t>(r)]);
  }
  std::string all(total, '\0');
  MPI_Allgatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR,
                 comm_->comm);
  stats_.collectives += 2;
  const std::string first = all.substr(0, static_cast<size_t>(lens[0]));
  for (int r = 1; r < size_; ++r) {
    const std::string mine = all.substr(static_cast<size_t>(displs[static_cast<size_t>(r)]),
                                        static_cast<size_t>(lens[static_cast<size_t>(r)]));
    if (mine != first) {
      throw Error(fmt::format("{}: rank {}'s {} ({}) differ from rank 0's ({})", name_, r, what,
                              mine, first));
    }
  }
}

void MpiComm::abortJob(const std::string& who, const std::string& what, int code) const {
  abortOn(comm_->comm, who, what, code);
}

int worldRank() {
  if (!initialized()) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int worldSize() {
  if (!initialized()) return 1;
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

void abortWorld(const std::string& who, const std::string& what, int code) {
  abortOn(MPI_COMM_WORLD, who, what, code);
}

}  // namespace tessera::mpi
