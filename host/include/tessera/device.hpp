// The one interface every backend implements (model, rtl; tcp and serial come later).
// User programs and tests see only this header; verilated types never appear here.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/error.hpp"

namespace tessera {

/// Chip parameters a device reports.
struct ChipInfo {
  unsigned tiles = 1;               ///< tiles in the chip
  uint32_t tileMemBytes = 65536;    ///< SRAM bytes per tile
  unsigned contexts = 6;            ///< contexts per tile
  std::string backend;              ///< "model", "rtl", ...
};

/// Why a run stopped.
enum class StopReason {
  Halted,      ///< every tile wrote EXIT
  Trap,        ///< a tile trapped; see TrapInfo
  MaxCycles,   ///< the cycle limit was reached first
};

/// What a trap recorded (docs/tile.md, "Halting and traps").
struct TrapInfo {
  unsigned tile = 0;
  unsigned context = 0;
  uint32_t pc = 0;
  uint32_t cause = 0;
  uint32_t value = 0;
};

/// Name of a trap cause ("illegal instruction", ...; "unknown cause" for others).
const char* trapCauseName(uint32_t cause);
/// "tile 0 context 2 trapped at pc 0x00000104: illegal instruction (cause 2), value 0xffffffff".
std::string describeTrap(const TrapInfo& trap);

/// Counters of one tile.
struct TileStats {
  uint64_t cycles = 0;              ///< cycle count of the tile (halt cycle + 1 when halted)
  uint64_t instructions = 0;        ///< instructions retired, all contexts
  uint64_t contextInstructions[6] = {};  ///< instructions retired per context
  uint64_t idleSlots = 0;           ///< slots in which nothing issued (no instruction, no long-op pass)
};

/// Result of Device::run.
struct RunResult {
  StopReason reason = StopReason::Halted;
  uint64_t cycles = 0;              ///< chip cycles simulated
  uint32_t exitCode = 0;            ///< tile 0's exit code when Halted
  TrapInfo trap;                    ///< valid when reason == Trap
};

/// Where a retired instruction wrote (docs/tile.md, "Retirement trace").
enum class DestKind : uint8_t { None, X, F };

/// One retired instruction, as both implementations report it.
struct RetireRecord {
  uint64_t cycle = 0;               ///< retire cycle
  unsigned tile = 0;
  unsigned context = 0;
  uint32_t pc = 0;
  uint32_t insn = 0;
  DestKind dest = DestKind::None;
  unsigned rd = 0;
  uint32_t value = 0;
  bool operator==(const RetireRecord&) const = default;
};

/// A simulated or physical tessera chip.
class Device {
 public:
  virtual ~Device() = default;
  /// Chip parameters.
  virtual ChipInfo info() const = 0;
  /// Reset the chip: registers, counters and consoles cleared; memory contents are kept.
  virtual void reset() = 0;
  /// Write bytes into a tile's SRAM (only while the chip is not running).
  virtual void writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) = 0;
  /// Read bytes from a tile's SRAM.
  virtual void readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) = 0;
  /// Run from the current state until every tile halted, a trap, or maxCycles chip cycles in total.
  virtual RunResult run(uint64_t maxCycles) = 0;
  /// Console bytes a tile wrote since reset.
  virtual std::string console(unsigned tile) const = 0;
  /// Counters of a tile since reset.
  virtual TileStats stats(unsigned tile) const = 0;
  /// Receive every retired instruction during run() (slows the run; empty function to stop).
  virtual void setRetireSink(std::function<void(const RetireRecord&)> sink) = 0;
};

/// Options for creating a device.
struct DeviceOptions {
  unsigned tiles = 1;
  uint32_t tileMemBytes = 0;        ///< 0 = the backend's default
  std::string traceVcd;             ///< rtl only: write a VCD waveform here
};

/// Open a device from a device string ("model", "rtl"). Throws tessera::Error on a bad string.
std::unique_ptr<Device> openDevice(const std::string& spec, const DeviceOptions& options = {});

}  // namespace tessera
