#include "model_device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "tessera/chip_params.h"

namespace tessera::model {
namespace {

constexpr uint64_t kNoLimit = ~uint64_t{0};

// The chip of the options but for its counter width (chipGeometry).
ChipGeometry presetGeometry(const DeviceOptions& options) {
  if (options.contexts != 0 &&
      (options.contexts < 2 || options.contexts > TileModel::kMaxContexts)) {
    throw Error(fmt::format("model device: {} contexts per tile: must be 2..{}", options.contexts,
                            TileModel::kMaxContexts));
  }
  const std::string preset = options.preset.empty() ? "default" : options.preset;
  if (preset != "default" && preset != "mk2" && preset != "ice40") {
    throw Error(fmt::format(
        "model device: unknown preset \"{}\" (valid: \"default\", \"mk2\", \"ice40\")",
        options.preset));
  }
  ChipGeometry g;
  static_cast<ChipShape&>(g) = ChipShape::preset(preset);
  if (preset == "mk2") {
    if (options.tileMemBytes != 0 && options.tileMemBytes != g.tileMemBytes) {
      throw Error(fmt::format("model device: preset mk2 has {} bytes per tile, not {}",
                              g.tileMemBytes, options.tileMemBytes));
    }
  } else if (preset == "ice40") {
    // The board's exact configuration, from the same source as its RTL top.
    if ((options.tiles != 0 && options.tiles != g.tiles) ||
        (options.tileMemBytes != 0 && options.tileMemBytes != g.tileMemBytes) ||
        (options.contexts != 0 && options.contexts != g.contexts)) {
      throw Error(fmt::format(
          "model device: preset ice40 has {} tile(s) of {} bytes and {} contexts, not {} tile(s) "
          "of {} bytes and {} contexts",
          g.tiles, g.tileMemBytes, g.contexts, options.tiles, options.tileMemBytes,
          options.contexts));
    }
  } else {
    if (options.tiles != 0) g.tiles = options.tiles;
    if (options.tileMemBytes != 0) g.tileMemBytes = options.tileMemBytes;
  }
  if (options.contexts != 0) g.contexts = options.contexts;
  g.hasFpu = g.hasFpu && !options.noFpu;
  g.hasMulDiv = g.hasMulDiv && !options.noMulDiv;
  return g;
}

}  // namespace

ChipGeometry chipGeometry(const DeviceOptions& options) {
  ChipGeometry g = presetGeometry(options);
  // rtl/params.json COUNTER_BITS, the iCE40 board's for its preset; DeviceOptions::counterBits
  // sets another on any other chip.
  const unsigned chip = g.counterBits;
  const unsigned bits = options.counterBits ? options.counterBits : chip;
  if (bits != 32 && bits != 64) {
    throw Error(fmt::format("model device: counters of {} bits: must be 32 or 64", bits));
  }
  if (options.preset == "ice40" && bits != chip) {
    throw Error(fmt::format("model device: preset ice40 has {}-bit counters, not {}", chip, bits));
  }
  g.counterBits = bits;
  return g;
}

namespace {

unsigned threadsFor(unsigned requested, unsigned tiles) {
  const unsigned n = requested ? requested : std::max(1u, std::thread::hardware_concurrency());
  return std::min(n, tiles);
}

uint64_t withLo(uint64_t v, uint32_t w) { return (v & ~uint64_t{0xffffffffu}) | w; }
uint64_t withHi(uint64_t v, uint32_t w) { return (v & 0xffffffffu) | uint64_t{w} << 32; }
constexpr unsigned kRegs = 64;  // REG_SEL: x0..x31, f0..f31

// Names of the registers a chip without checkpoints (HAS_CHECKPOINT = 0) refuses.
const char* checkpointRegisterName(uint32_t offset) {
  switch (offset) {
    case TESS_CR_CYCLE_LO: return "CYCLE_LO";
    case TESS_CR_CYCLE_HI: return "CYCLE_HI";
    case TESS_CR_T_IDLE_LO: return "T_IDLE_LO";
    case TESS_CR_T_IDLE_HI: return "T_IDLE_HI";
    case TESS_CR_T_SYNCWAIT_LO: return "T_SYNCWAIT_LO";
    case TESS_CR_T_SYNCWAIT_HI: return "T_SYNCWAIT_HI";
    case TESS_CR_T_EXCH_LO: return "T_EXCH_LO";
    case TESS_CR_T_EXCH_HI: return "T_EXCH_HI";
    case TESS_CR_CTX_SEL: return "CTX_SEL";
    case TESS_CR_REG_SEL: return "REG_SEL";
    case TESS_CR_C_REG: return "C_REG";
    case TESS_CR_C_PC: return "C_PC";
    case TESS_CR_C_FCSR: return "C_FCSR";
    case TESS_CR_C_INSTRET_LO: return "C_INSTRET_LO";
    case TESS_CR_C_INSTRET_HI: return "C_INSTRET_HI";
    case TESS_CR_C_STATE: return "C_STATE";
    case TESS_CR_T_RUN_ARG: return "T_RUN_ARG";
    case TESS_CR_T_XCHG_PROG: return "T_XCHG_PROG";
    default: return nullptr;
  }
}

// The checkpoint registers proper (REG_SEL .. T_XCHG_PROG), refused in both directions. CTX_SEL
// and reading C_INSTRET stay on a chip without checkpoints: they are how a host (the UART bridge's
// STATS) reads a context's instruction count.
bool isCheckpointRegister(uint32_t offset) {
  return offset > TESS_CR_CTX_SEL && offset <= TESS_CR_T_XCHG_PROG &&
         offset != TESS_CR_C_INSTRET_LO && offset != TESS_CR_C_INSTRET_HI &&
         checkpointRegisterName(offset) != nullptr;
}

}  // namespace

ModelDevice::ModelDevice(const DeviceOptions& options) {
  if (!options.traceVcd.empty()) {
    throw Error(
        "model device: --trace-vcd / traceVcd needs the rtl device (the model has no waveforms)");
  }
  const ChipGeometry g = chipGeometry(options);
  geometry_ = g;
  memBytes_ = g.tileMemBytes;
  hasExchange_ = g.hasExchange;
  hasCheckpoint_ = g.hasCheckpoint;
  tiles_.reserve(g.tiles);
  for (unsigned t = 0; t < g.tiles; ++t) {
    tiles_.emplace_back(g.tileConfig(t));
  }
  slots_.resize(g.tiles);
  records_.resize(g.tiles);
  bus_.resize(g.tiles);
  pool_ = std::make_unique<WorkerPool>(threadsFor(options.threads, g.tiles));
  reset();
}

ChipInfo ModelDevice::info() const { return geometry_.chipInfo(); }

void ModelDevice::reset() {
  for (TileModel& t : tiles_) t.reset();
  for (TileSlot& s : slots_) s = TileSlot{};
  for (auto& r : records_) r.list.clear();
  for (auto& b : bus_) b.fill(0);
  members_.clear();
  state_ = ChipState::Reset;
  now_ = 0;
  pendingRelease_ = 0;
  pendingDesc_ = 0;
  syncBreak_ = false;
  tileSel_ = 0;
  ctxSel_ = 0;
  regSel_ = 0;
  error_ = TrapInfo{};
  lastReason_ = StopReason::MaxCycles;
  routeRecords();
}

TileModel& ModelDevice::tile(unsigned index) {
  return const_cast<TileModel&>(checkedTile(index));
}

const TileModel& ModelDevice::checkedTile(unsigned index) const {
  if (index >= tiles_.size()) {
    throw Error(fmt::format("model device: tile {} does not exist (the chip has {} tiles)", index,
                            tiles_.size()));
  }
  return tiles_[index];
}

void ModelDevice::writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) {
  this->tile(tile).writeMemory(addr, data);
}

