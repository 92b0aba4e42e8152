// Cycle-exact model of one tessera tile (docs/tile.md): up to six barrel-threaded contexts, SRAM,
// MMIO, CSRs, traps and halting. The interpreter jumps from one slot in which something happens to
// the next (an issue or a long op's retirement), so idle slots and the intermediate passes of a
// long op cost nothing; every instruction is executed completely at its issue cycle, except that a
// long op's result is committed at its retire cycle (issue + 42) so that a halt in between
// discards it, as the contract requires.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "insn_decoder.hpp"
#include "tessera/device.hpp"
#include "tessera/model_jit.hpp"
#include "zeroed_memory.hpp"

namespace tessera::model {

/// Static parameters of a tile.
struct TileConfig {
  unsigned tileId = 0;                      ///< CSR 0xCC0
  unsigned numTiles = 1;                    ///< CSR 0xCC2
  uint32_t memBytes = TESS_TILE_MEM_BYTES;  ///< SRAM bytes (CSR 0xCC3); a multiple of 4
  bool hasFpu = TESS_HAS_FPU != 0;  ///< false: integer-only, F traps (rtl/params.json HAS_FPU)
  bool hasMulDiv = TESS_HAS_MULDIV != 0;  ///< false: no M extension, M traps (HAS_MULDIV)
  /// Contexts, 2..TileModel::kMaxContexts (rtl/params.json NUM_CONTEXTS): the supervisor and
  /// contexts - 1 workers; the round stays ROUND_CYCLES long, the other slots are empty.
  unsigned contexts = TESS_NUM_CONTEXTS;
  unsigned counterBits = TESS_COUNTER_BITS;  ///< 64 or 32: counter width (params COUNTER_BITS)
  /// true: the matrix unit (docs/tile.md, "Matrix unit"; MATRIX_UNIT, needs the FPU); false: its
  /// words trap as illegal (ChipShape::hasMatrixUnit of the chip).
  bool hasMatrixUnit = TESS_MATRIX_UNIT != 0;
  /// true: run single-context stretches of RV32I/M code as translated host code (the "jit"
  /// engine, docs/tile.md "The translating engine"); needs a build with the translator
  /// (x86-64 with asmjit, kHasJit), else the constructor throws.
  bool jit = false;
};

/// True when this build has the translating engine (x86-64 hosts with asmjit).
extern const bool kHasJit;

class TileJit;

/// Every counter of s (cycles, instructions, per context, idle slots, sync-wait and exchange
/// cycles) as counters of `bits` bits hold it (wrapCounter).
void wrapCounters(TileStats& s, unsigned bits);

/// Where a tile stands after TileModel::run. Arrived: the supervisor wrote SYNC and the tile is
/// quiet (no worker runs) until the chip resumes it (docs/chip.md, "Tile MMIO").
enum class TileState { Running, Halted, Trapped, Arrived };

/// One tile: its memory, its contexts and its counters.
// Aligned to a host cache line: neighbouring tiles run on different host threads, and a tile's
// hot fields (undoLog_ written on every store, mem_ and decodeCache_ read on every instruction)
// must not share a line with the next tile's (false sharing cost the second thread a quarter of
// its speed on mk2).
class alignas(64) TileModel {
 public:
  /// Contexts a tile can have, one per slot of the barrel round (docs/tile.md, "Contexts and
  /// barrel threading"); TileConfig::contexts says how many this one has.
  static constexpr unsigned kMaxContexts = TESS_ROUND_CYCLES;

  /// A tile with zeroed memory, in the reset state.
  explicit TileModel(const TileConfig& config);

  /// Reset registers, contexts, counters and console; memory is kept.
  void reset();
  /// Copy bytes into SRAM; throws tessera::Error if the range is not inside SRAM.
  void writeMemory(uint32_t addr, std::span<const uint8_t> data);
  /// Copy bytes out of SRAM; throws tessera::Error if the range is not inside SRAM.
  void readMemory(uint32_t addr, std::span<uint8_t> data) const;

  /// Simulate until the tile halts or traps, or until every cycle below untilCycle is done.
  TileState run(uint64_t untilCycle);

