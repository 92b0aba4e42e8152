// The translating engine of a tile (docs/tile.md, "The translating engine"): RV32IMF basic
// blocks of a tile's code translated to x86-64 host code with asmjit, run by TileModel while a
// single context runs. A block does only what cannot change the schedule: integer ALU, multiplies,
// the F extension's one-round instructions (SSE/FMA3, bit-exact with the interpreter), loads and
// stores inside SRAM, and a branch or jump at its end. Before any instruction it cannot
// finish exactly (an access outside SRAM or misaligned, a misaligned jump target) it exits, and
// the interpreter executes that instruction. The owner computes the cycles: every instruction of
// a single running context issues one round after the previous one.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "insn_decoder.hpp"

namespace tessera::model {

class TileJit {
 public:
  /// What generated code reads and writes; its address is the block's only argument.
  struct Frame {
    uint32_t* x = nullptr;  ///< the running context's integer registers
    uint32_t* f = nullptr;  ///< the running context's FP registers
    /// The running context's fflags: a block ORs the flags of its FP instructions into it.
    uint32_t* fflags = nullptr;
    /// The running context's frm (no translated instruction writes it): FP instructions with the
    /// dynamic rounding mode leave the block for the interpreter unless it is RNE (0).
    uint32_t frm = 0;
    uint8_t* mem = nullptr;  ///< tile SRAM
    void* owner = nullptr;   ///< the TileModel, for the store hook
    uint64_t cycle = 0;      ///< issue cycle of the block's first instruction
    uint32_t pc = 0;         ///< out: the pc after the block
    /// Instructions that may issue in this call (before the cycle limit), at least the block's
    /// length: a block that jumps back to its own start runs again while a whole pass fits.
    uint32_t budget = 0;
    /// Store `size` bytes of value at addr (inside SRAM, aligned) as instruction `index` of the
    /// block (its issue cycle is cycle + index rounds); nonzero when the store hit translated code
    /// and the block must stop after it. It runs under an FP block's MXCSR, so it must do no
    /// floating-point arithmetic (its flags would reach the context's fflags).
    uint32_t (*store)(void* frame, uint32_t addr, uint32_t value, uint32_t index,
                      uint32_t size) = nullptr;
    // What a translated store updates inline, as TileModel::noteStore does, when the owner is
    // not logging and the word is not translated (else it calls store):
    const bool* logging = nullptr;   ///< the owner's undo-log flag
    uint8_t* note = nullptr;         ///< the owner's fetch-timing note of this call's cycle parity
    uint8_t* decodeLines = nullptr;  ///< the owner's decode cache (kDecodeLines lines)
    // Access recording while several contexts run a window (docs/tile.md, "Several contexts"):
    // every translated load and store stamps the word it touches in tags[addr / 4].
    uint32_t* tags = nullptr;  ///< null: no recording (a single context runs)
    uint32_t window = 0;       ///< the window's number (stamp bits 31..4)
    uint32_t tag = 0;          ///< window << 4 | running context: its read stamp (write: | 8)
    /// A stamp the inline test could not settle (the word is another context's, or shared):
    /// the owner decides whether the access conflicts. write is 0 for a load, 1 for a store.
    void (*access)(void* frame, uint32_t addr, uint32_t write) = nullptr;
    uint32_t spill = 0;  ///< the access address across that call
    /// The window's undo log (null: none): a translated store the inline path takes appends
    /// {word address, old word, issue cycle} at undoCount while undoCount < undoCapacity (else
    /// it calls store).
    uint8_t* undo = nullptr;
    uint32_t undoCount = 0;
    uint32_t undoCapacity = 0;
  };
  /// The layout of an undo log entry (TileModel checks it).
  static constexpr int32_t kUndoWordAddr = 0, kUndoOld = 4, kUndoCycle = 8, kUndoBytes = 24;
  /// Stamp bits: the writer flag and the owner (a context, or kSharedOwner for several readers).
  static constexpr uint32_t kStampWrite = 8, kStampOwner = 7, kSharedOwner = 7;
  /// The owner's layouts that translated stores write (TileModel checks them).
  static constexpr int32_t kNoteCycle = 0, kNoteWordAddr = 8, kNoteWords = 12, kNoteOld = 16;
  static constexpr unsigned kDecodeLineBytes = 16, kDecodeLines = 4096;
  /// Returns the instructions it completed (all passes); bit 31 set: the instruction at Frame::pc
  /// must run in the interpreter (a side exit).
  using BlockFn = uint32_t (*)(Frame*);
  /// Bit of a block's result that asks for the interpreter.
  static constexpr uint32_t kSideExit = 0x80000000u;