void ModelDevice::readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) {
  checkedTile(tile).readMemory(addr, data);
}

void ModelDevice::start() {
  for (TileSlot& s : slots_) s.phase = s.enabled ? Phase::Compute : Phase::Disabled;
  state_ = ChipState::Running;
}

bool ModelDevice::anyActive() const {
  return std::any_of(slots_.begin(), slots_.end(), [](const TileSlot& s) {
    return s.phase == Phase::Compute || s.phase == Phase::Exchange;
  });
}

void ModelDevice::release(uint64_t releaseCycle) {
  for (auto& b : bus_) b.fill(0);
  members_.clear();
  for (unsigned t = 0; t < tiles_.size(); ++t) {
    TileSlot& slot = slots_[t];
    if (slot.phase != Phase::Arrived) continue;
    slot.syncWait += releaseCycle - slot.arrival;
    const uint32_t prog = tiles_[t].exchangeProgram();
    tiles_[t].clearExchangeProgram();
    if (prog != 0) {
      slot.phase = Phase::Exchange;
      slot.release = releaseCycle;
      // Without engines the release is an error at R (ExchangeEngine::startAbsent).
      if (hasExchange_) {
        slot.engine.start(prog, releaseCycle);
      } else {
        slot.engine.startAbsent(prog, releaseCycle);
      }
      members_.push_back(t);
    } else {
      slot.phase = Phase::Compute;
      tiles_[t].resumeSupervisor(releaseCycle);
    }
  }
  now_ = releaseCycle;
  state_ = ChipState::Running;
}

