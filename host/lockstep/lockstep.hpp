// Lockstep check of two backends (docs/tile.md "Retirement trace", docs/chip.md): the same
// program runs on both; every retirement is recorded and compared per tile; with SYNC_BREAK on,
// both devices stop at every sync, where the stop (reason, cycle, sync id), every tile's counters
// and every tile's memory are compared before both continue.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
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
  std::vector<TileStats> tileStats;   ///< every tile's counters at the end
  std::vector<std::string> consoles;  ///< every tile's console at the end
  uint64_t retired = 0;               ///< retirements compared
  unsigned stops = 0;                 ///< syncs stopped at (SYNC_BREAK or host syncs)
};

/// Outcome of a lockstep run.
struct LockstepReport {
  LockstepSide a, b;
  std::optional<Divergence> divergence;    ///< first differing retirement, if any
  std::vector<std::string> endMismatches;  ///< differences at a sync stop or at the end
  bool retirementsCompared = true;         ///< false in the fast mode (syncs only)
  /// True when the streams and the states agree.
  bool agree() const { return !divergence && endMismatches.empty(); }
  /// Summary for people: agreement with counts, or the first divergence with both sides' state.
  std::string describe() const;
};

/// Puts a program on a device: writes memory, resets it, enables/disables tiles.
using ProgramLoader = std::function<void(Device&)>;

/// Options of a multi-tile lockstep run.
struct LockstepOptions {
  unsigned tiles = 0;     ///< DeviceOptions::tiles (0 = the backend's default)
  unsigned threadsA = 0;  ///< DeviceOptions::threads of device a (model: 0 = per core)
  unsigned threadsB = 0;  ///< DeviceOptions::threads of device b
  ModelEngine engineA = ModelEngine::Interp;  ///< DeviceOptions::modelEngine of device a
  ModelEngine engineB = ModelEngine::Interp;  ///< DeviceOptions::modelEngine of device b
  bool allTiles = false;            ///< ELF path form: load it on every tile (else tile 0 only)
  uint64_t maxCycles = 10'000'000;  ///< chip cycle limit for each device
  bool syncBreak = true;            ///< stop and compare memory at every sync
  /// Compare every retirement (exact; records are compared and dropped at each sync stop and
  /// every chunkCycles, so memory stays bounded on long runs, with or without syncs), or only
  /// memory, counters and stops at syncs (fast).
  bool compareRetirements = true;
  /// With compareRetirements: both devices pause at most this many cycles apart (a cycle-limit
  /// stop, which continues exactly) and the records held so far are compared and dropped;
  /// 0 = 2^18 / tiles, so at most about 2^18 records per device are held.
  uint64_t chunkCycles = 0;
  uint32_t tileMemBytes = 0;  ///< DeviceOptions::tileMemBytes (0 = the backend's default)
  /// Called on each device at each host sync, before it is released (e.g. to read/write memory).
  std::function<void(Device&, uint32_t syncId)> onHostSync;
};

/// Run the ELF at path on devices a and b (e.g. "model", "rtl") for at most maxCycles each and
/// compare (single-tile form, default DeviceOptions). Records are held in memory.
LockstepReport runLockstep(const std::string& path, const std::string& a, const std::string& b,
                           uint64_t maxCycles);
/// Multi-tile form with an ELF: on tile 0 (others disabled) or on every tile (options.allTiles).
LockstepReport runLockstep(const std::string& path, const std::string& a, const std::string& b,
                           const LockstepOptions& options);
/// A compiled executable (*.tess) with its host-to-device streams' bytes: both devices get the same
/// stream data at every host sync, and device-to-host data is compared like memory. Tiles and tile
/// memory default to the executable's target.
LockstepReport runLockstep(const class Executable& exe,
                           const std::map<std::string, std::vector<uint8_t>>& inputs,
                           const std::string& a, const std::string& b, LockstepOptions options);
/// Multi-tile form with a loader callback (hand-made memory images, per-tile programs).
LockstepReport runLockstep(const ProgramLoader& load, const std::string& a, const std::string& b,
                           const LockstepOptions& options);

}  // namespace tessera