  /// Cycles simulated since reset (the cycle count h + 1 once halted or trapped), in full: the
  /// tile's timing. What its cycle counter reads is this modulo 2^counterBits (stats()).
  uint64_t cycles() const { return cycles_; }
  /// Current state.
  TileState state() const { return state_; }
  /// Exit code written to EXIT (valid when Halted).
  uint32_t exitCode() const { return exitCode_; }
  /// What the trap recorded (valid when Trapped).
  const TrapInfo& trap() const { return trap_; }
  /// Console bytes since reset.
  const std::string& console() const { return console_; }
  /// Counters since reset, modulo 2^counterBits (as the RTL's counters of that width read).
  TileStats stats() const;
  /// Receive every retirement in retire-cycle order; an empty function turns records off.
  void setRetireSink(std::function<void(const RetireRecord&)> sink) { sink_ = std::move(sink); }

  // --- Chip interface (docs/chip.md): sync, exchange, checkpoints. ---
  /// SRAM bytes.
  uint32_t memBytes() const { return config_.memBytes; }
  /// Issue cycle of the SYNC store that made the tile Arrived (arrival = this + 3).
  uint64_t syncIssueCycle() const { return syncIssue_; }
  /// pc of that SYNC store.
  uint32_t syncPc() const { return syncPc_; }
  /// Its descriptor (bit 31 host sync, bits 15..0 id; other bits are dropped).
  uint32_t syncDescriptor() const { return syncDesc_; }
  /// The XCHG_PROG register (0 = no exchange program).
  uint32_t exchangeProgram() const { return xchgProg_; }
  /// Clear XCHG_PROG (done by the chip at the release).
  void clearExchangeProgram() { xchgProg_ = 0; }
  /// Leave the Arrived state: the supervisor issues next in its first slot >= cycle.
  void resumeSupervisor(uint64_t cycle);
  /// Count cycles up to `cycle` as simulated while the tile is quiet (idle slots).
  void advanceTo(uint64_t cycle) {
    if (state_ == TileState::Running || state_ == TileState::Arrived) {
      cycles_ = std::max(cycles_, cycle);
    }
  }
  /// Word of SRAM at a word-aligned address inside SRAM (the exchange engine's read port).
  uint32_t sramWord(uint32_t addr) const {
    uint32_t w;
    std::memcpy(&w, mem_.data() + addr, 4);
    return w;
  }
  /// Write a word of SRAM at a word-aligned address inside SRAM (the exchange engine's receive).
  void writeSramWord(uint32_t addr, uint32_t word);
  /// Remember the whole state so that rollback() can return to it; memory writes are logged
  /// from now on (an undo log, so the cost is one entry per store, not a copy of SRAM).
  void checkpoint();
  /// Return to the state of the last checkpoint() and stop logging.
  void rollback();
  /// Drop the checkpoint and stop logging.
  void commit();

  /// Integer register of a context (for tests and state comparison).
  uint32_t xreg(unsigned ctx, unsigned r) const { return ctx_[ctx].x[r]; }
  /// FP register bits of a context.
  uint32_t freg(unsigned ctx, unsigned r) const { return ctx_[ctx].f[r]; }
  /// pc of a context's next instruction.
  uint32_t pc(unsigned ctx) const { return ctx_[ctx].pc; }
  /// Matrix-unit accumulator acc[r][j] of a context (bits).
  uint32_t accumulator(unsigned ctx, unsigned r, unsigned j) const {
    return ampAcc_[ctx][r * TESS_AMP_COLS + j];
  }
  /// Matrix-unit weight W[b][k][j] (bits).
  uint32_t weight(unsigned b, unsigned k, unsigned j) const {
    return ampWeights_[(b * TESS_AMP_ROWS + k) * TESS_AMP_COLS + j];
  }
  /// The stochastic-rounding generator state of a context.
  uint32_t srState(unsigned ctx) const { return ampSr_[ctx]; }
  /// A context's row strides (AMP.STRIDE: of AMP.S/AMP.H inputs, of AMP.LA/AMP.SA) and row limit
  /// (AMP.ROWS).
  uint32_t strideS(unsigned ctx) const { return ampCfg_[ctx].strideS; }
  uint32_t strideC(unsigned ctx) const { return ampCfg_[ctx].strideC; }
  uint32_t rowLimit(unsigned ctx) const { return ampCfg_[ctx].rows; }
  /// fcsr of a context (frm << 5 | fflags).
  uint32_t fcsr(unsigned ctx) const { return ctx_[ctx].frm << 5 | ctx_[ctx].fflags; }

