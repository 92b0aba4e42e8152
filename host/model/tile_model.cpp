#include "tile_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>

#include "fma_chain.hpp"
#include "fp16.hpp"
#include "fp32_inline.hpp"
#include "tessera/chip_params.h"
#if TESS_HAVE_JIT
#include "tile_jit.hpp"
#endif

namespace tessera::model {
namespace {

static_assert(std::endian::native == std::endian::little,
              "tile memory is little-endian and is accessed with memcpy");

constexpr unsigned kRound = TESS_ROUND_CYCLES;  // cycles per round
constexpr uint64_t kLongOpRetire = uint64_t{kRound} * (TESS_LONG_OP_ROUNDS - 1);  // issue → retire
constexpr unsigned kVisibility = 3;  // context-state changes are seen by issue decisions at c + 3
constexpr uint32_t kMmioPageMask = ~(TESS_MMIO_SIZE - 1u);

static_assert(TESS_NUM_CONTEXTS >= 2 && TESS_NUM_CONTEXTS <= TileModel::kMaxContexts);

}  // namespace

#if TESS_HAVE_JIT
const bool kHasJit = true;
#else
const bool kHasJit = false;
#endif

void TileModel::JitDeleter::operator()([[maybe_unused]] TileJit* jit) const {
#if TESS_HAVE_JIT
  delete jit;
#endif
}

void wrapCounters(TileStats& s, unsigned bits) {
  s.cycles = wrapCounter(s.cycles, bits);
  s.instructions = wrapCounter(s.instructions, bits);
  for (uint64_t& n : s.contextInstructions) n = wrapCounter(n, bits);
  s.idleSlots = wrapCounter(s.idleSlots, bits);
  s.syncWaitCycles = wrapCounter(s.syncWaitCycles, bits);
  s.exchangeCycles = wrapCounter(s.exchangeCycles, bits);
}

TileModel::TileModel(const TileConfig& config)
    : config_(config), mem_(config.memBytes), decodeCache_(kDecodeCacheLines) {
  if (config.contexts < 2 || config.contexts > kMaxContexts) {
    throw Error(
        fmt::format("tile of {} contexts: must be 2..{} (the supervisor and a worker at "
                    "least, one context per slot of the round at most)",
                    config.contexts, kMaxContexts));
  }
  if (config.memBytes < 4 || config.memBytes % 4 != 0 || config.memBytes > TESS_MMIO_BASE) {
    throw Error(
        fmt::format("tile memory of {} bytes: must be a nonzero multiple of 4 below 0x{:08x}",
                    config.memBytes, TESS_MMIO_BASE));
  }
  if (config.counterBits != 32 && config.counterBits != 64) {
    throw Error(fmt::format("tile counters of {} bits: must be 32 or 64", config.counterBits));
  }
  if (config.hasMatrixUnit && !config.hasFpu) {
    throw Error(fmt::format("tile {}: the matrix unit needs the FPU (AMP.RD writes an f-register)",
                            config.tileId));
  }
  if (config.jit) {
#if TESS_HAVE_JIT
    jit_.reset(new TileJit(config.memBytes, config.hasFpu, config.hasMulDiv, config.hasMatrixUnit));
#else
    throw Error(
        "model engine jit: this build has no translating engine (it needs an x86-64 host and "
        "asmjit, scripts/setup.sh); use the interpreter");
#endif
  }
  reset();
}

uint64_t TileModel::jitTranslations() const {
#if TESS_HAVE_JIT
  if (jit_) return jit_->translations();
#endif
  return 0;
}

uint64_t TileModel::jitFlushes() const {
#if TESS_HAVE_JIT
  if (jit_) return jit_->flushes();
#endif
  return 0;
}

void TileModel::jitCodeWritten([[maybe_unused]] uint32_t addr, [[maybe_unused]] uint32_t bytes) {
#if TESS_HAVE_JIT
  if (jit_ && jit_->coversRange(addr, bytes)) jit_->requestFlush();
#endif
}

void TileModel::jitCodeWrite([[maybe_unused]] uint32_t addr, [[maybe_unused]] const uint8_t* bytes,
                             [[maybe_unused]] uint32_t size) {
#if TESS_HAVE_JIT
  if (jit_ && jit_->changesCode(addr, bytes, size, mem_.data())) jit_->requestFlush();
#endif
}

void TileModel::reset() {
  retiredElsewhere_ = executedInstructions();
  for (Context& ctx : ctx_) ctx = Context{};
  ctx_[0].running = true;
  ctx_[0].next = 0;
  runArg_ = 0;
  recentStores_ = {};
  ampWeights_ = {};
  ampAcc_ = {};
  ampSr_.fill(TESS_AMP_SR_SEED0);
  ampCfg_ = {};
  cycles_ = 0;
  state_ = TileState::Running;
  exitCode_ = 0;
  trap_ = TrapInfo{};
  trap_.tile = config_.tileId;
  console_.clear();
  // The decode cache stays: memory is unchanged, and a line holds the decoding of the word it
  // is tagged with (every write clears the tags of the words it changes).
  xchgProg_ = 0;
  syncDesc_ = 0;
  syncPc_ = 0;
  syncIssue_ = 0;
  logging_ = false;
  undoLog_.clear();
}

void TileModel::resumeSupervisor(uint64_t cycle) {
  if (state_ != TileState::Arrived) return;
  state_ = TileState::Running;
  ctx_[0].next = nextSlot(0, cycle);
}

void TileModel::writeSramWord(uint32_t addr, uint32_t word) {
  uint32_t old;
  std::memcpy(&old, mem_.data() + addr, 4);
  if (logging_) undoLog_.push_back(UndoEntry{addr, old});
  if (jit_ && old != word) jitCodeWritten(addr, 4);
  std::memcpy(mem_.data() + addr, &word, 4);
  CacheLine& line = decodeCache_[(addr >> 2) & (kDecodeCacheLines - 1)];
  if (line.tag == addr) line.tag = kNoTag;
}

void TileModel::checkpoint() {
  saved_.ctx = ctx_;
  saved_.recentStores = recentStores_;
  saved_.ampWeights = ampWeights_;
  saved_.ampAcc = ampAcc_;
  saved_.ampSr = ampSr_;
  saved_.ampCfg = ampCfg_;
  saved_.runArg = runArg_;
  saved_.cycles = cycles_;
  saved_.state = state_;
  saved_.exitCode = exitCode_;
  saved_.trap = trap_;
  saved_.xchgProg = xchgProg_;
  saved_.syncDesc = syncDesc_;
  saved_.syncPc = syncPc_;
  saved_.syncIssue = syncIssue_;
  saved_.consoleSize = console_.size();
  undoLog_.clear();
  logging_ = true;
}

void TileModel::rollback() {
  // Newest first, so a word stored twice ends with its oldest value.
  for (auto it = undoLog_.rbegin(); it != undoLog_.rend(); ++it) {
    std::memcpy(mem_.data() + it->wordAddr, &it->oldWord, 4);
  }
  for (const UndoEntry& e : undoLog_) {
    CacheLine& line = decodeCache_[(e.wordAddr >> 2) & (kDecodeCacheLines - 1)];
    if (line.tag == e.wordAddr) line.tag = kNoTag;
    jitCodeWritten(e.wordAddr, 4);
  }
  // The rolled-back instructions were executed (and may have run translated): they stay counted.
  const uint64_t executed = executedInstructions();
  ctx_ = saved_.ctx;
  retiredElsewhere_ += executed - executedInstructions();
  recentStores_ = saved_.recentStores;
  ampWeights_ = saved_.ampWeights;
  ampAcc_ = saved_.ampAcc;
  ampSr_ = saved_.ampSr;
  ampCfg_ = saved_.ampCfg;
  runArg_ = saved_.runArg;
  cycles_ = saved_.cycles;
  state_ = saved_.state;
  exitCode_ = saved_.exitCode;
  trap_ = saved_.trap;
  xchgProg_ = saved_.xchgProg;
  syncDesc_ = saved_.syncDesc;
  syncPc_ = saved_.syncPc;
  syncIssue_ = saved_.syncIssue;
  console_.resize(saved_.consoleSize);
  commit();
}

void TileModel::commit() {
  logging_ = false;
  undoLog_.clear();
}

void TileModel::writeMemory(uint32_t addr, std::span<const uint8_t> data) {
  if (uint64_t{addr} + data.size() > mem_.size()) {
    throw Error(
        fmt::format("tile {}: write of {} bytes at 0x{:08x} is outside tile memory of {} bytes",
                    config_.tileId, data.size(), addr, mem_.size()));
  }
  if (data.empty()) return;  // data() may be null: memcpy must not see it
  // Translations stay when the words they cover keep their values (a program loaded again).
  jitCodeWrite(addr, data.data(), static_cast<uint32_t>(data.size()));
  // Decodings stay for the words that keep their values (a program loaded again). A line is
  // looked at through each word of a short range, or each line is looked at for a long one.
  const uint64_t end = uint64_t{addr} + data.size();
  const auto keepOrForget = [&](CacheLine& line) {
    const uint64_t w = line.tag;
    if (w == kNoTag || w + 4 <= addr || w >= end) return;
    uint8_t word[4];
    std::memcpy(word, mem_.data() + w, 4);
    for (uint64_t byte = std::max<uint64_t>(w, addr); byte < std::min(w + 4, end); ++byte) {
      word[byte - w] = data[byte - addr];
    }
    if (std::memcmp(word, mem_.data() + w, 4) != 0) line.tag = kNoTag;
  };
  if ((end - (addr & ~3u)) / 4 >= kDecodeCacheLines) {
    for (CacheLine& line : decodeCache_) keepOrForget(line);
  } else {
    for (uint64_t w = addr & ~3u; w < end; w += 4) {
      keepOrForget(decodeCache_[(w >> 2) & (kDecodeCacheLines - 1)]);
    }
  }
  mem_.write(addr, data.data(), data.size());
}

void TileModel::readMemory(uint32_t addr, std::span<uint8_t> data) const {
  if (uint64_t{addr} + data.size() > mem_.size()) {
    throw Error(
        fmt::format("tile {}: read of {} bytes at 0x{:08x} is outside tile memory of {} bytes",
                    config_.tileId, data.size(), addr, mem_.size()));
  }
  if (data.empty()) return;  // data() may be null: memcpy must not see it
  std::memcpy(data.data(), mem_.data() + addr, data.size());
}

uint64_t TileModel::executedInstructions() const {
  uint64_t n = retiredElsewhere_;
  for (const Context& ctx : ctx_) n += ctx.instret;
  return n;
}

TileStats TileModel::stats() const {
  TileStats s;
  s.cycles = cycles_;
  uint64_t busy = 0;
  for (unsigned c = 0; c < kMaxContexts; ++c) {
    const Context& ctx = ctx_[c];
    s.contextInstructions[c] = ctx.instret;
    s.instructions += ctx.instret;
    busy += ctx.busySlots;
    // Passes of an unfinished long op up to the last simulated cycle (its issue pass is counted).
    if (ctx.longPending && cycles_ > ctx.longOp.issueCycle) {
      busy += std::min<uint64_t>(TESS_LONG_OP_ROUNDS - 1,
                                 (cycles_ - 1 - ctx.longOp.issueCycle) / kRound);
    }
  }
  s.idleSlots = cycles_ - busy;
  // The counters count in full here and wrap only as read (modulo 2^64 before, so the same).
  wrapCounters(s, config_.counterBits);
  return s;
}

void TileModel::setIdleSlots(uint64_t v) {
  // idle = cycles - busy (modulo 2^64, read modulo 2^counterBits): put the difference on the
  // supervisor's busy slots.
  const uint64_t idle = stats().idleSlots;
  ctx_[0].busySlots += idle - v;
}

void TileModel::rebaseCycles(uint64_t cycle) {
  const uint64_t idle = stats().idleSlots;
  cycles_ = cycle;
  setIdleSlots(idle);
  // Stores noted for the fetch-timing rule belong to the old cycle numbering.
  recentStores_ = {};
}

TileState TileModel::run(uint64_t untilCycle) {
  // Retirement records come from the interpreter alone: with a sink the translator is not used.
  if (sink_) return runLoop<true, false>(untilCycle);
  jitTry_ = true;
  // Cycles may have moved back since the last run (reset, rollback, a new time base).
  jitWindowAt_ = 0;
  return jit_ ? runLoop<false, true>(untilCycle) : runLoop<false, false>(untilCycle);
}

uint64_t TileModel::nextSlot(unsigned c, uint64_t atOrAfter) {
  return atOrAfter + (c + kRound - atOrAfter % kRound) % kRound;
}

template <bool kTrace, bool kJit>
TileState TileModel::runLoop(uint64_t untilCycle) {
  if (state_ != TileState::Running) return state_;
  for (;;) {
    // The context acting next, and the earliest slot of any other; slots never collide because
    // ctx_[c].next ≡ c (mod 6). Branch-free: which context is next changes from slot to slot
    // and defeats prediction.
    unsigned c = 0;
    uint64_t best = ctx_[0].next;
    uint64_t second = kNever;
    for (unsigned i = 1; i < kMaxContexts; ++i) {
      const uint64_t n = ctx_[i].next;
      const bool less = n < best;
      second = std::min(second, less ? best : n);
      best = less ? n : best;
      c = less ? i : c;
    }
    if (best >= untilCycle) {
      cycles_ = std::max(cycles_, untilCycle);
      return state_;
    }
    // Without a new scan: context c acts again while its next slot comes before every other
    // context's, or the next context in round-robin order acts when its slot is the very next
    // cycle (no other can be earlier: every slot is > t, and only context (t+1) mod 6 can be at
    // t+1). Both stop when an instruction changed another context's slot (RUN, a DONE that
    // releases WAIT).
    uint64_t limit = std::min(second, untilCycle);
    uint64_t t = best;
    rescan_ = false;
    for (;;) {
      // The pc before an interpreted instruction of context 0 (the translating engine's).
      [[maybe_unused]] uint32_t pcBefore = 0;
      if constexpr (kJit) {
        // Several contexts: a window of translated code for all of them (jitWindow).
        if (t >= jitWindowAt_ && jitWindowEnter(t, untilCycle)) {
          jitTry_ = true;
          break;
        }
        // Translated blocks while context 0 runs alone; then the instruction they left (one
        // they do not translate, or one whose block would cross untilCycle) is interpreted, and
        // so is the code after it up to the next jump or taken branch: code that mixes
        // translated and untranslated instructions (FP) does not pay a look-up for each.
        if (c == 0) {
          if (jitTry_) {
            t = jitEnter(t, untilCycle);
            if (t >= untilCycle) break;
          }
          pcBefore = ctx_[0].pc;
        }
      }
      if (ctx_[c].longPending) {
        retireLongOp<kTrace>(c, t);
      } else if (issue<kTrace>(c, t) == Step::Stop) {
        return state_;
      }
      if constexpr (kJit) {
        if (c == 0 && ctx_[0].pc != pcBefore + 4) jitTry_ = true;
      }
      if (rescan_) break;
      if (ctx_[c].next < limit) {
        t = ctx_[c].next;
        continue;
      }
      const unsigned n = c + 1 == kMaxContexts ? 0 : c + 1;
      if (ctx_[n].next != t + 1 || t + 1 >= untilCycle) break;
      c = n;
      t = t + 1;
      limit = std::min(t + 1, untilCycle);  // the same-context shortcut needs a fresh scan
    }
  }
}

template <bool kTrace>
void TileModel::retireLongOp(unsigned c, uint64_t cycle) {
  Context& ctx = ctx_[c];
  const PendingLongOp& op = ctx.longOp;
  if (op.dest == Dest::X) ctx.x[op.rd] = op.value;
  if (op.dest == Dest::F) ctx.f[op.rd] = op.value;
  ctx.fflags |= op.flags;
  ctx.instret++;
  ctx.busySlots += TESS_LONG_OP_ROUNDS - 1;
  ctx.longPending = false;
  ctx.next = cycle + kRound;
  if constexpr (kTrace) emit(cycle, c, op.pc, op.insn, op.dest, op.rd, op.value);
}

void TileModel::emit(uint64_t cycle, unsigned c, uint32_t pc, uint32_t insn, Dest dest, unsigned rd,
                     uint32_t value) {
  RetireRecord r;
  r.cycle = wrapCounter(cycle, config_.counterBits);
  r.tile = config_.tileId;
  r.context = c;
  r.pc = pc;
  r.insn = insn;
  // Records with no destination carry rd 0 and value 0 (stores, branches, x0 writes, ...).
  r.dest = dest == Dest::X ? DestKind::X : dest == Dest::F ? DestKind::F : DestKind::None;
  r.rd = dest == Dest::None ? 0 : rd;
  r.value = dest == Dest::None ? 0 : value;
  sink_(r);
}

TileModel::Step TileModel::raise(unsigned c, uint64_t cycle, uint32_t cause, uint32_t value) {
  state_ = TileState::Trapped;
  trap_ = TrapInfo{config_.tileId, c, ctx_[c].pc, cause, value};
  cycles_ = cycle + 1;
  return Step::Stop;
}

TileModel::Step TileModel::halt(uint64_t cycle) {
  state_ = TileState::Halted;
  cycles_ = cycle + 1;
  return Step::Stop;
}

void TileModel::noteStore(uint32_t addr, uint64_t cycle, unsigned words) {
  const uint32_t wordAddr = addr & ~3u;
  StoreNote& note = recentStores_[cycle & 1];
  note.cycle = cycle;
  note.wordAddr = wordAddr;
  note.words = words;
  for (unsigned i = 0; i < words; ++i) {
    const uint32_t a = wordAddr + 4 * i;
    std::memcpy(&note.oldWords[i], mem_.data() + a, 4);
    if (logging_) undoLog_.push_back(UndoEntry{a, note.oldWords[i]});
    CacheLine& line = decodeCache_[(a >> 2) & (kDecodeCacheLines - 1)];
    if (line.tag == a) line.tag = kNoTag;
  }
  if (jit_) jitCodeWritten(wordAddr, 4 * words);
}

bool TileModel::staleFetch(uint32_t pc, uint64_t cycle, uint32_t& word) const {
  // The RTL fetches in IF (issue cycle) and stores in EX (issue + 2), so a fetch at t does not see
  // stores issued at t-1 or t-2 (docs/tile.md, "Order of effects"). The older store's old word is
  // the value before both.
  for (uint64_t back = 2; back >= 1; --back) {
    if (cycle < back) continue;
    const StoreNote& note = recentStores_[(cycle - back) & 1];
    if (note.cycle == cycle - back && pc - note.wordAddr < 4 * note.words) {
      word = note.oldWords[(pc - note.wordAddr) / 4];
      return true;
    }
  }
  return false;
}

bool TileModel::resolveRm(const Context& ctx, uint8_t rm, unsigned& out) const {
  out = rm == kRmDynamic ? ctx.frm : rm;
  return out <= 4;
}

uint32_t TileModel::readCsr(unsigned c, uint64_t cycle, uint32_t csr) const {
  const Context& ctx = ctx_[c];
  switch (csr) {
    case 0x001:
      return ctx.fflags;
    case 0x002:
      return ctx.frm;
    case 0x003:
      return ctx.frm << 5 | ctx.fflags;
    case 0xc00:
      return static_cast<uint32_t>(cycle);
    case 0xc80:
      return static_cast<uint32_t>(wrapCounter(cycle, config_.counterBits) >> 32);
    case 0xc02:
      return static_cast<uint32_t>(ctx.instret);
    case 0xc82:
      return static_cast<uint32_t>(wrapCounter(ctx.instret, config_.counterBits) >> 32);
    case TESS_CSR_TILE_ID:
      return config_.tileId;
    case TESS_CSR_CONTEXT_ID:
      return c;
    case TESS_CSR_NUM_TILES:
      return config_.numTiles;
    case TESS_CSR_MEM_BYTES:
      return config_.memBytes;
    default:
      return 0;  // unreachable: unknown CSRs decode as illegal
  }
}

void TileModel::writeCsr(Context& ctx, uint32_t csr, uint32_t value) {
  switch (csr) {
    case 0x001:
      ctx.fflags = value & 0x1f;
      break;
    case 0x002:
      ctx.frm = value & 7;
      break;
    case 0x003:
      ctx.fflags = value & 0x1f;
      ctx.frm = (value >> 5) & 7;
      break;
    default:
      break;  // unreachable: writes to read-only CSRs decode as illegal
  }
}

void TileModel::releaseSupervisorIfDone(uint64_t doneCycle) {
  Context& sup = ctx_[0];
  if (!sup.waiting) return;
  for (unsigned w = 1; w < kMaxContexts; ++w) {
    if (ctx_[w].running) return;
  }
  // The supervisor sees this DONE at doneCycle + 3, and WAIT blocks it for at least one round.
  sup.waiting = false;
  sup.next = nextSlot(0, std::max(sup.waitCycle + kRound, doneCycle + kVisibility));
  rescan_ = true;
}

// MMIO read of a word. Returns false after raising a trap.
bool TileModel::mmioLoad(unsigned c, uint64_t cycle, uint32_t addr, uint32_t& value, Step& step) {
  switch (addr) {
    case TESS_MMIO_RUN_ARG:
      value = runArg_;
      return true;
    case TESS_MMIO_XCHG_PROG:
      // Readable by any context: docs/chip.md restricts only writes to the supervisor.
      value = xchgProg_;
      return true;
    case TESS_MMIO_WORKERS:
      // "As seen at issue + 2" covers every older instruction, i.e. the model's current state.
      value = 0;
      for (unsigned w = 1; w < kMaxContexts; ++w) value |= uint32_t{ctx_[w].running} << w;
      return true;
    default:
      step = raise(c, cycle, TESS_CAUSE_LOAD_ACCESS, addr);
      return false;
  }
}

// MMIO write of a word. Returns false after raising a trap; EXIT is handled by the caller.
bool TileModel::mmioStore(unsigned c, uint64_t cycle, uint32_t addr, uint32_t value, Step& step) {
  Context& ctx = ctx_[c];
  switch (addr) {
    case TESS_MMIO_EXIT:
      exitCode_ = value;
      return true;
    case TESS_MMIO_CONSOLE:
      console_.push_back(static_cast<char>(value & 0xff));
      return true;
    case TESS_MMIO_RUN_ARG:
      runArg_ = value;
      return true;
    case TESS_MMIO_WAIT:
      if (c != 0) break;
      ctx.waiting = true;
      ctx.waitCycle = cycle;
      return true;
    case TESS_MMIO_DONE:
      if (c == 0) break;
      ctx.running = false;
      ctx.doneCycle = cycle;
      return true;
    case TESS_MMIO_XCHG_PROG:
      if (c != 0) break;
      xchgProg_ = value;
      return true;
    case TESS_MMIO_SYNC:
      // A SYNC sees every older instruction: a worker whose DONE issued before it is idle.
      if (c != 0) break;
      for (unsigned w = 1; w < kMaxContexts; ++w) {
        if (ctx_[w].running) {
          step = raise(c, cycle, TESS_CAUSE_CONTEXT_MISUSE, addr);
          return false;
        }
      }
      // Only bit 31 and bits 15..0 are defined (docs/chip.md); the others are not kept.
      syncDesc_ = value & (TESS_SYNC_HOST_BIT | 0xffffu);
      syncPc_ = ctx.pc;
      syncIssue_ = cycle;
      return true;
    default:
      // RUN slots exist for the tile's workers only; another is an unmapped address.
      if (addr >= TESS_MMIO_RUN_BASE && addr <= TESS_MMIO_RUN_BASE + 4u * (config_.contexts - 2u) &&
          (addr & 3) == 0) {
        const unsigned w = (addr - TESS_MMIO_RUN_BASE) / 4 + 1;
        if (c != 0 || ctx_[w].running) break;
        Context& worker = ctx_[w];
        worker.running = true;
        worker.pc = value;
        worker.x[10] = runArg_;
        worker.next = nextSlot(w, cycle + kVisibility);
        rescan_ = true;
        return true;
      }
      step = raise(c, cycle, TESS_CAUSE_STORE_ACCESS, addr);
      return false;
  }
  step = raise(c, cycle, TESS_CAUSE_CONTEXT_MISUSE, addr);
  return false;
}

// One instruction between fetch and retirement: its operands and what it decided. It lives in
// issue()'s frame and every handler below is inlined, so the compiler keeps it in registers.
struct TileModel::Issue {
  unsigned c;
  uint64_t cycle;
  Context& ctx;
  const DecodedInsn& d;
  uint32_t pc;
  uint32_t word;    // the instruction word (trap value of an illegal instruction)
  uint32_t a;       // x[rs1]
  uint32_t b;       // x[rs2]
  uint32_t addr;    // a + imm: a load's, store's or JALR's address
  uint32_t nextPc;  // pc + 4 unless a jump or taken branch changes it
  uint64_t next;    // the context's next slot: a round on, later for a long op, never if blocked
  bool exited = false;   // an EXIT store
  bool arrived = false;  // a SYNC store
};

// A load's or store's trap at its address; false, for the handler to return.
bool TileModel::accessFault(const Issue& s, uint32_t cause) {
  raise(s.c, s.cycle, cause, s.addr);
  return false;
}

// LUI, AUIPC, OP-IMM and OP: never trap. Each handler is instantiated per opcode (kOp), so its
// switch folds away and issue()'s dispatch stays one jump table.
template <Op kOp>
inline bool TileModel::execIntAlu(Issue& s) {
  const DecodedInsn& d = s.d;
  uint32_t* const x = s.ctx.x.data();
  const uint32_t a = s.a;
  const uint32_t b = s.b;
  const int32_t sa = static_cast<int32_t>(a);
  const int32_t sb = static_cast<int32_t>(b);
  const uint32_t imm = static_cast<uint32_t>(d.imm);
  switch (kOp) {
    case Op::Lui:
      x[d.rd] = imm;
      break;
    case Op::Auipc:
      x[d.rd] = s.pc + imm;
      break;
    case Op::Addi:
      x[d.rd] = a + imm;
      break;
    case Op::Slti:
      x[d.rd] = sa < d.imm;
      break;
    case Op::Sltiu:
      x[d.rd] = a < imm;
      break;
    case Op::Xori:
      x[d.rd] = a ^ imm;
      break;
    case Op::Ori:
      x[d.rd] = a | imm;
      break;
    case Op::Andi:
      x[d.rd] = a & imm;
      break;
    case Op::Slli:
      x[d.rd] = a << d.imm;
      break;
    case Op::Srli:
      x[d.rd] = a >> d.imm;
      break;
    case Op::Srai:
      x[d.rd] = static_cast<uint32_t>(sa >> d.imm);
      break;
    case Op::Add:
      x[d.rd] = a + b;
      break;
    case Op::Sub:
      x[d.rd] = a - b;
      break;
    case Op::Sll:
      x[d.rd] = a << (b & 31);
      break;
    case Op::Slt:
      x[d.rd] = sa < sb;
      break;
    case Op::Sltu:
      x[d.rd] = a < b;
      break;
    case Op::Xor:
      x[d.rd] = a ^ b;
      break;
    case Op::Srl:
      x[d.rd] = a >> (b & 31);
      break;
    case Op::Sra:
      x[d.rd] = static_cast<uint32_t>(sa >> (b & 31));
      break;
    case Op::Or:
      x[d.rd] = a | b;
      break;
    case Op::And:
      x[d.rd] = a & b;
      break;
    default:
      break;  // unreachable: issue() dispatches only this class here
  }
  return true;
}

// JAL, JALR and the conditional branches. False after a misaligned target trapped.
template <Op kOp>
inline bool TileModel::execJump(Issue& s) {
  const DecodedInsn& d = s.d;
  uint32_t* const x = s.ctx.x.data();
  const uint32_t a = s.a;
  const uint32_t b = s.b;
  const int32_t sa = static_cast<int32_t>(a);
  const int32_t sb = static_cast<int32_t>(b);
  bool taken = true;
  switch (kOp) {
    case Op::Jalr: {
      const uint32_t target = s.addr & ~1u;
      if (target & 3) {
        raise(s.c, s.cycle, TESS_CAUSE_INSN_MISALIGNED, target);
        return false;
      }
      s.nextPc = target;
      x[d.rd] = s.pc + 4;
      return true;
    }
    case Op::Beq:
      taken = a == b;
      break;
    case Op::Bne:
      taken = a != b;
      break;
    case Op::Blt:
      taken = sa < sb;
      break;
    case Op::Bge:
      taken = sa >= sb;
      break;
    case Op::Bltu:
      taken = a < b;
      break;
    case Op::Bgeu:
      taken = a >= b;
      break;
    default:
      break;  // JAL
  }
  if (!taken) return true;
  const uint32_t target = s.pc + static_cast<uint32_t>(d.imm);
  if (target & 3) {
    raise(s.c, s.cycle, TESS_CAUSE_INSN_MISALIGNED, target);
    return false;
  }
  s.nextPc = target;
  if (kOp == Op::Jal) x[d.rd] = s.pc + 4;
  return true;
}

// Loads from SRAM, and LW/FLW from the MMIO page. False after a trap.
template <Op kOp>
inline bool TileModel::execLoad(Issue& s) {
  const DecodedInsn& d = s.d;
  const uint32_t addr = s.addr;
  const uint8_t* const mem = mem_.data();
  uint32_t* const x = s.ctx.x.data();
  auto inSram = [&](unsigned size) { return inSramAccess(addr, size); };
  auto fault = [&](uint32_t cause) { return accessFault(s, cause); };
  switch (kOp) {
    case Op::Lb:
      if (!inSram(1)) return fault(TESS_CAUSE_LOAD_ACCESS);
      x[d.rd] = static_cast<uint32_t>(static_cast<int8_t>(mem[addr]));
      return true;
    case Op::Lbu:
      if (!inSram(1)) return fault(TESS_CAUSE_LOAD_ACCESS);
      x[d.rd] = mem[addr];
      return true;
    case Op::Lh:
    case Op::Lhu: {
      if (addr & 1) return fault(TESS_CAUSE_LOAD_MISALIGNED);
      if (!inSram(2)) return fault(TESS_CAUSE_LOAD_ACCESS);
      uint16_t h;
      std::memcpy(&h, mem + addr, 2);
      x[d.rd] = kOp == Op::Lh ? static_cast<uint32_t>(static_cast<int16_t>(h)) : h;
      return true;
    }
    default: {  // LW, FLW
      if (addr & 3) return fault(TESS_CAUSE_LOAD_MISALIGNED);
      uint32_t w;
      Step step;
      if (inSram(4)) {
        std::memcpy(&w, mem + addr, 4);
      } else if ((addr & kMmioPageMask) != TESS_MMIO_BASE) {
        return fault(TESS_CAUSE_LOAD_ACCESS);
      } else if (!mmioLoad(s.c, s.cycle, addr, w, step)) {
        return false;
      }
      (kOp == Op::Lw ? x : s.ctx.f.data())[d.rd] = w;
      return true;
    }
  }
}

// Stores to SRAM, and SW/FSW to the MMIO page with their effect on this context's schedule
// (EXIT, SYNC, WAIT, DONE). False after a trap.
template <Op kOp>
inline bool TileModel::execStore(Issue& s) {
  const DecodedInsn& d = s.d;
  const uint32_t addr = s.addr;
  uint8_t* const mem = mem_.data();
  auto inSram = [&](unsigned size) { return inSramAccess(addr, size); };
  auto fault = [&](uint32_t cause) { return accessFault(s, cause); };
  switch (kOp) {
    case Op::Sb:
      if (!inSram(1)) return fault(TESS_CAUSE_STORE_ACCESS);
      noteStore(addr, s.cycle);
      mem[addr] = static_cast<uint8_t>(s.b);
      return true;
    case Op::Sh: {
      if (addr & 1) return fault(TESS_CAUSE_STORE_MISALIGNED);
      if (!inSram(2)) return fault(TESS_CAUSE_STORE_ACCESS);
      const uint16_t h = static_cast<uint16_t>(s.b);
      noteStore(addr, s.cycle);
      std::memcpy(mem + addr, &h, 2);
      return true;
    }
    default:  // SW, FSW
      break;
  }
  const uint32_t w = kOp == Op::Sw ? s.b : s.ctx.f[d.rs2];
  if (addr & 3) return fault(TESS_CAUSE_STORE_MISALIGNED);
  if (inSram(4)) {
    noteStore(addr, s.cycle);
    std::memcpy(mem + addr, &w, 4);
    return true;
  }
  if ((addr & kMmioPageMask) != TESS_MMIO_BASE) return fault(TESS_CAUSE_STORE_ACCESS);
  Step step;
  if (!mmioStore(s.c, s.cycle, addr, w, step)) return false;
  Context& ctx = s.ctx;
  if (addr == TESS_MMIO_EXIT) s.exited = true;
  if (addr == TESS_MMIO_SYNC) {
    s.arrived = true;
    s.next = kNever;
  }
  if (ctx.waiting) {
    // WAIT: released now if every worker is already idle (their DONEs are all older than
    // this store, hence seen by cycle + 6), otherwise by the last worker's DONE.
    bool idle = true;
    for (unsigned w2 = 1; w2 < kMaxContexts; ++w2) idle = idle && !ctx_[w2].running;
    if (idle) {
      ctx.waiting = false;
    } else {
      s.next = kNever;
    }
  }
  if (addr == TESS_MMIO_DONE) {
    s.next = kNever;
    releaseSupervisorIfDone(s.cycle);
  }
  return true;
}

// FENCE, ECALL, EBREAK and the CSR instructions. False after ECALL or EBREAK trapped.
template <Op kOp>
inline bool TileModel::execSystem(Issue& s) {
  const DecodedInsn& d = s.d;
  switch (kOp) {
    case Op::Fence:
      return true;
    case Op::Ecall:
      raise(s.c, s.cycle, TESS_CAUSE_ECALL, s.pc);
      return false;
    case Op::Ebreak:
      raise(s.c, s.cycle, TESS_CAUSE_BREAKPOINT, s.pc);
      return false;
    default:
      break;  // the CSR instructions
  }
  const uint32_t csr = static_cast<uint32_t>(d.imm);
  const uint32_t old = readCsr(s.c, s.cycle, csr);
  const bool immForm = kOp == Op::Csrrwi || kOp == Op::Csrrsi || kOp == Op::Csrrci;
  const uint32_t src = immForm ? d.rs1 : s.a;
  if (kOp == Op::Csrrw || kOp == Op::Csrrwi) {
    writeCsr(s.ctx, csr, src);
  } else if (d.rs1 != 0) {
    writeCsr(s.ctx, csr, (kOp == Op::Csrrs || kOp == Op::Csrrsi) ? old | src : old & ~src);
  }
  s.ctx.x[d.rd] = old;
  return true;
}

// A long op computed at its issue and committed at its retire cycle (retireLongOp).
inline void TileModel::startLongOp(Issue& s, uint32_t value, uint32_t flags) {
  s.ctx.longPending = true;
  s.ctx.longOp = PendingLongOp{s.cycle, s.pc, s.word, value, flags, s.d.rd, s.d.dest};
  s.next = s.cycle + kLongOpRetire;
}

// The M extension: multiplies retire at issue, divides and remainders are long ops. Never trap.
template <Op kOp>
inline bool TileModel::execMulDiv(Issue& s) {
  const DecodedInsn& d = s.d;
  uint32_t* const x = s.ctx.x.data();
  const uint32_t a = s.a;
  const uint32_t b = s.b;
  const int32_t sa = static_cast<int32_t>(a);
  const int32_t sb = static_cast<int32_t>(b);
  switch (kOp) {
    case Op::Mul:
      x[d.rd] = a * b;
      break;
    case Op::Mulh:
      x[d.rd] = static_cast<uint32_t>((int64_t{sa} * int64_t{sb}) >> 32);
      break;
    case Op::Mulhsu:
      x[d.rd] = static_cast<uint32_t>((int64_t{sa} * static_cast<int64_t>(b)) >> 32);
      break;
    case Op::Mulhu:
      x[d.rd] = static_cast<uint32_t>((uint64_t{a} * b) >> 32);
      break;
    case Op::Div:
      startLongOp(s,
                  b == 0                          ? ~0u
                  : (sa == INT32_MIN && sb == -1) ? a
                                                  : static_cast<uint32_t>(sa / sb),
                  0);
      break;
    case Op::Divu:
      startLongOp(s, b == 0 ? ~0u : a / b, 0);
      break;
    case Op::Rem:
      startLongOp(s,
                  b == 0                          ? a
                  : (sa == INT32_MIN && sb == -1) ? 0u
                                                  : static_cast<uint32_t>(sa % sb),
                  0);
      break;
    default:  // REMU
      startLongOp(s, b == 0 ? a : a % b, 0);
      break;
  }
  return true;
}

// The F extension except FLW/FSW (loads and stores). False after an invalid rounding mode
// trapped as an illegal instruction.
template <Op kOp>
inline bool TileModel::execFp(Issue& s) {
  const DecodedInsn& d = s.d;
  Context& ctx = s.ctx;
  uint32_t* const x = ctx.x.data();
  uint32_t* const f = ctx.f.data();
  unsigned rm = 0;
  // Operations that round read rm first: a reserved mode (or frm holding one) is illegal.
  auto roundingMode = [&]() {
    if (resolveRm(ctx, d.rm, rm)) return true;
    raise(s.c, s.cycle, TESS_CAUSE_ILLEGAL_INSN, s.word);
    return false;
  };
  auto fpResult = [&](const fp::Result& r) {
    f[d.rd] = r.value;
    ctx.fflags |= r.flags;
  };
  auto fpToX = [&](const fp::Result& r) {
    x[d.rd] = r.value;
    ctx.fflags |= r.flags;
  };
  switch (kOp) {
    case Op::Fmadd:
    case Op::Fmsub:
    case Op::Fnmsub:
    case Op::Fnmadd: {
      if (!roundingMode()) return false;
      const uint32_t fa = f[d.rs1], fb = f[d.rs2], fc = f[d.rs3];
      fpResult(kOp == Op::Fmadd    ? fp::madd_inline(fa, fb, fc, rm)
               : kOp == Op::Fmsub  ? fp::msub_inline(fa, fb, fc, rm)
               : kOp == Op::Fnmsub ? fp::nmsub_inline(fa, fb, fc, rm)
                                   : fp::nmadd_inline(fa, fb, fc, rm));
      break;
    }
    case Op::Fadd:
      if (!roundingMode()) return false;
      fpResult(fp::add_inline(f[d.rs1], f[d.rs2], rm));
      break;
    case Op::Fsub:
      if (!roundingMode()) return false;
      fpResult(fp::sub_inline(f[d.rs1], f[d.rs2], rm));
      break;
    case Op::Fmul:
      if (!roundingMode()) return false;
      fpResult(fp::mul_inline(f[d.rs1], f[d.rs2], rm));
      break;
    case Op::Fdiv: {
      if (!roundingMode()) return false;
      const fp::Result r = fp::div(f[d.rs1], f[d.rs2], rm);
      startLongOp(s, r.value, r.flags);
      break;
    }
    case Op::Fsqrt: {
      if (!roundingMode()) return false;
      const fp::Result r = fp::sqrt(f[d.rs1], rm);
      startLongOp(s, r.value, r.flags);
      break;
    }
    case Op::Fsgnj:
      f[d.rd] = fp::sgnj(f[d.rs1], f[d.rs2]);
      break;
    case Op::Fsgnjn:
      f[d.rd] = fp::sgnjn(f[d.rs1], f[d.rs2]);
      break;
    case Op::Fsgnjx:
      f[d.rd] = fp::sgnjx(f[d.rs1], f[d.rs2]);
      break;
    case Op::Fmin:
      fpResult(fp::min(f[d.rs1], f[d.rs2]));
      break;
    case Op::Fmax:
      fpResult(fp::max(f[d.rs1], f[d.rs2]));
      break;
    case Op::FcvtWS:
      if (!roundingMode()) return false;
      fpToX(fp::cvt_w_s(f[d.rs1], rm));
      break;
    case Op::FcvtWuS:
      if (!roundingMode()) return false;
      fpToX(fp::cvt_wu_s(f[d.rs1], rm));
      break;
    case Op::FmvXW:
      x[d.rd] = f[d.rs1];
      break;
    case Op::Feq:
      fpToX(fp::eq(f[d.rs1], f[d.rs2]));
      break;
    case Op::Flt:
      fpToX(fp::lt(f[d.rs1], f[d.rs2]));
      break;
    case Op::Fle:
      fpToX(fp::le(f[d.rs1], f[d.rs2]));
      break;
    case Op::Fclass:
      x[d.rd] = fp::fclass(f[d.rs1]);
      break;
    case Op::FcvtSW:
      if (!roundingMode()) return false;
      fpResult(fp::cvt_s_w(s.a, rm));
      break;
    case Op::FcvtSWu:
      if (!roundingMode()) return false;
      fpResult(fp::cvt_s_wu(s.a, rm));
      break;
    case Op::FmvWX:
      f[d.rd] = s.a;
      break;
    default:
      break;  // unreachable: issue() dispatches only this class here
  }
  return true;
}

// The matrix unit (docs/tile.md, "Matrix unit"): one round like any instruction, executed whole
// at issue. False after an alignment or access trap, which changes nothing. The accesses and the
// 16 FMAs are out of line (ampAccess): inlined, they made issue(), which every instruction runs,
// a quarter slower.
template <Op kOp>
inline bool TileModel::execAmp(Issue& s) {
  const DecodedInsn& d = s.d;
  Context& ctx = s.ctx;
  if constexpr (kOp == Op::AmpClr) {
    ampAcc_[s.c].fill(0);
  } else if constexpr (kOp == Op::AmpRd) {
    ctx.f[d.rd] = ampAcc_[s.c][d.rm * TESS_AMP_COLS + ((d.rs3 >> 1) & 3)];
  } else if constexpr (kOp == Op::AmpStride) {
    ampCfg_[s.c].strideS = s.a;
    ampCfg_[s.c].strideC = s.b;
  } else if constexpr (kOp == Op::AmpRows) {
    setRowLimit(s.c, s.a);
  } else if constexpr (kOp == Op::AmpCvtHs || kOp == Op::AmpCvtHsSr || kOp == Op::AmpCvtShLo ||
                       kOp == Op::AmpCvtShHi || kOp == Op::AmpSeed) {
    ampConvert(kOp, s.c, ctx, d, s.a, s.b);
  } else {
    // A row at or past the context's limit is skipped: no access, no trap, no change but rd.
    if (!ampSkips(kOp, s.c, d) && !ampAccess(kOp, s.c, s.cycle, d, ampAddress(kOp, s.c, d, s.addr)))
      return false;
    ctx.x[d.rd] = s.addr + TESS_AMP_STEP_BYTES;  // the post-increment; x0 is restored later
  }
  return true;
}

// The fp16 conversions and AMP.SEED (docs/tile.md, "fp16 inputs and conversions"): a is x[rs1],
// b x[rs2]; the packs take their low half from a. Out of line like ampAccess.
void TileModel::ampConvert(Op op, unsigned c, Context& ctx, const DecodedInsn& d, uint32_t a,
                           uint32_t b) {
  switch (op) {
    case Op::AmpCvtHs:
      ctx.x[d.rd] = uint32_t{fp::f32_to_f16(b, false, 0)} << 16 | fp::f32_to_f16(a, false, 0);
      break;
    case Op::AmpCvtHsSr: {  // one step of the context's generator; the new state's halves
      const uint32_t u = ampSr_[c] = fp::amp_sr_step(ampSr_[c]);
      ctx.x[d.rd] =
          uint32_t{fp::f32_to_f16(b, true, u >> 16)} << 16 | fp::f32_to_f16(a, true, u & 0xffffu);
      break;
    }
    case Op::AmpCvtShLo:
      ctx.f[d.rd] = fp::f16_to_f32(static_cast<uint16_t>(a));
      break;
    case Op::AmpCvtShHi:
      ctx.f[d.rd] = fp::f16_to_f32(static_cast<uint16_t>(a >> 16));
      break;
    default:  // AMP.SEED
      ampSr_[c] = a ? a : TESS_AMP_SR_SEED0;
      break;
  }
}

uint32_t TileModel::ampAddress(Op op, unsigned c, const DecodedInsn& d, uint32_t rs1) const {
  if (op == Op::AmpLw) return rs1;
  const uint32_t stride =
      op == Op::AmpS || op == Op::AmpH ? ampCfg_[c].strideS : ampCfg_[c].strideC;
  return rs1 + d.rm * stride;  // modulo 2^32
}

bool TileModel::ampAccess(Op op, unsigned c, uint64_t cycle, const DecodedInsn& d, uint32_t addr) {
  constexpr unsigned kCols = TESS_AMP_COLS, kRows = TESS_AMP_ROWS, kStep = TESS_AMP_STEP_BYTES;
  static_assert(kStep == 4 * kRows && kStep == 4 * kCols, "one step is one row of x, W or acc");
  static_assert(kCols == 4, "fmaChain4 computes four columns");
  const bool store = op == Op::AmpSa;
  // addr is x[rs1] (imm is 0). The MMIO page is never reached: the unit's accesses are SRAM only.
  if (addr % kStep != 0) {
    raise(c, cycle, store ? TESS_CAUSE_STORE_MISALIGNED : TESS_CAUSE_LOAD_MISALIGNED, addr);
    return false;
  }
  if (config_.memBytes < kStep || addr > config_.memBytes - kStep) {
    raise(c, cycle, store ? TESS_CAUSE_STORE_ACCESS : TESS_CAUSE_LOAD_ACCESS, addr);
    return false;
  }
  uint8_t* const mem = mem_.data() + addr;
  uint32_t* const acc = ampAcc_[c].data() + d.rm * kCols;
  const unsigned bank = d.rs3 & 1;
  switch (op) {
    case Op::AmpSa:
      noteStore(addr, cycle, kStep / 4);
      std::memcpy(mem, acc, kStep);
      if (d.rs3 & 8) std::fill_n(acc, kCols, 0u);
      break;
    case Op::AmpLa:
      std::memcpy(acc, mem, kStep);
      break;
    case Op::AmpLw:
      std::memcpy(ampWeights_.data() + (bank * kRows + d.rm) * kCols, mem, kStep);
      break;
    case Op::AmpH: {  // per column, the FMA chain over k = 0..7 of the widened halves, RNE
      uint16_t x16[2 * kRows];
      std::memcpy(x16, mem, kStep);
      // The bank's 64 bytes as a row-major 8 x 4 binary16 matrix W16[k][j]; every half widened
      // (exactly) once, not once per use.
      uint16_t w16[2 * kRows * kCols];
      std::memcpy(w16, ampWeights_.data() + bank * kRows * kCols, sizeof w16);
      uint32_t x[2 * kRows], w[2 * kRows * kCols];
      for (unsigned k = 0; k < 2 * kRows; ++k) x[k] = fp::f16_to_f32(x16[k]);
      for (unsigned i = 0; i < 2 * kRows * kCols; ++i) w[i] = fp::f16_to_f32(w16[i]);
      if (fp::kHostFmaChains) {
        fp::fmaChain4(x, w, 2 * kRows, acc);
        break;
      }
      for (unsigned j = 0; j < kCols; ++j) {
        uint32_t sum = acc[j];
        for (unsigned k = 0; k < 2 * kRows; ++k)
          sum = fp::madd_inline(x[k], w[k * kCols + j], sum, fp::kRNE).value;
        acc[j] = sum;
      }
      break;
    }
    default: {  // AMP.S: per column, the FMA chain from the accumulator over k = 0..3, RNE
      uint32_t x[kRows];
      std::memcpy(x, mem, kStep);
      const uint32_t* const w = ampWeights_.data() + bank * kRows * kCols;
      if (fp::kHostFmaChains) {  // the same chains on the host's FMA unit (fma_chain.hpp)
        fp::fmaChain4(x, w, kRows, acc);
        break;
      }
      for (unsigned j = 0; j < kCols; ++j) {
        uint32_t sum = acc[j];
        for (unsigned k = 0; k < kRows; ++k) {
          sum = fp::madd_inline(x[k], w[k * kCols + j], sum, fp::kRNE).value;
        }
        acc[j] = sum;
      }
      break;
    }
  }
  return true;
}

// Fetch (through the decode cache, or the stale word the fetch-timing rule gives), execute by
// instruction class, then retire: x0, pc, the context's next slot, instret, the record, and the
// tile's stop on EXIT or SYNC.
template <bool kTrace>
inline TileModel::Step TileModel::issue(unsigned c, uint64_t cycle) {
  Context& ctx = ctx_[c];
  const uint32_t pc = ctx.pc;
  ctx.busySlots++;
  if (pc >= config_.memBytes) return raise(c, cycle, TESS_CAUSE_INSN_ACCESS, pc);
  // Only reachable through RUN with an unaligned start pc: reported at the worker's first fetch.
  if (pc & 3) return raise(c, cycle, TESS_CAUSE_INSN_MISALIGNED, pc);
  // The decoded instruction is used in place: a store below may invalidate its cache line (the
  // tag), but nothing rewrites the line before the next fetch.
  const DecodedInsn* insn;
  DecodedInsn staleInsn;
  uint32_t word;
  if (lastStoreCycle() + 2 >= cycle && staleFetch(pc, cycle, word)) [[unlikely]] {
    // Not cached: the line must reflect the new memory from t+3 on.
    staleInsn = decodeInsn(word, config_.hasFpu, config_.hasMulDiv, config_.hasMatrixUnit);
    insn = &staleInsn;
  } else {
    CacheLine& line = decodeCache_[(pc >> 2) & (kDecodeCacheLines - 1)];
    std::memcpy(&word, mem_.data() + pc, 4);
    if (line.tag != pc) [[unlikely]] {
      line.insn = decodeInsn(word, config_.hasFpu, config_.hasMulDiv, config_.hasMatrixUnit);
      line.tag = pc;
    }
    insn = &line.insn;
  }
  const DecodedInsn& d = *insn;
  const uint32_t a = ctx.x[d.rs1];
  Issue s{c,
          cycle,
          ctx,
          d,
          pc,
          word,
          a,
          ctx.x[d.rs2],
          a + static_cast<uint32_t>(d.imm),
          pc + 4,
          cycle + kRound,
          false,
          false};

  // One case per opcode, calling its class's handler instantiated for it: one jump table.
  bool ok = true;
  switch (d.op) {
    case Op::Illegal:
      return raise(c, cycle, TESS_CAUSE_ILLEGAL_INSN, word);
#define TESS_ISSUE(handler, op) \
  case Op::op:                  \
    ok = handler<Op::op>(s);    \
    break;
      TESS_ISSUE(execIntAlu, Lui)
      TESS_ISSUE(execIntAlu, Auipc)
      TESS_ISSUE(execIntAlu, Addi)
      TESS_ISSUE(execIntAlu, Slti)
      TESS_ISSUE(execIntAlu, Sltiu)
      TESS_ISSUE(execIntAlu, Xori)
      TESS_ISSUE(execIntAlu, Ori)
      TESS_ISSUE(execIntAlu, Andi)
      TESS_ISSUE(execIntAlu, Slli)
      TESS_ISSUE(execIntAlu, Srli)
      TESS_ISSUE(execIntAlu, Srai)
      TESS_ISSUE(execIntAlu, Add)
      TESS_ISSUE(execIntAlu, Sub)
      TESS_ISSUE(execIntAlu, Sll)
      TESS_ISSUE(execIntAlu, Slt)
      TESS_ISSUE(execIntAlu, Sltu)
      TESS_ISSUE(execIntAlu, Xor)
      TESS_ISSUE(execIntAlu, Srl)
      TESS_ISSUE(execIntAlu, Sra)
      TESS_ISSUE(execIntAlu, Or)
      TESS_ISSUE(execIntAlu, And)
      TESS_ISSUE(execJump, Jal)
      TESS_ISSUE(execJump, Jalr)
      TESS_ISSUE(execJump, Beq)
      TESS_ISSUE(execJump, Bne)
      TESS_ISSUE(execJump, Blt)
      TESS_ISSUE(execJump, Bge)
      TESS_ISSUE(execJump, Bltu)
      TESS_ISSUE(execJump, Bgeu)
      TESS_ISSUE(execLoad, Lb)
      TESS_ISSUE(execLoad, Lh)
      TESS_ISSUE(execLoad, Lw)
      TESS_ISSUE(execLoad, Lbu)
      TESS_ISSUE(execLoad, Lhu)
      TESS_ISSUE(execLoad, Flw)
      TESS_ISSUE(execStore, Sb)
      TESS_ISSUE(execStore, Sh)
      TESS_ISSUE(execStore, Sw)
      TESS_ISSUE(execStore, Fsw)
      TESS_ISSUE(execSystem, Fence)
      TESS_ISSUE(execSystem, Ecall)
      TESS_ISSUE(execSystem, Ebreak)
      TESS_ISSUE(execSystem, Csrrw)
      TESS_ISSUE(execSystem, Csrrs)
      TESS_ISSUE(execSystem, Csrrc)
      TESS_ISSUE(execSystem, Csrrwi)
      TESS_ISSUE(execSystem, Csrrsi)
      TESS_ISSUE(execSystem, Csrrci)
      TESS_ISSUE(execMulDiv, Mul)
      TESS_ISSUE(execMulDiv, Mulh)
      TESS_ISSUE(execMulDiv, Mulhsu)
      TESS_ISSUE(execMulDiv, Mulhu)
      TESS_ISSUE(execMulDiv, Div)
      TESS_ISSUE(execMulDiv, Divu)
      TESS_ISSUE(execMulDiv, Rem)
      TESS_ISSUE(execMulDiv, Remu)
      TESS_ISSUE(execFp, Fmadd)
      TESS_ISSUE(execFp, Fmsub)
      TESS_ISSUE(execFp, Fnmsub)
      TESS_ISSUE(execFp, Fnmadd)
      TESS_ISSUE(execFp, Fadd)
      TESS_ISSUE(execFp, Fsub)
      TESS_ISSUE(execFp, Fmul)
      TESS_ISSUE(execFp, Fdiv)
      TESS_ISSUE(execFp, Fsqrt)
      TESS_ISSUE(execFp, Fsgnj)
      TESS_ISSUE(execFp, Fsgnjn)
      TESS_ISSUE(execFp, Fsgnjx)
      TESS_ISSUE(execFp, Fmin)
      TESS_ISSUE(execFp, Fmax)
      TESS_ISSUE(execFp, FcvtWS)
      TESS_ISSUE(execFp, FcvtWuS)
      TESS_ISSUE(execFp, FmvXW)
      TESS_ISSUE(execFp, Feq)
      TESS_ISSUE(execFp, Flt)
      TESS_ISSUE(execFp, Fle)
      TESS_ISSUE(execFp, Fclass)
      TESS_ISSUE(execFp, FcvtSW)
      TESS_ISSUE(execFp, FcvtSWu)
      TESS_ISSUE(execFp, FmvWX)
      TESS_ISSUE(execAmp, AmpLw)
      TESS_ISSUE(execAmp, AmpS)
      TESS_ISSUE(execAmp, AmpLa)
      TESS_ISSUE(execAmp, AmpSa)
      TESS_ISSUE(execAmp, AmpRd)
      TESS_ISSUE(execAmp, AmpClr)
      TESS_ISSUE(execAmp, AmpH)
      TESS_ISSUE(execAmp, AmpCvtHs)
      TESS_ISSUE(execAmp, AmpCvtHsSr)
      TESS_ISSUE(execAmp, AmpCvtShLo)
      TESS_ISSUE(execAmp, AmpCvtShHi)
      TESS_ISSUE(execAmp, AmpSeed)
      TESS_ISSUE(execAmp, AmpStride)
      TESS_ISSUE(execAmp, AmpRows)
#undef TESS_ISSUE
  }

  if (!ok) return Step::Stop;  // a trap: raise() stopped the tile
  ctx.x[0] = 0;
  ctx.pc = s.nextPc;
  ctx.next = s.next;
  if (ctx.longPending) return Step::Continue;  // retires (and is recorded) at cycle + 42
  ctx.instret++;
  if constexpr (kTrace) {
    emit(cycle, c, pc, word, d.dest, d.rd, d.dest == Dest::F ? ctx.f[d.rd] : ctx.x[d.rd]);
  }
  if (s.exited) return halt(cycle);
  if (s.arrived) {
    // Every worker is idle, so nothing else happens on this tile until the chip resumes it.
    state_ = TileState::Arrived;
    cycles_ = std::max(cycles_, cycle + 1);
    return Step::Stop;
  }
  return Step::Continue;
}

template TileState TileModel::runLoop<true, false>(uint64_t);
template TileState TileModel::runLoop<false, false>(uint64_t);
template TileState TileModel::runLoop<false, true>(uint64_t);

uint64_t TileModel::jitEnter(uint64_t t, uint64_t untilCycle) {
  if (ctx_[0].longPending || !jitEligible(t)) return t;
  jitTry_ = false;
  return jitRun(t, untilCycle);
}

JitStop TileModel::jitStopAt(unsigned c) const {
  const Context& ctx = ctx_[c];
  if (ctx.pc >= config_.memBytes || (ctx.pc & 3)) return JitStop::Other;
  uint32_t word;
  std::memcpy(&word, mem_.data() + ctx.pc, 4);
  const DecodedInsn d = decodeInsn(word, config_.hasFpu, config_.hasMulDiv, config_.hasMatrixUnit);
  if (d.op >= Op::AmpLw && d.op <= Op::AmpRows) return JitStop::Amp;
  if (d.op >= Op::Csrrw && d.op <= Op::Csrrci) return JitStop::Csr;
  if (d.longOp) return JitStop::LongOp;
  unsigned size = 0;
  switch (d.op) {
    case Op::Lb:
    case Op::Lbu:
    case Op::Sb:
      size = 1;
      break;
    case Op::Lh:
    case Op::Lhu:
    case Op::Sh:
      size = 2;
      break;
    case Op::Lw:
    case Op::Sw:
    case Op::Flw:
    case Op::Fsw:
      size = 4;
      break;
    default:
      break;
  }
  if (size != 0) {
    const uint32_t addr = ctx.x[d.rs1] + static_cast<uint32_t>(d.imm);
    if (addr & (size - 1)) return JitStop::Other;
    return inSramAccess(addr, size) ? JitStop::Other : JitStop::Mmio;
  }
  // Every other F instruction stops translated code only by its rounding mode (or a host
  // without FMA3, where none is translated).
  if (d.op >= Op::Flw && d.op <= Op::FmvWX) return JitStop::FpMode;
  return JitStop::Other;
}

void TileModel::addJitStatistics(ModelJitStatistics& s) const {
  s.instructions += executedInstructions();
  s.translated += jitInstructions_;
  s.windows += jitWindows_;
  s.windowFallbacks += jitWindowFallbacks_;
  for (unsigned r = 0; r < kJitStopReasons; ++r) {
    s.windowUndone[r] += jitWindowUndone_[r];
    s.windowCut[r] += jitWindowCut_[r];
    s.windowSkipped[r] += jitWindowSkipped_[r];
    s.blockExits[r] += jitBlockExits_[r];
  }
}

#if TESS_HAVE_JIT
void TileModel::jitFrameFor(Context& ctx) {
  TileJit::Frame& f = jit_->frame();
  f.x = ctx.x.data();
  f.f = ctx.f.data();
  f.fflags = &ctx.fflags;
  f.frm = ctx.frm;  // no translated instruction writes it
  f.mem = mem_.data();
  f.owner = this;
  f.store = &TileModel::jitStore;
}

uint64_t TileModel::jitRun(uint64_t t, uint64_t untilCycle) {
  Context& ctx = ctx_[0];
  TileJit& jit = *jit_;
  TileJit::Frame& f = jit.frame();
  jitFrameFor(ctx);
  static_assert(offsetof(StoreNote, cycle) == TileJit::kNoteCycle &&
                offsetof(StoreNote, wordAddr) == TileJit::kNoteWordAddr &&
                offsetof(StoreNote, words) == TileJit::kNoteWords &&
                offsetof(StoreNote, oldWords) == TileJit::kNoteOld);
  static_assert(sizeof(CacheLine) == TileJit::kDecodeLineBytes && offsetof(CacheLine, tag) == 0 &&
                kDecodeCacheLines == TileJit::kDecodeLines && kNoTag == 0xffffffffu);
  f.logging = &logging_;
  f.tags = nullptr;  // one context: nothing to record, nothing to undo
  f.undo = nullptr;
  f.decodeLines = reinterpret_cast<uint8_t*>(decodeCache_.data());
  // Every instruction of this call issues at t + 6 i: the same cycle parity, the same note.
  f.note = reinterpret_cast<uint8_t*>(&recentStores_[t & 1]);
  uint64_t done = 0;
  for (;;) {
    const TileJit::Block* b = jit.lookup(ctx.pc, mem_.data());
    // Not translated, or its last instruction would issue at or after untilCycle.
    if (b == nullptr) {
      jitBlockExits_[static_cast<unsigned>(jitStopAt(0))]++;
      break;
    }
    if (t + uint64_t{kRound} * (b->length - 1) >= untilCycle) {
      jitBlockExits_[static_cast<unsigned>(JitStop::Limit)]++;
      break;
    }
    f.cycle = t;
    // The slots t, t + 6, ... below untilCycle (at least b->length here), at most 2^30.
    f.budget = static_cast<uint32_t>(
        std::min<uint64_t>((untilCycle - 1 - t) / kRound + 1, uint64_t{1} << 30));
    const uint32_t r = b->fn(&f);
    const uint32_t n = r & ~TileJit::kSideExit;
    ctx.pc = f.pc;
    t += uint64_t{kRound} * n;
    done += n;
    if (r & TileJit::kSideExit) {
      jitBlockExits_[static_cast<unsigned>(jitStopAt(0))]++;
      break;
    }
  }
  // Each instruction used its slot and retired; the context issues again a round later.
  ctx.instret += done;
  ctx.busySlots += done;
  jitInstructions_ += done;
  ctx.next = t;
  return t;
}

uint32_t TileModel::jitStore(void* frame, uint32_t addr, uint32_t value, uint32_t index,
                             uint32_t size) {
  TileJit::Frame& f = *static_cast<TileJit::Frame*>(frame);
  TileModel& m = *static_cast<TileModel*>(f.owner);
  if (m.jitWindowActive_)
    return m.jitWindowStore(addr, value, f.cycle + uint64_t{kRound} * index, size);
  // As execStore: the note (fetch timing, undo log, decode cache) then the bytes.
  m.noteStore(addr, f.cycle + uint64_t{kRound} * index);
  std::memcpy(m.mem_.data() + addr, &value, size);
  if (m.jit_->covers(addr & ~3u)) {
    m.jit_->requestFlush();
    return 1;
  }
  return 0;
}

void TileModel::jitAccess(void* frame, uint32_t addr, uint32_t write) {
  TileModel& m = *static_cast<TileModel*>(static_cast<TileJit::Frame*>(frame)->owner);
  m.jitRecord(addr >> 2, write != 0, m.jitWindowCtx_);
}

void TileModel::jitRecord(uint32_t wordIndex, bool write, unsigned c) {
  uint32_t& stamp = jitTags_[wordIndex];
  const uint32_t mine = jitWindowId_ << 4 | c | (write ? TileJit::kStampWrite : 0);
  if (stamp >> 4 != jitWindowId_) {  // first touch in this window
    stamp = mine;
    return;
  }
  const uint32_t owner = stamp & TileJit::kStampOwner;
  if (owner == c) {  // only c touched it: a write of c makes it written
    stamp |= mine;
    return;
  }
  // Another context (or several) touched it: two readers share it, anything else conflicts.
  if (write || (stamp & TileJit::kStampWrite)) {
    jitConflict_ = true;
    return;
  }
  stamp |= TileJit::kSharedOwner;
}

uint32_t TileModel::jitWindowStore(uint32_t addr, uint32_t value, uint64_t cycle, uint32_t size) {
  // As noteStore and execStore, except the fetch-timing note (set when the window is kept) and
  // with the window's own undo log. A store into translated code undoes the window.
  const uint32_t wordAddr = addr & ~3u;
  uint32_t old;
  std::memcpy(&old, mem_.data() + wordAddr, 4);
  if (jit_->covers(wordAddr)) jitConflict_ = true;
  jitLogPush(WindowStore{wordAddr, old, cycle, jitWindowCtx_});
  if (logging_) undoLog_.push_back(UndoEntry{wordAddr, old});
  CacheLine& line = decodeCache_[(wordAddr >> 2) & (kDecodeCacheLines - 1)];
  if (line.tag == wordAddr) line.tag = kNoTag;
  std::memcpy(mem_.data() + addr, &value, size);
  return jitConflict_ ? 1 : 0;
}

void TileModel::jitLogPush(const WindowStore& e) {
  TileJit::Frame& f = jit_->frame();
  if (f.undoCount == jitWindowLog_.size()) {
    jitWindowLog_.resize(2 * jitWindowLog_.size() + 1024);
    f.undo = reinterpret_cast<uint8_t*>(jitWindowLog_.data());
    f.undoCapacity = static_cast<uint32_t>(jitWindowLog_.size());
  }
  jitWindowLog_[f.undoCount++] = e;
}

void TileModel::jitWindowUndo(unsigned c) {
  TileJit::Frame& f = jit_->frame();
  uint32_t kept = 0;
  for (size_t k = f.undoCount; k-- > 0;) {
    const WindowStore& e = jitWindowLog_[k];
    if (c != kMaxContexts && e.ctx != c) continue;
    std::memcpy(mem_.data() + e.wordAddr, &e.oldWord, 4);
    CacheLine& line = decodeCache_[(e.wordAddr >> 2) & (kDecodeCacheLines - 1)];
    if (line.tag == e.wordAddr) line.tag = kNoTag;
    // A block translated in the window from a word it then restores.
    if (jit_->covers(e.wordAddr)) jit_->requestFlush();
  }
  for (uint32_t k = 0; k < f.undoCount; ++k) {
    if (c != kMaxContexts && jitWindowLog_[k].ctx != c) jitWindowLog_[kept++] = jitWindowLog_[k];
  }
  f.undoCount = kept;
}

bool TileModel::jitWindowEnter(uint64_t t, uint64_t untilCycle) {
  // The window [t, end): at most jitWindowRounds_ rounds, before the limit. Its members: the
  // contexts that act in it (issue, or retire a pending long op first). t is the earliest slot
  // of every context.
  // Long windows leave fewer tails (the instructions of a member's last block that does not fit
  // before the limit, which a window steps one by one), but a conflict found late undoes more:
  // the length doubles from kMinWindowRounds after each window kept whole, up to
  // kMaxWindowRounds, and falls back to kMinWindowRounds after a conflict (docs/benchmarks.md,
  // "Longer windows").
  const uint64_t end = std::min(untilCycle, t + uint64_t{kRound} * jitWindowRounds_);
  bool workers = false;
  for (unsigned c = 1; c < kMaxContexts; ++c) {
    if (ctx_[c].next != kNever) workers = true;
  }
  if (!workers) {
    // Context 0 alone: its own translated path (jitRun). Look again a few rounds later (a RUN).
    jitWindowAt_ = t + kRound * 4;
    return false;
  }
  // A fetch at t or t + 1 must not be one the fetch-timing rule makes stale.
  if (lastStoreCycle() + 2 >= t) {
    jitWindowAt_ = lastStoreCycle() + 3;
    jitWindowSkipped_[static_cast<unsigned>(JitStop::StaleFetch)]++;
    return false;
  }
  unsigned members[kMaxContexts];
  unsigned count = 0;
  for (unsigned c = 0; c < kMaxContexts; ++c) {
    if (ctx_[c].next < end) members[count++] = c;
  }
  // Code that keeps stopping windows early (FP between integer stretches) makes the attempts
  // rarer: after a fallback or a window cut below kShortRounds, the next waits 1, 2, 4 …
  // kMaxBackoff rounds; a window that runs long enough tries again at once.
  constexpr uint32_t kMaxBackoff = 256, kShortRounds = 32;
  jitWindowStop_ = JitStop::Limit;  // when no context acts before the end
  const uint64_t limit = end > t && count > 0 ? jitWindow(t, end, members, count) : 0;
  if (jitWindowStop_ == JitStop::Conflict) {
    jitWindowRounds_ = kMinWindowRounds;
  } else if (limit == end && end < untilCycle) {
    jitWindowRounds_ = std::min(2 * jitWindowRounds_, kMaxWindowRounds);
  }
  if (limit == 0) {
    jitWindowFallbacks_++;
    jitWindowUndone_[static_cast<unsigned>(jitWindowStop_)]++;
    jitWindowAt_ = t + uint64_t{kRound} * jitBackoff_;
    jitBackoff_ = std::min(jitBackoff_ * 2, kMaxBackoff);
    return false;
  }
  jitWindows_++;
  if (limit < end) jitWindowCut_[static_cast<unsigned>(jitWindowStop_)]++;
  if (limit < end && limit - t < uint64_t{kRound} * kShortRounds) {
    jitWindowAt_ = limit + uint64_t{kRound} * jitBackoff_;
    jitBackoff_ = std::min(jitBackoff_ * 2, kMaxBackoff);
  } else {
    jitBackoff_ = 1;
  }
  return true;
}

namespace {

// The F instructions a window may interpret (besides what a block may hold): one round, and
// touching only their context's registers and fflags (and, for FLW/FSW, one SRAM word, recorded
// as the integer accesses are). FDIV and FSQRT are long ops; a dynamic rounding mode while frm
// holds a reserved value traps, which a window never does.
bool windowStepsFp(const DecodedInsn& d, uint8_t frm) {
  if (d.op < Op::Flw || d.op > Op::FmvWX || d.op == Op::Fdiv || d.op == Op::Fsqrt) return false;
  return d.rm != kRmDynamic || frm <= 4;
}

// The matrix unit's instructions (all of one round, docs/tile.md "Matrix unit: Timing").
bool isAmp(Op op) {
  return op >= Op::AmpLw && op <= Op::AmpRows;
}

// The CSR instructions: every CSR reads from its own context's state (fflags, frm, instret), the
// issue cycle or the tile's constants (ids, sizes), and writes only fflags/frm.
bool isCsr(Op op) {
  return op >= Op::Csrrw && op <= Op::Csrrci;
}

// The long ops (DIV/DIVU/REM/REMU, FDIV.S, FSQRT.S): their context issues nothing until the
// retirement, which touches only its own registers and counters. FDIV and FSQRT trap on a
// dynamic rounding mode while frm holds a reserved value, which a window never does.
bool windowStepsLongOp(const DecodedInsn& d, uint8_t frm) {
  if (!d.longOp) return false;
  return (d.op != Op::Fdiv && d.op != Op::Fsqrt) || d.rm != kRmDynamic || frm <= 4;
}

// What a window may run besides translated blocks: the instructions a block may hold, the F
// extension's one-round instructions, the long ops, the matrix unit's and the CSR instructions.
bool windowSteps(const DecodedInsn& d, uint8_t frm) {
  return TileJit::translates(d.op) || windowStepsFp(d, frm) || windowStepsLongOp(d, frm) ||
         isAmp(d.op) || isCsr(d.op);
}

}  // namespace

uint64_t TileModel::jitWindow(uint64_t t, uint64_t end, const unsigned* members, unsigned count) {
  TileJit& jit = *jit_;
  // Every member must start with a translated block (or the retirement of its long op), else
  // nothing runs: a member whose next instruction is one a window only steps (the matrix unit,
  // a CSR, a long op, FP under a dynamic rounding mode) is in code a window does not speed up
  // (the matmul's lock step: the unit's instructions with a few others between them), where
  // windows cost more than the interpreter (docs/benchmarks.md, "The MLP on the translating
  // engine"). Such instructions still run as steps inside a window that meets them.
  for (unsigned k = 0; k < count; ++k) {
    const Context& ctx = ctx_[members[k]];
    if (ctx.longPending) continue;  // it retires first (jitWindowRun)
    if (jit.lookup(ctx.pc, mem_.data()) != nullptr) continue;
    jitWindowStop_ = jitStopAt(members[k]);
    return 0;
  }
  // One stamp per SRAM word, then one per weight bank of the matrix unit.
  if (jitTags_.empty()) jitTags_.assign(config_.memBytes / 4 + TESS_AMP_BANKS, 0);
  if (++jitWindowId_ >= (1u << 28)) {  // stamps of old windows would match again
    std::fill(jitTags_.begin(), jitTags_.end(), 0);
    jitWindowId_ = 1;
  }
  jitSaved_ = ctx_;
  const std::array<StoreNote, 2> notes = recentStores_;
  const size_t undoSize = undoLog_.size();
  static_assert(offsetof(WindowStore, wordAddr) == TileJit::kUndoWordAddr &&
                offsetof(WindowStore, oldWord) == TileJit::kUndoOld &&
                offsetof(WindowStore, cycle) == TileJit::kUndoCycle &&
                sizeof(WindowStore) == TileJit::kUndoBytes);
  TileJit::Frame& f = jit.frame();
  if (jitWindowLog_.empty()) jitWindowLog_.resize(4096);
  f.undo = reinterpret_cast<uint8_t*>(jitWindowLog_.data());
  f.undoCapacity = static_cast<uint32_t>(jitWindowLog_.size());
  f.undoCount = 0;
  jitConflict_ = false;
  jitStepConflict_ = false;
  jitAmpSaved_ = false;
  jitWindowActive_ = true;
  // Every member to the limit, which drops to where one stops early (an instruction it cannot
  // run here); the members that ran past it run again from the start of the window to it.
  uint64_t limit = end;
  std::array<uint64_t, kMaxContexts> stop{};
  jitWindowStop_ = JitStop::Limit;
  for (unsigned k = 0; k < count && !jitConflict_; ++k) {
    stop[members[k]] = jitWindowRun(members[k], limit);
    if (stop[members[k]] < limit) jitWindowStop_ = jitMemberStop_[members[k]];
    limit = std::min(limit, stop[members[k]]);
  }
  if (!jitConflict_ && limit > t) {
    // Without a conflict each member's run depends on its own accesses only, so running a
    // prefix of it again gives the same results.
    for (unsigned k = 0; k < count && !jitConflict_; ++k) {
      const unsigned c = members[k];
      if (stop[c] < limit + kRound) continue;  // no instruction at or after the limit
      // Stopped at a long op issued before the limit that retires after it: as at the limit.
      if (ctx_[c].longPending && ctx_[c].longOp.issueCycle < limit) continue;
      jitWindowUndo(c);
      jitAmpUndo(c);
      ctx_[c] = jitSaved_[c];
      if (jitWindowRun(c, limit) < limit) jitConflict_ = true;  // cannot happen: kept exact
    }
  }
  jitWindowActive_ = false;
  if (jitConflict_) jitWindowStop_ = JitStop::Conflict;
  if (jitConflict_ || limit <= t) {
    jitWindowUndo(kMaxContexts);
    jitAmpUndo(kMaxContexts);
    undoLog_.resize(undoSize);
    ctx_ = jitSaved_;
    recentStores_ = notes;
    return 0;
  }
  // Kept: the fetch-timing notes of the stores at limit - 2 and limit - 1 (older ones no longer
  // matter), and the statistics.
  recentStores_ = notes;
  for (uint32_t k = 0; k < f.undoCount; ++k) {
    const WindowStore& e = jitWindowLog_[k];
    if (e.cycle + 2 < limit) continue;
    StoreNote& note = recentStores_[e.cycle & 1];
    // An AMP.SA's four words: consecutive entries of one cycle (one instruction issues per
    // cycle, and a context's entries stay in issue order).
    if (note.cycle == e.cycle && note.words < note.oldWords.size() &&
        e.wordAddr == note.wordAddr + 4 * note.words) {
      note.oldWords[note.words++] = e.oldWord;
      continue;
    }
    note.cycle = e.cycle;
    note.wordAddr = e.wordAddr;
    note.words = 1;
    note.oldWords[0] = e.oldWord;
  }
  for (unsigned k = 0; k < count; ++k) jitInstructions_ += jitWindowDone_[members[k]];
  return limit;
}

uint64_t TileModel::jitWindowRun(unsigned c, uint64_t limit) {
  Context& ctx = ctx_[c];
  TileJit& jit = *jit_;
  TileJit::Frame& f = jit.frame();
  jitFrameFor(ctx);
  f.access = &TileModel::jitAccess;
  // Translated stores log inline unless the chip logs too (then through jitStore), and write
  // their note to a scratch one: the kept window sets the notes itself.
  f.logging = &logging_;
  f.decodeLines = reinterpret_cast<uint8_t*>(decodeCache_.data());
  f.note = reinterpret_cast<uint8_t*>(&jitScratchNote_);
  const uint32_t firstEntry = f.undoCount;
  f.tags = jitTags_.data();
  f.window = jitWindowId_;
  f.tag = jitWindowId_ << 4 | c;
  jitWindowCtx_ = c;
  uint64_t t = ctx.next;
  uint64_t done = 0;
  if (ctx.longPending && t < limit) {  // a long op issued before the window retires first
    retireLongOp<false>(c, t);
    t += kRound;
  }
  while (t < limit && !jitConflict_ && !ctx.longPending) {
    const uint64_t translations = jit.translations();
    const TileJit::Block* b = jit.lookup(ctx.pc, mem_.data());
    if (b != nullptr && jit.translations() != translations) {
      // Translated now from memory this window may have written: it must hold the words as
      // they were before the window.
      for (uint32_t k = 0; k < b->length; ++k) {
        const uint32_t stamp = jitTags_[(ctx.pc >> 2) + k];
        if (stamp >> 4 == jitWindowId_ && (stamp & TileJit::kStampWrite)) jitConflict_ = true;
      }
      if (jitConflict_) break;
    }
    if (b != nullptr && t + uint64_t{kRound} * (b->length - 1) < limit) {
      f.cycle = t;
      f.budget = static_cast<uint32_t>(
          std::min<uint64_t>((limit - 1 - t) / kRound + 1, uint64_t{1} << 30));
      const uint32_t r = b->fn(&f);
      const uint32_t n = r & ~TileJit::kSideExit;
      ctx.pc = f.pc;
      t += uint64_t{kRound} * n;
      done += n;
      // Counted at once: an interpreted CSR step may read instret.
      ctx.instret += n;
      ctx.busySlots += n;
      if (!(r & TileJit::kSideExit)) continue;
    }
    if (t >= limit) break;
    if (!jitWindowStep(c, t)) {
      if (jitStepConflict_) {
        // The step's access met another context's: c stops before it, the window's limit
        // drops to t (jitWindow), and nothing before t touched a word another context wrote.
        jitStepConflict_ = false;
        jitMemberStop_[c] = JitStop::Conflict;
      } else {
        jitMemberStop_[c] = jitConflict_ ? JitStop::Conflict : jitStopAt(c);
      }
      break;
    }
    if (ctx.longPending) {
      // A long op: the context's next action is its retirement (retireLongOp), then it issues
      // a round later; one that retires at or after the limit stays pending for the runLoop.
      t = ctx.next;
      if (t >= limit) break;
      retireLongOp<false>(c, t);
    }
    t += kRound;
  }
  if (t >= limit) jitMemberStop_[c] = JitStop::Limit;
  ctx.next = t;
  jitWindowDone_[c] = done;
  for (uint32_t k = firstEntry; k < f.undoCount; ++k) jitWindowLog_[k].ctx = c;
  f.tags = nullptr;
  return t;
}

bool TileModel::jitWindowStep(unsigned c, uint64_t t) {
  Context& ctx = ctx_[c];
  const uint32_t pc = ctx.pc;
  if (pc >= config_.memBytes || (pc & 3)) return false;
  // No fetch in a window is stale (it starts after the fetch-timing window and keeps its notes
  // out of it), so the decode cache holds what issue() will execute.
  CacheLine& line = decodeCache_[(pc >> 2) & (kDecodeCacheLines - 1)];
  if (line.tag != pc) {
    uint32_t word;
    std::memcpy(&word, mem_.data() + pc, 4);
    line.insn = decodeInsn(word, config_.hasFpu, config_.hasMulDiv, config_.hasMatrixUnit);
    line.tag = pc;
  }
  const DecodedInsn d = line.insn;
  if (isAmp(d.op)) return jitWindowAmp(c, t, d);
  if (!windowSteps(d, ctx.frm)) return false;
  const uint32_t addr = ctx.x[d.rs1] + static_cast<uint32_t>(d.imm);
  unsigned size = 0;
  bool store = false;
  switch (d.op) {
    case Op::Lb:
    case Op::Lbu:
      size = 1;
      break;
    case Op::Lh:
    case Op::Lhu:
      size = 2;
      break;
    case Op::Lw:
    case Op::Flw:
      size = 4;
      break;
    case Op::Sb:
      size = 1;
      store = true;
      break;
    case Op::Sh:
      size = 2;
      store = true;
      break;
    case Op::Sw:
    case Op::Fsw:
      size = 4;
      store = true;
      break;
    case Op::Jalr:
      if ((addr & ~1u) & 3) return false;
      break;
    case Op::Jal:
    case Op::Beq:
    case Op::Bne:
    case Op::Blt:
    case Op::Bge:
    case Op::Bltu:
    case Op::Bgeu:
      if ((pc + static_cast<uint32_t>(d.imm)) & 3) return false;
      break;
    default:
      break;
  }
  if (size != 0 && ((addr & (size - 1)) != 0 || !inSramAccess(addr, size))) return false;
  if (store && jit_->covers(addr & ~3u)) return false;
  jitRecord(pc >> 2, false, c);  // the fetch
  if (size != 0) jitRecord(addr >> 2, store, c);
  if (jitConflict_) return jitStepStop();
  if (store) {
    uint32_t old;
    std::memcpy(&old, mem_.data() + (addr & ~3u), 4);
    jitLogPush(WindowStore{addr & ~3u, old, t, c});
  }
  // The interpreter's own step; its fetch-timing note is set when the window is kept.
  const std::array<StoreNote, 2> notes = recentStores_;
  issue<false>(c, t);
  recentStores_ = notes;
  if (isCsr(d.op)) jit_->frame().frm = ctx.frm;  // a CSR write may change it; blocks read frm here
  return true;
}

bool TileModel::jitStepStop() {
  // The stamps this step set stay: they only make later accesses conflict more often.
  jitConflict_ = false;
  jitStepConflict_ = true;
  return false;
}

bool TileModel::jitWindowAmp(unsigned c, uint64_t t, const DecodedInsn& d) {
  constexpr uint32_t kStep = TESS_AMP_STEP_BYTES;
  const Context& ctx = ctx_[c];
  const bool access = (d.op == Op::AmpLw || d.op == Op::AmpS || d.op == Op::AmpLa ||
                       d.op == Op::AmpSa || d.op == Op::AmpH) &&
                      !ampSkips(d.op, c, d);
  const bool store = access && d.op == Op::AmpSa;
  const uint32_t addr = access ? ampAddress(d.op, c, d, ctx.x[d.rs1]) : 0;
  if (access) {
    // A trap (misaligned, outside SRAM) is the interpreter's.
    if (addr % kStep != 0 || config_.memBytes < kStep || addr > config_.memBytes - kStep)
      return false;
    if (store && jit_->coversRange(addr, kStep)) return false;
  }
  jitRecord(ctx.pc >> 2, false, c);  // the fetch
  if (access) {
    for (uint32_t i = 0; i < kStep / 4; ++i) jitRecord(addr / 4 + i, store, c);
  }
  // The weight bank: AMP.LW writes one of its rows, AMP.S and AMP.H read all of it. Its stamp
  // sits past SRAM's, so two contexts sharing a bank in one window conflict as on a word.
  const uint32_t bankTag = config_.memBytes / 4 + (d.rs3 & 1);
  if (d.op == Op::AmpLw) jitRecord(bankTag, true, c);
  if (d.op == Op::AmpS || d.op == Op::AmpH) jitRecord(bankTag, false, c);
  if (jitConflict_) return jitStepStop();
  if (!jitAmpSaved_) {
    jitSavedWeights_ = ampWeights_;
    jitSavedAcc_ = ampAcc_;
    jitSavedSr_ = ampSr_;
    jitSavedCfg_ = ampCfg_;
    jitAmpSaved_ = true;
  }
  if (store) {
    for (uint32_t i = 0; i < kStep / 4; ++i) {
      uint32_t old;
      std::memcpy(&old, mem_.data() + addr + 4 * i, 4);
      jitLogPush(WindowStore{addr + 4 * i, old, t, c});
    }
  }
  const std::array<StoreNote, 2> notes = recentStores_;
  issue<false>(c, t);
  recentStores_ = notes;
  return true;
}

void TileModel::jitAmpUndo(unsigned c) {
  if (!jitAmpSaved_) return;
  if (c == kMaxContexts) {
    ampWeights_ = jitSavedWeights_;
    ampAcc_ = jitSavedAcc_;
    ampSr_ = jitSavedSr_;
    ampCfg_ = jitSavedCfg_;
    return;
  }
  ampAcc_[c] = jitSavedAcc_[c];
  ampSr_[c] = jitSavedSr_[c];
  ampCfg_[c] = jitSavedCfg_[c];
  // A bank c wrote in this window: no other context touched it (else a conflict).
  constexpr uint32_t kBankWords = TESS_AMP_ROWS * TESS_AMP_COLS;
  for (uint32_t b = 0; b < TESS_AMP_BANKS; ++b) {
    const uint32_t stamp = jitTags_[config_.memBytes / 4 + b];
    if (stamp >> 4 == jitWindowId_ && (stamp & TileJit::kStampWrite) &&
        (stamp & TileJit::kStampOwner) == c) {
      std::copy_n(jitSavedWeights_.begin() + b * kBankWords, kBankWords,
                  ampWeights_.begin() + b * kBankWords);
    }
  }
}
#else
uint64_t TileModel::jitRun(uint64_t t, uint64_t) {
  return t;
}

bool TileModel::jitWindowEnter(uint64_t, uint64_t) {
  return false;
}

uint32_t TileModel::jitStore(void*, uint32_t, uint32_t, uint32_t, uint32_t) {
  return 0;
}
#endif

}  // namespace tessera::model
