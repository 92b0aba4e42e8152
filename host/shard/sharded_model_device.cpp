#include "sharded_model_device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "tessera/chip_params.h"

namespace tessera::shard {

using model::ChipState;
using model::ExchangeEngine;
using model::TileModel;
using model::TileState;

namespace {

constexpr uint64_t kNoLimit = ~uint64_t{0};
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

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

}  // namespace

struct ShardedModelDevice::Summary {
  uint64_t active = 0;            // local tiles computing or exchanging
  uint64_t lastArrival = 0;       // max a_t of local arrived tiles
  uint64_t haltEnd = 0;           // max h_t + 1 of local halted tiles
  uint32_t firstArrived = kNone;  // lowest local arrived tile
  uint32_t firstDesc = 0;         // its descriptor and SYNC pc
  uint32_t firstPc = 0;
  uint32_t mismatch = kNone;  // lowest local arrived tile whose descriptor differs from firstDesc
  uint32_t mismatchDesc = 0;
  uint32_t mismatchPc = 0;
  uint32_t firstHalted = kNone;  // lowest local halted tile
  uint32_t exchange = 0;         // some local arrived tile has an exchange program
};

struct ShardedModelDevice::TileView {
  TileStats stats;
  uint32_t enabled = 0;
  uint32_t arrived = 0;
};

ShardedModelDevice::ShardedModelDevice(const DeviceOptions& options) {
  if (!options.traceVcd.empty()) {
    throw Error(
        "model device: --trace-vcd / traceVcd needs the rtl device (the model has no waveforms)");
  }
  const model::ChipGeometry g = model::chipGeometry(options);
  geometry_ = g;
  numTiles_ = g.tiles;
  memBytes_ = g.tileMemBytes;
  if (!g.hasExchange) {
    // The reduced board chip (preset ice40) has one tile: nothing to shard.
    throw Error("model device: a chip without exchange engines (preset ice40) cannot be sharded "
                "(use the unsharded model)");
  }
  if (uint64_t{numTiles_} * TESS_EXCHANGE_LATENCY > std::numeric_limits<uint32_t>::max()) {
    throw Error(
        fmt::format("model device: {} tiles are too many to shard (bus words carry the "
                    "tile in 32 bits)",
                    numTiles_));
  }
  comm_ = std::make_unique<ShardComm>();
  const uint64_t r = static_cast<uint64_t>(comm_->rank());
  const uint64_t n = static_cast<uint64_t>(comm_->size());
  first_ = static_cast<unsigned>(r * numTiles_ / n);
  end_ = static_cast<unsigned>((r + 1) * numTiles_ / n);
  tiles_.reserve(end_ - first_);
  for (unsigned t = first_; t < end_; ++t) {
    tiles_.emplace_back(g.tileConfig(t));
  }
  slots_.resize(end_ - first_);
  bus_.resize(numTiles_);
  // The ranks are the parallelism: one thread per rank unless told otherwise.
  const unsigned threads =
      std::max(1u, std::min(options.threads ? options.threads : 1u, std::max(1u, end_ - first_)));
  pool_ = std::make_unique<model::WorkerPool>(threads);
  reset();
}

int ShardedModelDevice::ownerOf(unsigned tile) const {
  // The last rank r with r * T / n <= tile.
  const uint64_t n = static_cast<uint64_t>(comm_->size());
  uint64_t r = (uint64_t{tile} * n) / numTiles_;
  while (r + 1 < n && (r + 1) * numTiles_ / n <= tile) ++r;
  while (r > 0 && r * numTiles_ / n > tile) --r;
  return static_cast<int>(r);
}

ChipInfo ShardedModelDevice::info() const {
  ChipInfo info = geometry_.chipInfo();
  info.hasCheckpoint = false;  // the sharded chip has no checkpoint registers yet (readControl)
  return info;
}

void ShardedModelDevice::reset() {
  for (TileModel& t : tiles_) t.reset();
  for (TileSlot& s : slots_) s = TileSlot{};
  for (auto& b : bus_) b.fill(0);
  members_.clear();
  exchanging_ = false;
  state_ = ChipState::Reset;
  now_ = 0;
  pendingRelease_ = 0;
  pendingDesc_ = 0;
  pendingExchange_ = false;
  syncBreak_ = false;
  tileSel_ = 0;
  error_ = TrapInfo{};
  exitCode0_ = 0;
  lastReason_ = StopReason::MaxCycles;
  supersteps_ = 0;
}

void ShardedModelDevice::checkTile(unsigned tile) const {
  if (tile >= numTiles_) {
    throw Error(fmt::format("model device: tile {} does not exist (the chip has {} tiles)", tile,
                            numTiles_));
  }
}

// Every rank checks, so that every rank throws the same error (TileModel's words).
void ShardedModelDevice::checkRange(unsigned tile, uint32_t addr, size_t bytes,
                                    const char* what) const {
  checkTile(tile);
  if (uint64_t{addr} + bytes > memBytes_) {
    throw Error(
        fmt::format("tile {}: {} of {} bytes at 0x{:08x} is outside tile memory of {} bytes", tile,
                    what, bytes, addr, memBytes_));
  }
}

void ShardedModelDevice::writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) {
  checkRange(tile, addr, data.size(), "write");
  if (owns(tile)) local(tile).writeMemory(addr, data);
}

