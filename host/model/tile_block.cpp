#include "tile_block.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "tessera/chip_params.h"

namespace tessera::model {

TileBlock::TileBlock(std::vector<TileConfig> configs, TileRange range, unsigned chipTiles,
                     bool hasExchange, unsigned threads, ChipFabric& fabric)
    : range_(range), chipTiles_(chipTiles), hasExchange_(hasExchange), fabric_(fabric) {
  tiles_.reserve(configs.size());
  for (const TileConfig& c : configs) tiles_.emplace_back(c);
  slots_.resize(tiles_.size());
  records_.resize(tiles_.size());
  bus_.resize(chipTiles);
  pool_ = std::make_unique<WorkerPool>(std::max(1u, threads));
  reset();
}

void TileBlock::reset() {
  for (TileModel& t : tiles_) t.reset();
  for (TileSlot& s : slots_) s = TileSlot{};
  for (auto& r : records_) r.list.clear();
  for (auto& b : bus_) b.fill(0);
  members_.clear();
  exchanging_ = false;
  routeRecords();
}

void TileBlock::start() {
  for (TileSlot& s : slots_) s.phase = s.enabled ? Phase::Compute : Phase::Disabled;
}

BlockSummary TileBlock::summary() const {
  BlockSummary out;
  for (unsigned t = range_.first; t < range_.end; ++t) {
    const TileSlot& s = slot(t);
    if (s.phase == Phase::Compute || s.phase == Phase::Exchange) {
      ++out.active;
    } else if (s.phase == Phase::Arrived) {
      const TileModel& m = tile(t);
      if (out.firstArrived == kNoTile) {
        out.firstArrived = t;
        out.firstDesc = m.syncDescriptor();
        out.firstPc = m.syncPc();
      } else if (out.mismatch == kNoTile && m.syncDescriptor() != out.firstDesc) {
        out.mismatch = t;
        out.mismatchDesc = m.syncDescriptor();
        out.mismatchPc = m.syncPc();
      }
      out.lastArrival = std::max(out.lastArrival, s.arrival);
      if (m.exchangeProgram() != 0) out.exchange = 1;
    } else if (s.phase == Phase::Halted) {
      out.firstHalted = std::min<uint32_t>(out.firstHalted, t);
      out.haltEnd = std::max(out.haltEnd, tile(t).cycles());  // h + 1
    }
  }
  return out;
}

void TileBlock::release(uint64_t releaseCycle, bool exchanging) {
  for (auto& b : bus_) b.fill(0);
  members_.clear();
  for (unsigned t = range_.first; t < range_.end; ++t) {
    TileSlot& s = slot(t);
    if (s.phase != Phase::Arrived) continue;
    s.syncWait += releaseCycle - s.arrival;
    TileModel& m = tile(t);
    const uint32_t prog = m.exchangeProgram();
    m.clearExchangeProgram();
    if (prog != 0) {
      s.phase = Phase::Exchange;
      s.release = releaseCycle;
      // Without engines the release is an error at R (ExchangeEngine::startAbsent).
      if (hasExchange_) {
        s.engine.start(prog, releaseCycle);
      } else {
        s.engine.startAbsent(prog, releaseCycle);
      }
      members_.push_back(t);
    } else {
      s.phase = Phase::Compute;
      m.resumeSupervisor(releaseCycle);
    }
  }
  exchanging_ = exchanging || !members_.empty();
}

std::optional<ChipFailure> TileBlock::runChunk(uint64_t from, uint64_t until, uint64_t chipActive) {
  std::vector<unsigned> active;
  for (unsigned t = range_.first; t < range_.end; ++t) {
    const Phase p = slot(t).phase;
    if (p == Phase::Compute || p == Phase::Exchange) active.push_back(t);
  }
  // A single unit in the chip cannot overrun anyone; with more, a failure at e means every block
  // runs the chunk again up to e, so every block saves what the exchange changes, and blocks with
  // units save their tiles.
  const bool redo = chipActive > 1;
  const bool guard = redo && !active.empty();
  std::vector<TileSlot> savedSlots;
  std::vector<ExchangeEngine::BusHistory> savedBus;
  std::vector<unsigned> savedMembers;
  std::vector<size_t> savedRecords;
  const bool savedExchanging = exchanging_;
  if (redo) {
    savedSlots = slots_;
    savedBus = bus_;
    savedMembers = members_;
    savedRecords.reserve(records_.size());
    for (const auto& r : records_) savedRecords.push_back(r.list.size());
  }
  if (guard) pool_->forEach(active.size(), [&](size_t i) { tile(active[i]).checkpoint(); });
  std::optional<ChipFailure> failure = attempt(from, until);
  if (redo && failure) {
    if (guard) pool_->forEach(active.size(), [&](size_t i) { tile(active[i]).rollback(); });
    slots_ = std::move(savedSlots);
    bus_ = std::move(savedBus);
    members_ = std::move(savedMembers);
    exchanging_ = savedExchanging;
    for (size_t i = 0; i < records_.size(); ++i) records_[i].list.resize(savedRecords[i]);
    const uint64_t at = failure->cycle;
    failure = attempt(from, at + 1);
    if (!failure || failure->cycle != at) {
      throw Error(
          fmt::format("model device: internal error: the run from cycle {} did not "
                      "repeat its failure at cycle {}",
                      from, at));
    }
  } else if (guard) {
    pool_->forEach(active.size(), [&](size_t i) { tile(active[i]).commit(); });
  }
  flushRecords();
  return failure;
}

std::optional<ChipFailure> TileBlock::attempt(uint64_t from, uint64_t until) {
  std::optional<ChipFailure> best;
  if (exchanging_) best = stepExchange(from, until);  // the same answer in every block
  const uint64_t bound = best ? best->cycle + 1 : until;
  std::vector<unsigned> compute;
  for (unsigned t = range_.first; t < range_.end; ++t) {
    if (slot(t).phase == Phase::Compute) compute.push_back(t);
  }
  pool_->forEach(compute.size(), [&](size_t i) { tile(compute[i]).run(bound); });
  for (unsigned t : compute) {
    TileModel& m = tile(t);
    TileSlot& s = slot(t);
    switch (m.state()) {
      case TileState::Running:
        break;
      case TileState::Arrived:
        s.phase = Phase::Arrived;
        s.arrival = m.syncIssueCycle() + TESS_SYNC_ARRIVAL_DELAY;  // docs/chip.md: a_t
        break;
      case TileState::Halted:
        s.phase = Phase::Halted;
        break;
      case TileState::Trapped: {
        s.phase = Phase::Trapped;
        const ChipFailure f{m.cycles() - 1, m.trap()};
        if (!best || earlierFailure(f, *best)) best = f;
        break;
      }
    }
  }
  return fabric_.earliestFailure(best);
}

// Exchange windows (docs/scale-out.md): the fabric's window of cycles is stepped here, then the
// fabric hands every block the others' bus words of the window. A receive at s reads the bus of
// s - LATENCY, which lies before the window's first cycle when the window is at most LATENCY
// cycles long, so no word is needed before the window that produced it has ended. In one process
// the window is the whole chunk and nothing is sent.
std::optional<ChipFailure> TileBlock::stepExchange(uint64_t from, uint64_t until) {
  const uint64_t window = fabric_.exchangeWindow();
  const bool shared = fabric_.ranks() > 1;
  const auto localRunning = [&] {
    return std::any_of(members_.begin(), members_.end(),
                       [&](unsigned t) { return slot(t).phase == Phase::Exchange; });
  };
  std::vector<uint32_t> words;  // (tile * window + cycle - w, word) of each non-zero bus value
  for (uint64_t w = from; w < until;) {
    const uint64_t wEnd = until - w <= window ? until : w + window;
    std::optional<ChipFailure> failure;
    words.clear();
    for (uint64_t s = w; s < wEnd && !failure; ++s) {
      // Once this block's engines are done its buses carry 0 until the next release, which
      // clears them: the cycles left need no stepping.
      if (!localRunning()) break;
      // First half of s: every engine reads (memory as at the start of s) and drives its bus.
      for (unsigned t : members_) {
        uint32_t word = 0;
        TileSlot& sl = slot(t);
        if (sl.phase == Phase::Exchange && !sl.engine.readPhase(s, tile(t), chipTiles_, word) &&
            !failure) {
          const ExchangeFault& fault = sl.engine.fault();
          failure = ChipFailure{
              s, TrapInfo{t, TESS_EXCHANGE_CONTEXT, fault.pc, fault.cause, fault.value}};
        }
        bus_[t][s % ExchangeEngine::kBusHistory] = word;
        if (shared && word != 0) {
          words.push_back(static_cast<uint32_t>(t * window + (s - w)));
          words.push_back(word);
        }
      }
      // Second half: receives are written at the end of s; finished engines hand back the tile.
      for (unsigned t : members_) {
        TileSlot& sl = slot(t);
        if (sl.phase != Phase::Exchange) continue;
        sl.engine.writePhase(s, tile(t), bus_.data());
        if (sl.engine.done()) {
          const uint64_t x = sl.engine.endCycle();
          sl.exchangeCycles += x - sl.release;
          sl.phase = Phase::Compute;
          tile(t).resumeSupervisor(x);
        }
      }
    }
    const WindowOutcome out =
        fabric_.endWindow(w, wEnd, localRunning(), failure, words, range_, bus_);
    if (out.failure) return out.failure;
    if (!out.running) {
      members_.clear();
      exchanging_ = false;
      break;
    }
    w = wEnd;
  }
  return std::nullopt;
}

void TileBlock::advanceTo(uint64_t now) {
  for (unsigned t = range_.first; t < range_.end; ++t) {
    const Phase p = slot(t).phase;
    if (p == Phase::Compute || p == Phase::Arrived || p == Phase::Exchange) tile(t).advanceTo(now);
  }
}

void TileBlock::rebaseCycles(uint64_t now, uint64_t cycle) {
  // Every other register keeps its value: the sync wait so far is folded into the counter.
  for (unsigned t = range_.first; t < range_.end; ++t) {
    TileSlot& s = slot(t);
    if (!s.enabled) continue;
    if (s.phase == Phase::Arrived) {
      if (now > s.arrival) s.syncWait += now - s.arrival;
      s.arrival = cycle;
    }
    tile(t).rebaseCycles(cycle);
  }
}

TileStats TileBlock::stats(unsigned t, uint64_t now, unsigned counterBits) const {
  const TileModel& m = tile(t);
  const TileSlot& s = slot(t);
  if (!s.enabled) {
    TileStats out;
    out.halted = true;  // docs/chip.md: a disabled tile counts as halted with exit code 0
    return out;
  }
  TileStats out = m.stats();
  out.syncWaitCycles = s.syncWait;
  if (s.phase == Phase::Arrived && now > s.arrival) out.syncWaitCycles += now - s.arrival;
  out.exchangeCycles = s.exchangeCycles;
  if (s.phase == Phase::Exchange) out.exchangeCycles += now - s.release;
  out.halted = m.state() == TileState::Halted;
  out.exitCode = out.halted ? m.exitCode() : 0;
  wrapCounters(out, counterBits);
  return out;
}

void TileBlock::setRetireSink(std::function<void(const RetireRecord&)> sink) {
  sink_ = std::move(sink);
  routeRecords();
}

void TileBlock::routeRecords() {
  for (size_t i = 0; i < tiles_.size(); ++i) {
    if (sink_) {
      tiles_[i].setRetireSink([this, i](const RetireRecord& r) { records_[i].list.push_back(r); });
    } else {
      tiles_[i].setRetireSink({});
    }
  }
}

void TileBlock::flushRecords() {
  if (!sink_) return;
  for (auto& records : records_) {
    for (const RetireRecord& r : records.list) sink_(r);
    records.list.clear();
  }
}

}  // namespace tessera::model
