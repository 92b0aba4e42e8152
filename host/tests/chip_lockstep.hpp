// Two backends on one multi-tile program, compared at every sync (docs/chip.md, SYNC_BREAK): the
// stop (reason, sync id, cycle count, STATUS), every tile's counters, every tile's retired
// instructions since the last stop, and every tile's whole memory; at the end also the trap and
// the consoles. The first difference is reported with where it happened.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "chip_session.hpp"

namespace tessera::test {

/// What the host does at host sync `id` on one device (the same on both sides); it appends a
/// description of anything wrong to failures.
using HostSyncHandler =
    std::function<void(Device& dev, const ElfImage& image, uint32_t id, std::vector<std::string>& failures)>;

/// Outcome of a comparison.
struct ChipLockstepReport {
  std::optional<std::string> divergence;  ///< the first difference, with its place
  std::vector<std::string> hostFailures;  ///< what the host-sync handler found wrong
  unsigned stops = 0;                     ///< stops compared (syncs and the end)
  RunResult a, b;                         ///< the last stop of each side
  /// True when nothing differed.
  bool agree() const { return !divergence; }
};

/// Runs one program on two sessions stop by stop and compares them.
class ChipLockstep {
 public:
  /// Compare sessions a and b (already opened with the same tile count).
  ChipLockstep(ChipSession& a, ChipSession& b) : a_(a), b_(b) {}
  /// Call handler at every host sync (on both sides, after they were compared).
  void setHostSyncHandler(HostSyncHandler handler) { onHostSync_ = std::move(handler); }
  /// Also compare every retired instruction (slower: the devices report each one).
  void compareRetirements(bool on) { retirements_ = on; }
  /// Load the ELF at path on both sides and run both to the end or maxCycles, comparing at every stop.
  ChipLockstepReport run(const std::string& path, uint64_t maxCycles);

 private:
  std::optional<std::string> compareStop(const RunResult& ra, const RunResult& rb);

  ChipSession& a_;
  ChipSession& b_;
  HostSyncHandler onHostSync_;
  bool retirements_ = true;
};

}  // namespace tessera::test
