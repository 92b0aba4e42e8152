// The files of tessera-bench train's checkpoints (docs/training.md, "Checkpoints and resume"): one
// directory of train-<host syncs>.ckpt files, each written atomically, the newest two kept.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace tessera::bench {

/// A directory of training checkpoints: train-<host syncs, 12 digits>.ckpt.
class TrainingCheckpointDir {
 public:
  /// Checkpoints in dir (created if missing).
  explicit TrainingCheckpointDir(std::string dir);
  /// Write bytes as the checkpoint taken after hostSyncs host syncs: a temporary file, fsync,
  /// rename, fsync of the directory; then remove all but the newest two. Returns the file's path.
  /// Throws tessera::Error naming the file on any failed write (a full disk included).
  std::string save(uint64_t hostSyncs, std::span<const uint8_t> bytes);
  /// The directory.
  const std::string& dir() const { return dir_; }
  /// The newest checkpoint file in dir (temporary files of an interrupted save are not
  /// checkpoints); throws tessera::Error naming dir if it holds none.
  static std::string newest(const std::string& dir);
  /// The path of the checkpoint of dir taken after hostSyncs host syncs.
  static std::string path(const std::string& dir, uint64_t hostSyncs);
  /// The host sync count in a checkpoint's file name; throws tessera::Error naming the file if it
  /// is not one of these names.
  static uint64_t hostSyncsOf(const std::string& path);

 private:
  std::string dir_;
  uint64_t saves_ = 0;
};

/// While it lives, SIGINT and SIGTERM do not end the process but are recorded (stopSignal()):
/// the training run saves a checkpoint at its next host sync and ends. One at a time.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct Saved;
  std::unique_ptr<Saved> saved_;
};

/// The signal StopSignals recorded (SIGINT or SIGTERM), 0 if none.
int stopSignal();

/// The resume test's stopping points: with TESSERA_TRAIN_TEST_PAUSE=WHERE:N in the environment,
/// the N-th time WHERE is reached ("save": halfway through writing a checkpoint's temporary
/// file; "step": after training step N's loss arrived) prints "tessera-train-test: paused at
/// WHERE N (pid P)" on stderr and waits to be killed (or for a signal StopSignals records).
void trainTestPause(const char* where, uint64_t n);

}  // namespace tessera::bench
