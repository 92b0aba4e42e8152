// A TileModel with helpers to place hand-encoded programs and collect retirement records.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "rv_encode.hpp"
#include "tessera/chip_params.h"
#include "tile_model.hpp"

namespace tessera::model::test {

/// One tile of 64 KiB (and `contexts` contexts) with records collected into `records`.
struct TileHarness {
  TileModel tile;
  std::vector<RetireRecord> records;

  explicit TileHarness(unsigned contexts = TESS_NUM_CONTEXTS)
      : tile{TileConfig{0, 1, 65536, true, true, contexts}} {
    tile.setRetireSink([this](const RetireRecord& rec) { records.push_back(rec); });
  }

  /// Write instruction words at addr.
  void place(uint32_t addr, const std::vector<uint32_t>& words) {
    std::vector<uint8_t> bytes(words.size() * 4);
    std::memcpy(bytes.data(), words.data(), bytes.size());
    tile.writeMemory(addr, bytes);
  }
  /// Read a word of SRAM.
  uint32_t word(uint32_t addr) const {
    uint8_t bytes[4];
    tile.readMemory(addr, bytes);
    return uint32_t{bytes[0]} | uint32_t{bytes[1]} << 8 | uint32_t{bytes[2]} << 16 |
           uint32_t{bytes[3]} << 24;
  }
  /// Run at most maxCycles cycles.
  TileState run(uint64_t maxCycles = 100000) { return tile.run(maxCycles); }
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