RunResult ModelDevice::run(uint64_t maxCycles) {
  if (state_ == ChipState::Halted || state_ == ChipState::Error) return result();
  if (state_ == ChipState::Reset) start();
  if (state_ == ChipState::SyncPending) release(pendingRelease_);
  const uint64_t limit = maxCycles > kNoLimit - now_ ? kNoLimit : now_ + maxCycles;
  for (;;) {
    if (!anyActive()) {
      // The sync controller: every enabled tile has arrived at a sync or halted.
      const unsigned none = static_cast<unsigned>(tiles_.size());
      unsigned firstArrived = none, firstHalted = none;
      uint64_t lastArrival = 0, haltEnd = 0;
      for (unsigned t = 0; t < tiles_.size(); ++t) {
        if (slots_[t].phase == Phase::Arrived) {
          firstArrived = std::min(firstArrived, t);
          lastArrival = std::max(lastArrival, slots_[t].arrival);
        } else if (slots_[t].phase == Phase::Halted) {
          firstHalted = std::min(firstHalted, t);
          haltEnd = std::max(haltEnd, tiles_[t].cycles());  // h + 1
        }
      }
      if (firstArrived == none) return stopAt(haltEnd, StopReason::Halted);
      if (firstHalted != none) {
        // Detected when every tile has arrived or halted: max of a_t and h_t + 1.
        const uint64_t e = std::max(lastArrival, haltEnd);
        if (e >= limit) return stopAt(limit, StopReason::MaxCycles);
        return fail(Failure{e, TrapInfo{firstArrived, 0, tiles_[firstArrived].syncPc(),
                                        TESS_CAUSE_SYNC_HALTED, firstHalted}});
      }
      if (lastArrival >= limit) return stopAt(limit, StopReason::MaxCycles);
      const uint32_t desc = tiles_[firstArrived].syncDescriptor();
      for (unsigned t = firstArrived + 1; t < tiles_.size(); ++t) {
        if (slots_[t].phase == Phase::Arrived && tiles_[t].syncDescriptor() != desc) {
          return fail(Failure{lastArrival, TrapInfo{t, 0, tiles_[t].syncPc(),
                                                    TESS_CAUSE_SYNC_MISMATCH,
                                                    tiles_[t].syncDescriptor()}});
        }
      }
      const uint64_t releaseCycle = lastArrival + TESS_SYNC_LATENCY;
      if (releaseCycle > limit) return stopAt(limit, StopReason::MaxCycles);
      const bool host = (desc & TESS_SYNC_HOST_BIT) != 0;
      if (host || syncBreak_) {
        // Nothing runs until the host releases; the chip stands at cycle R.
        state_ = ChipState::SyncPending;
        pendingRelease_ = releaseCycle;
        pendingDesc_ = desc;
        return stopAt(releaseCycle, host ? StopReason::HostSync : StopReason::SyncBreak);
      }
      release(releaseCycle);
      continue;
    }
    if (now_ >= limit) return stopAt(limit, StopReason::MaxCycles);
    const uint64_t until = std::min(limit, now_ + std::min(kChunkCycles, limit - now_));
    if (const std::optional<Failure> f = runChunk(now_, until)) return fail(*f);
    now_ = until;
  }
}

