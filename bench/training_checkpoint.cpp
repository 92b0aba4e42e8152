#include "training_checkpoint.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>
#include <vector>

#include "tessera/error.hpp"

namespace tessera::bench {

namespace {

namespace fs = std::filesystem;

// The checkpoints of dir by name, oldest first (the names sort by their host sync count).
std::vector<std::string> checkpointFiles(const std::string& dir) {
  static const std::regex name(R"(train-[0-9]{12}\.ckpt)");
  std::vector<std::string> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    if (std::regex_match(f, name)) out.push_back(f);
  }
  if (ec) throw Error(fmt::format("train: checkpoint directory {}: {}", dir, ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

[[noreturn]] void fail(const std::string& path, const char* what) {
  throw Error(fmt::format("train: checkpoint {}: {} failed: {}", path, what, std::strerror(errno)));
}

// fsync of a directory, so that a rename in it survives a crash.
void syncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) fail(dir, "open");
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail(dir, "fsync");
  }
  ::close(fd);
}

}  // namespace

TrainingCheckpointDir::TrainingCheckpointDir(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw Error(fmt::format("train: checkpoint directory {}: {}", dir_, ec.message()));
}

std::string TrainingCheckpointDir::save(uint64_t hostSyncs, std::span<const uint8_t> bytes) {
  ++saves_;
  const std::string path = TrainingCheckpointDir::path(dir_, hostSyncs);
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(tmp, "open");
  size_t done = 0;
  auto writeUpTo = [&](size_t end) {
    while (done < end) {
      const ssize_t n = ::write(fd, bytes.data() + done, end - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fd);
        fail(tmp, "write");
      }
      done += static_cast<size_t>(n);
    }
  };
  writeUpTo(bytes.size() / 2);
  trainTestPause("save", saves_);
  writeUpTo(bytes.size());
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail(tmp, "fsync");
  }
  if (::close(fd) != 0) fail(tmp, "close");
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail(path, "rename");
  syncDir(dir_);
  // Only now, with the new one durable, may the older ones go: the newest two are kept, so a
  // checkpoint found damaged later still has a predecessor to fall back on by hand.
  // A temporary file left by a save that was killed is no checkpoint; this process owns the dir.
  std::error_code tmpEc;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, tmpEc)) {
    const std::string f = e.path().filename().string();
    if (f.starts_with("train-") && f.ends_with(".ckpt.tmp")) fs::remove(e.path(), tmpEc);
  }
  std::vector<std::string> files = checkpointFiles(dir_);
  for (size_t i = 0; i + 2 < files.size(); ++i) {
    std::error_code ec;
    fs::remove(fs::path(dir_) / files[i], ec);
    if (ec) throw Error(fmt::format("train: checkpoint {}/{}: {}", dir_, files[i], ec.message()));
  }
  return path;
}

std::string TrainingCheckpointDir::path(const std::string& dir, uint64_t hostSyncs) {
  return fmt::format("{}/train-{:012}.ckpt", dir, hostSyncs);
}

uint64_t TrainingCheckpointDir::hostSyncsOf(const std::string& path) {
  static const std::regex name(R"(train-([0-9]{12})\.ckpt)");
  std::smatch m;
  const std::string f = fs::path(path).filename().string();
  if (!std::regex_match(f, m, name))
    throw Error(fmt::format("train: {} is not a checkpoint's name (train-N.ckpt)", path));
  return std::stoull(m[1].str());
}

std::string TrainingCheckpointDir::newest(const std::string& dir) {
  if (!fs::is_directory(dir))
    throw Error(fmt::format("train: --resume {}: not a directory of checkpoints", dir));
  const std::vector<std::string> files = checkpointFiles(dir);
  if (files.empty())
    throw Error(fmt::format("train: --resume {}: no checkpoint (train-*.ckpt) in it", dir));
  return dir + "/" + files.back();
}

namespace {

// Signals are the process's: one flag, set by the handler, is all it may touch.
volatile std::sig_atomic_t recordedSignal = 0;

extern "C" void recordStopSignal(int sig) {
  recordedSignal = sig;
}

}  // namespace

struct StopSignals::Saved {
  struct sigaction intAction {};
  struct sigaction termAction {};
};

StopSignals::StopSignals() : saved_(std::make_unique<Saved>()) {
  recordedSignal = 0;
  struct sigaction sa {};
  sa.sa_handler = recordStopSignal;
  // Interrupted system calls resume (a device's socket or UART wait must not fail with EINTR);
  // the run sees the signal at its next host sync.
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &saved_->intAction);
  sigaction(SIGTERM, &sa, &saved_->termAction);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &saved_->intAction, nullptr);
  sigaction(SIGTERM, &saved_->termAction, nullptr);
}

int stopSignal() {
  return recordedSignal;
}

void trainTestPause(const char* where, uint64_t n) {
  const char* env = std::getenv("TESSERA_TRAIN_TEST_PAUSE");
  if (!env) return;
  const std::string want = fmt::format("{}:{}", where, n);
  if (want != env) return;
  std::fprintf(stderr, "tessera-train-test: paused at %s %llu (pid %ld)\n", where,
               static_cast<unsigned long long>(n), static_cast<long>(::getpid()));
  std::fflush(stderr);
  while (stopSignal() == 0) ::pause();
}

}  // namespace tessera::bench
