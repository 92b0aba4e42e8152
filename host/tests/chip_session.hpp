// One multi-tile program on one device, run stop by stop (docs/chip.md): the same ELF in every
// tile, then run() to each sync stop (with SYNC_BREAK) or host sync, and to the end.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server_process.hpp"
#include "tessera/device.hpp"
#include "tessera/elf_image.hpp"

namespace tessera::test {

/// A device with a chip program loaded on every tile, stepped from stop to stop.
class ChipSession {
 public:
  /// Open backend spec (a name of backends::names(): "model", "rtl", "tcp", "shard") with
  /// options (tile count ...).
  ChipSession(std::string spec, const DeviceOptions& options);

  /// The device itself, for control registers and host-port access.
  Device& device() { return *dev_; }
  /// The device string this session was opened with.
  const std::string& spec() const { return spec_; }
  /// Tiles in the chip.
  unsigned tiles() const { return tiles_; }

  /// Load the ELF at path into every tile and reset; the cycle budget restarts at maxCycles.
  ElfImage load(const std::string& path, uint64_t maxCycles);
  /// Run to the next stop: a sync stop, the end, or the rest of the cycle budget.
  RunResult step();
  /// The chip cycle counter (CYCLE_HI:CYCLE_LO).
  uint64_t cycleCounter();

 private:
  std::string spec_;
  std::unique_ptr<link::ServerProcess> server_;  // tcp: the tessera-server behind dev_
  std::unique_ptr<Device> dev_;
  unsigned tiles_ = 0;
  uint64_t maxCycles_ = 0;
};

}  // namespace tessera::test