std::optional<ModelDevice::Failure> ModelDevice::runChunk(uint64_t from, uint64_t until) {
  std::vector<unsigned> active;
  for (unsigned t = 0; t < tiles_.size(); ++t) {
    if (slots_[t].phase == Phase::Compute || slots_[t].phase == Phase::Exchange) {
      active.push_back(t);
    }
  }
  // A single unit cannot overrun anyone; with more, a failure at e needs a rollback.
  const bool guard = active.size() > 1;
  Checkpoint cp;
  if (guard) {
    cp.slots = slots_;
    cp.bus = bus_;
    cp.members = members_;
    cp.recordCounts.reserve(records_.size());
    for (const auto& r : records_) cp.recordCounts.push_back(r.list.size());
    pool_->forEach(active.size(), [&](size_t i) { tiles_[active[i]].checkpoint(); });
  }
  std::optional<Failure> failure = attempt(from, until);
  if (guard) {
    if (failure) {
      pool_->forEach(active.size(), [&](size_t i) { tiles_[active[i]].rollback(); });
      slots_ = std::move(cp.slots);
      bus_ = std::move(cp.bus);
      members_ = std::move(cp.members);
      for (size_t t = 0; t < records_.size(); ++t) records_[t].list.resize(cp.recordCounts[t]);
      const uint64_t at = failure->cycle;
      failure = attempt(from, at + 1);
      if (!failure || failure->cycle != at) {
        throw Error(fmt::format("model device: internal error: the run from cycle {} did not "
                                "repeat its failure at cycle {}",
                                from, at));
      }
    } else {
      pool_->forEach(active.size(), [&](size_t i) { tiles_[active[i]].commit(); });
    }
  }
  flushRecords();
  return failure;
}

std::optional<ModelDevice::Failure> ModelDevice::attempt(uint64_t from, uint64_t until) {
  std::optional<Failure> best;
  if (!members_.empty()) best = stepExchange(from, until);
  const uint64_t bound = best ? best->cycle + 1 : until;
  std::vector<unsigned> compute;
  for (unsigned t = 0; t < tiles_.size(); ++t) {
    if (slots_[t].phase == Phase::Compute) compute.push_back(t);
  }
  pool_->forEach(compute.size(), [&](size_t i) { tiles_[compute[i]].run(bound); });
  for (unsigned t : compute) {
    TileModel& tile = tiles_[t];
    TileSlot& slot = slots_[t];
    switch (tile.state()) {
      case TileState::Running:
        break;
      case TileState::Arrived:
        slot.phase = Phase::Arrived;
        slot.arrival = tile.syncIssueCycle() + 3;  // docs/chip.md: a_t = c_t + 3
        break;
      case TileState::Halted:
        slot.phase = Phase::Halted;
        break;
      case TileState::Trapped: {
        slot.phase = Phase::Trapped;
        const Failure f{tile.cycles() - 1, tile.trap()};
        // The earliest failure wins; on the same cycle, the lowest-numbered tile.
        if (!best || f.cycle < best->cycle ||
            (f.cycle == best->cycle && f.info.tile < best->info.tile)) {
          best = f;
        }
        break;
      }
    }
  }
  return best;
}

std::optional<ModelDevice::Failure> ModelDevice::stepExchange(uint64_t from, uint64_t until) {
  const unsigned numTiles = static_cast<unsigned>(tiles_.size());
  for (uint64_t s = from; s < until; ++s) {
    const bool running = std::any_of(members_.begin(), members_.end(), [&](unsigned t) {
      return slots_[t].phase == Phase::Exchange;
    });
    if (!running) {
      members_.clear();
      break;
    }
    std::optional<Failure> failure;
    // First half of s: every engine reads (memory as at the start of s) and drives its bus.
    for (unsigned t : members_) {
      uint32_t word = 0;
      if (slots_[t].phase == Phase::Exchange &&
          !slots_[t].engine.readPhase(s, tiles_[t], numTiles, word) && !failure) {
        const ExchangeFault& fault = slots_[t].engine.fault();
        failure = Failure{s, TrapInfo{t, TESS_EXCHANGE_CONTEXT, fault.pc, fault.cause,
                                      fault.value}};
      }
      bus_[t][s % ExchangeEngine::kBusHistory] = word;
    }
    // Second half: receives are written at the end of s; finished engines hand back the tile.
    for (unsigned t : members_) {
      TileSlot& slot = slots_[t];
      if (slot.phase != Phase::Exchange) continue;
      slot.engine.writePhase(s, tiles_[t], bus_.data());
      if (slot.engine.done()) {
        const uint64_t x = slot.engine.endCycle();
        slot.exchangeCycles += x - slot.release;
        slot.phase = Phase::Compute;
        tiles_[t].resumeSupervisor(x);
      }
    }
    if (failure) return failure;
  }
  return std::nullopt;
}

