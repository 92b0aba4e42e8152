// A TileModel with helpers to place hand-encoded programs and collect retirement records.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "rv_encode.hpp"
#include "tessera/chip_params.h"
#include "tile_model.hpp"

namespace tessera::model::test {

/// The first difference of two tiles' architectural state (state, exit code, trap, console,
/// counters, every context's registers, pc, fcsr, instret and C_STATE, the chip interface's
/// registers and all of memory), or "" when they agree.
inline std::string tileStateDifference(const TileModel& a, const TileModel& b) {
  if (a.state() != b.state()) {
    return fmt::format("state {} / {}", static_cast<int>(a.state()), static_cast<int>(b.state()));
  }
  if (a.cycles() != b.cycles()) return fmt::format("cycles {} / {}", a.cycles(), b.cycles());
  if (a.exitCode() != b.exitCode()) return "exit code";
  const TrapInfo &ta = a.trap(), &tb = b.trap();
  if (ta.tile != tb.tile || ta.context != tb.context || ta.pc != tb.pc || ta.cause != tb.cause ||
      ta.value != tb.value) {
    return fmt::format("trap pc {:#x} cause {} value {:#x} / pc {:#x} cause {} value {:#x}", ta.pc,
                       ta.cause, ta.value, tb.pc, tb.cause, tb.value);
  }
  if (a.console() != b.console()) return "console";
  const TileStats sa = a.stats(), sb = b.stats();
  if (sa.instructions != sb.instructions || sa.idleSlots != sb.idleSlots ||
      sa.syncWaitCycles != sb.syncWaitCycles || sa.exchangeCycles != sb.exchangeCycles) {
    return fmt::format("counters: instructions {} / {}, idle slots {} / {}", sa.instructions,
                       sb.instructions, sa.idleSlots, sb.idleSlots);
  }
  for (unsigned c = 0; c < TileModel::kMaxContexts; ++c) {
    if (a.pc(c) != b.pc(c)) return fmt::format("context {} pc {:#x} / {:#x}", c, a.pc(c), b.pc(c));
    if (a.instret(c) != b.instret(c) || a.contextState(c) != b.contextState(c) ||
        a.fcsr(c) != b.fcsr(c)) {
      return fmt::format("context {}: instret, state or fcsr", c);
    }
    for (unsigned r = 0; r < 32; ++r) {
      if (a.xreg(c, r) != b.xreg(c, r)) {
        return fmt::format("context {} x{} {:#x} / {:#x}", c, r, a.xreg(c, r), b.xreg(c, r));
      }
      if (a.freg(c, r) != b.freg(c, r)) return fmt::format("context {} f{}", c, r);
    }
  }
  if (a.runArg() != b.runArg() || a.exchangeProgram() != b.exchangeProgram() ||
      a.syncIssueCycle() != b.syncIssueCycle() || a.syncPc() != b.syncPc() ||
      a.syncDescriptor() != b.syncDescriptor()) {
    return "run argument, exchange program or sync registers";
  }
  if (a.memBytes() != b.memBytes()) return "memory size";
  std::vector<uint8_t> ma(a.memBytes()), mb(b.memBytes());
  a.readMemory(0, ma);
  b.readMemory(0, mb);
  for (uint32_t i = 0; i < ma.size(); ++i) {
    if (ma[i] != mb[i]) return fmt::format("memory byte {:#x}: {:#x} / {:#x}", i, ma[i], mb[i]);
  }
  return "";
}

/// One tile of 64 KiB (and `contexts` contexts) with records collected into `records`. Where the
/// build has the translating engine, a twin tile runs the same program on it (without records,
/// which only the interpreter gives) in uneven slices, and run() checks that both tiles end in
/// the same state: every program of the suites that use this harness runs on both engines.
struct TileHarness {
  TileModel tile;
  std::vector<RetireRecord> records;
  TileModel jitTwin;

  explicit TileHarness(unsigned contexts = TESS_NUM_CONTEXTS)
      : tile{TileConfig{0, 1, 65536, true, true, contexts}},
        jitTwin{TileConfig{0, 1, 65536, true, true, contexts, TESS_COUNTER_BITS,
                           TESS_MATRIX_UNIT != 0, kHasJit}} {
    tile.setRetireSink([this](const RetireRecord& rec) { records.push_back(rec); });
  }

  /// Write instruction words at addr.
  void place(uint32_t addr, const std::vector<uint32_t>& words) {
    std::vector<uint8_t> bytes(words.size() * 4);
    std::memcpy(bytes.data(), words.data(), bytes.size());
    tile.writeMemory(addr, bytes);
    jitTwin.writeMemory(addr, bytes);
  }
  /// Reset both tiles (memory is kept).
  void reset() {
    tile.reset();
    jitTwin.reset();
  }
  /// Read a word of SRAM.
  uint32_t word(uint32_t addr) const {
    uint8_t bytes[4];
    tile.readMemory(addr, bytes);
    return uint32_t{bytes[0]} | uint32_t{bytes[1]} << 8 | uint32_t{bytes[2]} << 16 |
           uint32_t{bytes[3]} << 24;
  }
  /// Run until cycle maxCycles (or a stop); the twin too, and their states must agree.
  TileState run(uint64_t maxCycles = 100000) {
    const TileState s = tile.run(maxCycles);
    if (kHasJit) {
      // Slices of 1 to 97 cycles, so that blocks meet their cycle limit at every offset.
      static constexpr uint64_t kSlices[] = {1, 5, 97, 2, 13, 6, 31, 3, 64, 7};
      unsigned i = 0;
      while (jitTwin.state() == TileState::Running && jitTwin.cycles() < maxCycles) {
        jitTwin.run(std::min(maxCycles, jitTwin.cycles() + kSlices[i++ % std::size(kSlices)]));
      }
      EXPECT_EQ(tileStateDifference(tile, jitTwin), "") << "the jit engine differs (interp / jit)";
    }
    return s;
  }
};

/// t0 = MMIO base (lui t0, 0x80000); a context uses it before any MMIO store.
inline constexpr uint32_t kLoadMmioBase = rv::lui(rv::t0, 0x80000);
/// Store x0 to EXIT through t0.
inline constexpr uint32_t kExit = rv::sw(rv::zero, rv::t0, 0);

/// Offset of an MMIO register from the page base, for use with t0.
constexpr int32_t mmio(uint32_t addr) {
  return static_cast<int32_t>(addr - TESS_MMIO_BASE);
}

/// First cycle ≥ t that belongs to context c: docs/tile.md "Cycle c belongs to context c mod 6".
constexpr uint64_t slotAtOrAfter(unsigned c, uint64_t t) {
  while (t % 6 != c) ++t;
  return t;
}

}  // namespace tessera::model::test
