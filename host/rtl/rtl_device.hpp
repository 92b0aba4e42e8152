// The "rtl" backend: one verilated tess_tile (rtl/core/tess_tile.sv) clocked in process.
// Private header of host/rtl; the verilated model stays behind a pimpl so no V*.h leaks out.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "tessera/device.hpp"

namespace tessera {

/// A single-tile chip simulated by the verilated RTL; cycle-exact per docs/tile.md.
class RtlDevice : public Device {
 public:
  /// Build the tile and reset it; throws tessera::Error for options the RTL build cannot honour.
  explicit RtlDevice(const DeviceOptions& options);
  ~RtlDevice() override;
  RtlDevice(const RtlDevice&) = delete;
  RtlDevice& operator=(const RtlDevice&) = delete;

  /// Chip parameters of the verilated build.
  ChipInfo info() const override;
  /// Pulse rst_ni; memory keeps its contents, console and counters are cleared.
  void reset() override;
  /// Write through the tile's host port, one word per cycle (byte enables for partial words).
  void writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) override;
  /// Read through the tile's host port, one word per cycle.
  void readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) override;
  /// Raise run_i and clock until halted, trap, or maxCycles more tile cycles.
  RunResult run(uint64_t maxCycles) override;
  /// Console bytes of the tile since reset.
  std::string console(unsigned tile) const override;
  /// Counters of the tile since reset.
  TileStats stats(unsigned tile) const override;
  /// Receive every retirement from the tile's retirement port during run().
  void setRetireSink(std::function<void(const RetireRecord&)> sink) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Open the rtl backend (the factory openDevice() uses for "rtl").
std::unique_ptr<Device> makeRtlDevice(const DeviceOptions& options);

}  // namespace tessera