  // --- Checkpoint access (docs/checkpoint.md); the chip allows writes only at a sync stop. ---
  /// Set an integer register (x0 stays 0).
  void setXreg(unsigned ctx, unsigned r, uint32_t v) {
    if (r != 0) ctx_[ctx].x[r] = v;
  }
  /// Set an FP register.
  void setFreg(unsigned ctx, unsigned r, uint32_t v) { ctx_[ctx].f[r] = v; }
  /// Set a context's pc.
  void setPc(unsigned ctx, uint32_t v) { ctx_[ctx].pc = v; }
  /// Set the matrix-unit accumulator acc[r][j] of a context (bits).
  void setAccumulator(unsigned ctx, unsigned r, unsigned j, uint32_t v) {
    ampAcc_[ctx][r * TESS_AMP_COLS + j] = v;
  }
  /// Set the matrix-unit weight W[b][k][j] (bits).
  void setWeight(unsigned b, unsigned k, unsigned j, uint32_t v) {
    ampWeights_[(b * TESS_AMP_ROWS + k) * TESS_AMP_COLS + j] = v;
  }
  /// Set a context's stochastic-rounding generator state; 0 gives AMP_SR_SEED0, as AMP.SEED.
  void setSrState(unsigned ctx, uint32_t v) { ampSr_[ctx] = v != 0 ? v : TESS_AMP_SR_SEED0; }
  /// Set a context's row strides and row limit (the limit stored as AMP.ROWS stores it).
  void setStrideS(unsigned ctx, uint32_t v) { ampCfg_[ctx].strideS = v; }
  void setStrideC(unsigned ctx, uint32_t v) { ampCfg_[ctx].strideC = v; }
  void setRowLimit(unsigned ctx, uint32_t v) {
    ampCfg_[ctx].rows = v < TESS_AMP_ACC_ROWS ? v : TESS_AMP_ACC_ROWS;
  }
  /// Set a context's fcsr (bits above 7 are dropped, as by a CSR write).
  void setFcsr(unsigned ctx, uint32_t v) {
    ctx_[ctx].fflags = v & 0x1f;
    ctx_[ctx].frm = (v >> 5) & 7;
  }
  /// instret of a context, modulo 2^counterBits.
  uint64_t instret(unsigned ctx) const {
    return wrapCounter(ctx_[ctx].instret, config_.counterBits);
  }
  /// Set instret of a context (bits above counterBits are dropped when it is read).
  void setInstret(unsigned ctx, uint64_t v) {
    retiredElsewhere_ += ctx_[ctx].instret - v;
    ctx_[ctx].instret = v;
  }
  /// C_STATE of a context: bit 0 running, 1 blocked in WAIT, 2 blocked at a sync, 3 long op.
  uint32_t contextState(unsigned ctx) const {
    const Context& c = ctx_[ctx];
    return (c.running ? 1u : 0u) | (c.waiting ? 2u : 0u) |
           (ctx == 0 && state_ == TileState::Arrived ? 4u : 0u) | (c.longPending ? 8u : 0u);
  }
  /// The RUN_ARG latch.
  uint32_t runArg() const { return runArg_; }
  /// Set the RUN_ARG latch.
  void setRunArg(uint32_t v) { runArg_ = v; }
  /// Set XCHG_PROG.
  void setExchangeProgram(uint32_t v) { xchgProg_ = v; }
  /// Make the idle-slot counter read v modulo 2^counterBits (the other counters are unchanged).
  void setIdleSlots(uint64_t v);
  /// Move the tile's cycle counter to `cycle` (it reads cycle modulo 2^counterBits), keeping
  /// every other counter's value.
  void rebaseCycles(uint64_t cycle);

