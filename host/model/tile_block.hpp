// A contiguous block of a chip's tiles and what runs them between syncs (docs/chip.md; the whole
// chip in one process, or one MPI rank's share of it, docs/scale-out.md): the TileModels, their
// chip-level slots (phase, arrival, sync-wait and exchange counters), their exchange engines, the
// chunk run with its checkpoint and rollback, and the records of the retirement trace.
//
// A chunk (at most kChunkCycles): the exchange engines, if an exchange is in progress, are stepped
// cycle by cycle first, window by window of the fabric; then every computing tile runs alone to
// the chunk's end or its next sync, halt or trap, on several host threads, since tiles cannot
// affect each other between syncs. If any unit of the chip failed at cycle e inside the chunk,
// every block rolls its tiles back to the chunk's start (a register checkpoint plus an undo log
// of memory writes) and runs the chunk again up to e inclusive, so no tile ever passes e.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "chip_fabric.hpp"
#include "exchange_engine.hpp"
#include "sync_controller.hpp"
#include "tessera/device.hpp"
#include "tile_model.hpp"
#include "worker_pool.hpp"

namespace tessera::model {

/// Tiles first .. end-1 of a chip of `chipTiles`, run between the sync controller's decisions.
class TileBlock {
 public:
  /// Upper bound on the cycles of one chunk (bounds the undo logs and the record buffers).
  static constexpr uint64_t kChunkCycles = 1 << 16;

  /// configs[i] is tile first+i's; the block talks to the other blocks through `fabric`.
  TileBlock(std::vector<TileConfig> configs, TileRange range, unsigned chipTiles, bool hasExchange,
            unsigned threads, ChipFabric& fabric);

  /// The tiles this block holds.
  TileRange range() const { return range_; }
  /// Whether tile t (a chip tile number) is in this block.
  bool owns(unsigned t) const { return range_.contains(t); }
  /// Tile t of this block (owns(t) must hold).
  TileModel& tile(unsigned t) { return tiles_[t - range_.first]; }
  const TileModel& tile(unsigned t) const { return tiles_[t - range_.first]; }
  /// Host threads used between syncs.
  unsigned threads() const { return pool_->threads(); }

  /// Every tile and slot as after a hardware reset (every tile enabled).
  void reset();
  /// T_ENABLE of tile t (before the run).
  void setEnabled(unsigned t, bool enabled) { slot(t).enabled = enabled; }
  /// Whether tile t is enabled / standing at a sync (owns(t)).
  bool enabled(unsigned t) const { return slot(t).enabled; }
  bool arrived(unsigned t) const { return slot(t).phase == Phase::Arrived; }
  /// The run starts: enabled tiles compute, the others stay disabled.
  void start();
  /// What the sync controller needs from this block.
  BlockSummary summary() const;
  /// Releases the sync at cycle R: arrived tiles start their exchange or resume. `exchanging`:
  /// some tile of the chip starts an exchange.
  void release(uint64_t releaseCycle, bool exchanging);
  /// Runs the chunk [from, until) of a chip with `chipActive` active units; returns the chip's
  /// earliest failure in it, at which every tile then stands.
  std::optional<ChipFailure> runChunk(uint64_t from, uint64_t until, uint64_t chipActive);
  /// Brings every tile that is still running up to cycle `now` (the chip stops there).
  void advanceTo(uint64_t now);
  /// Moves every enabled tile's time base to `cycle` (a CYCLE write at a sync stop at `now`).
  void rebaseCycles(uint64_t now, uint64_t cycle);

  /// Tile t's counters at cycle `now` (owns(t)); counterBits wide.
  TileStats stats(unsigned t, uint64_t now, unsigned counterBits) const;
  /// Sets tile t's sync-wait counter so that it reads `value` where it now reads `reading`
  /// (T_SYNCWAIT; the register adds the wait at the sync the tile stands at).
  void setSyncWait(unsigned t, uint64_t value, uint64_t reading) {
    slot(t).syncWait = value - (reading - slot(t).syncWait);
  }
  /// Sets tile t's exchange counter (T_EXCH, at a sync stop).
  void setExchangeCycles(unsigned t, uint64_t value) { slot(t).exchangeCycles = value; }

  /// Records of this block's tiles go to sink (none: no trace); see ModelDevice::setRetireSink.
  void setRetireSink(std::function<void(const RetireRecord&)> sink);

 private:
  // Where a tile stands at the chip level.
  enum class Phase { Compute, Arrived, Exchange, Halted, Trapped, Disabled };

  struct TileSlot {
    bool enabled = true;
    Phase phase = Phase::Compute;
    uint64_t arrival = 0;         // a_t, valid when Arrived
    uint64_t syncWait = 0;        // completed syncs
    uint64_t exchangeCycles = 0;  // completed exchanges
    uint64_t release = 0;         // R of the exchange in progress
    ExchangeEngine engine;
  };

  TileSlot& slot(unsigned t) { return slots_[t - range_.first]; }
  const TileSlot& slot(unsigned t) const { return slots_[t - range_.first]; }
  std::optional<ChipFailure> attempt(uint64_t from, uint64_t until);
  std::optional<ChipFailure> stepExchange(uint64_t from, uint64_t until);
  void flushRecords();
  void routeRecords();

  TileRange range_;
  unsigned chipTiles_;
  bool hasExchange_;  // false: no exchange engines (preset ice40, docs/chip.md)
  ChipFabric& fabric_;
  std::vector<TileModel> tiles_;
  std::vector<TileSlot> slots_;
  // One host cache line per tile's list: tiles on different threads append to their own.
  struct alignas(64) RecordList {
    std::vector<RetireRecord> list;
  };
  std::vector<RecordList> records_;
  std::vector<ExchangeEngine::BusHistory> bus_;  // every chip tile's bus (remote ones received)
  std::vector<unsigned> members_;  // tiles of this block whose engine started at the release
  bool exchanging_ = false;        // some engine of the chip runs
  std::function<void(const RetireRecord&)> sink_;
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace tessera::model
