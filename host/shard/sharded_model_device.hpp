// The "model" backend with its tiles sharded across the ranks of an MPI job (DeviceOptions::shard,
// tessera-run --shard; docs/scale-out.md). Every rank runs the same host program and opens the
// same device; each rank holds and simulates a contiguous block of tiles. The chip it simulates is
// the one of ModelDevice (docs/chip.md), with the same results, consoles, counters and cycles:
//  - between syncs the ranks do not talk: each runs its tiles alone, in chunks as ModelDevice;
//  - at every chunk boundary and sync decision the ranks allgather a small summary of their tiles
//    (active units, arrivals, halts, descriptors) and all take the same sync-controller decision;
//  - during an exchange, every rank steps its engines TESS_EXCHANGE_LATENCY cycles at a time and
//    then allgathers the non-zero bus words of those cycles: a receive at r reads the bus of
//    r - LATENCY, which is always in an earlier window (docs/scale-out.md, "Exchange windows");
//  - the earliest failure of any rank (lowest tile on a tie) stops every tile at its cycle, with
//    the same checkpoint and rollback as ModelDevice.
// Host-port calls are collective: every rank makes them in the same order. writeMemory is applied
// by the owner; readMemory, console, stats and the per-tile control registers are answered by the
// owner and broadcast, so every rank sees every tile. A failure on one rank during run() ends the
// whole job with a message naming the rank (ShardComm::abortJob).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "chip_registers.hpp"
#include "exchange_engine.hpp"
#include "model_device.hpp"
#include "shard_comm.hpp"
#include "tessera/device.hpp"
#include "tile_model.hpp"
#include "worker_pool.hpp"

namespace tessera::shard {

/// A chip of TileModels split in contiguous blocks over the ranks of an MPI job.
class ShardedModelDevice : public Device {
 public:
  /// The chip of ModelDevice(options); tiles split over every rank of MPI_COMM_WORLD.
  explicit ShardedModelDevice(const DeviceOptions& options);

  ChipInfo info() const override;
  void reset() override;
  void writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) override;
  void readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) override;
  RunResult run(uint64_t maxCycles) override;
  std::string console(unsigned tile) const override;
  TileStats stats(unsigned tile) const override;
  /// Refused: the sharded model has no retirement trace (use the model without --shard).
  void setRetireSink(std::function<void(const RetireRecord&)> sink) override;
  uint32_t readControl(uint32_t offset) override;
  void writeControl(uint32_t offset, uint32_t value) override;

  /// This rank and the number of ranks.
  int rank() const { return comm_->rank(); }
  int ranks() const { return comm_->size(); }
  /// First tile of this rank and one past its last.
  unsigned firstTile() const { return first_; }
  unsigned endTile() const { return end_; }
  /// The rank that holds a tile.
  int ownerOf(unsigned tile) const;
  /// Messages and bytes this rank has exchanged since the device was opened.
  const CommStats& commStats() const { return comm_->stats(); }
  /// Syncs released since reset (supersteps).
  uint64_t supersteps() const { return supersteps_; }

  /// Upper bound on the cycles of one chunk, as in ModelDevice.
  static constexpr uint64_t kChunkCycles = 1 << 16;

 private:
  enum class Phase { Compute, Arrived, Exchange, Halted, Trapped, Disabled };
  using ChipState = model::ChipState;

  struct TileSlot {
    bool enabled = true;
    Phase phase = Phase::Compute;
    uint64_t arrival = 0;
    uint64_t syncWait = 0;
    uint64_t exchangeCycles = 0;
    uint64_t release = 0;
    model::ExchangeEngine engine;
  };

  struct Failure {
    uint64_t cycle = 0;
    TrapInfo info;
  };

  // What the sync controller needs from one rank (allgathered at every decision).
  struct Summary;
  // What the per-tile control registers show (sent by the tile's owner).
  struct TileView;

  model::TileModel& local(unsigned tile) { return tiles_[tile - first_]; }
  const model::TileModel& local(unsigned tile) const { return tiles_[tile - first_]; }
  TileSlot& slot(unsigned tile) { return slots_[tile - first_]; }
  const TileSlot& slot(unsigned tile) const { return slots_[tile - first_]; }
  bool owns(unsigned tile) const { return tile >= first_ && tile < end_; }
  void checkTile(unsigned tile) const;
  void checkRange(unsigned tile, uint32_t addr, size_t bytes, const char* what) const;
  TileStats localStats(unsigned tile) const;
  TileView view(unsigned tile) const;

  void start();
  void release(uint64_t releaseCycle, bool exchanging);
  RunResult runLoop(uint64_t maxCycles);
  std::optional<Failure> runChunk(uint64_t from, uint64_t until, uint64_t globalActive);
  std::optional<Failure> attempt(uint64_t from, uint64_t until);
  std::optional<Failure> stepExchange(uint64_t from, uint64_t until);
  std::optional<Failure> earliest(const std::optional<Failure>& mine);
  RunResult stopAt(uint64_t cycles, StopReason reason);
  RunResult fail(const Failure& f);
  RunResult result() const;

  std::unique_ptr<ShardComm> comm_;
  unsigned numTiles_ = 0;
  uint32_t memBytes_ = 0;
  model::ChipGeometry geometry_{};  // what the options asked for (tile configuration, info())
  unsigned first_ = 0;
  unsigned end_ = 0;
  std::vector<model::TileModel> tiles_;  // tiles first_ .. end_-1
  std::vector<TileSlot> slots_;
  std::vector<model::ExchangeEngine::BusHistory> bus_;  // every tile's bus (remote ones received)
  std::vector<unsigned> members_;  // local tiles whose engine started at the current release
  bool exchanging_ = false;        // some rank has an exchange in progress
  std::unique_ptr<model::WorkerPool> pool_;
  ChipState state_ = ChipState::Reset;
  uint64_t now_ = 0;
  uint64_t pendingRelease_ = 0;
  uint32_t pendingDesc_ = 0;
  bool pendingExchange_ = false;
  bool syncBreak_ = false;
  unsigned tileSel_ = 0;
  TrapInfo error_;
  uint32_t exitCode0_ = 0;  // tile 0's exit code as RunResult reports it
  StopReason lastReason_ = StopReason::MaxCycles;
  uint64_t supersteps_ = 0;
};

}  // namespace tessera::shard

namespace tessera {

/// Create the sharded "model" backend (DeviceOptions::shard).
std::unique_ptr<Device> makeShardedModelDevice(const DeviceOptions& options);

}  // namespace tessera
