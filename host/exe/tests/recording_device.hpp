// A Device that only records what is done to it, to prove that a refused load wrote nothing.
#pragma once

#include <cstring>
#include <map>
#include <vector>

#include "tessera/device.hpp"

namespace tessera::test {

/// Counts writes, resets and control writes; memory is a plain array per tile.
class RecordingDevice : public Device {
 public:
  explicit RecordingDevice(ChipInfo info)
      : info_(info), mem_(info.tiles, std::vector<uint8_t>(info.tileMemBytes)) {}
  ChipInfo info() const override { return info_; }
  void reset() override { ++resets; }
  void writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) override {
    ++writes;
    std::memcpy(mem_.at(tile).data() + addr, data.data(), data.size());
  }
  void readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) override {
    std::memcpy(data.data(), mem_.at(tile).data() + addr, data.size());
  }
  RunResult run(uint64_t) override { return {}; }
  std::string console(unsigned) const override { return {}; }
  TileStats stats(unsigned) const override { return {}; }
  void setRetireSink(std::function<void(const RetireRecord&)>) override {}
  uint32_t readControl(uint32_t offset) override { return control[offset]; }
  void writeControl(uint32_t offset, uint32_t value) override {
    ++controlWrites;
    control[offset] = value;
    if (offset == TESS_CR_T_ENABLE) enabled[control[TESS_CR_TILE_SEL]] = value;
  }
  /// Byte of a tile's memory.
  uint8_t at(unsigned tile, uint32_t addr) const { return mem_.at(tile).at(addr); }

  unsigned writes = 0;
  unsigned resets = 0;
  unsigned controlWrites = 0;
  std::map<uint32_t, uint32_t> control;
  std::map<uint32_t, uint32_t> enabled;

 private:
  ChipInfo info_;
  std::vector<std::vector<uint8_t>> mem_;
};

}  // namespace tessera::test