  /// One translation: its entry and its instruction count when it runs to its end.
  struct Block {
    BlockFn fn = nullptr;
    uint32_t length = 0;  ///< 0: the first instruction is not translated (interpreter)
  };

  /// True when blocks may hold instructions of this operation.
  static bool translates(Op op);

  /// A translator for a tile of memBytes bytes decoding as that tile does.
  TileJit(uint32_t memBytes, bool hasFpu, bool hasMulDiv, bool hasMatrixUnit);
  ~TileJit();
  TileJit(const TileJit&) = delete;
  TileJit& operator=(const TileJit&) = delete;

  /// The block starting at pc (translated now from mem if it is not yet), or nullptr when the
  /// instruction at pc is not translated. Drops every translation first if a flush is pending.
  const Block* lookup(uint32_t pc, const uint8_t* mem) {
    if (flushPending_) flush();
    Line& line = lines_[(pc >> 2) & (kLines - 1)];
    if (line.pc != pc) {
      line.block = find(pc, mem);
      line.pc = pc;
    }
    return line.block->length ? line.block : nullptr;
  }
  /// True when the word at addr (word-aligned, inside SRAM) belongs to a translation.
  bool covers(uint32_t addr) const {
    const uint32_t w = addr >> 2;
    return !covered_.empty() && (covered_[w >> 6] >> (w & 63) & 1);
  }
  /// True when any word of [addr, addr + bytes) belongs to a translation.
  bool coversRange(uint32_t addr, uint32_t bytes) const;
  /// True when writing n bytes at addr (inside SRAM) over mem changes a word that belongs to a
  /// translation.
  bool changesCode(uint32_t addr, const uint8_t* bytes, uint32_t n, const uint8_t* mem) const;
  /// Drop every translation before the next lookup (code was written).
  void requestFlush() { flushPending_ = true; }
  /// The frame the owner fills before calling a block.
  Frame& frame() { return frame_; }
  /// True when FP instructions are translated: the tile has the F extension and the host FMA3
  /// (checked with cpuid); otherwise they are left to the interpreter.
  bool translatesFp() const { return fp_; }
  /// Blocks translated and flushes done since construction (for tests and statistics).
  uint64_t translations() const { return translations_; }
  uint64_t flushes() const { return flushes_; }

 private:
  static constexpr unsigned kLines = 1024;
  static constexpr unsigned kMaxBlockInsns = 64;
  struct Line {
    uint32_t pc = 0xffffffffu;
    const Block* block = nullptr;
  };
  struct Runtime;

  const Block* find(uint32_t pc, const uint8_t* mem);
  Block translate(uint32_t pc, const uint8_t* mem);
  void flush();

  uint32_t memBytes_;
  bool hasFpu_, hasMulDiv_, hasMatrixUnit_;
  bool fp_;  // FP instructions are translated
  bool flushPending_ = false;
  Frame frame_;
  std::unique_ptr<Runtime> runtime_;  // made at the first translation
  std::unordered_map<uint32_t, Block> blocks_;
  std::vector<uint64_t> covered_;  // one bit per SRAM word inside a translation; empty: none yet
  std::vector<Line> lines_;
  Block untranslated_;  // length 0
  uint64_t translations_ = 0;
  uint64_t flushes_ = 0;
};

}  // namespace tessera::model
