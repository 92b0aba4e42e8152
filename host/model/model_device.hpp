// The "model" backend: the tessera chip of docs/chip.md over cycle-exact TileModel objects: sync
// controller, one exchange engine per tile, the exchange fabric, host syncs, SYNC_BREAK, chip
// errors and the control/status registers. All state is in the object (no statics), so several
// devices can live in one process.
//
// One chip loop serves every model (README.md "The chip", docs/scale-out.md "One chip loop"):
// this process simulates one TileBlock (the whole chip, or one MPI rank's contiguous share of
// it), the pure sync controller (decideSync) decides from every block's summary, and a
// ChipFabric carries what the blocks tell each other: nothing in one process (LocalFabric), MPI
// collectives when sharded (host/shard). Host-port calls on a sharded chip are collective: every
// rank makes them in the same order; a tile's owner applies writes and answers reads for all.
//
// How a run proceeds (exact): the chip advances in chunks of at most TileBlock::kChunkCycles
// (see tile_block.hpp). When no tile computes and no engine runs, the sync controller decides:
// release, host-sync stop, sync error, or the end of the run.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "chip_fabric.hpp"
#include "chip_registers.hpp"
#include "tessera/device.hpp"
#include "tile_block.hpp"
#include "tile_model.hpp"

namespace tessera::model {

/// The chip a model device builds: its shape (tessera::ChipShape) and how the model uses it.
struct ChipGeometry : ChipShape {
  /// The configuration of tile t of this chip.
  TileConfig tileConfig(unsigned t) const {
    return TileConfig{t,         tiles,    tileMemBytes, hasFpu,
                      hasMulDiv, contexts, counterBits,  hasMatrixUnit};
  }
  /// What a model device of this chip reports as its info().
  ChipInfo chipInfo() const { return ChipInfo{*this, "model"}; }
};
/// The chip a model device builds for these options: a preset (ChipShape::preset) or the default
/// chip, with the options' tiles, tile memory, contexts, counter width, noFpu, noMulDiv and
/// matrixUnit.
/// Shared by ModelDevice and the sharded model (host/shard).
/// Throws tessera::Error on an unknown preset or a preset contradicted by the options.
ChipGeometry chipGeometry(const DeviceOptions& options);

/// A chip of TileModels with sync and exchange (docs/chip.md), in one process or sharded.
class ModelDevice : public Device {
 public:
  /// The chip of chipGeometry(options): options.preset "mk2" or "ice40" (ChipShape::preset,
  /// rtl/params.json configs MK2 and ICE40), else options.tiles (0 = TESS_DEFAULT_TILES,
  /// docs/decisions.md) of options.tileMemBytes (0 = TESS_TILE_MEM_BYTES). The whole chip in this
  /// process.
  explicit ModelDevice(const DeviceOptions& options);
  /// The same chip with this process's block of tiles given by `fabric` (host/shard's MPI
  /// fabric: rank r of n simulates tiles r*T/n .. (r+1)*T/n - 1).
  ModelDevice(const DeviceOptions& options, std::unique_ptr<ChipFabric> fabric);
  /// With the translating engine and TESSERA_JIT_STOPS set in the environment, prints its counts
  /// (formatJitStatistics) to stderr.
  ~ModelDevice() override;

  ChipInfo info() const override;
  void reset() override;
  void writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) override;
  void readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) override;
  /// Simulates up to maxCycles more cycles; RunResult::cycles counts cycles since reset.
  RunResult run(uint64_t maxCycles) override;
  std::string console(unsigned tile) const override;
  TileStats stats(unsigned tile) const override;
  /// Records of one tile come in retire order; tiles are interleaved chunk by chunk (all of
  /// tile 0's records of a chunk, then tile 1's, ...), and always on the caller's thread. A
  /// sharded chip gives each rank's sink the records of that rank's own tiles.
  void setRetireSink(std::function<void(const RetireRecord&)> sink) override;
  uint32_t readControl(uint32_t offset) override;
  void writeControl(uint32_t offset, uint32_t value) override;

  /// Direct access to one tile's model (tests, state comparison); a tile of this process's block.
  TileModel& tile(unsigned index);
  /// Host threads used between syncs.
  unsigned threads() const { return block_->threads(); }
  /// The tiles this process simulates (every tile unless sharded).
  TileRange block() const { return block_->range(); }
  /// The fabric between this process's block and the others'.
  const ChipFabric& fabric() const { return *fabric_; }
  /// Syncs released since reset (supersteps; host syncs included).
  uint64_t supersteps() const { return supersteps_; }

  /// Upper bound on the cycles of one chunk (bounds the undo logs and the record buffers).
  static constexpr uint64_t kChunkCycles = TileBlock::kChunkCycles;

 private:
  RunResult runLoop(uint64_t maxCycles);
  void checkTile(unsigned tile) const;
  void checkRange(unsigned tile, uint32_t addr, size_t bytes, const char* what) const;
  unsigned ownerOf(unsigned tile) const;
  void start();
  void release(uint64_t releaseCycle, bool exchanging);
  RunResult stopAt(uint64_t cycles, StopReason reason);
  RunResult fail(const ChipFailure& f);
  RunResult result() const;
  uint32_t readTileControl(uint32_t offset);
  void writeTileControl(uint32_t offset, uint32_t value);
  void checkStateWrite(uint32_t offset, bool tileLevel) const;
  void checkCheckpointRegister(uint32_t offset, const char* access) const;
  void writeCycle(uint64_t cycle);

  ChipGeometry geometry_{};  // what the options asked for (tile configuration, info())
  std::unique_ptr<ChipFabric> fabric_;
  std::unique_ptr<TileBlock> block_;
  bool jit_ = false;              // the translating engine runs the tiles
  std::vector<uint8_t> enabled_;  // T_ENABLE of every chip tile (known to every rank)
  ChipState state_ = ChipState::Reset;
  uint64_t now_ = 0;             // every unit has simulated the cycles below now_
  uint64_t pendingRelease_ = 0;  // R of a pending sync
  uint32_t pendingDesc_ = 0;
  bool pendingExchange_ = false;  // some tile starts an exchange at the pending release
  bool syncBreak_ = false;
  unsigned tileSel_ = 0;
  unsigned ctxSel_ = 0;  // CTX_SEL (checkpoint registers)
  unsigned regSel_ = 0;  // REG_SEL
  TrapInfo error_;
  uint32_t exitCode0_ = 0;  // tile 0's exit code as RunResult reports it
  StopReason lastReason_ = StopReason::MaxCycles;
  uint64_t supersteps_ = 0;
};

}  // namespace tessera::model

namespace tessera {

/// Create the "model" backend.
std::unique_ptr<Device> makeModelDevice(const DeviceOptions& options);

}  // namespace tessera
