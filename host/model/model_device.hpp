// The "model" backend: the tessera chip of docs/chip.md over cycle-exact TileModel objects: sync
// controller, one exchange engine per tile, the exchange fabric, host syncs, SYNC_BREAK, chip
// errors and the control/status registers. All state is in the object (no statics), so several
// devices can live in one process.
//
// How a run proceeds (exact, see README.md "The chip"): the chip advances in chunks of at most
// kChunkCycles. In a chunk, the exchange engines (if an exchange is in progress) are stepped
// cycle by cycle first, then every computing tile runs alone to the chunk's end or its next sync,
// halt or trap — on several host threads, since tiles cannot affect each other between syncs.
// If any unit failed at cycle e inside the chunk, every tile is rolled back to the chunk's start
// (a register checkpoint plus an undo log of memory writes) and the chunk is run again up to e
// inclusive, so no tile ever passes e. When no tile computes and no engine runs, the sync
// controller decides: release, host-sync stop, sync error, or the end of the run.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "chip_registers.hpp"
#include "exchange_engine.hpp"
#include "tessera/device.hpp"
#include "tile_model.hpp"
#include "worker_pool.hpp"

namespace tessera::model {

/// The chip a model device builds: its shape (tessera::ChipShape) and how the model uses it.
struct ChipGeometry : ChipShape {
  /// The configuration of tile t of this chip.
  TileConfig tileConfig(unsigned t) const {
    return TileConfig{t, tiles, tileMemBytes, hasFpu, hasMulDiv, contexts, counterBits};
  }
  /// What a model device of this chip reports as its info().
  ChipInfo chipInfo() const { return ChipInfo{*this, "model"}; }
};
/// The chip a model device builds for these options: a preset (ChipShape::preset) or the default
/// chip, with the options' tiles, tile memory, contexts, counter width, noFpu and noMulDiv.
/// Shared by ModelDevice and the sharded model (host/shard).
/// Throws tessera::Error on an unknown preset or a preset contradicted by the options.
ChipGeometry chipGeometry(const DeviceOptions& options);

/// A chip of TileModels with sync and exchange (docs/chip.md).
class ModelDevice : public Device {
 public:
  /// The chip of chipGeometry(options): options.preset "mk2" or "ice40" (ChipShape::preset,
  /// rtl/params.json configs MK2 and ICE40), else options.tiles (0 = TESS_DEFAULT_TILES,
  /// docs/decisions.md) of options.tileMemBytes (0 = TESS_TILE_MEM_BYTES).
  explicit ModelDevice(const DeviceOptions& options);

  ChipInfo info() const override;
  void reset() override;
  void writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) override;
  void readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) override;
  /// Simulates up to maxCycles more cycles; RunResult::cycles counts cycles since reset.
  RunResult run(uint64_t maxCycles) override;
  std::string console(unsigned tile) const override;
  TileStats stats(unsigned tile) const override;
  /// Records of one tile come in retire order; tiles are interleaved chunk by chunk (all of
  /// tile 0's records of a chunk, then tile 1's, ...), and always on the caller's thread.
  void setRetireSink(std::function<void(const RetireRecord&)> sink) override;
  uint32_t readControl(uint32_t offset) override;
  void writeControl(uint32_t offset, uint32_t value) override;

  /// Direct access to one tile's model (tests, state comparison).
  TileModel& tile(unsigned index);
  /// Host threads used between syncs.
  unsigned threads() const { return pool_->threads(); }

  /// Upper bound on the cycles of one chunk (bounds the undo logs and the record buffers).
  static constexpr uint64_t kChunkCycles = 1 << 16;

 private:
  // Where a tile stands at the chip level.
  enum class Phase { Compute, Arrived, Exchange, Halted, Trapped, Disabled };

  struct TileSlot {
    bool enabled = true;
    Phase phase = Phase::Compute;
    uint64_t arrival = 0;          // a_t, valid when Arrived
    uint64_t syncWait = 0;         // completed syncs
    uint64_t exchangeCycles = 0;   // completed exchanges
    uint64_t release = 0;          // R of the exchange in progress
    ExchangeEngine engine;
  };

  // What the chip saved at a chunk start to roll back to.
  struct Checkpoint {
    std::vector<TileSlot> slots;
    std::vector<ExchangeEngine::BusHistory> bus;
    std::vector<unsigned> members;
    std::vector<size_t> recordCounts;
  };

  // A failure found in a chunk.
  struct Failure {
    uint64_t cycle = 0;
    TrapInfo info;
  };

  const TileModel& checkedTile(unsigned index) const;
  void start();
  void release(uint64_t releaseCycle);
  std::optional<Failure> runChunk(uint64_t from, uint64_t until);
  std::optional<Failure> attempt(uint64_t from, uint64_t until);
  std::optional<Failure> stepExchange(uint64_t from, uint64_t until);
  bool anyActive() const;
  RunResult stopAt(uint64_t cycles, StopReason reason);
  RunResult fail(const Failure& f);
  RunResult result() const;
  void checkStateWrite(uint32_t offset, bool tileLevel) const;
  void checkCheckpointRegister(uint32_t offset, const char* access) const;
  void writeCycle(uint64_t cycle);
  void flushRecords();
  void routeRecords();

  ChipGeometry geometry_{};  // what the options asked for (tile configuration, info())
  uint32_t memBytes_;
  bool hasExchange_ = true;    // false: no exchange engines (preset ice40, docs/chip.md)
  bool hasCheckpoint_ = true;  // false: no checkpoint registers (preset ice40)
  std::vector<TileModel> tiles_;
  std::vector<TileSlot> slots_;
  // One host cache line per tile's list: tiles on different threads append to their own.
  struct alignas(64) RecordList {
    std::vector<RetireRecord> list;
  };
  std::vector<RecordList> records_;
  std::vector<ExchangeEngine::BusHistory> bus_;
  std::vector<unsigned> members_;  // tiles whose engine started at the current release
  std::function<void(const RetireRecord&)> sink_;
  std::unique_ptr<WorkerPool> pool_;
  ChipState state_ = ChipState::Reset;
  uint64_t now_ = 0;               // every unit has simulated the cycles below now_
  uint64_t pendingRelease_ = 0;    // R of a pending sync
  uint32_t pendingDesc_ = 0;
  bool syncBreak_ = false;
  unsigned tileSel_ = 0;
  unsigned ctxSel_ = 0;            // CTX_SEL (checkpoint registers)
  unsigned regSel_ = 0;            // REG_SEL
  TrapInfo error_;
  StopReason lastReason_ = StopReason::MaxCycles;
};

}  // namespace tessera::model

namespace tessera {

/// Create the "model" backend.
std::unique_ptr<Device> makeModelDevice(const DeviceOptions& options);

}  // namespace tessera