  /// Blocks the translating engine translated since construction (0 for the interpreter).
  uint64_t jitTranslations() const;
  /// Times the translating engine dropped its translations because code was written.
  uint64_t jitFlushes() const;
  /// Instructions that ran as translated code since construction (the rest were interpreted).
  uint64_t jitInstructions() const { return jitInstructions_; }
  /// Instructions this tile executed since construction, by either engine: unlike instret it
  /// does not restart at reset() or move when a counter is restored (setInstret).
  uint64_t executedInstructions() const;
  /// Windows of several contexts run as translated code and kept, and windows undone and left
  /// to the interpreter (docs/tile.md, "Several contexts").
  uint64_t jitWindows() const { return jitWindows_; }
  uint64_t jitWindowFallbacks() const { return jitWindowFallbacks_; }
  /// Adds this tile's translating-engine counts (instructions, translated, windows, and why
  /// translated code stopped: docs/tile.md, "Why translated code stops") to s.
  void addJitStatistics(ModelJitStatistics& s) const;

 private:
  static constexpr uint64_t kNever = ~uint64_t{0};
  static constexpr unsigned kDecodeCacheLines = 4096;
  static constexpr uint32_t kNoTag = 0xffffffffu;

  // A long op computed at issue and committed at its retire cycle.
  struct PendingLongOp {
    uint64_t issueCycle = 0;
    uint32_t pc = 0;
    uint32_t insn = 0;
    uint32_t value = 0;
    uint32_t flags = 0;
    uint8_t rd = 0;
    Dest dest = Dest::None;
  };

  struct Context {
    std::array<uint32_t, 32> x{};
    std::array<uint32_t, 32> f{};
    uint32_t pc = 0;
    uint32_t fflags = 0;
    uint32_t frm = 0;
    uint64_t instret = 0;
    uint64_t next = kNever;  // next cycle this context issues or retires a long op
    bool running = false;    // workers: started and not DONE; supervisor: always
    bool longPending = false;
    PendingLongOp longOp;
    bool waiting = false;  // supervisor blocked in WAIT
    uint64_t waitCycle = 0;
    uint64_t doneCycle = 0;  // workers: issue cycle of the last DONE
    uint64_t busySlots = 0;  // slots used by issued instructions and long-op passes
  };
  // Matrix-unit accumulators acc[r][j] of one context, row-major (docs/tile.md, "Matrix unit").
  using AmpAccumulators = std::array<uint32_t, TESS_AMP_ACC_ROWS * TESS_AMP_COLS>;
  // A context's row addressing of the unit (docs/tile.md, "Row strides and the row limit"): the
  // row r of AMP.S/AMP.H reads rs1 + r strideS, of AMP.LA/AMP.SA rs1 + r strideC; rows at or past
  // `rows` are skipped. The reset values address rs1 for every row and skip none.
  struct AmpConfig {
    uint32_t strideS = 0;
    uint32_t strideC = 0;
    uint32_t rows = TESS_AMP_ACC_ROWS;
  };
  // Matrix-unit weights W[b][k][j] of the tile.
  using AmpWeights = std::array<uint32_t, TESS_AMP_BANKS * TESS_AMP_ROWS * TESS_AMP_COLS>;

  // A store's words (one, or four for AMP.SA) and the values they overwrote, kept for two
  // cycles (see staleFetch).
  struct StoreNote {
    uint64_t cycle = 0;
    uint32_t wordAddr = kNoTag;  // unaligned: matches no fetch
    uint32_t words = 1;
    std::array<uint32_t, TESS_AMP_STEP_BYTES / 4> oldWords{};
  };

  // 16 bytes: a line never straddles two host cache lines. The instruction word itself is read
  // from SRAM when needed: whenever tag == pc it is the word that was decoded (every write to it
  // clears the tag).
  struct alignas(16) CacheLine {
    uint32_t tag = kNoTag;
    DecodedInsn insn;
  };

  enum class Step { Continue, Stop };

  // State saved by checkpoint(); memory is restored from undoLog_.
  struct Saved {
    std::array<Context, kMaxContexts> ctx;
    std::array<StoreNote, 2> recentStores;
    AmpWeights ampWeights{};
    std::array<AmpAccumulators, kMaxContexts> ampAcc{};
    std::array<uint32_t, kMaxContexts> ampSr{};
    std::array<AmpConfig, kMaxContexts> ampCfg{};
    uint32_t runArg = 0;
    uint64_t cycles = 0;
    TileState state = TileState::Running;
    uint32_t exitCode = 0;
    TrapInfo trap;
    uint32_t xchgProg = 0;
    uint32_t syncDesc = 0;
    uint32_t syncPc = 0;
    uint64_t syncIssue = 0;
    size_t consoleSize = 0;
  };
  struct UndoEntry {
    uint32_t wordAddr;
    uint32_t oldWord;
  };

