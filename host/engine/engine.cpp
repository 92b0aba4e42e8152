#include "tessera/engine.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <map>
#include <optional>

#include "stream_prefetcher.hpp"
#include "tessera/executable.hpp"

namespace tessera {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// A buffer connection as a stream: read or written from its start, refusing to run past its end.
StreamCallback bufferStream(const std::string& name, std::span<uint8_t> buffer, bool toDevice) {
  return [name, buffer, toDevice](uint64_t offset, std::span<uint8_t> data) {
    if (offset + data.size() > buffer.size()) {
      throw Error(fmt::format("stream \"{}\": bytes {}..{} are past the end of its {}-byte buffer",
                              name, offset, offset + data.size(), buffer.size()));
    }
    if (toDevice) {
      std::memcpy(data.data(), buffer.data() + offset, data.size());
    } else {
      std::memcpy(buffer.data() + offset, data.data(), data.size());
    }
  };
}

}  // namespace

struct Engine::Impl {
  Device& dev;
  Executable exe;
  std::vector<StreamCallback> callbacks;  // per stream; empty = unconnected
  std::vector<bool> buffered;             // host→device stream served from a buffer, no thread
  std::vector<uint64_t> offsets;          // bytes moved so far, per stream
  std::vector<uint64_t> serviced;         // times each host sync (exe.hostSyncs order) ran
  bool unconnectedOk = false;
  std::unique_ptr<StreamPrefetcher> prefetcher;  // started by the first run()
  std::map<uint32_t, uint32_t> successor;  // host sync id → the one that followed it last time
  std::optional<uint32_t> lastSync;
  uint64_t chipCycles = 0;  // the chip's cycle count at the last stop
  std::function<void(const RunResult&)> observer;
  std::function<bool(const RunResult&)> syncObserver;
  std::function<void(const std::string&)> waitObserver;
  std::function<void(const std::string&, uint64_t)> readyObserver;
  EngineStats stats;

  Impl(Device& d, const Executable& e) : dev(d), exe(e) {}

  bool toDevice(size_t s) const {
    return exe.streams[s].direction == StreamDirection::HostToDevice;
  }

  /// Host sync ids in the order the device is expected to reach them next: the successor seen
  /// last time, else the next entry of the table (the order the compiler wrote them).
  std::vector<uint32_t> predictedSyncs() const {
    std::vector<uint32_t> chain;
    if (exe.hostSyncs.empty()) return chain;
    std::optional<uint32_t> cur = lastSync;
    for (size_t i = 0; i < exe.hostSyncs.size(); ++i) {
      uint32_t next = exe.hostSyncs[0].id;
      if (cur) {
        if (auto it = successor.find(*cur); it != successor.end()) {
          next = it->second;
        } else {
          for (size_t k = 0; k < exe.hostSyncs.size(); ++k) {
            if (exe.hostSyncs[k].id == *cur)
              next = exe.hostSyncs[(k + 1) % exe.hostSyncs.size()].id;
          }
        }
      }
      chain.push_back(next);
      cur = next;
    }
    return chain;
  }

  /// Ask the prefetch thread for each callback stream's bytes at its next predicted use.
  void prefetchNext() {
    std::vector<bool> planned(exe.streams.size(), false);
    for (uint32_t id : predictedSyncs()) {
      const ExeHostSync* h = exe.findHostSync(id);
      if (!h) continue;
      std::map<uint32_t, uint64_t> bytes;
      for (const ExeStreamCopy& c : h->copies) bytes[c.stream] += c.region.bytes;
      for (const auto& [s, n] : bytes) {
        if (planned[s] || !toDevice(s) || !callbacks[s] || buffered[s]) continue;
        planned[s] = true;
        prefetcher->prefetch(s, n);
      }
    }
  }

  void serviceHostSync(uint32_t id) {
    const auto start = Clock::now();
    ++stats.hostSyncs;
    bool waited = false;
    double waitSeconds = 0;
    if (const ExeHostSync* h = exe.findHostSync(id)) {
      ++serviced[static_cast<size_t>(h - exe.hostSyncs.data())];
      for (const ExeStreamCopy& c : h->copies) {
        const size_t s = c.stream;
        std::vector<uint8_t> data(c.region.bytes);
        if (toDevice(s)) {
          if (buffered[s]) {
            callbacks[s](offsets[s], data);
          } else if (callbacks[s]) {
            uint64_t miss = 0;
            const auto t = Clock::now();
            const auto onWait = [&] {
              if (waitObserver) waitObserver(exe.streams[s].name);
            };
            if (prefetcher->take(s, data, &miss, onWait)) {
              waited = true;
              waitSeconds += secondsSince(t);
            }
            stats.prefetchMissBytes += miss;
          }  // unconnected (allowed): zeros
          dev.writeMemory(c.region.tile, c.region.addr, data);
          stats.hostToDeviceBytes += data.size();
        } else {
          dev.readMemory(c.region.tile, c.region.addr, data);
          if (callbacks[s]) callbacks[s](offsets[s], data);
          stats.deviceToHostBytes += data.size();
        }
        offsets[s] += data.size();
      }
    }
    if (lastSync) successor[*lastSync] = id;
    lastSync = id;
    prefetchNext();
    if (waited) {
      ++stats.prefetchWaits;
      stats.prefetchWaitSeconds += waitSeconds;
    }
    stats.hostIoSeconds += secondsSince(start);
  }