RunResult ModelDevice::stopAt(uint64_t cycles, StopReason reason) {
  now_ = cycles;
  for (unsigned t = 0; t < tiles_.size(); ++t) {
    const Phase p = slots_[t].phase;
    if (p == Phase::Compute || p == Phase::Arrived || p == Phase::Exchange) {
      tiles_[t].advanceTo(now_);
    }
  }
  if (reason == StopReason::Halted) state_ = ChipState::Halted;
  lastReason_ = reason;
  return result();
}

RunResult ModelDevice::fail(const Failure& f) {
  error_ = f.info;
  state_ = ChipState::Error;
  return stopAt(f.cycle + 1, StopReason::Trap);
}

RunResult ModelDevice::result() const {
  RunResult r;
  r.reason = lastReason_;
  r.cycles = now_;
  r.exitCode = slots_[0].enabled ? tiles_[0].exitCode() : 0;
  if (state_ == ChipState::Error) r.trap = error_;
  if (state_ == ChipState::SyncPending) r.hostSyncId = pendingDesc_ & 0xffffu;
  return r;
}

void ModelDevice::routeRecords() {
  for (unsigned t = 0; t < tiles_.size(); ++t) {
    if (sink_) {
      tiles_[t].setRetireSink([this, t](const RetireRecord& r) { records_[t].list.push_back(r); });
    } else {
      tiles_[t].setRetireSink({});
    }
  }
}

void ModelDevice::flushRecords() {
  if (!sink_) return;
  for (auto& records : records_) {
    for (const RetireRecord& r : records.list) sink_(r);
    records.list.clear();
  }
}

std::string ModelDevice::console(unsigned tile) const {
  return checkedTile(tile).console();
}

TileStats ModelDevice::stats(unsigned tile) const {
  const TileModel& t = checkedTile(tile);
  const TileSlot& slot = slots_[tile];
  if (!slot.enabled) {
    TileStats s;
    s.halted = true;  // docs/chip.md: a disabled tile counts as halted with exit code 0
    return s;
  }
  TileStats s = t.stats();
  s.syncWaitCycles = slot.syncWait;
  if (slot.phase == Phase::Arrived && now_ > slot.arrival) s.syncWaitCycles += now_ - slot.arrival;
  s.exchangeCycles = slot.exchangeCycles;
  if (slot.phase == Phase::Exchange) s.exchangeCycles += now_ - slot.release;
  s.halted = t.state() == TileState::Halted;
  s.exitCode = s.halted ? t.exitCode() : 0;
  wrapCounters(s, geometry_.counterBits);
  return s;
}

void ModelDevice::setRetireSink(std::function<void(const RetireRecord&)> sink) {
  sink_ = std::move(sink);
  routeRecords();
}

