// The MPI fabric of a sharded model chip (docs/scale-out.md): ModelDevice's chip loop with this
// rank's contiguous block of tiles, talking to the other ranks' blocks through MPI collectives on
// one MpiComm (host/mpi):
//  - at every chunk boundary and sync decision the ranks allgather their BlockSummary and all take
//    the same sync-controller decision;
//  - during an exchange, every rank steps its engines TESS_EXCHANGE_LATENCY cycles at a time and
//    then allgathers the non-zero bus words of those cycles: a receive at r reads the bus of
//    r - LATENCY, which is always in an earlier window (docs/scale-out.md, "Exchange windows");
//  - the earliest failure of any rank (lowest tile on a tie) is allgathered after every attempt;
//  - a tile's owner answers host-port reads by broadcast;
//  - a failure on one rank during run() ends the whole job with a message naming the rank.
#pragma once

#include "chip_fabric.hpp"
#include "mpi_comm.hpp"

namespace tessera::shard {

/// The ranks of MPI_COMM_WORLD as the blocks of one chip (MPI initialised on demand).
class MpiFabric final : public model::ChipFabric {
 public:
  MpiFabric();

  unsigned rank() const override { return static_cast<unsigned>(comm_.rank()); }
  unsigned ranks() const override { return static_cast<unsigned>(comm_.size()); }
  /// TESS_EXCHANGE_LATENCY: the longest window whose receives read only earlier windows' words.
  uint64_t exchangeWindow() const override;
  std::vector<model::BlockSummary> gatherSummaries(const model::BlockSummary& mine) override;
  std::optional<model::ChipFailure> earliestFailure(
      const std::optional<model::ChipFailure>& mine) override;
  model::WindowOutcome endWindow(uint64_t w, uint64_t wEnd, bool running,
                                 const std::optional<model::ChipFailure>& failure,
                                 std::span<const uint32_t> words, model::TileRange mine,
                                 std::span<model::ExchangeEngine::BusHistory> bus) override;
  void fromOwner(void* data, size_t bytes, unsigned owner) override;
  std::string stringFromOwner(const std::string& s, unsigned owner) override;
  /// Ends the job: "tessera shard: rank r of n: model device run failed: ...".
  void runFailed(const std::exception& e) override;
  shard::CommStats stats() const override;

 private:
  mpi::MpiComm comm_;
};

}  // namespace tessera::shard
