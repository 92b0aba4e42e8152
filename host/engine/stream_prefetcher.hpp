// The prefetch thread of the Engine: calls the host→device stream callbacks ahead of the device,
// so that at a host sync the data is already there (docs/executable-format.md, "Engine").
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "tessera/engine.hpp"

namespace tessera {

/// Produces the bytes of several host→device streams on one thread, up to a target offset each.
/// Every callback runs on that thread, in stream-offset order, never two at once.
class StreamPrefetcher {
 public:
  /// One producer per stream (an empty function: the stream is not served here); stream s starts
  /// at offset start[s] (0 if start is shorter: a resumed run continues its streams there).
  /// onReady (if set) is called on the thread, without the lock held, each time a callback's
  /// bytes are ready for take(), with the stream and the stream offset they now reach.
  explicit StreamPrefetcher(std::vector<StreamCallback> callbacks,
                            const std::vector<uint64_t>& start = {},
                            std::function<void(size_t, uint64_t)> onReady = {});
  ~StreamPrefetcher();
  StreamPrefetcher(const StreamPrefetcher&) = delete;
  StreamPrefetcher& operator=(const StreamPrefetcher&) = delete;

  /// Ask for `bytes` more bytes of stream s beyond what has been taken so far (never lowers an
  /// earlier request); returns at once.
  void prefetch(size_t s, uint64_t bytes);
  /// Copy the next out.size() bytes of stream s into out, waiting for the thread if needed.
  /// Rethrows what the callback threw. Returns whether it had to wait; *missBytes gets the bytes
  /// that no earlier prefetch() had asked for. onWait (if set) is called, without the lock held,
  /// once it is decided that this take waits, before the waiting starts.
  bool take(size_t s, std::span<uint8_t> out, uint64_t* missBytes,
            const std::function<void()>& onWait = {});

 private:
  struct Stream {
    StreamCallback callback;
    std::vector<uint8_t> ready;  // produced, not yet taken
    uint64_t taken = 0;          // bytes taken so far
    uint64_t target = 0;         // produce up to this stream offset
    std::exception_ptr error;    // what the callback threw; the stream stops there
    uint64_t produced() const { return taken + ready.size(); }
  };
  void loop();

  std::mutex mutex_;
  std::condition_variable work_;  // the thread: a target moved, or stop
  std::condition_variable done_;  // take(): bytes or an error arrived
  std::vector<Stream> streams_;
  bool stop_ = false;
  std::function<void(size_t, uint64_t)> onReady_;
  std::thread thread_;
};

}  // namespace tessera