void ShardedModelDevice::readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) {
  checkRange(tile, addr, data.size(), "read");
  if (owns(tile)) local(tile).readMemory(addr, data);
  if (!data.empty()) comm_->bcast(data.data(), data.size(), ownerOf(tile));
}

void ShardedModelDevice::start() {
  for (TileSlot& s : slots_) s.phase = s.enabled ? Phase::Compute : Phase::Disabled;
  state_ = ChipState::Running;
}

void ShardedModelDevice::release(uint64_t releaseCycle, bool exchanging) {
  for (auto& b : bus_) b.fill(0);
  members_.clear();
  for (unsigned t = first_; t < end_; ++t) {
    TileSlot& s = slot(t);
    if (s.phase != Phase::Arrived) continue;
    s.syncWait += releaseCycle - s.arrival;
    const uint32_t prog = local(t).exchangeProgram();
    local(t).clearExchangeProgram();
    if (prog != 0) {
      s.phase = Phase::Exchange;
      s.release = releaseCycle;
      s.engine.start(prog, releaseCycle);
      members_.push_back(t);
    } else {
      s.phase = Phase::Compute;
      local(t).resumeSupervisor(releaseCycle);
    }
  }
  exchanging_ = exchanging;
  now_ = releaseCycle;
  state_ = ChipState::Running;
  ++supersteps_;
}

RunResult ShardedModelDevice::run(uint64_t maxCycles) {
  // A local failure here would leave the other ranks waiting in a collective: end the job.
  try {
    return runLoop(maxCycles);
  } catch (const std::exception& e) {
    comm_->abortJob(fmt::format("model device run failed: {}", e.what()));
  }
}

