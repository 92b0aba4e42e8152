// Lockstep check of two backends (docs/tile.md, "Retirement trace"): the same program runs on both,
// every retirement is recorded, and the streams and final states are compared.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "retire_compare.hpp"
#include "tessera/device.hpp"

namespace tessera {

/// What one backend did with the program.
struct LockstepSide {
  std::string device;                 ///< device string
  RunResult result;                   ///< how the run ended
  TileStats stats;                    ///< tile 0 counters
  std::string console;                ///< tile 0 console
  std::vector<RetireRecord> records;  ///< every retirement, in order
};

/// Outcome of a lockstep run.
struct LockstepReport {
  LockstepSide a, b;
  std::optional<Divergence> divergence;  ///< first differing retirement, if any
  std::vector<std::string> endMismatches; ///< differences in stop reason, cycles, exit, trap, console
  /// True when the streams and the final states agree.
  bool agree() const { return !divergence && endMismatches.empty(); }
  /// Summary for people: agreement with counts, or the first divergence with both sides' state.
  std::string describe() const;
};

/// Run the ELF at path on devices a and b (e.g. "model", "rtl") for at most maxCycles each and
/// compare. Records are held in memory: bound maxCycles for long programs.
LockstepReport runLockstep(const std::string& path, const std::string& a, const std::string& b,
                           uint64_t maxCycles);

}  // namespace tessera
