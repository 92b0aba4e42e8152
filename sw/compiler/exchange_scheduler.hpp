// Places the transfers of one exchange into time slots (docs/compiler.md, "Exchange scheduling"):
// each tile sends at most one word and receives at most one word per cycle, a word sent at cycle
// s is received at s + EXCHANGE_LATENCY, and one send may be received by many tiles (multicast).
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

/// Where one receiver puts a message.
struct XDest {
  uint32_t tile = 0;
  uint32_t addr = 0;
  /// The EXCHANGE_LATENCY words before addr are a guard or belong to other destinations of this
  /// exchange (a receive buffer laid out by the compiler): a tile that sends and receives at once
  /// writes junk there (see the .cpp). false for a tensor's home memory.
  bool guarded = false;
};

/// n words from src's memory at srcAddr to every destination.
struct XMessage {
  uint32_t src = 0;
  uint32_t srcAddr = 0;
  uint32_t words = 0;
  std::vector<XDest> dsts;
};

/// A copy that the supervisor makes on its tile after the exchange (a self-transfer that the
/// engine cannot make without writing junk into live memory).
struct XLocalCopy {
  uint32_t tile = 0;
  uint32_t dst = 0;
  uint32_t src = 0;
  uint32_t words = 0;
};

/// The scheduled exchange.
struct XSchedule {
  std::vector<std::vector<uint32_t>> programs;  ///< per tile; empty = the tile takes no part
  std::vector<XLocalCopy> localCopies;
  uint32_t cycles = 0;      ///< from the release to the last engine's end (max X - R)
  uint32_t lowerBound = 0;  ///< max over tiles of max(words sent, words received)
  uint32_t phases = 0;
  uint64_t words = 0;  ///< words received in total
};

/// Schedule messages on a chip of `tiles` tiles with memBytes of SRAM each. Messages with the same
/// source range are merged into one multicast. Throws tessera::Error on a message that does not
/// fit.
XSchedule scheduleExchange(uint32_t tiles, uint32_t memBytes, std::vector<XMessage> messages);

}  // namespace tessera
