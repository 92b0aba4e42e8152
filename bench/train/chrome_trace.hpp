// A per-tile timeline in the Chrome trace-event JSON format ({"traceEvents": [...]}), which
// Chromium's trace viewer (chrome://tracing) and Perfetto open: one process for the chip, one
// thread per tile, complete events ("ph": "X") for BSP phases and counters ("ph": "C").
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tessera::bench {

/// Collects trace events in device cycles and writes them in microseconds at a nominal clock.
class ChromeTrace {
 public:
  /// The BSP phases a tile's time is split into.
  enum class Phase { Compute, SyncWait, Exchange, HostIo };

  /// A trace of `tiles` tiles at clockHz; at most maxEvents events are kept (the rest are counted
  /// in dropped() and noted in the file), so a long run cannot exhaust memory.
  ChromeTrace(uint32_t tiles, double clockHz, size_t maxEvents = 2'000'000);

  /// A complete event on a tile's thread: `cycles` cycles from startCycle; name defaults to the
  /// phase's name; superstep (when >= 0) is the index of the BSP superstep it belongs to, written
  /// in its args so that a reader can match supersteps to the program's syncs.
  void addInterval(uint32_t tile, Phase phase, uint64_t startCycle, uint64_t cycles,
                   const std::string& name = "", int64_t superstep = -1);
  /// A complete event on the host's thread (same cycle timeline), e.g. a host sync's service.
  void addHostInterval(const std::string& name, uint64_t startCycle, uint64_t cycles,
                       int64_t superstep = -1);
  /// A zero-length event on the host's thread where an internal sync (id = its descriptor's,
  /// RunResult::hostSyncId at a SyncBreak) ends superstep `superstep`: with the host syncs'
  /// markers it names the sync that ends every superstep, so that a reader (the browser report)
  /// can match supersteps to the program's syncs, through data-dependent loops too.
  void addSyncMarker(uint32_t syncId, uint64_t cycle, int64_t superstep);
  /// A counter sample (one track per name, one series per key) at a cycle.
  void addCounter(const std::string& name, uint64_t cycle,
                  const std::map<std::string, double>& values);

  /// Events kept.
  size_t eventCount() const { return events_.size(); }
  /// The events so far, exactly (a training checkpoint keeps them to continue the trace).
  nlohmann::json state() const;
  /// Replace the events with those of state(); throws tessera::Error on a malformed state.
  void restore(const nlohmann::json& state);
  /// Events dropped because maxEvents was reached.
  uint64_t dropped() const { return dropped_; }
  /// Microseconds of a cycle count at the nominal clock.
  double micros(uint64_t cycles) const { return static_cast<double>(cycles) * 1e6 / clockHz_; }
  /// "compute", "sync wait", "exchange" or "host I/O".
  static const char* phaseName(Phase phase);

  /// The whole trace as JSON text.
  std::string json() const;
  /// Write json() to path; throws tessera::Error naming the file on failure.
  void write(const std::string& path) const;

 private:
  struct Event {
    char ph;       // 'X' or 'C'
    uint32_t tid;  // tile, or tiles_ for the host
    std::string name;
    std::string cat;
    uint64_t start;
    uint64_t cycles;
    std::map<std::string, double> values;  // counters only
    int64_t superstep;                     // -1: none
  };
  bool admit();

  uint32_t tiles_;
  double clockHz_;
  size_t maxEvents_;
  std::vector<Event> events_;
  uint64_t dropped_ = 0;
};

}  // namespace tessera::bench
