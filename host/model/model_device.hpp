// The "model" backend: tessera::Device over cycle-exact TileModel objects, all state in the
// object (no statics), so several devices can live in one process.
#pragma once

#include <memory>
#include <vector>

#include "tessera/device.hpp"
#include "tile_model.hpp"

namespace tessera::model {

/// A chip of independent tiles simulated by TileModel (no sync or exchange yet).
class ModelDevice : public Device {
 public:
  /// A device with options.tiles tiles of options.tileMemBytes (0 = TESS_TILE_MEM_BYTES).
  explicit ModelDevice(const DeviceOptions& options);

  ChipInfo info() const override;
  void reset() override;
  void writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) override;
  void readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) override;
  /// Simulates up to maxCycles more cycles; RunResult::cycles counts cycles since reset.
  RunResult run(uint64_t maxCycles) override;
  std::string console(unsigned tile) const override;
  TileStats stats(unsigned tile) const override;
  void setRetireSink(std::function<void(const RetireRecord&)> sink) override;

  /// Direct access to one tile's model (tests, state comparison).
  TileModel& tile(unsigned index);

 private:
  const TileModel& checkedTile(unsigned index) const;

  uint32_t memBytes_;
  std::vector<TileModel> tiles_;
  uint64_t cycles_ = 0;
};

}  // namespace tessera::model

namespace tessera {

/// Create the "model" backend.
std::unique_ptr<Device> makeModelDevice(const DeviceOptions& options);

}  // namespace tessera
