// The one interface every backend implements (model, rtl; tcp and serial come later).
// User programs and tests see only this header; verilated types never appear here.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/chip_params.h"
#include "tessera/chip_shape.hpp"
#include "tessera/error.hpp"

namespace tessera {

/// What a device reports about its chip: the chip's shape and what only a device knows.
struct ChipInfo : ChipShape {
  std::string backend;      ///< "model", "rtl", "link:model", ...
  uint32_t maxPayload = 0;  ///< largest payload of one link frame (docs/link-protocol.md)
                            ///< of a device behind a link; 0 = in process, no limit
};

/// A tile counter's value as a counter of `bits` bits (ChipInfo::counterBits) holds it: v modulo
/// 2^bits.
constexpr uint64_t wrapCounter(uint64_t v, unsigned bits) {
  return bits >= 64 ? v : v & ((uint64_t{1} << bits) - 1);
}
/// The count between two readings of a tile counter of `bits` bits (later - earlier modulo 2^bits):
/// exact while fewer than 2^bits counts lie between the readings.
constexpr uint64_t counterDelta(uint64_t later, uint64_t earlier, unsigned bits) {
  return wrapCounter(later - earlier, bits);
}

/// Why a run stopped.
enum class StopReason {
  Halted,     ///< every tile wrote EXIT (or is disabled)
  Trap,       ///< a tile trapped, or a sync/exchange error (docs/chip.md); see TrapInfo
  MaxCycles,  ///< the cycle limit was reached first
  HostSync,   ///< a host sync is pending (RunResult::hostSyncId); the next run() releases it
  SyncBreak,  ///< stopped at an internal sync because of setSyncBreak; the next run() releases it
};

/// What a trap or chip error recorded (docs/tile.md "Halting and traps", docs/chip.md "Errors").
/// context is TESS_EXCHANGE_CONTEXT for an error of the exchange engine.
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

/// Counters of one tile (each modulo 2^ChipInfo::counterBits).
struct TileStats {
  uint64_t cycles = 0;        ///< cycle count of the tile (halt cycle + 1 when halted)
  uint64_t instructions = 0;  ///< instructions retired, all contexts
  /// Instructions retired per context (0 beyond ChipInfo::contexts; at most TESS_ROUND_CYCLES).
  uint64_t contextInstructions[TESS_ROUND_CYCLES] = {};
  uint64_t idleSlots = 0;       ///< slots in which nothing issued (no instruction, no long-op pass)
  uint64_t syncWaitCycles = 0;  ///< cycles between arriving at a sync and its release, summed
  uint64_t exchangeCycles = 0;  ///< cycles the exchange engine ran, summed
  bool halted = false;          ///< the tile wrote EXIT or is disabled
  uint32_t exitCode = 0;        ///< its exit code (0 for a disabled tile)
};

/// Result of Device::run.
struct RunResult {
  StopReason reason = StopReason::Halted;
  uint64_t cycles = 0;      ///< chip cycles simulated
  uint32_t exitCode = 0;    ///< tile 0's exit code when Halted (others: TileStats)
  TrapInfo trap;            ///< valid when reason == Trap
  uint32_t hostSyncId = 0;  ///< sync id, valid when reason == HostSync or SyncBreak
};

/// Where a retired instruction wrote (docs/tile.md, "Retirement trace").
enum class DestKind : uint8_t { None, X, F };

/// One retired instruction, as both implementations report it.
struct RetireRecord {
  uint64_t cycle = 0;  ///< retire cycle (modulo 2^ChipInfo::counterBits)
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
  /// With several tiles, records of one tile come in order; tiles may interleave in any order.
  virtual void setRetireSink(std::function<void(const RetireRecord&)> sink) = 0;
  /// Read a chip control/status register (docs/chip.md, "Host port and control registers").
  virtual uint32_t readControl(uint32_t offset) = 0;
  /// Write a chip control/status register.
  virtual void writeControl(uint32_t offset, uint32_t value) = 0;