RunResult ShardedModelDevice::runLoop(uint64_t maxCycles) {
  if (state_ == ChipState::Halted || state_ == ChipState::Error) return result();
  if (state_ == ChipState::Reset) start();
  if (state_ == ChipState::SyncPending) release(pendingRelease_, pendingExchange_);
  const uint64_t limit = maxCycles > kNoLimit - now_ ? kNoLimit : now_ + maxCycles;
  for (;;) {
    Summary mine;
    for (unsigned t = first_; t < end_; ++t) {
      const TileSlot& s = slot(t);
      if (s.phase == Phase::Compute || s.phase == Phase::Exchange) {
        ++mine.active;
      } else if (s.phase == Phase::Arrived) {
        const TileModel& tile = local(t);
        if (mine.firstArrived == kNone) {
          mine.firstArrived = t;
          mine.firstDesc = tile.syncDescriptor();
          mine.firstPc = tile.syncPc();
        } else if (mine.mismatch == kNone && tile.syncDescriptor() != mine.firstDesc) {
          mine.mismatch = t;
          mine.mismatchDesc = tile.syncDescriptor();
          mine.mismatchPc = tile.syncPc();
        }
        mine.lastArrival = std::max(mine.lastArrival, s.arrival);
        if (tile.exchangeProgram() != 0) mine.exchange = 1;
      } else if (s.phase == Phase::Halted) {
        mine.firstHalted = std::min<uint32_t>(mine.firstHalted, t);
        mine.haltEnd = std::max(mine.haltEnd, local(t).cycles());  // h + 1
      }
    }
    const std::vector<Summary> all = comm_->allgather(mine);
    uint64_t active = 0, lastArrival = 0, haltEnd = 0;
    uint32_t firstArrived = kNone, firstHalted = kNone, desc = 0, firstPc = 0;
    bool exchange = false;
    for (const Summary& s : all) {  // ranks hold ascending tile blocks
      active += s.active;
      lastArrival = std::max(lastArrival, s.lastArrival);
      haltEnd = std::max(haltEnd, s.haltEnd);
      if (firstArrived == kNone && s.firstArrived != kNone) {
        firstArrived = s.firstArrived;
        desc = s.firstDesc;
        firstPc = s.firstPc;
      }
      firstHalted = std::min(firstHalted, s.firstHalted);
      exchange = exchange || s.exchange != 0;
    }
    if (active == 0) {
      // The sync controller of ModelDevice, on the summaries of every rank.
      if (firstArrived == kNone) return stopAt(haltEnd, StopReason::Halted);
      if (firstHalted != kNone) {
        const uint64_t e = std::max(lastArrival, haltEnd);
        if (e >= limit) return stopAt(limit, StopReason::MaxCycles);
        return fail(
            Failure{e, TrapInfo{firstArrived, 0, firstPc, TESS_CAUSE_SYNC_HALTED, firstHalted}});
      }
      if (lastArrival >= limit) return stopAt(limit, StopReason::MaxCycles);
      for (const Summary& s : all) {
        if (s.firstArrived == kNone) continue;
        if (s.firstDesc != desc) {
          return fail(Failure{lastArrival, TrapInfo{s.firstArrived, 0, s.firstPc,
                                                    TESS_CAUSE_SYNC_MISMATCH, s.firstDesc}});
        }
        if (s.mismatch != kNone) {
          return fail(Failure{lastArrival, TrapInfo{s.mismatch, 0, s.mismatchPc,
                                                    TESS_CAUSE_SYNC_MISMATCH, s.mismatchDesc}});
        }
      }
      const uint64_t releaseCycle = lastArrival + TESS_SYNC_LATENCY;
      if (releaseCycle > limit) return stopAt(limit, StopReason::MaxCycles);
      const bool host = (desc & TESS_SYNC_HOST_BIT) != 0;
      if (host || syncBreak_) {
        state_ = ChipState::SyncPending;
        pendingRelease_ = releaseCycle;
        pendingDesc_ = desc;
        pendingExchange_ = exchange;
        return stopAt(releaseCycle, host ? StopReason::HostSync : StopReason::SyncBreak);
      }
      release(releaseCycle, exchange);
      continue;
    }
    if (now_ >= limit) return stopAt(limit, StopReason::MaxCycles);
    const uint64_t until = std::min(limit, now_ + std::min(kChunkCycles, limit - now_));
    if (const std::optional<Failure> f = runChunk(now_, until, active)) return fail(*f);
    now_ = until;
  }
}

std::optional<ShardedModelDevice::Failure> ShardedModelDevice::runChunk(uint64_t from,
                                                                        uint64_t until,
                                                                        uint64_t globalActive) {
  std::vector<unsigned> active;
  for (unsigned t = first_; t < end_; ++t) {
    const Phase p = slot(t).phase;
    if (p == Phase::Compute || p == Phase::Exchange) active.push_back(t);
  }
  // With more than one unit in the chip, a failure at e means every rank runs the chunk again up
  // to e, so every rank saves what the exchange changes; only ranks with units save tiles.
  const bool redo = globalActive > 1;
  const bool guard = redo && !active.empty();
  std::vector<TileSlot> savedSlots;
  std::vector<ExchangeEngine::BusHistory> savedBus;
  std::vector<unsigned> savedMembers;
  const bool savedExchanging = exchanging_;
  if (redo) {
    savedSlots = slots_;
    savedBus = bus_;
    savedMembers = members_;
  }
  if (guard) {
    pool_->forEach(active.size(), [&](size_t i) { local(active[i]).checkpoint(); });
  }
  std::optional<Failure> failure = attempt(from, until);
  if (redo && failure) {
    if (guard) pool_->forEach(active.size(), [&](size_t i) { local(active[i]).rollback(); });
    slots_ = std::move(savedSlots);
    bus_ = std::move(savedBus);
    members_ = std::move(savedMembers);
    exchanging_ = savedExchanging;
    const uint64_t at = failure->cycle;
    failure = attempt(from, at + 1);
    if (!failure || failure->cycle != at) {
      throw Error(
          fmt::format("model device: internal error: the run from cycle {} did not "
                      "repeat its failure at cycle {}",
                      from, at));
    }
  } else if (guard) {
    pool_->forEach(active.size(), [&](size_t i) { local(active[i]).commit(); });
  }
  return failure;
}

