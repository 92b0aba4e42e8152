// The chip's sync controller (docs/chip.md, "Sync"), as a pure function of what every block of
// tiles reports: ModelDevice asks it at every chunk boundary, whether the chip's tiles live in one
// process or in blocks on the ranks of an MPI job (docs/scale-out.md). It owns no state and touches
// no device, so it is tested on its own (tests/sync_controller_test.cpp).
#pragma once

#include <cstdint>
#include <span>

#include "tessera/device.hpp"

namespace tessera::model {

/// "No tile" in a BlockSummary's tile fields.
inline constexpr uint32_t kNoTile = 0xffffffffu;

/// A chip error found while running (a trap, an exchange fault or a sync error) and its cycle.
struct ChipFailure {
  uint64_t cycle = 0;
  TrapInfo info;
};

/// Whether a comes before b: the earliest cycle wins; on the same cycle, the lowest tile.
inline bool earlierFailure(const ChipFailure& a, const ChipFailure& b) {
  return a.cycle < b.cycle || (a.cycle == b.cycle && a.info.tile < b.info.tile);
}

/// What the sync controller needs from one contiguous block of tiles. Plain data: it travels
/// between MPI ranks as bytes.
struct BlockSummary {
  uint64_t active = 0;              ///< tiles computing or exchanging
  uint64_t lastArrival = 0;         ///< max a_t of the arrived tiles
  uint64_t haltEnd = 0;             ///< max h_t + 1 of the halted tiles
  uint32_t firstArrived = kNoTile;  ///< lowest arrived tile
  uint32_t firstDesc = 0;           ///< its sync descriptor
  uint32_t firstPc = 0;             ///< and the pc of its SYNC
  uint32_t mismatch = kNoTile;      ///< lowest arrived tile whose descriptor differs from firstDesc
  uint32_t mismatchDesc = 0;
  uint32_t mismatchPc = 0;
  uint32_t firstHalted = kNoTile;  ///< lowest halted tile
  uint32_t exchange = 0;           ///< 1: some arrived tile has an exchange program
};

/// What the chip does next.
struct SyncDecision {
  enum class Kind {
    Run,      ///< some tile computes or exchanges: run the next chunk
    Stop,     ///< stop at `cycle` with `reason` (Halted or MaxCycles)
    Pending,  ///< a sync stands at release cycle `cycle` until the host releases it (`reason`
              ///< HostSync or SyncBreak)
    Release,  ///< release the sync at `cycle` now
    Fail,     ///< a sync error at `cycle` (`error`)
  };
  Kind kind = Kind::Run;
  uint64_t cycle = 0;
  StopReason reason = StopReason::MaxCycles;
  uint32_t desc = 0;      ///< the sync's descriptor (Pending, Release)
  bool exchange = false;  ///< some arrived tile starts an exchange at the release
  TrapInfo error;         ///< Fail: the chip error
};

/// The decision for a chip whose tiles are split into `blocks` (in ascending tile order), at cycle
/// `now`, running up to cycle `limit`, with SYNC_BREAK set or not.
SyncDecision decideSync(std::span<const BlockSummary> blocks, uint64_t now, uint64_t limit,
                        bool syncBreak);

}  // namespace tessera::model