uint32_t ModelDevice::readControl(uint32_t offset) {
  if (isCheckpointRegister(offset)) checkCheckpointRegister(offset, "read");
  if (auto v = readChipRegister(offset, {static_cast<unsigned>(tiles_.size()), memBytes_,
                                          geometry_.contexts, state_, pendingDesc_, now_, error_,
                                          syncBreak_, tileSel_})) {
    return *v;
  }
  const TileStats sel = stats(tileSel_);
  const TileSlot& slot = slots_[tileSel_];
  if (isTileRegister(offset)) {
    return readTileRegister(offset, sel, slot.enabled, slot.phase == Phase::Arrived);
  }
  switch (offset) {
    case TESS_CR_CTX_SEL:
      return ctxSel_;
    case TESS_CR_REG_SEL:
      return regSel_;
    case TESS_CR_C_REG:
      if (!slot.enabled) return 0;
      return regSel_ < 32 ? tiles_[tileSel_].xreg(ctxSel_, regSel_)
                          : tiles_[tileSel_].freg(ctxSel_, regSel_ - 32);
    case TESS_CR_C_PC:
      return slot.enabled ? tiles_[tileSel_].pc(ctxSel_) : 0;
    case TESS_CR_C_FCSR:
      return slot.enabled ? tiles_[tileSel_].fcsr(ctxSel_) : 0;
    case TESS_CR_C_INSTRET_LO:
      return lo(sel.contextInstructions[ctxSel_]);
    case TESS_CR_C_INSTRET_HI:
      return hi(sel.contextInstructions[ctxSel_]);
    case TESS_CR_C_STATE:
      return slot.enabled ? tiles_[tileSel_].contextState(ctxSel_) : 0;
    case TESS_CR_T_RUN_ARG:
      return slot.enabled ? tiles_[tileSel_].runArg() : 0;
    case TESS_CR_T_XCHG_PROG:
      return slot.enabled ? tiles_[tileSel_].exchangeProgram() : 0;
    default:
      throw Error(fmt::format("model device: no readable control register at offset 0x{:03x}",
                              offset));
  }
}

void ModelDevice::writeControl(uint32_t offset, uint32_t value) {
  switch (offset) {
    case TESS_CR_CTRL:
      if (value & 1u) reset();
      if ((value & 2u) && state_ == ChipState::Reset) start();
      if ((value & 4u) && state_ == ChipState::SyncPending) release(pendingRelease_);
      return;
    case TESS_CR_SYNC_BREAK:
      syncBreak_ = (value & 1u) != 0;
      return;
    case TESS_CR_TILE_SEL:
      if (value >= tiles_.size()) {
        throw Error(fmt::format("model device: TILE_SEL {} is not a tile (the chip has {} tiles)",
                                value, tiles_.size()));
      }
      tileSel_ = value;
      return;
    case TESS_CR_T_ENABLE:
      if (state_ != ChipState::Reset) {
        throw Error(fmt::format(
            "model device: T_ENABLE of tile {} can only change after a reset, before the run",
            tileSel_));
      }
      slots_[tileSel_].enabled = (value & 1u) != 0;
      return;
    case TESS_CR_CTX_SEL:
      if (value >= geometry_.contexts) {
        throw Error(fmt::format("model device: CTX_SEL {} is not a context (a tile has {})",
                                value, geometry_.contexts));
      }
      ctxSel_ = value;
      return;
    case TESS_CR_REG_SEL:
      checkCheckpointRegister(offset, "written");
      if (value >= kRegs) {
        throw Error(fmt::format("model device: REG_SEL {} is not a register (0..63)", value));
      }
      regSel_ = value;
      return;
    case TESS_CR_CYCLE_LO:
    case TESS_CR_CYCLE_HI:
      checkStateWrite(offset, false);
      writeCycle(offset == TESS_CR_CYCLE_LO ? withLo(now_, value) : withHi(now_, value));
      return;
    default:
      break;
  }
  // Per-tile and per-context state (docs/checkpoint.md): only at a sync stop, enabled tiles.
  checkStateWrite(offset, true);
  TileModel& tile = tiles_[tileSel_];
  TileSlot& slot = slots_[tileSel_];
  const TileStats sel = stats(tileSel_);
  switch (offset) {
    case TESS_CR_C_REG:
      if (regSel_ < 32) {
        tile.setXreg(ctxSel_, regSel_, value);
      } else {
        tile.setFreg(ctxSel_, regSel_ - 32, value);
      }
      return;
    case TESS_CR_C_PC:
      tile.setPc(ctxSel_, value);
      return;
    case TESS_CR_C_FCSR:
      tile.setFcsr(ctxSel_, value);
      return;
    case TESS_CR_C_INSTRET_LO:
      tile.setInstret(ctxSel_, withLo(tile.instret(ctxSel_), value));
      return;
    case TESS_CR_C_INSTRET_HI:
      tile.setInstret(ctxSel_, withHi(tile.instret(ctxSel_), value));
      return;
    case TESS_CR_T_RUN_ARG:
      tile.setRunArg(value);
      return;
    case TESS_CR_T_XCHG_PROG:
      tile.setExchangeProgram(value);
      return;
    case TESS_CR_T_IDLE_LO:
      tile.setIdleSlots(withLo(sel.idleSlots, value));
      return;
    case TESS_CR_T_IDLE_HI:
      tile.setIdleSlots(withHi(sel.idleSlots, value));
      return;
    case TESS_CR_T_SYNCWAIT_LO:
    case TESS_CR_T_SYNCWAIT_HI: {
      const uint64_t v = offset == TESS_CR_T_SYNCWAIT_LO ? withLo(sel.syncWaitCycles, value)
                                                         : withHi(sel.syncWaitCycles, value);
      // The register reads syncWait + (now - arrival) while the tile stands at the sync.
      slot.syncWait = v - (sel.syncWaitCycles - slot.syncWait);
      return;
    }
    case TESS_CR_T_EXCH_LO:
      slot.exchangeCycles = withLo(sel.exchangeCycles, value);
      return;
    case TESS_CR_T_EXCH_HI:
      slot.exchangeCycles = withHi(sel.exchangeCycles, value);
      return;
    default:
      throw Error(fmt::format("model device: no writable control register at offset 0x{:03x}",
                              offset));
  }
}