std::optional<ShardedModelDevice::Failure> ShardedModelDevice::attempt(uint64_t from,
                                                                       uint64_t until) {
  std::optional<Failure> best;
  if (exchanging_) best = stepExchange(from, until);  // the same answer on every rank
  const uint64_t bound = best ? best->cycle + 1 : until;
  std::vector<unsigned> compute;
  for (unsigned t = first_; t < end_; ++t) {
    if (slot(t).phase == Phase::Compute) compute.push_back(t);
  }
  pool_->forEach(compute.size(), [&](size_t i) { local(compute[i]).run(bound); });
  for (unsigned t : compute) {
    TileModel& tile = local(t);
    TileSlot& s = slot(t);
    switch (tile.state()) {
      case TileState::Running:
        break;
      case TileState::Arrived:
        s.phase = Phase::Arrived;
        s.arrival = tile.syncIssueCycle() + 3;  // docs/chip.md: a_t = c_t + 3
        break;
      case TileState::Halted:
        s.phase = Phase::Halted;
        break;
      case TileState::Trapped: {
        s.phase = Phase::Trapped;
        const Failure f{tile.cycles() - 1, tile.trap()};
        if (!best || f.cycle < best->cycle ||
            (f.cycle == best->cycle && f.info.tile < best->info.tile)) {
          best = f;
        }
        break;
      }
    }
  }
  return earliest(best);
}

// The earliest failure of every rank (lowest tile on the same cycle), on every rank.
std::optional<ShardedModelDevice::Failure> ShardedModelDevice::earliest(
    const std::optional<Failure>& mine) {
  FailureMsg msg;
  if (mine) {
    msg = FailureMsg{
        mine->cycle,     1, mine->info.tile, mine->info.context, mine->info.pc, mine->info.cause,
        mine->info.value};
  }
  std::optional<Failure> best;
  for (const FailureMsg& m : comm_->allgather(msg)) {
    if (!m.has) continue;
    if (!best || m.cycle < best->cycle || (m.cycle == best->cycle && m.tile < best->info.tile)) {
      best = Failure{m.cycle, TrapInfo{m.tile, m.context, m.pc, m.cause, m.value}};
    }
  }
  return best;
}

