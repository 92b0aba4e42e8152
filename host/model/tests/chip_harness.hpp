// A multi-tile ModelDevice with helpers to place hand-encoded tile and exchange programs.
#pragma once

#include <cstdint>
#include <vector>

#include "chip_programs.hpp"
#include "model_device.hpp"
#include "rv_encode.hpp"
#include "tessera/chip_params.h"

namespace tessera::model::test {

/// Exchange and tile program encodings shared with the chip suite of every backend.
namespace xc = ::chipprog::xc;
using ::chipprog::exitWith;
using ::chipprog::kMmio;
using ::chipprog::placeRing;
using ::chipprog::syncWith;
using ::chipprog::xchgProgFrom;

/// A chip of `tiles` tiles of memBytes each.
struct ChipHarness {
  ModelDevice dev;

  explicit ChipHarness(unsigned tiles, uint32_t memBytes = 65536, unsigned threads = 1)
      : dev(options(tiles, memBytes, threads)) {}

  static DeviceOptions options(unsigned tiles, uint32_t memBytes, unsigned threads) {
    DeviceOptions o;
    o.tiles = tiles;
    o.tileMemBytes = memBytes;
    o.threads = threads;
    return o;
  }
  /// Write words at addr of a tile.
  void place(unsigned tile, uint32_t addr, const std::vector<uint32_t>& words) {
    chipprog::place(dev, tile, addr, words);
  }
  /// Read a word of a tile's SRAM.
  uint32_t word(unsigned tile, uint32_t addr) {
    uint8_t b[4];
    dev.readMemory(tile, addr, b);
    return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
  }
};

}  // namespace tessera::model::test
