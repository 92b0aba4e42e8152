// The exchange engine of one tile (docs/chip.md, "Exchange programs"): runs the tile's exchange
// program after a release, one cycle per call pair, reading instruction words and sent words
// from the tile's SRAM and writing received words into it. Timing: an instruction of k words
// that starts at t reads its words at t..t+k-1, transfers at t+k..t+k+n-1, and the next one
// starts at t+k+n; DELAY n: next at t+1+n; END at t: the engine stops, X = t+1.
#pragma once

#include <array>
#include <cstdint>

#include "tessera/chip_params.h"
#include "tile_model.hpp"

namespace tessera::model {

/// An error of the exchange engine: cause 27 or 28, detected at `cycle` (context 6).
struct ExchangeFault {
  uint64_t cycle = 0;
  uint32_t pc = 0;  ///< address of the offending instruction
  uint32_t cause = 0;
  uint32_t value = 0;  ///< the offending word (27) or address (28)
};

/// One tile's exchange engine; plain data, so the chip can copy it for a checkpoint.
class ExchangeEngine {
 public:
  /// Bus values of every tile for the last few cycles, indexed by cycle % kBusHistory.
  static constexpr unsigned kBusHistory = 4;
  static_assert(kBusHistory > TESS_EXCHANGE_LATENCY, "a receive reads the bus LATENCY cycles back");
  /// The bus history of every tile.
  using BusHistory = std::array<uint32_t, kBusHistory>;

  /// Start the program at byte address prog at cycle `release` (R).
  void start(uint32_t prog, uint64_t release);
  /// A chip without exchange engines (HAS_EXCHANGE = 0) released a tile with program prog: the
  /// first readPhase (at R) fails with cause 29, pc = value = prog (docs/chip.md).
  void startAbsent(uint32_t prog, uint64_t release);
  /// True from start() until END or an error.
  bool running() const { return phase_ != Phase::Idle && phase_ != Phase::Done && !faulted_; }
  /// True once END was executed.
  bool done() const { return phase_ == Phase::Done; }
  /// The cycle after END (X), valid when done().
  uint64_t endCycle() const { return end_; }
  /// The fault, valid after readPhase returned false.
  const ExchangeFault& fault() const { return fault_; }

  /// First half of cycle s: read an instruction word or the word to send (memory as at the start
  /// of s). Sets `bus` to what this tile drives at s (0 if it sends nothing). Returns false on a
  /// fault (see fault()).
  bool readPhase(uint64_t s, const TileModel& tile, unsigned numTiles, uint32_t& bus);
  /// Second half of cycle s: the receive (written at the end of s) and the step to cycle s+1.
  /// history[u] holds tile u's bus values; release is R (a cycle before R carried 0).
  void writePhase(uint64_t s, TileModel& tile, const BusHistory* history);

 private:
  enum class Phase { Idle, Fetch, Delay, Transfer, Done };

  bool fail(uint64_t s, uint32_t cause, uint32_t value);
  bool decode(uint64_t s, const TileModel& tile, unsigned numTiles);

  Phase phase_ = Phase::Idle;
  bool faulted_ = false;
  bool absent_ = false;  // startAbsent: no engine to run the program
  uint64_t release_ = 0;
  uint32_t pc_ = 0;         // address of the current instruction
  unsigned wordIndex_ = 0;  // word read in this cycle (Fetch)
  unsigned words_ = 1;      // k
  std::array<uint32_t, 3> w_{};
  uint64_t delayEnd_ = 0;  // first cycle of the next instruction (Delay)
  uint32_t n_ = 0;
  uint32_t i_ = 0;  // transfer index
  uint64_t transferStart_ = 0;
  bool send_ = false;
  bool recv_ = false;
  uint32_t saddr_ = 0;
  uint32_t raddr_ = 0;
  unsigned srcBus_ = 0;
  uint64_t end_ = 0;
  ExchangeFault fault_;
};

}  // namespace tessera::model
