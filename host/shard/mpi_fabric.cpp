#include "mpi_fabric.hpp"

#include <fmt/format.h>

#include "tessera/chip_params.h"
#include "tessera/error.hpp"

namespace tessera::shard {
namespace {

using model::ChipFailure;
using model::ExchangeEngine;

// A failure as it travels between ranks.
struct FailureMsg {
  uint64_t cycle = 0;
  uint32_t has = 0;
  uint32_t tile = 0;
  uint32_t context = 0;
  uint32_t pc = 0;
  uint32_t cause = 0;
  uint32_t value = 0;
};

// One rank's state after an exchange window.
struct WindowMsg {
  uint32_t running = 0;  // some local engine still runs
  uint32_t words = 0;    // words this rank sends next (2 per non-zero bus value)
  FailureMsg failure;
};

FailureMsg toMsg(const std::optional<ChipFailure>& f) {
  if (!f) return {};
  return FailureMsg{f->cycle,     1, f->info.tile, f->info.context, f->info.pc, f->info.cause,
                    f->info.value};
}

// The earliest failure of the ranks' messages (lowest tile on the same cycle).
std::optional<ChipFailure> earliestOf(const std::vector<FailureMsg>& msgs) {
  std::optional<ChipFailure> best;
  for (const FailureMsg& m : msgs) {
    if (!m.has) continue;
    const ChipFailure f{m.cycle, TrapInfo{m.tile, m.context, m.pc, m.cause, m.value}};
    if (!best || model::earlierFailure(f, *best)) best = f;
  }
  return best;
}

}  // namespace

MpiFabric::MpiFabric() : comm_(mpi::MpiComm::Init::OnDemand, "model shard") {}

uint64_t MpiFabric::exchangeWindow() const {
  static_assert(TESS_EXCHANGE_LATENCY >= 1 && TESS_EXCHANGE_LATENCY < ExchangeEngine::kBusHistory);
  return TESS_EXCHANGE_LATENCY;
}

std::vector<model::BlockSummary> MpiFabric::gatherSummaries(const model::BlockSummary& mine) {
  return comm_.allgather(mine);
}

std::optional<ChipFailure> MpiFabric::earliestFailure(const std::optional<ChipFailure>& mine) {
  return earliestOf(comm_.allgather(toMsg(mine)));
}

model::WindowOutcome MpiFabric::endWindow(uint64_t w, uint64_t wEnd, bool running,
                                          const std::optional<ChipFailure>& failure,
                                          std::span<const uint32_t> words, model::TileRange mine,
                                          std::span<ExchangeEngine::BusHistory> bus) {
  const uint64_t window = exchangeWindow();
  WindowMsg msg;
  msg.running = running ? 1u : 0u;
  msg.failure = toMsg(failure);
  msg.words = static_cast<uint32_t>(words.size());
  const std::vector<WindowMsg> states = comm_.allgather(msg);
  std::vector<int> counts;
  for (const WindowMsg& m : states) counts.push_back(static_cast<int>(m.words));
  const std::vector<uint32_t> all = comm_.allgatherv(words, counts);
  // Remote buses: 0 unless a word came (a remote engine drives 0 when it sends nothing).
  const unsigned tiles = static_cast<unsigned>(bus.size());
  for (unsigned t = 0; t < tiles; ++t) {
    if (mine.contains(t)) continue;
    for (uint64_t s = w; s < wEnd; ++s) bus[t][s % ExchangeEngine::kBusHistory] = 0;
  }
  size_t at = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    const size_t n = static_cast<size_t>(counts[r]);
    if (static_cast<int>(r) != comm_.rank()) {
      for (size_t i = at; i + 1 < at + n; i += 2) {
        const uint32_t t = static_cast<uint32_t>(all[i] / window);
        if (t >= tiles || mine.contains(t)) {
          throw Error(fmt::format("model device: rank {} sent a bus word of tile {}", r, t));
        }
        bus[t][(w + all[i] % window) % ExchangeEngine::kBusHistory] = all[i + 1];
      }
    }
    at += n;
  }
  model::WindowOutcome out;
  std::vector<FailureMsg> failures;
  for (const WindowMsg& m : states) {
    out.running = out.running || m.running != 0;
    failures.push_back(m.failure);
  }
  out.failure = earliestOf(failures);
  return out;
}

void MpiFabric::fromOwner(void* data, size_t bytes, unsigned owner) {
  comm_.bcast(data, bytes, static_cast<int>(owner));
}

std::string MpiFabric::stringFromOwner(const std::string& s, unsigned owner) {
  return comm_.bcastString(s, static_cast<int>(owner));
}

void MpiFabric::runFailed(const std::exception& e) {
  comm_.abortJob("tessera shard", fmt::format("model device run failed: {}", e.what()));
}

shard::CommStats MpiFabric::stats() const {
  return comm_.stats();
}

}  // namespace tessera::shard