  /// Enable or disable a tile for the next run (after reset(); every tile is enabled by reset).
  /// A disabled tile counts as halted with exit code 0 (docs/chip.md, T_ENABLE).
  void setTileEnabled(unsigned tile, bool enabled) {
    writeControl(TESS_CR_TILE_SEL, tile);
    writeControl(TESS_CR_T_ENABLE, enabled ? 1u : 0u);
  }
  /// Stop at every sync as at a host sync (StopReason::SyncBreak for internal ones), to inspect or
  /// compare memory at each superstep; cycle counts do not change (docs/chip.md, SYNC_BREAK).
  void setSyncBreak(bool on) { writeControl(TESS_CR_SYNC_BREAK, on ? 1u : 0u); }
};

/// How the model executes tile code (docs/tile.md, "The translating engine").
enum class ModelEngine {
  Interp,   ///< the interpreter: the reference
  Jit,      ///< translated blocks (one context, or windows of several), else the interpreter
  Default,  ///< Jit where the model has the translating engine, else Interp (the model decides,
            ///< so that code which does not link the model can leave the choice to it)
};

/// True when this build's model has the translating engine (x86-64 hosts with asmjit); without
/// it, a model device asked for ModelEngine::Jit refuses to open.
bool modelJitAvailable();

/// The engine a model device runs unless told otherwise (ModelEngine::Default resolved, for the
/// tools, which link the model): the translating engine where this build has it (it is exact:
/// the suites run both engines against each other and the RTL), else the interpreter
/// (docs/decisions.md, "The translating engine by default").
inline ModelEngine defaultModelEngine() {
  return modelJitAvailable() ? ModelEngine::Jit : ModelEngine::Interp;
}

/// The tools' help text of --model-engine.
inline constexpr const char* kModelEngineHelp =
    "model engine: jit (translated blocks of one context, or windows of several; the default "
    "where the build has it) or interp (the interpreter, the reference); docs/tile.md, \"The "
    "translating engine\"";

/// The names of the model engines as the tools' --model-engine takes them.
inline const std::map<std::string, ModelEngine>& modelEngineNames() {
  static const std::map<std::string, ModelEngine> names{{"interp", ModelEngine::Interp},
                                                        {"jit", ModelEngine::Jit}};
  return names;
}

/// Options for creating a device.
struct DeviceOptions {
  unsigned tiles = 0;         ///< tiles in the chip; 0 = the default, TESS_DEFAULT_TILES
                              ///< (docs/decisions.md)
  uint32_t tileMemBytes = 0;  ///< 0 = the backend's default
  std::string preset;         ///< "" or a ChipShape::preset: "default", "mk2" or "ice40"
                              ///< (rtl/params.json configs MK2, ICE40); model only
  bool noFpu = false;         ///< model: integer-only tiles (F instructions trap as illegal)
  bool noMulDiv = false;      ///< model: tiles without M (M instructions trap as illegal)
  unsigned contexts = 0;      ///< model: contexts per tile, 2..TESS_ROUND_CYCLES; 0 = the
                              ///< default (TESS_NUM_CONTEXTS, or the preset's)
  unsigned counterBits = 0;   ///< model: tile counter width, 32 or 64; 0 = the chip's
                              ///< (rtl/params.json COUNTER_BITS; preset ice40: 32)
  unsigned threads = 0;       ///< model: host threads, 0 = one per core
  ModelEngine modelEngine = ModelEngine::Default;  ///< model: how tile code runs (other
                                                   ///< devices ignore it, as they do threads)
  std::string traceVcd;                            ///< rtl only: write a VCD waveform here
  unsigned maxTiles = 0;      ///< refuse more tiles than this; 0 = kDefaultMaxTiles
  uint64_t maxChipBytes = 0;  ///< refuse chips whose tiles x tile memory exceed this;
                              ///< 0 = kDefaultMaxChipBytes
  bool shard = false;         ///< model only: split the tiles over the ranks of an MPI job
                              ///< (docs/scale-out.md); every rank opens the same device
  /// The matrix unit (docs/tile.md, "Matrix unit"): unset = the chip's (rtl/params.json
  /// MATRIX_UNIT); the model builds either; a device that cannot honour it (rtl, tcp, serial
  /// without the unit, or with it when false is asked) refuses it.
  std::optional<bool> matrixUnit;
};

/// Most tiles openDevice builds unless DeviceOptions::maxTiles allows more: the mk2 chip
/// (TESS_MK2_NUM_TILES); each model tile holds its whole SRAM (docs/limits.md).
inline constexpr unsigned kDefaultMaxTiles = TESS_MK2_NUM_TILES;

/// Most memory (tiles x bytes per tile) openDevice builds a chip with unless
/// DeviceOptions::maxChipBytes allows more: 4 GiB, four times the mk2 chip's. The model commits a
/// tile's memory as it is written, so this bounds what a file or an option can declare, not what a
/// run uses (docs/limits.md).
inline constexpr uint64_t kDefaultMaxChipBytes = uint64_t{4} << 30;

/// Open a device from a device string ("model", "rtl"). Throws tessera::Error on a bad string.
std::unique_ptr<Device> openDevice(const std::string& spec, const DeviceOptions& options = {});

}  // namespace tessera