  template <bool kTrace, bool kJit>
  TileState runLoop(uint64_t untilCycle);
  // The translating engine: blocks of context 0 from cycle t while it is the only context that
  // runs and each block's last instruction issues before untilCycle; returns the cycle of the
  // next issue (t if nothing ran).
  uint64_t jitRun(uint64_t t, uint64_t untilCycle);
  // Sets the translator's frame to context ctx's registers and this tile's memory and hooks.
  void jitFrameFor(Context& ctx);
  // jitRun if context 0 may run translated code now (out of runLoop: its registers stay free).
  [[gnu::noinline]] uint64_t jitEnter(uint64_t t, uint64_t untilCycle);
  bool jitEligible(uint64_t t) const {
    for (unsigned i = 1; i < kMaxContexts; ++i) {
      if (ctx_[i].next != kNever) return false;
    }
    return lastStoreCycle() + 2 < t;
  }
  static uint32_t jitStore(void* frame, uint32_t addr, uint32_t value, uint32_t index,
                           uint32_t size);
  // --- Windows: several contexts running translated code (docs/tile.md, "Several contexts"). ---
  // A window from cycle t (every context's next slot is >= t) if one can run now; true when it
  // ran and was kept (the contexts' slots changed).
  [[gnu::noinline]] bool jitWindowEnter(uint64_t t, uint64_t untilCycle);
  // The window [t, end) of these members: the cycle where it ended when it was kept, else 0.
  uint64_t jitWindow(uint64_t t, uint64_t end, const unsigned* members, unsigned count);
  // Context c runs translated blocks and window-safe interpreted instructions from its next
  // slot while it issues before limit; returns the slot of its first instruction not run.
  uint64_t jitWindowRun(unsigned c, uint64_t limit);
  // Whether the instruction at context c's pc can run inside a window (no trap, no MMIO, no
  // store into translated code, no FP rounding mode that traps; CSRs, long ops and the matrix
  // unit can): if so it is recorded and interpreted at t (a long op's retirement is
  // jitWindowRun's). False with jitStepConflict_ set when its records met another context's.
  bool jitWindowStep(unsigned c, uint64_t t);
  // A matrix-unit instruction of context c at t as a window step (jitWindowStep): its 16-byte
  // access recorded as four words, the weight bank it reads or writes recorded as a word past
  // SRAM's, the unit's state saved before the window's first one.
  bool jitWindowAmp(unsigned c, uint64_t t, const DecodedInsn& d);
  // A window step whose records found a conflict before it ran: false, the context stops there
  // (jitStepConflict_) and the window goes on.
  bool jitStepStop();
  // Restores the matrix unit's state saved in the window: context c's accumulators and
  // generator and the weight banks it wrote (kMaxContexts: everything).
  void jitAmpUndo(unsigned c);
  // The class of the instruction at context c's pc that translated code could not run.
  JitStop jitStopAt(unsigned c) const;
  // The stamp of a word touched by context c in the window; a conflict marks the window.
  void jitRecord(uint32_t wordIndex, bool write, unsigned c);
  uint32_t jitWindowStore(uint32_t addr, uint32_t value, uint64_t cycle, uint32_t size);
  static void jitAccess(void* frame, uint32_t addr, uint32_t write);
  // Undo the window's stores of context c (every context: kMaxContexts), newest first.
  void jitWindowUndo(unsigned c);
  // Append to the window's undo log (growing it).
  struct WindowStore;
  void jitLogPush(const WindowStore& e);
  // Code was written (by anything): drop the translations covering [addr, addr + bytes).
  void jitCodeWritten(uint32_t addr, uint32_t bytes);
  // bytes are about to be written at addr: drop the translations if a word they cover changes.
  void jitCodeWrite(uint32_t addr, const uint8_t* bytes, uint32_t size);
  // Inlined into runLoop: one call per instruction with this frame was a fifth of the time.
  template <bool kTrace>
  [[gnu::always_inline]] Step issue(unsigned c, uint64_t cycle);
  template <bool kTrace>
  void retireLongOp(unsigned c, uint64_t cycle);
  // The instruction classes issue() dispatches to, one instantiation per opcode, inlined into it
  // (a call per instruction would cost what issue()'s own inlining saved). Each returns false
  // after a trap.
  struct Issue;
  template <Op kOp>
  [[gnu::always_inline]] bool execIntAlu(Issue& s);
  template <Op kOp>
  [[gnu::always_inline]] bool execJump(Issue& s);
  template <Op kOp>
  [[gnu::always_inline]] bool execLoad(Issue& s);
  template <Op kOp>
  [[gnu::always_inline]] bool execStore(Issue& s);
  template <Op kOp>
  [[gnu::always_inline]] bool execSystem(Issue& s);
  template <Op kOp>
  [[gnu::always_inline]] bool execMulDiv(Issue& s);
  template <Op kOp>
  [[gnu::always_inline]] bool execFp(Issue& s);
  template <Op kOp>
  [[gnu::always_inline]] bool execAmp(Issue& s);
  [[gnu::noinline]] bool ampAccess(Op op, unsigned c, uint64_t cycle, const DecodedInsn& d,
                                   uint32_t addr);
  // The address of a unit access: x[rs1], plus the row times the context's stride for a row of
  // inputs (AMP.S, AMP.H) or accumulators (AMP.LA, AMP.SA).
  uint32_t ampAddress(Op op, unsigned c, const DecodedInsn& d, uint32_t rs1) const;
  // A unit access of a row at or past the context's row limit is skipped: no access, no trap,
  // no state change but rd (AMP.LW's row is a weight row, never skipped).
  bool ampSkips(Op op, unsigned c, const DecodedInsn& d) const {
    return op != Op::AmpLw && d.rm >= ampCfg_[c].rows;
  }
  [[gnu::noinline]] void ampConvert(Op op, unsigned c, Context& ctx, const DecodedInsn& d,
                                    uint32_t a, uint32_t b);
  [[gnu::cold]] bool accessFault(const Issue& s, uint32_t cause);
  // An access of size bytes (at most 4) at addr lies wholly inside SRAM (memBytes >= 4).
  bool inSramAccess(uint32_t addr, unsigned size) const { return addr <= config_.memBytes - size; }
  [[gnu::always_inline]] void startLongOp(Issue& s, uint32_t value, uint32_t flags);

