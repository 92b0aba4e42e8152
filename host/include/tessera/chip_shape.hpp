// The shape of a chip: its tiles, each tile's memory and contexts, its optional units and counter
// width. One type for everything that describes a chip: the compiler's target (Graph), the
// executable's target, the model's geometry and, with what only a device knows, ChipInfo. The
// default and the presets come from rtl/params.json (tessera/chip_params.h), so the RTL build, the
// model and the compiler cannot drift (docs/decisions.md, "One chip-shape type").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tessera/chip_params.h"
#include "tessera/error.hpp"

namespace tessera {

/// What a chip is made of. The defaults are the RTL build's, with TESS_DEFAULT_TILES tiles.
struct ChipShape {
  unsigned tiles = TESS_DEFAULT_TILES;          ///< tiles in the chip (docs/decisions.md,
                                                ///< "Default chip: 4 tiles")
  uint32_t tileMemBytes = TESS_TILE_MEM_BYTES;  ///< SRAM bytes per tile
  unsigned contexts = TESS_NUM_CONTEXTS;        ///< contexts per tile
  bool hasFpu = TESS_HAS_FPU != 0;              ///< false: integer-only tiles, F instructions trap
  bool hasMulDiv = TESS_HAS_MULDIV != 0;        ///< false: tiles without M, M instructions trap
  unsigned counterBits = TESS_COUNTER_BITS;     ///< width of the tiles' counters, 64 or 32
                                                ///< (docs/tile.md, "Counters"): TileStats, T_*,
                                                ///< C_INSTRET, the cycle and instret CSRs and
                                                ///< RetireRecord::cycle wrap modulo 2^bits; the
                                                ///< chip's cycle counter is 64 bits
  bool hasExchange = TESS_HAS_EXCHANGE != 0;    ///< false: no exchange engines (docs/chip.md)
  bool hasCheckpoint = TESS_HAS_CHECKPOINT != 0;  ///< false: no checkpoint registers
                                                  ///< (docs/checkpoint.md)
  bool hasMatrixUnit = TESS_MATRIX_UNIT != 0;     ///< true: the tiles have the matrix unit
                                                  ///< (docs/tile.md, "Matrix unit"): the library's
                                                  ///< matmuls use it (docs/library.md)

  /// fp32 FLOPs a tile can do per cycle at best: the matrix unit's 16 multiply-adds (32), else
  /// one FMADD.S (2); none without the F extension.
  unsigned peakFlopsPerCycle() const { return hasMatrixUnit ? 32 : hasFpu ? 2 : 0; }

  /// A named shape: "default" (the RTL build's parameters on TESS_DEFAULT_TILES tiles), "mk2"
  /// (rtl/params.json config MK2: 1,472 tiles of 624 KiB) or "ice40" (config ICE40, the iCE40
  /// board). Throws tessera::Error naming the valid presets for any other name.
  static ChipShape preset(std::string_view name);
  /// The shape of a device's ChipInfo (or of any shape): what a graph compiled for it targets.
  static ChipShape of(const ChipShape& shape) { return shape; }

  bool operator==(const ChipShape&) const = default;
};

inline ChipShape ChipShape::preset(std::string_view name) {
  if (name == "default") return ChipShape{};
  if (name == "mk2") return ChipShape{TESS_MK2_NUM_TILES, TESS_MK2_TILE_MEM_BYTES};
  if (name == "ice40") {
    return ChipShape{
        TESS_ICE40_NUM_TILES,         TESS_ICE40_TILE_MEM_BYTES,      TESS_ICE40_NUM_CONTEXTS,
        TESS_ICE40_HAS_FPU != 0,      TESS_ICE40_HAS_MULDIV != 0,     TESS_ICE40_COUNTER_BITS,
        TESS_ICE40_HAS_EXCHANGE != 0, TESS_ICE40_HAS_CHECKPOINT != 0, TESS_ICE40_MATRIX_UNIT != 0};
  }
  throw Error("unknown chip preset \"" + std::string(name) +
              "\" (valid: \"default\", \"mk2\", \"ice40\")");
}

}  // namespace tessera