  const ExeTensor& tensor(const std::string& name) const {
    const ExeTensor* t = exe.findTensor(name);
    if (!t) throw Error(fmt::format("the executable has no tensor \"{}\"", name));
    return *t;
  }

  void checkTensorSize(const ExeTensor& t, size_t size) const {
    uint64_t total = 0;
    for (const ExeRegion& r : t.regions) total += r.bytes;
    if (total != size) {
      throw Error(fmt::format("tensor \"{}\" has {} bytes, the buffer {}", t.name, total, size));
    }
  }
};

Engine::Engine(Device& dev, const Executable& exe) : impl_(std::make_unique<Impl>(dev, exe)) {
  exe.load(dev);
  impl_->callbacks.resize(exe.streams.size());
  impl_->buffered.resize(exe.streams.size(), false);
  impl_->offsets.resize(exe.streams.size(), 0);
  impl_->serviced.resize(exe.hostSyncs.size(), 0);
}

Engine::~Engine() = default;

void Engine::connectStream(const std::string& name, StreamCallback callback) {
  const int s = impl_->exe.findStream(name);
  if (s < 0) throw Error(fmt::format("the executable has no stream \"{}\"", name));
  if (impl_->prefetcher)
    throw Error(fmt::format("stream \"{}\": connect streams before the first run", name));
  if (!callback) throw Error(fmt::format("stream \"{}\": empty callback", name));
  impl_->callbacks[s] = std::move(callback);
  impl_->buffered[s] = false;
}

void Engine::connectStream(const std::string& name, std::span<uint8_t> buffer) {
  const int s = impl_->exe.findStream(name);
  if (s < 0) throw Error(fmt::format("the executable has no stream \"{}\"", name));
  connectStream(name, bufferStream(name, buffer, impl_->toDevice(s)));
  // A buffer needs no preparation: read it at the host sync, on this thread.
  impl_->buffered[s] = true;
}

void Engine::connectStreamAtSync(const std::string& name, StreamCallback callback) {
  const int s = impl_->exe.findStream(name);
  if (s < 0) throw Error(fmt::format("the executable has no stream \"{}\"", name));
  if (!impl_->toDevice(s))
    throw Error(fmt::format("stream \"{}\" is device-to-host: it is never prefetched", name));
  connectStream(name, std::move(callback));
  // Served like a buffer: called at the host sync on this thread, never by the prefetch thread.
  impl_->buffered[s] = true;
}

std::vector<std::string> Engine::unconnectedStreams() const {
  std::vector<std::string> out;
  for (size_t s = 0; s < impl_->exe.streams.size(); ++s) {
    if (!impl_->callbacks[s]) out.push_back(impl_->exe.streams[s].name);
  }
  return out;
}

void Engine::setUnconnectedOk(bool ok) {
  impl_->unconnectedOk = ok;
}

RunResult Engine::run(uint64_t maxCycles) {
  Impl& m = *impl_;
  if (!m.unconnectedOk) {
    for (size_t s = 0; s < m.exe.streams.size(); ++s) {
      if (!m.callbacks[s]) {
        throw Error(fmt::format("{} stream \"{}\" is not connected",
                                streamDirectionName(m.exe.streams[s].direction),
                                m.exe.streams[s].name));
      }
    }
  }
  if (!m.prefetcher) {
    std::vector<StreamCallback> produce(m.exe.streams.size());
    for (size_t s = 0; s < produce.size(); ++s) {
      if (m.toDevice(s) && !m.buffered[s]) produce[s] = m.callbacks[s];
    }
    std::function<void(size_t, uint64_t)> onReady;
    if (m.readyObserver) {
      onReady = [&m](size_t s, uint64_t end) { m.readyObserver(m.exe.streams[s].name, end); };
    }
    m.prefetcher = std::make_unique<StreamPrefetcher>(std::move(produce), m.offsets, onReady);
    m.prefetchNext();
  }
  for (;;) {
    const auto start = Clock::now();
    // Device::run's limit is per call; maxCycles counts the chip cycles since the load.
    const RunResult r = m.dev.run(maxCycles > m.chipCycles ? maxCycles - m.chipCycles : 0);
    m.stats.deviceSeconds += secondsSince(start);
    m.chipCycles = r.cycles;
    if (m.observer && (r.reason == StopReason::HostSync || r.reason == StopReason::SyncBreak))
      m.observer(r);
    if (r.reason == StopReason::HostSync) m.serviceHostSync(r.hostSyncId);
    if (r.reason == StopReason::HostSync || r.reason == StopReason::SyncBreak) {
      if (m.syncObserver && !m.syncObserver(r)) {
        return r;
      }
      continue;
    }
    return r;
  }
}

