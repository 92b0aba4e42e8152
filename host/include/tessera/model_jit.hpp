// What the model's translating engine did (docs/tile.md, "The translating engine"): how many of
// the instructions a model device simulated ran as translated host code, how many windows of
// several contexts it kept or undid, and why translated code stopped. For benchmarks and reports;
// other backends report zeros.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace tessera {

class Device;

/// Why translated code stopped and the interpreter took over (docs/tile.md, "Why translated
/// code stops"). The first six are the class of the instruction translated code could not run.
enum class JitStop : uint8_t {
  Amp,         ///< a matrix-unit instruction
  Csr,         ///< a CSR instruction
  Mmio,        ///< a load or store outside SRAM (MMIO: RUN, DONE, WAIT, SYNC, EXIT, the console)
  LongOp,      ///< DIV/DIVU/REM/REMU/FDIV.S/FSQRT.S
  FpMode,      ///< an FP instruction with a rounding mode translated code does not run
  Other,       ///< FENCE, ECALL, EBREAK, an illegal word, a misaligned access or jump target
  Conflict,    ///< a window's contexts touched one word (one of them writing), or wrote code
  StaleFetch,  ///< a store of the last two cycles could make a window's first fetch stale
  Limit,       ///< the next block does not end before the run's cycle limit
};
/// The number of JitStop reasons.
inline constexpr unsigned kJitStopReasons = 9;
/// The reason's name in reports and result.json ("amp", "csr", ..., "limit").
const char* jitStopName(JitStop reason);

/// Counts by JitStop reason.
using JitStopCounts = std::array<uint64_t, kJitStopReasons>;

/// The translating engine's counts over this process's tiles since the device was opened.
struct ModelJitStatistics {
  uint64_t instructions = 0;     ///< instructions executed (every context, every tile, every load)
  uint64_t translated = 0;       ///< of them, run as translated host code
  uint64_t windows = 0;          ///< windows of several contexts kept
  uint64_t windowFallbacks = 0;  ///< windows undone and left to the interpreter
  /// Windows undone, by the reason (the instruction a context could not start or stopped at
  /// before any round ran, or a conflict); they sum to windowFallbacks.
  JitStopCounts windowUndone{};
  /// Windows kept but cut before their end, by the instruction that cut them.
  JitStopCounts windowCut{};
  /// Windows not tried at a cycle where one could start (StaleFetch).
  JitStopCounts windowSkipped{};
  /// Single-context runs of translated blocks (context 0 alone), by what ended them.
  JitStopCounts blockExits{};
};

/// The counts of dev if it is an in-process model device (zeros otherwise, or for the
/// interpreter).
ModelJitStatistics modelJitStatistics(Device& dev);

/// One line of s: "instructions N translated N windows_kept N windows_undone N" then every
/// nonzero reason count as " <kind>.<reason> N" (kinds undone, cut, skipped, block_exit).
std::string formatJitStatistics(const ModelJitStatistics& s);

}  // namespace tessera