void ModelDevice::checkStateWrite(uint32_t offset, bool tileLevel) const {
  switch (offset) {
    case TESS_CR_CYCLE_LO: case TESS_CR_CYCLE_HI: case TESS_CR_C_REG: case TESS_CR_C_PC:
    case TESS_CR_C_FCSR: case TESS_CR_C_INSTRET_LO: case TESS_CR_C_INSTRET_HI:
    case TESS_CR_T_RUN_ARG: case TESS_CR_T_XCHG_PROG: case TESS_CR_T_IDLE_LO:
    case TESS_CR_T_IDLE_HI: case TESS_CR_T_SYNCWAIT_LO: case TESS_CR_T_SYNCWAIT_HI:
    case TESS_CR_T_EXCH_LO: case TESS_CR_T_EXCH_HI:
      break;
    default:
      throw Error(fmt::format("model device: no writable control register at offset 0x{:03x}",
                              offset));
  }
  checkCheckpointRegister(offset, "written");
  if (state_ != ChipState::SyncPending) {
    throw Error(fmt::format("model device: control register 0x{:03x} can only be written while "
                            "the chip is stopped at a sync",
                            offset));
  }
  if (tileLevel && !slots_[tileSel_].enabled) {
    throw Error(fmt::format("model device: control register 0x{:03x} of tile {}: the tile is "
                            "disabled",
                            offset, tileSel_));
  }
}

void ModelDevice::checkCheckpointRegister(uint32_t offset, const char* access) const {
  if (hasCheckpoint_) return;
  const char* name = checkpointRegisterName(offset);
  throw Error(fmt::format("model device: control register 0x{:03x} ({}) cannot be {}: this chip "
                          "has no checkpoint support (HAS_CHECKPOINT = 0, preset ice40)",
                          offset, name ? name : "?", access));
}

void ModelDevice::writeCycle(uint64_t cycle) {
  // Every other register keeps its value: the sync wait so far is folded into the counter.
  for (unsigned t = 0; t < tiles_.size(); ++t) {
    TileSlot& slot = slots_[t];
    if (!slot.enabled) continue;
    if (slot.phase == Phase::Arrived) {
      if (now_ > slot.arrival) slot.syncWait += now_ - slot.arrival;
      slot.arrival = cycle;
    }
    tiles_[t].rebaseCycles(cycle);
  }
  now_ = cycle;
  pendingRelease_ = cycle;
}

}  // namespace tessera::model

namespace tessera {

std::unique_ptr<Device> makeModelDevice(const DeviceOptions& options) {
  return std::make_unique<model::ModelDevice>(options);
}

}  // namespace tessera
