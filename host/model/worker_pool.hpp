// A fixed set of host threads that run one function over an index range and wait for all of it
// (the model simulates independent tiles in parallel between syncs). No statics: each
// ModelDevice owns its pool.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::model {

/// Runs fn(0..count-1) on `threads` host threads (the caller is one of them).
class WorkerPool {
 public:
  /// A pool of `threads` threads in all (at least 1; 1 = everything on the caller).
  explicit WorkerPool(unsigned threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Threads in all, the caller included.
  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }
  /// Call fn(i) for every i < count, spread over the threads; returns when all calls returned.
  /// The first exception thrown by fn is rethrown here.
  void forEach(size_t count, const std::function<void(size_t)>& fn);

 private:
  void work();
  void drain();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable finished_;
  const std::function<void(size_t)>* fn_ = nullptr;
  size_t count_ = 0;
  alignas(64) std::atomic<size_t> next_{0};  // its own host cache line: every thread takes indices
  unsigned active_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace tessera::model
