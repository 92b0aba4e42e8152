// The "rtl" backend: the verilated tess_chip (rtl/chip/tess_chip.sv) clocked in process, in one of
// its two verilated configurations (4 or 16 tiles of 64 KiB).
// Private header of host/rtl; the verilated model stays behind a pimpl so no V*.h leaks out.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "tessera/device.hpp"

namespace tessera {

/// A chip simulated by the verilated RTL; cycle-exact per docs/tile.md and docs/chip.md.
class RtlDevice : public Device {
 public:
  /// Build the chip and reset it; throws tessera::Error for options the RTL build cannot honour
  /// (tiles: 0 = 4, or 4 or 16; memory: 0 or 64 KiB).
  explicit RtlDevice(const DeviceOptions& options);
  ~RtlDevice() override;
  RtlDevice(const RtlDevice&) = delete;
  RtlDevice& operator=(const RtlDevice&) = delete;

  /// Chip parameters of the verilated configuration.
  ChipInfo info() const override;
  /// Pulse rst_ni; memory keeps its contents, registers, counters and consoles are cleared.
  void reset() override;
  /// Write through the chip's host port, one word per cycle (byte enables for partial words).
  void writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) override;
  /// Read through the chip's host port, one word per cycle.
  void readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) override;
  /// Start (CTRL.RUN) or release a pending sync (CTRL.RELEASE), then clock until every tile
  /// halted, an error, a sync stop, or maxCycles more chip cycles.
  RunResult run(uint64_t maxCycles) override;
  /// Console bytes of a tile since reset.
  std::string console(unsigned tile) const override;
  /// Counters of a tile since reset (T_ registers and the per-context instret port).
  TileStats stats(unsigned tile) const override;
  /// Receive every retirement from the tiles' retirement ports during run().
  void setRetireSink(std::function<void(const RetireRecord&)> sink) override;
  /// Read a control/status register through the chip's control port.
  uint32_t readControl(uint32_t offset) override;
  /// Write a control/status register (one clock cycle; the chip does not advance in it).
  void writeControl(uint32_t offset, uint32_t value) override;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  uint32_t memBytes_ = 0;  ///< SRAM bytes per tile of the chip in use
};

/// Open the rtl backend (the factory openDevice() uses for "rtl").
std::unique_ptr<Device> makeRtlDevice(const DeviceOptions& options);

}  // namespace tessera
