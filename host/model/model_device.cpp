#include "model_device.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "tessera/chip_params.h"

namespace tessera::model {

ModelDevice::ModelDevice(const DeviceOptions& options)
    : memBytes_(options.tileMemBytes ? options.tileMemBytes : TESS_TILE_MEM_BYTES) {
  if (options.tiles == 0) throw Error("model device: at least one tile is needed");
  if (!options.traceVcd.empty()) {
    throw Error(
        "model device: --trace-vcd / traceVcd needs the rtl device (the model has no waveforms)");
  }
  tiles_.reserve(options.tiles);
  for (unsigned t = 0; t < options.tiles; ++t) {
    tiles_.emplace_back(TileConfig{t, options.tiles, memBytes_});
  }
}

ChipInfo ModelDevice::info() const {
  return ChipInfo{static_cast<unsigned>(tiles_.size()), memBytes_, TileModel::kContexts, "model"};
}

void ModelDevice::reset() {
  for (TileModel& t : tiles_) t.reset();
  cycles_ = 0;
}

TileModel& ModelDevice::tile(unsigned index) {
  return const_cast<TileModel&>(checkedTile(index));
}

const TileModel& ModelDevice::checkedTile(unsigned index) const {
  if (index >= tiles_.size()) {
    throw Error(fmt::format("model device: tile {} does not exist (the chip has {} tiles)", index,
                            tiles_.size()));
  }
  return tiles_[index];
}

void ModelDevice::writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) {
  this->tile(tile).writeMemory(addr, data);
}

void ModelDevice::readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) {
  checkedTile(tile).readMemory(addr, data);
}

RunResult ModelDevice::run(uint64_t maxCycles) {
  // Tiles do not interact yet (no sync or exchange), so each runs alone to the same limit.
  const uint64_t limit = maxCycles > ~uint64_t{0} - cycles_ ? ~uint64_t{0} : cycles_ + maxCycles;
  RunResult result;
  bool allHalted = true;
  const TileModel* trapped = nullptr;
  uint64_t chipCycles = 0;
  for (TileModel& t : tiles_) {
    const TileState s = t.run(limit);
    chipCycles = std::max(chipCycles, t.cycles());
    if (s == TileState::Trapped && (!trapped || t.cycles() < trapped->cycles())) trapped = &t;
    if (s != TileState::Halted) allHalted = false;
  }
  cycles_ = chipCycles;
  result.cycles = chipCycles;
  result.exitCode = tiles_[0].exitCode();
  if (trapped) {
    result.reason = StopReason::Trap;
    result.trap = trapped->trap();
  } else if (allHalted) {
    result.reason = StopReason::Halted;
  } else {
    result.reason = StopReason::MaxCycles;
  }
  return result;
}

std::string ModelDevice::console(unsigned tile) const {
  return checkedTile(tile).console();
}

TileStats ModelDevice::stats(unsigned tile) const {
  return checkedTile(tile).stats();
}

void ModelDevice::setRetireSink(std::function<void(const RetireRecord&)> sink) {
  for (TileModel& t : tiles_) t.setRetireSink(sink);
}

}  // namespace tessera::model

namespace tessera {

std::unique_ptr<Device> makeModelDevice(const DeviceOptions& options) {
  return std::make_unique<model::ModelDevice>(options);
}

}  // namespace tessera
