// Running a tessera executable (*.tess, docs/executable-format.md) on a Device: load it, run
// until every tile halts, perform each host sync's stream copies, and read and write named
// tensors. Host→device stream data is prepared by a prefetch thread while the device runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/device.hpp"

namespace tessera {

class Executable;

/// Produces or consumes the bytes of a stream. A stream is a sequence of bytes: a host sync's
/// copies take (host→device) or give (device→host) the next bytes in order. The function gets the
/// offset of data in the stream; it fills data (host→device, called on the prefetch thread) or
/// reads it (device→host, called on the thread in Engine::run).
using StreamCallback = std::function<void(uint64_t streamOffset, std::span<uint8_t> data)>;

/// What an Engine measured (host time, not chip time: docs/chip.md, "Sync timing").
struct EngineStats {
  uint64_t hostSyncs = 0;          ///< host syncs serviced
  uint64_t hostToDeviceBytes = 0;  ///< stream bytes written to the device
  uint64_t deviceToHostBytes = 0;  ///< stream bytes read from the device
  double deviceSeconds = 0;        ///< host time inside Device::run
  double hostIoSeconds = 0;        ///< host time servicing host syncs (copies, callbacks, waits)
  uint64_t prefetchWaits = 0;  ///< host syncs at which the device waited for the prefetch thread
  double prefetchWaitSeconds = 0;  ///< host time spent in those waits
  uint64_t prefetchMissBytes = 0;  ///< host→device bytes not prefetched (produced synchronously)
};

/// Runs one executable on one device (not thread-safe; one run at a time).
class Engine {
 public:
  /// Validate exe against dev (nothing is written if it does not fit), load it and reset dev.
  Engine(Device& dev, const Executable& exe);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Connect a stream to a callback (see StreamCallback). Throws on an unknown stream name.
  void connectStream(const std::string& name, StreamCallback callback);
  /// Connect a stream to a buffer: host→device streams read it from the start, device→host
  /// streams fill it from the start; running past its end is a tessera::Error.
  void connectStream(const std::string& name, std::span<uint8_t> buffer);
  /// Connect a host→device stream to a callback called at the host sync itself, on the thread in
  /// Engine::run, after the sync's earlier copies, never ahead on the prefetch thread: for data
  /// that depends on what the device sent just before (e.g. gradients summed over replicas).
  void connectStreamAtSync(const std::string& name, StreamCallback callback);
  /// Streams with no connection, in the executable's order.
  std::vector<std::string> unconnectedStreams() const;
  /// Let run() proceed with unconnected streams: host→device ones give zeros, device→host ones
  /// are dropped. Default false: run() refuses, naming the first unconnected stream.
  void setUnconnectedOk(bool ok);

  /// Run until every tile halts, a trap, or maxCycles chip cycles in total, servicing host syncs.
  /// Never returns StopReason::HostSync. SyncBreak stops are released and continued.
  RunResult run(uint64_t maxCycles = ~uint64_t{0});
  /// After a run ended, start the program again from its first instruction on the memory as it is
  /// (tensors keep their values: a training loop continues from the current weights); streams
  /// continue where they were. maxCycles of the next run() counts from here.
  void restart();
  /// Called at every host sync and SyncBreak stop, before it is serviced (e.g. to read counters).
  void setStopObserver(std::function<void(const RunResult&)> observer);
  /// Called at every host sync after its stream copies, and at every SyncBreak stop, just before
  /// the device is released: the point where a checkpoint is taken (docs/checkpoint.md). If it
  /// returns false, run() ends there and returns that stop's RunResult (HostSync or SyncBreak);
  /// the next run() releases the device and goes on.
  void setSyncObserver(std::function<bool(const RunResult&)> observer);
  /// Called on the run thread when a host sync finds a prefetched stream's bytes not ready and
  /// is about to wait for the prefetch thread (one call per wait, with the stream's name): the
  /// stall that EngineStats::prefetchWaits counts. It must not call back into the Engine.
  void setPrefetchWaitObserver(std::function<void(const std::string& stream)> observer);
  /// Called on the prefetch thread each time a prefetched stream's bytes are ready for its host
  /// sync, with the stream's name and the stream offset they now reach. Set it before the first
  /// run(). It must not call back into the Engine.
  void setPrefetchReadyObserver(
      std::function<void(const std::string& stream, uint64_t end)> observer);
  /// Bytes each stream has moved so far, in the executable's stream order.
  std::vector<uint64_t> streamOffsets() const;
  /// Times each host sync has been serviced so far, in Executable::hostSyncs order.
  std::vector<uint64_t> hostSyncCounts() const;
  /// Continue on a device restored (restoreCheckpoint) from a checkpoint taken in a sync
  /// observer: streams continue at offsets and the host syncs at counts (streamOffsets() and
  /// hostSyncCounts() then), and maxCycles keeps counting from cycle 0. Refuses offsets that are
  /// not exactly what those host syncs moved. Call before the first run().
  void resumeFromCheckpoint(const std::vector<uint64_t>& offsets,
                            const std::vector<uint64_t>& hostSyncCounts);

  /// Bytes of a tensor: the sum of its regions.
  uint64_t tensorBytes(const std::string& name) const;
  /// Read a tensor (its regions gathered in order); data.size() must equal tensorBytes(name).
  void readTensor(const std::string& name, std::span<uint8_t> data);
  /// Read a whole tensor.
  std::vector<uint8_t> readTensor(const std::string& name);
  /// Write a tensor (scattered to its regions in order); data.size() must equal tensorBytes(name).
  void writeTensor(const std::string& name, std::span<const uint8_t> data);

  /// Measurements since construction.
  EngineStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
