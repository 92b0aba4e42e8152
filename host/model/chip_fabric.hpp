// How the blocks of one chip talk (docs/scale-out.md, "One chip loop"): ModelDevice runs the same
// chip loop whether its tiles are all in this process (LocalFabric: one block, nothing to send)
// or split into contiguous blocks over the ranks of an MPI job (host/shard's MpiFabric). The
// fabric carries the few things a block needs from the others: the sync controller's summaries,
// the earliest failure, the bus words of an exchange window, and the answers of a tile's owner.
// Every call is collective: every rank makes it, in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "exchange_engine.hpp"
#include "sync_controller.hpp"
#include "tessera/shard.hpp"

namespace tessera::model {

/// A contiguous block of a chip's tiles: first .. end-1.
struct TileRange {
  unsigned first = 0;
  unsigned end = 0;
  /// Whether tile t is in the block.
  bool contains(unsigned t) const { return t >= first && t < end; }
};

/// The block of rank r of n ranks in a chip of `tiles` tiles: tiles r*T/n .. (r+1)*T/n - 1.
TileRange blockOfRank(unsigned rank, unsigned ranks, unsigned tiles);
/// The rank whose block holds tile t (the last rank r with r*T/n <= t).
unsigned ownerRank(unsigned tile, unsigned ranks, unsigned tiles);

/// What every rank learns after an exchange window.
struct WindowOutcome {
  bool running = false;                ///< some engine of the chip still runs
  std::optional<ChipFailure> failure;  ///< the chip's earliest exchange fault in the window
};

/// The communication policy of a chip split into blocks, one per rank.
class ChipFabric {
 public:
  virtual ~ChipFabric() = default;
  /// This process's rank and the number of ranks (0 and 1 for a chip in one process).
  virtual unsigned rank() const = 0;
  virtual unsigned ranks() const = 0;
  /// Cycles an exchange runs on each rank between two windows (no limit for one process).
  virtual uint64_t exchangeWindow() const = 0;
  /// Every rank's summary, in rank (= tile) order.
  virtual std::vector<BlockSummary> gatherSummaries(const BlockSummary& mine) = 0;
  /// The earliest of every rank's failures (earlierFailure), on every rank.
  virtual std::optional<ChipFailure> earliestFailure(const std::optional<ChipFailure>& mine) = 0;
  /// Ends an exchange window [w, wEnd): `words` are this rank's non-zero bus words of the window
  /// as (tile * window + cycle - w, word) pairs; the other ranks' words are written into `bus`
  /// (their tiles' entries of the window read 0 otherwise). `mine` is this rank's block.
  virtual WindowOutcome endWindow(uint64_t w, uint64_t wEnd, bool running,
                                  const std::optional<ChipFailure>& failure,
                                  std::span<const uint32_t> words, TileRange mine,
                                  std::span<ExchangeEngine::BusHistory> bus) = 0;
  /// Copies `bytes` bytes at data from rank `owner` to every rank.
  virtual void fromOwner(void* data, size_t bytes, unsigned owner) = 0;
  /// A string from rank `owner` to every rank.
  virtual std::string stringFromOwner(const std::string& s, unsigned owner) = 0;
  /// run() failed on this rank with e (thrown after this returns): a fabric whose other ranks
  /// would wait forever in a collective ends the job here instead.
  virtual void runFailed(const std::exception& e) = 0;
  /// Messages and bytes since the fabric was made (zero for one process).
  virtual shard::CommStats stats() const = 0;
};

/// The whole chip in this process: one block, nothing to send, no cost.
class LocalFabric final : public ChipFabric {
 public:
  unsigned rank() const override { return 0; }
  unsigned ranks() const override { return 1; }
  uint64_t exchangeWindow() const override { return ~uint64_t{0}; }
  std::vector<BlockSummary> gatherSummaries(const BlockSummary& mine) override { return {mine}; }
  std::optional<ChipFailure> earliestFailure(const std::optional<ChipFailure>& mine) override {
    return mine;
  }
  WindowOutcome endWindow(uint64_t, uint64_t, bool running,
                          const std::optional<ChipFailure>& failure, std::span<const uint32_t>,
                          TileRange, std::span<ExchangeEngine::BusHistory>) override {
    return {running, failure};
  }
  void fromOwner(void*, size_t, unsigned) override {}
  std::string stringFromOwner(const std::string& s, unsigned) override { return s; }
  void runFailed(const std::exception&) override {}
  shard::CommStats stats() const override { return {}; }
};

}  // namespace tessera::model