  [[gnu::cold]] Step raise(unsigned c, uint64_t cycle, uint32_t cause, uint32_t value);
  [[gnu::cold]] Step halt(uint64_t cycle);
  [[gnu::cold]] bool mmioLoad(unsigned c, uint64_t cycle, uint32_t addr, uint32_t& value,
                              Step& step);
  [[gnu::cold]] bool mmioStore(unsigned c, uint64_t cycle, uint32_t addr, uint32_t value,
                               Step& step);
  bool resolveRm(const Context& ctx, uint8_t rm, unsigned& out) const;
  uint32_t readCsr(unsigned c, uint64_t cycle, uint32_t csr) const;
  void writeCsr(Context& ctx, uint32_t csr, uint32_t value);
  void releaseSupervisorIfDone(uint64_t doneCycle);
  void noteStore(uint32_t addr, uint64_t cycle, unsigned words = 1);
  bool staleFetch(uint32_t pc, uint64_t cycle, uint32_t& word) const;
  uint64_t lastStoreCycle() const {
    return std::max(recentStores_[0].cycle, recentStores_[1].cycle);
  }
  void emit(uint64_t cycle, unsigned c, uint32_t pc, uint32_t insn, Dest dest, unsigned rd,
            uint32_t value);

  static uint64_t nextSlot(unsigned c, uint64_t atOrAfter);