void Engine::restart() {
  impl_->exe.restart(impl_->dev);
  impl_->chipCycles = 0;
}

void Engine::setStopObserver(std::function<void(const RunResult&)> observer) {
  impl_->observer = std::move(observer);
}

void Engine::setSyncObserver(std::function<bool(const RunResult&)> observer) {
  impl_->syncObserver = std::move(observer);
}

void Engine::setPrefetchWaitObserver(std::function<void(const std::string& stream)> observer) {
  impl_->waitObserver = std::move(observer);
}

void Engine::setPrefetchReadyObserver(
    std::function<void(const std::string& stream, uint64_t end)> observer) {
  if (impl_->prefetcher)
    throw Error("Engine::setPrefetchReadyObserver: call it before the first run()");
  impl_->readyObserver = std::move(observer);
}

std::vector<uint64_t> Engine::streamOffsets() const {
  return impl_->offsets;
}

std::vector<uint64_t> Engine::hostSyncCounts() const {
  return impl_->serviced;
}

void Engine::resumeFromCheckpoint(const std::vector<uint64_t>& offsets,
                                  const std::vector<uint64_t>& hostSyncCounts) {
  Impl& m = *impl_;
  if (m.prefetcher) throw Error("Engine::resumeFromCheckpoint: call it before the first run()");
  if (offsets.size() != m.exe.streams.size()) {
    throw Error(fmt::format("checkpoint: {} stream positions for an executable with {} streams",
                            offsets.size(), m.exe.streams.size()));
  }
  if (hostSyncCounts.size() != m.exe.hostSyncs.size()) {
    throw Error(fmt::format("checkpoint: {} host sync counts for an executable with {} host syncs",
                            hostSyncCounts.size(), m.exe.hostSyncs.size()));
  }
  // A position is only right if it is exactly what the serviced host syncs moved: anything else
  // would feed an input twice or leave a gap in an output. The bound keeps the sums exact.
  constexpr uint64_t kMaxCount = uint64_t{1} << 40;
  std::vector<uint64_t> moved(offsets.size(), 0);
  for (size_t h = 0; h < hostSyncCounts.size(); ++h) {
    if (hostSyncCounts[h] > kMaxCount) {
      throw Error(fmt::format("checkpoint: host sync {} serviced {} times, more than 2^40",
                              m.exe.hostSyncs[h].id, hostSyncCounts[h]));
    }
    for (const ExeStreamCopy& c : m.exe.hostSyncs[h].copies)
      moved[c.stream] += hostSyncCounts[h] * c.region.bytes;
  }
  for (size_t s = 0; s < offsets.size(); ++s) {
    if (offsets[s] != moved[s]) {
      throw Error(fmt::format(
          "checkpoint: stream \"{}\" is at byte {}, but the host syncs it records moved {} bytes "
          "of it",
          m.exe.streams[s].name, offsets[s], moved[s]));
    }
  }
  m.offsets = offsets;
  m.serviced = hostSyncCounts;
  m.chipCycles = m.dev.readControl(TESS_CR_CYCLE_LO) | uint64_t{m.dev.readControl(TESS_CR_CYCLE_HI)}
                                                           << 32;
}

uint64_t Engine::tensorBytes(const std::string& name) const {
  uint64_t total = 0;
  for (const ExeRegion& r : impl_->tensor(name).regions) total += r.bytes;
  return total;
}

void Engine::readTensor(const std::string& name, std::span<uint8_t> data) {
  const ExeTensor& t = impl_->tensor(name);
  impl_->checkTensorSize(t, data.size());
  size_t at = 0;
  for (const ExeRegion& r : t.regions) {
    impl_->dev.readMemory(r.tile, r.addr, data.subspan(at, r.bytes));
    at += r.bytes;
  }
}

std::vector<uint8_t> Engine::readTensor(const std::string& name) {
  std::vector<uint8_t> out(tensorBytes(name));
  readTensor(name, out);
  return out;
}

void Engine::writeTensor(const std::string& name, std::span<const uint8_t> data) {
  const ExeTensor& t = impl_->tensor(name);
  impl_->checkTensorSize(t, data.size());
  size_t at = 0;
  for (const ExeRegion& r : t.regions) {
    impl_->dev.writeMemory(r.tile, r.addr, data.subspan(at, r.bytes));
    at += r.bytes;
  }
}

EngineStats Engine::stats() const {
  return impl_->stats;
}

}  // namespace tessera
