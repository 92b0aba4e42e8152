#include "model_device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>

#include "tessera/chip_params.h"
#include "tessera/model_jit.hpp"

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
    throw Error(
        fmt::format("model device: unknown preset \"{}\" (valid: \"default\", \"mk2\", \"ice40\")",
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
  if (options.matrixUnit) {
    if (*options.matrixUnit && !g.hasFpu) {
      throw Error(
          "model device: the matrix unit needs the FPU (AMP.RD writes an f-register; docs/tile.md, "
          "\"Matrix unit\"): not with an integer-only tile");
    }
    g.hasMatrixUnit = *options.matrixUnit;
  }
  // A chip whose configuration has the unit loses it with the FPU (noFpu, as the ice40 preset).
  g.hasMatrixUnit = g.hasMatrixUnit && g.hasFpu;
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

uint64_t withLo(uint64_t v, uint32_t w) {
  return (v & ~uint64_t{0xffffffffu}) | w;
}
uint64_t withHi(uint64_t v, uint32_t w) {
  return (v & 0xffffffffu) | uint64_t{w} << 32;
}
constexpr unsigned kRegs = 64;  // REG_SEL: x0..x31, f0..f31, then the matrix unit's state

// REG_SEL of the matrix unit's state (docs/checkpoint.md): the weights, the context's
// accumulators, the context's generator, row strides and row limit.
static_assert(TESS_REG_SEL_AMP_W == kRegs &&
              TESS_REG_SEL_AMP_ACC ==
                  TESS_REG_SEL_AMP_W + TESS_AMP_BANKS * TESS_AMP_ROWS * TESS_AMP_COLS &&
              TESS_REG_SEL_AMP_SR == TESS_REG_SEL_AMP_ACC + TESS_AMP_ACC_ROWS * TESS_AMP_COLS &&
              TESS_REG_SEL_AMP_STRIDE_S == TESS_REG_SEL_AMP_SR + 1 &&
              TESS_REG_SEL_AMP_STRIDE_C == TESS_REG_SEL_AMP_SR + 2 &&
              TESS_REG_SEL_AMP_ROWS == TESS_REG_SEL_AMP_SR + 3 &&
              TESS_REG_SEL_AMP_END == TESS_REG_SEL_AMP_SR + 4);

uint32_t readUnitRegister(const TileModel& tile, unsigned ctx, unsigned sel) {
  if (sel < TESS_REG_SEL_AMP_ACC) {
    const unsigned i = sel - TESS_REG_SEL_AMP_W;
    return tile.weight(i / (TESS_AMP_ROWS * TESS_AMP_COLS), i / TESS_AMP_COLS % TESS_AMP_ROWS,
                       i % TESS_AMP_COLS);
  }
  if (sel < TESS_REG_SEL_AMP_SR) {
    const unsigned i = sel - TESS_REG_SEL_AMP_ACC;
    return tile.accumulator(ctx, i / TESS_AMP_COLS, i % TESS_AMP_COLS);
  }
  switch (sel) {
    case TESS_REG_SEL_AMP_SR:
      return tile.srState(ctx);
    case TESS_REG_SEL_AMP_STRIDE_S:
      return tile.strideS(ctx);
    case TESS_REG_SEL_AMP_STRIDE_C:
      return tile.strideC(ctx);
    default:
      return tile.rowLimit(ctx);
  }
}

void writeUnitRegister(TileModel& tile, unsigned ctx, unsigned sel, uint32_t v) {
  if (sel < TESS_REG_SEL_AMP_ACC) {
    const unsigned i = sel - TESS_REG_SEL_AMP_W;
    tile.setWeight(i / (TESS_AMP_ROWS * TESS_AMP_COLS), i / TESS_AMP_COLS % TESS_AMP_ROWS,
                   i % TESS_AMP_COLS, v);
  } else if (sel < TESS_REG_SEL_AMP_SR) {
    const unsigned i = sel - TESS_REG_SEL_AMP_ACC;
    tile.setAccumulator(ctx, i / TESS_AMP_COLS, i % TESS_AMP_COLS, v);
  } else if (sel == TESS_REG_SEL_AMP_SR) {
    tile.setSrState(ctx, v);
  } else if (sel == TESS_REG_SEL_AMP_STRIDE_S) {
    tile.setStrideS(ctx, v);
  } else if (sel == TESS_REG_SEL_AMP_STRIDE_C) {
    tile.setStrideC(ctx, v);
  } else {
    tile.setRowLimit(ctx, v);
  }
}

// Names of the registers a chip without checkpoints (HAS_CHECKPOINT = 0) refuses.
const char* checkpointRegisterName(uint32_t offset) {
  switch (offset) {
    case TESS_CR_CYCLE_LO:
      return "CYCLE_LO";
    case TESS_CR_CYCLE_HI:
      return "CYCLE_HI";
    case TESS_CR_T_IDLE_LO:
      return "T_IDLE_LO";
    case TESS_CR_T_IDLE_HI:
      return "T_IDLE_HI";
    case TESS_CR_T_SYNCWAIT_LO:
      return "T_SYNCWAIT_LO";
    case TESS_CR_T_SYNCWAIT_HI:
      return "T_SYNCWAIT_HI";
    case TESS_CR_T_EXCH_LO:
      return "T_EXCH_LO";
    case TESS_CR_T_EXCH_HI:
      return "T_EXCH_HI";
    case TESS_CR_CTX_SEL:
      return "CTX_SEL";
    case TESS_CR_REG_SEL:
      return "REG_SEL";
    case TESS_CR_C_REG:
      return "C_REG";
    case TESS_CR_C_PC:
      return "C_PC";
    case TESS_CR_C_FCSR:
      return "C_FCSR";
    case TESS_CR_C_INSTRET_LO:
      return "C_INSTRET_LO";
    case TESS_CR_C_INSTRET_HI:
      return "C_INSTRET_HI";
    case TESS_CR_C_STATE:
      return "C_STATE";
    case TESS_CR_T_RUN_ARG:
      return "T_RUN_ARG";
    case TESS_CR_T_XCHG_PROG:
      return "T_XCHG_PROG";
    default:
      return nullptr;
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

ModelDevice::ModelDevice(const DeviceOptions& options)
    : ModelDevice(options, std::make_unique<LocalFabric>()) {}

ModelDevice::ModelDevice(const DeviceOptions& options, std::unique_ptr<ChipFabric> fabric)
    : fabric_(std::move(fabric)) {
  if (!options.traceVcd.empty()) {
    throw Error(
        "model device: --trace-vcd / traceVcd needs the rtl device (the model has no waveforms)");
  }
  const ChipGeometry g = chipGeometry(options);
  geometry_ = g;
  const TileRange range = blockOfRank(fabric_->rank(), fabric_->ranks(), g.tiles);
  std::vector<TileConfig> configs;
  configs.reserve(range.end - range.first);
  jit_ = (options.modelEngine == ModelEngine::Default ? defaultModelEngine()
                                                      : options.modelEngine) == ModelEngine::Jit;
  for (unsigned t = range.first; t < range.end; ++t) {
    configs.push_back(g.tileConfig(t));
    configs.back().jit = jit_;
  }
  const unsigned threads = threadsFor(options.threads, std::max(1u, range.end - range.first));
  block_ = std::make_unique<TileBlock>(std::move(configs), range, g.tiles, g.hasExchange, threads,
                                       *fabric_);
  enabled_.assign(g.tiles, 1);
  reset();
}

ModelDevice::~ModelDevice() {
  if (jit_ && std::getenv("TESSERA_JIT_STOPS") != nullptr) {
    std::fputs(("model jit: " + formatJitStatistics(modelJitStatistics(*this)) + "\n").c_str(),
               stderr);
  }
}

ChipInfo ModelDevice::info() const {
  return geometry_.chipInfo();
}

void ModelDevice::reset() {
  block_->reset();
  std::fill(enabled_.begin(), enabled_.end(), uint8_t{1});
  state_ = ChipState::Reset;
  now_ = 0;
  pendingRelease_ = 0;
  pendingDesc_ = 0;
  pendingExchange_ = false;
  syncBreak_ = false;
  tileSel_ = 0;
  ctxSel_ = 0;
  regSel_ = 0;
  error_ = TrapInfo{};
  exitCode0_ = 0;
  lastReason_ = StopReason::MaxCycles;
  supersteps_ = 0;
}

TileModel& ModelDevice::tile(unsigned index) {
  checkTile(index);
  if (!block_->owns(index)) {
    throw Error(fmt::format("model device: tile {} is simulated by rank {}, not this rank {}",
                            index, ownerOf(index), fabric_->rank()));
  }
  return block_->tile(index);
}

void ModelDevice::checkTile(unsigned tile) const {
  if (tile >= enabled_.size()) {
    throw Error(fmt::format("model device: tile {} does not exist (the chip has {} tiles)", tile,
                            enabled_.size()));
  }
}

// Every rank checks, so that every rank throws the same error (TileModel's words).
void ModelDevice::checkRange(unsigned tile, uint32_t addr, size_t bytes, const char* what) const {
  checkTile(tile);
  if (uint64_t{addr} + bytes > geometry_.tileMemBytes) {
    throw Error(
        fmt::format("tile {}: {} of {} bytes at 0x{:08x} is outside tile memory of {} bytes", tile,
                    what, bytes, addr, geometry_.tileMemBytes));
  }
}

unsigned ModelDevice::ownerOf(unsigned tile) const {
  return ownerRank(tile, fabric_->ranks(), geometry_.tiles);
}

void ModelDevice::writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) {
  checkRange(tile, addr, data.size(), "write");
  if (block_->owns(tile)) block_->tile(tile).writeMemory(addr, data);
}

void ModelDevice::readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) {
  checkRange(tile, addr, data.size(), "read");
  if (block_->owns(tile)) block_->tile(tile).readMemory(addr, data);
  if (!data.empty()) fabric_->fromOwner(data.data(), data.size(), ownerOf(tile));
}

void ModelDevice::start() {
  block_->start();
  state_ = ChipState::Running;
}

void ModelDevice::release(uint64_t releaseCycle, bool exchanging) {
  block_->release(releaseCycle, exchanging);
  now_ = releaseCycle;
  state_ = ChipState::Running;
  ++supersteps_;
}

RunResult ModelDevice::run(uint64_t maxCycles) {
  try {
    return runLoop(maxCycles);
  } catch (const std::exception& e) {
    // A sharded chip ends the job here: the other ranks would wait in a collective.
    fabric_->runFailed(e);
    throw;
  }
}

RunResult ModelDevice::runLoop(uint64_t maxCycles) {
  if (state_ == ChipState::Halted || state_ == ChipState::Error) return result();
  if (state_ == ChipState::Reset) start();
  if (state_ == ChipState::SyncPending) release(pendingRelease_, pendingExchange_);
  const uint64_t limit = maxCycles > kNoLimit - now_ ? kNoLimit : now_ + maxCycles;
  for (;;) {
    const std::vector<BlockSummary> all = fabric_->gatherSummaries(block_->summary());
    const SyncDecision d = decideSync(all, now_, limit, syncBreak_);
    switch (d.kind) {
      case SyncDecision::Kind::Run: {
        uint64_t active = 0;
        for (const BlockSummary& s : all) active += s.active;
        const uint64_t until = std::min(limit, now_ + std::min(kChunkCycles, limit - now_));
        if (const std::optional<ChipFailure> f = block_->runChunk(now_, until, active)) {
          return fail(*f);
        }
        now_ = until;
        break;
      }
      case SyncDecision::Kind::Stop:
        return stopAt(d.cycle, d.reason);
      case SyncDecision::Kind::Fail:
        return fail(ChipFailure{d.cycle, d.error});
      case SyncDecision::Kind::Pending:
        // Nothing runs until the host releases; the chip stands at cycle R.
        state_ = ChipState::SyncPending;
        pendingRelease_ = d.cycle;
        pendingDesc_ = d.desc;
        pendingExchange_ = d.exchange;
        return stopAt(d.cycle, d.reason);
      case SyncDecision::Kind::Release:
        release(d.cycle, d.exchange);
        break;
    }
  }
}

RunResult ModelDevice::stopAt(uint64_t cycles, StopReason reason) {
  now_ = cycles;
  block_->advanceTo(now_);
  if (reason == StopReason::Halted) state_ = ChipState::Halted;
  lastReason_ = reason;
  uint32_t code = 0;
  if (block_->owns(0) && enabled_[0]) code = block_->tile(0).exitCode();
  fabric_->fromOwner(&code, sizeof code, ownerOf(0));
  exitCode0_ = code;
  return result();
}

RunResult ModelDevice::fail(const ChipFailure& f) {
  error_ = f.info;
  state_ = ChipState::Error;
  return stopAt(f.cycle + 1, StopReason::Trap);
}

RunResult ModelDevice::result() const {
  RunResult r;
  r.reason = lastReason_;
  r.cycles = now_;
  r.exitCode = exitCode0_;
  if (state_ == ChipState::Error) r.trap = error_;
  if (state_ == ChipState::SyncPending) r.hostSyncId = pendingDesc_ & 0xffffu;
  return r;
}

std::string ModelDevice::console(unsigned tile) const {
  checkTile(tile);
  const bool mine = block_->owns(tile);
  return fabric_->stringFromOwner(mine ? block_->tile(tile).console() : std::string(),
                                  ownerOf(tile));
}

TileStats ModelDevice::stats(unsigned tile) const {
  checkTile(tile);
  TileStats s;
  if (block_->owns(tile)) s = block_->stats(tile, now_, geometry_.counterBits);
  fabric_->fromOwner(&s, sizeof s, ownerOf(tile));
  return s;
}

void ModelDevice::setRetireSink(std::function<void(const RetireRecord&)> sink) {
  block_->setRetireSink(std::move(sink));
}

uint32_t ModelDevice::readControl(uint32_t offset) {
  if (isCheckpointRegister(offset)) checkCheckpointRegister(offset, "read");
  if (auto v =
          readChipRegister(offset, {geometry_.tiles, geometry_.tileMemBytes, geometry_.contexts,
                                    state_, pendingDesc_, now_, error_, syncBreak_, tileSel_})) {
    return *v;
  }
  switch (offset) {
    case TESS_CR_CTX_SEL:
      return ctxSel_;
    case TESS_CR_REG_SEL:
      return regSel_;
    default:
      break;
  }
  if (!isTileRegister(offset)) {
    switch (offset) {
      case TESS_CR_C_REG:
      case TESS_CR_C_PC:
      case TESS_CR_C_FCSR:
      case TESS_CR_C_INSTRET_LO:
      case TESS_CR_C_INSTRET_HI:
      case TESS_CR_C_STATE:
      case TESS_CR_T_RUN_ARG:
      case TESS_CR_T_XCHG_PROG:
        break;
      default:
        throw Error(
            fmt::format("model device: no readable control register at offset 0x{:03x}", offset));
    }
  }
  // The selected tile's registers: its owner answers every rank.
  uint32_t v = 0;
  if (block_->owns(tileSel_)) v = readTileControl(offset);
  fabric_->fromOwner(&v, sizeof v, ownerOf(tileSel_));
  return v;
}

// A register of the selected tile, which this process simulates.
uint32_t ModelDevice::readTileControl(uint32_t offset) {
  const TileStats sel = block_->stats(tileSel_, now_, geometry_.counterBits);
  const bool enabled = enabled_[tileSel_] != 0;
  if (isTileRegister(offset)) {
    return readTileRegister(offset, sel, enabled, block_->arrived(tileSel_));
  }
  const TileModel& tile = block_->tile(tileSel_);
  switch (offset) {
    case TESS_CR_C_REG:
      if (!enabled) return 0;
      if (regSel_ >= kRegs) return readUnitRegister(tile, ctxSel_, regSel_);
      return regSel_ < 32 ? tile.xreg(ctxSel_, regSel_) : tile.freg(ctxSel_, regSel_ - 32);
    case TESS_CR_C_PC:
      return enabled ? tile.pc(ctxSel_) : 0;
    case TESS_CR_C_FCSR:
      return enabled ? tile.fcsr(ctxSel_) : 0;
    case TESS_CR_C_INSTRET_LO:
      return lo(sel.contextInstructions[ctxSel_]);
    case TESS_CR_C_INSTRET_HI:
      return hi(sel.contextInstructions[ctxSel_]);
    case TESS_CR_C_STATE:
      return enabled ? tile.contextState(ctxSel_) : 0;
    case TESS_CR_T_RUN_ARG:
      return enabled ? tile.runArg() : 0;
    case TESS_CR_T_XCHG_PROG:
      return enabled ? tile.exchangeProgram() : 0;
    default:
      throw Error(
          fmt::format("model device: no readable control register at offset 0x{:03x}", offset));
  }
}

void ModelDevice::writeControl(uint32_t offset, uint32_t value) {
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
      if (value >= geometry_.tiles) {
        throw Error(fmt::format("model device: TILE_SEL {} is not a tile (the chip has {} tiles)",
                                value, geometry_.tiles));
      }
      tileSel_ = value;
      return;
    case TESS_CR_T_ENABLE:
      if (state_ != ChipState::Reset) {
        throw Error(fmt::format(
            "model device: T_ENABLE of tile {} can only change after a reset, before the run",
            tileSel_));
      }
      enabled_[tileSel_] = (value & 1u) != 0;
      if (block_->owns(tileSel_)) block_->setEnabled(tileSel_, enabled_[tileSel_] != 0);
      return;
    case TESS_CR_CTX_SEL:
      if (value >= geometry_.contexts) {
        throw Error(fmt::format("model device: CTX_SEL {} is not a context (a tile has {})", value,
                                geometry_.contexts));
      }
      ctxSel_ = value;
      return;
    case TESS_CR_REG_SEL:
      checkCheckpointRegister(offset, "written");
      if (value >= (geometry_.hasMatrixUnit ? TESS_REG_SEL_AMP_END : kRegs)) {
        throw Error(fmt::format("model device: REG_SEL {} is not a register (0..{}{})", value,
                                geometry_.hasMatrixUnit ? TESS_REG_SEL_AMP_END - 1 : kRegs - 1,
                                geometry_.hasMatrixUnit ? ": registers and the matrix unit"
                                                        : "; the tiles have no matrix unit"));
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
  // A program written now runs at the pending release: every rank must step the exchange.
  if (offset == TESS_CR_T_XCHG_PROG && value != 0) pendingExchange_ = true;
  if (block_->owns(tileSel_)) writeTileControl(offset, value);
}

// A state register of the selected tile, which this process simulates (checkStateWrite passed).
void ModelDevice::writeTileControl(uint32_t offset, uint32_t value) {
  TileModel& tile = block_->tile(tileSel_);
  const TileStats sel = block_->stats(tileSel_, now_, geometry_.counterBits);
  switch (offset) {
    case TESS_CR_C_REG:
      if (regSel_ >= kRegs) {
        writeUnitRegister(tile, ctxSel_, regSel_, value);
      } else if (regSel_ < 32) {
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
      block_->setSyncWait(tileSel_, v, sel.syncWaitCycles);
      return;
    }
    case TESS_CR_T_EXCH_LO:
      block_->setExchangeCycles(tileSel_, withLo(sel.exchangeCycles, value));
      return;
    case TESS_CR_T_EXCH_HI:
      block_->setExchangeCycles(tileSel_, withHi(sel.exchangeCycles, value));
      return;
    default:
      throw Error(
          fmt::format("model device: no writable control register at offset 0x{:03x}", offset));
  }
}

void ModelDevice::checkStateWrite(uint32_t offset, bool tileLevel) const {
  switch (offset) {
    case TESS_CR_CYCLE_LO:
    case TESS_CR_CYCLE_HI:
    case TESS_CR_C_REG:
    case TESS_CR_C_PC:
    case TESS_CR_C_FCSR:
    case TESS_CR_C_INSTRET_LO:
    case TESS_CR_C_INSTRET_HI:
    case TESS_CR_T_RUN_ARG:
    case TESS_CR_T_XCHG_PROG:
    case TESS_CR_T_IDLE_LO:
    case TESS_CR_T_IDLE_HI:
    case TESS_CR_T_SYNCWAIT_LO:
    case TESS_CR_T_SYNCWAIT_HI:
    case TESS_CR_T_EXCH_LO:
    case TESS_CR_T_EXCH_HI:
      break;
    default:
      throw Error(
          fmt::format("model device: no writable control register at offset 0x{:03x}", offset));
  }
  checkCheckpointRegister(offset, "written");
  if (state_ != ChipState::SyncPending) {
    throw Error(
        fmt::format("model device: control register 0x{:03x} can only be written while "
                    "the chip is stopped at a sync",
                    offset));
  }
  if (tileLevel && !enabled_[tileSel_]) {
    throw Error(
        fmt::format("model device: control register 0x{:03x} of tile {}: the tile is "
                    "disabled",
                    offset, tileSel_));
  }
}

void ModelDevice::checkCheckpointRegister(uint32_t offset, const char* access) const {
  if (geometry_.hasCheckpoint) return;
  const char* name = checkpointRegisterName(offset);
  throw Error(
      fmt::format("model device: control register 0x{:03x} ({}) cannot be {}: this chip "
                  "has no checkpoint support (HAS_CHECKPOINT = 0, preset ice40)",
                  offset, name ? name : "?", access));
}

void ModelDevice::writeCycle(uint64_t cycle) {
  block_->rebaseCycles(now_, cycle);
  now_ = cycle;
  pendingRelease_ = cycle;
}

}  // namespace tessera::model

namespace tessera {

std::unique_ptr<Device> makeModelDevice(const DeviceOptions& options) {
  return std::make_unique<model::ModelDevice>(options);
}

bool modelJitAvailable() {
  return model::kHasJit;
}

ModelJitStatistics modelJitStatistics(Device& dev) {
  ModelJitStatistics s;
  auto* m = dynamic_cast<model::ModelDevice*>(&dev);
  if (m == nullptr) return s;
  const model::TileRange range = m->block();
  for (unsigned t = range.first; t < range.end; ++t) m->tile(t).addJitStatistics(s);
  return s;
}

std::string formatJitStatistics(const ModelJitStatistics& s) {
  std::string out = fmt::format("instructions {} translated {} windows_kept {} windows_undone {}",
                                s.instructions, s.translated, s.windows, s.windowFallbacks);
  const std::pair<const char*, const JitStopCounts*> kinds[] = {{"undone", &s.windowUndone},
                                                                {"cut", &s.windowCut},
                                                                {"skipped", &s.windowSkipped},
                                                                {"block_exit", &s.blockExits}};
  for (const auto& [kind, counts] : kinds) {
    for (unsigned r = 0; r < kJitStopReasons; ++r) {
      if ((*counts)[r] != 0)
        out += fmt::format(" {}.{} {}", kind, jitStopName(static_cast<JitStop>(r)), (*counts)[r]);
    }
  }
  return out;
}

const char* jitStopName(JitStop reason) {
  static constexpr std::array<const char*, kJitStopReasons> kNames = {
      "amp", "csr", "mmio", "long_op", "fp_mode", "other", "conflict", "stale_fetch", "limit"};
  return kNames[static_cast<unsigned>(reason)];
}

}  // namespace tessera