  TileConfig config_;
  ZeroedMemory mem_;  // committed as written (docs/limits.md)
  std::vector<CacheLine> decodeCache_;
  std::array<Context, kMaxContexts> ctx_;
  std::array<StoreNote, 2> recentStores_{};
  uint32_t runArg_ = 0;
  uint64_t cycles_ = 0;
  TileState state_ = TileState::Running;
  uint32_t exitCode_ = 0;
  TrapInfo trap_;
  std::string console_;
  std::function<void(const RetireRecord&)> sink_;
  uint32_t xchgProg_ = 0;
  uint32_t syncDesc_ = 0;
  uint32_t syncPc_ = 0;
  uint64_t syncIssue_ = 0;
  bool logging_ = false;
  bool rescan_ = false;  // an instruction changed another context's next slot (runLoop)
  Saved saved_;
  std::vector<UndoEntry> undoLog_;
  struct JitDeleter {
    void operator()(TileJit* jit) const;
  };
  std::unique_ptr<TileJit, JitDeleter> jit_;  // the translating engine (null: interpreter)
  uint64_t jitInstructions_ = 0;
  // executedInstructions() less the contexts' instret (reset() and setInstret() move it).
  uint64_t retiredElsewhere_ = 0;
  // Look for a translated block at context 0's next issue: at first, and after a jump or taken
  // branch that the interpreter executed (runLoop).
  bool jitTry_ = true;
  // Windows (jitWindow): no attempt before jitWindowAt_; after a fallback the wait doubles
  // (jitBackoff_ rounds, reset when a window is kept).
  uint64_t jitWindowAt_ = 0;
  uint32_t jitBackoff_ = 1;
  // The next window's length in rounds (jitWindowEnter).
  static constexpr uint32_t kMinWindowRounds = 256, kMaxWindowRounds = 4096;
  uint32_t jitWindowRounds_ = kMinWindowRounds;
  bool jitWindowActive_ = false;  // translated stores go to jitWindowStore
  bool jitConflict_ = false;      // the window must be undone
  // An interpreted step's access met another context's before the step ran: the context stops
  // there instead (jitWindowRun), as at an instruction a window cannot run.
  bool jitStepConflict_ = false;
  unsigned jitWindowCtx_ = 0;      // the context running translated code
  uint32_t jitWindowId_ = 0;       // stamps of older windows match no access
  std::vector<uint32_t> jitTags_;  // per SRAM word: window << 4 | written << 3 | owner
  struct WindowStore {
    uint32_t wordAddr;
    uint32_t oldWord;
    uint64_t cycle;
    uint32_t ctx;
  };
  // The window's undo log: entries 0 .. TileJit::Frame::undoCount - 1 (translated stores append
  // to it inline).
  std::vector<WindowStore> jitWindowLog_;
  StoreNote jitScratchNote_;  // what translated stores in a window write as their note
  std::array<Context, kMaxContexts> jitSaved_;
  std::array<uint64_t, kMaxContexts> jitWindowDone_{};  // translated instructions per context
  uint64_t jitWindows_ = 0;
  uint64_t jitWindowFallbacks_ = 0;
  // Why translated code stopped (slow paths only): windows undone, windows cut, windows not
  // tried, single-context block runs; and what stopped each member of the current window.
  JitStopCounts jitWindowUndone_{}, jitWindowCut_{}, jitWindowSkipped_{}, jitBlockExits_{};
  std::array<JitStop, kMaxContexts> jitMemberStop_{};
  JitStop jitWindowStop_ = JitStop::Limit;  // why the last jitWindow call was undone or cut
  // The matrix unit's state at the window's first unit instruction (restored on an undo).
  bool jitAmpSaved_ = false;
  AmpWeights jitSavedWeights_{};
  std::array<AmpAccumulators, kMaxContexts> jitSavedAcc_{};
  std::array<uint32_t, kMaxContexts> jitSavedSr_{};
  std::array<AmpConfig, kMaxContexts> jitSavedCfg_{};
  // The matrix unit's state, last: away from the fields every instruction touches.
  AmpWeights ampWeights_{};
  std::array<AmpAccumulators, kMaxContexts> ampAcc_{};
  // Each context's stochastic-rounding generator state (xorshift32, never 0).
  std::array<uint32_t, kMaxContexts> ampSr_{};
  std::array<AmpConfig, kMaxContexts> ampCfg_{};
};

}  // namespace tessera::model