// Exchange windows (docs/scale-out.md): LATENCY cycles stepped locally, then the bus words of the
// window go to every rank. A receive at s reads the bus of s - LATENCY, which lies before the
// window's first cycle, so no word is needed before the window that produced it has ended.
std::optional<ShardedModelDevice::Failure> ShardedModelDevice::stepExchange(uint64_t from,
                                                                            uint64_t until) {
  constexpr uint64_t kWindow = TESS_EXCHANGE_LATENCY;
  static_assert(kWindow >= 1 && kWindow < ExchangeEngine::kBusHistory);
  std::vector<uint32_t> words;  // (tile * kWindow + cycle - w, word) of each non-zero bus value
  for (uint64_t w = from; w < until; w += kWindow) {
    const uint64_t wEnd = std::min(until, w + kWindow);
    std::optional<Failure> failure;
    words.clear();
    for (uint64_t s = w; s < wEnd && !failure; ++s) {
      for (unsigned t : members_) {
        uint32_t word = 0;
        TileSlot& sl = slot(t);
        if (sl.phase == Phase::Exchange && !sl.engine.readPhase(s, local(t), numTiles_, word) &&
            !failure) {
          const model::ExchangeFault& fault = sl.engine.fault();
          failure =
              Failure{s, TrapInfo{t, TESS_EXCHANGE_CONTEXT, fault.pc, fault.cause, fault.value}};
        }
        bus_[t][s % ExchangeEngine::kBusHistory] = word;
        if (word != 0) {
          words.push_back(static_cast<uint32_t>(t * kWindow + (s - w)));
          words.push_back(word);
        }
      }
      for (unsigned t : members_) {
        TileSlot& sl = slot(t);
        if (sl.phase != Phase::Exchange) continue;
        sl.engine.writePhase(s, local(t), bus_.data());
        if (sl.engine.done()) {
          const uint64_t x = sl.engine.endCycle();
          sl.exchangeCycles += x - sl.release;
          sl.phase = Phase::Compute;
          local(t).resumeSupervisor(x);
        }
      }
    }
    WindowMsg msg;
    msg.running = std::any_of(members_.begin(), members_.end(),
                              [&](unsigned t) { return slot(t).phase == Phase::Exchange; });
    if (failure) {
      const Failure& f = *failure;
      msg.failure = FailureMsg{f.cycle,      1,           f.info.tile, f.info.context, f.info.pc,
                               f.info.cause, f.info.value};
    }
    msg.words = static_cast<uint32_t>(words.size());
    const std::vector<WindowMsg> states = comm_->allgather(msg);
    std::vector<int> counts;
    for (const WindowMsg& m : states) counts.push_back(static_cast<int>(m.words));
    const std::vector<uint32_t> all = comm_->allgatherv(words, counts);
    // Remote buses: 0 unless a word came (a remote engine drives 0 when it sends nothing).
    for (unsigned t = 0; t < numTiles_; ++t) {
      if (owns(t)) continue;
      for (uint64_t s = w; s < wEnd; ++s) bus_[t][s % ExchangeEngine::kBusHistory] = 0;
    }
    size_t at = 0;
    for (size_t r = 0; r < counts.size(); ++r) {
      const size_t n = static_cast<size_t>(counts[r]);
      if (static_cast<int>(r) != comm_->rank()) {
        for (size_t i = at; i + 1 < at + n; i += 2) {
          const uint32_t t = static_cast<uint32_t>(all[i] / kWindow);
          if (t >= numTiles_ || owns(t)) {
            throw Error(fmt::format("model device: rank {} sent a bus word of tile {}", r, t));
          }
          bus_[t][(w + all[i] % kWindow) % ExchangeEngine::kBusHistory] = all[i + 1];
        }
      }
      at += n;
    }
    std::optional<Failure> best;
    bool running = false;
    for (const WindowMsg& m : states) {
      running = running || m.running != 0;
      if (!m.failure.has) continue;
      if (!best || m.failure.cycle < best->cycle ||
          (m.failure.cycle == best->cycle && m.failure.tile < best->info.tile)) {
        best = Failure{m.failure.cycle, TrapInfo{m.failure.tile, m.failure.context, m.failure.pc,
                                                 m.failure.cause, m.failure.value}};
      }
    }
    if (best) return best;
    if (!running) {
      members_.clear();
      exchanging_ = false;
      break;
    }
  }
  return std::nullopt;
}

RunResult ShardedModelDevice::stopAt(uint64_t cycles, StopReason reason) {
  now_ = cycles;
  for (unsigned t = first_; t < end_; ++t) {
    const Phase p = slot(t).phase;
    if (p == Phase::Compute || p == Phase::Arrived || p == Phase::Exchange) {
      local(t).advanceTo(now_);
    }
  }
  if (reason == StopReason::Halted) state_ = ChipState::Halted;
  lastReason_ = reason;
  uint32_t code = 0;
  if (owns(0) && slot(0).enabled) code = local(0).exitCode();
  comm_->bcast(&code, sizeof code, ownerOf(0));
  exitCode0_ = code;
  return result();
}

RunResult ShardedModelDevice::fail(const Failure& f) {
  error_ = f.info;
  state_ = ChipState::Error;
  return stopAt(f.cycle + 1, StopReason::Trap);
}

RunResult ShardedModelDevice::result() const {
  RunResult r;
  r.reason = lastReason_;
  r.cycles = now_;
  r.exitCode = exitCode0_;
  if (state_ == ChipState::Error) r.trap = error_;
  if (state_ == ChipState::SyncPending) r.hostSyncId = pendingDesc_ & 0xffffu;
  return r;
}

std::string ShardedModelDevice::console(unsigned tile) const {
  checkTile(tile);
  return comm_->bcastString(owns(tile) ? local(tile).console() : std::string(), ownerOf(tile));
}

TileStats ShardedModelDevice::localStats(unsigned tile) const {
  const TileModel& t = local(tile);
  const TileSlot& s = slot(tile);
  if (!s.enabled) {
    TileStats out;
    out.halted = true;  // docs/chip.md: a disabled tile counts as halted with exit code 0
    return out;
  }
  TileStats out = t.stats();
  out.syncWaitCycles = s.syncWait;
  if (s.phase == Phase::Arrived && now_ > s.arrival) out.syncWaitCycles += now_ - s.arrival;
  out.exchangeCycles = s.exchangeCycles;
  if (s.phase == Phase::Exchange) out.exchangeCycles += now_ - s.release;
  out.halted = t.state() == TileState::Halted;
  out.exitCode = out.halted ? t.exitCode() : 0;
  model::wrapCounters(out, geometry_.counterBits);
  return out;
}

ShardedModelDevice::TileView ShardedModelDevice::view(unsigned tile) const {
  checkTile(tile);
  TileView v;
  if (owns(tile)) {
    v.stats = localStats(tile);
    v.enabled = slot(tile).enabled ? 1u : 0u;
    v.arrived = slot(tile).phase == Phase::Arrived ? 1u : 0u;
  }
  comm_->bcast(&v, sizeof v, ownerOf(tile));
  return v;
}

TileStats ShardedModelDevice::stats(unsigned tile) const {
  return view(tile).stats;
}

void ShardedModelDevice::setRetireSink(std::function<void(const RetireRecord&)> sink) {
  if (!sink) return;
  throw Error(
      "model device: the sharded model (--shard) has no retirement trace; run it without --shard");
}

uint32_t ShardedModelDevice::readControl(uint32_t offset) {
  if (auto v = model::readChipRegister(offset, {numTiles_, memBytes_, geometry_.contexts, state_,
                                                pendingDesc_, now_, error_, syncBreak_,
                                                tileSel_})) {
    return *v;
  }
  if (!model::isTileRegister(offset)) {
    throw Error(
        fmt::format("model device: no readable control register at offset 0x{:03x}", offset));
  }
  // The selected tile's registers: its owner answers every rank.
  const TileView v = view(tileSel_);
  return model::readTileRegister(offset, v.stats, v.enabled != 0, v.arrived != 0);
}

void ShardedModelDevice::writeControl(uint32_t offset, uint32_t value) {
  switch (offset) {
    case TESS_CR_CTRL:
      if (value & 1u) reset();
      if ((value & 2u) && state_ == ChipState::Reset) start();
      if ((value & 4u) && state_ == ChipState::SyncPending) {
        release(pendingRelease_, pendingExchange_);
      }
      return;
    case TESS_CR_SYNC_BREAK:
      syncBreak_ = (value & 1u) != 0;
      return;
    case TESS_CR_TILE_SEL:
      if (value >= numTiles_) {
        throw Error(fmt::format("model device: TILE_SEL {} is not a tile (the chip has {} tiles)",
                                value, numTiles_));
      }
      tileSel_ = value;
      return;
    case TESS_CR_T_ENABLE:
      if (state_ != ChipState::Reset) {
        throw Error(fmt::format(
            "model device: T_ENABLE of tile {} can only change after a reset, before the run",
            tileSel_));
      }
      if (owns(tileSel_)) slot(tileSel_).enabled = (value & 1u) != 0;
      return;
    default:
      throw Error(
          fmt::format("model device: no writable control register at offset 0x{:03x}", offset));
  }
}

}  // namespace tessera::shard

namespace tessera {

std::unique_ptr<Device> makeShardedModelDevice(const DeviceOptions& options) {
  return std::make_unique<shard::ShardedModelDevice>(options);
}

}  // namespace tessera
