// The control/status registers of docs/chip.md as the model answers them: the chip-level ones
// from the sync controller's state, and the selected tile's state and counters from its
// TileStats. ModelDevice adds the checkpoint registers and, on a sharded chip, has the selected
// tile's owner answer.
#pragma once

#include <cstdint>
#include <optional>

#include "tessera/device.hpp"

namespace tessera::model {

/// Where the chip stands (STATUS).
enum class ChipState { Reset, Running, SyncPending, Halted, Error };

/// The chip-level state the registers ID .. TILE_SEL show.
struct ChipRegisterView {
  unsigned tiles;
  uint32_t memBytes;
  unsigned contexts;  ///< per tile (CONTEXTS)
  ChipState state;
  uint32_t pendingDesc;  ///< the descriptor of a pending host sync (STATUS in SyncPending)
  uint64_t now;          ///< CYCLE
  TrapInfo error;        ///< ERR_* (the chip error, when in Error)
  bool syncBreak;
  unsigned tileSel;
};

/// ID, TILES, MEM_BYTES, CONTEXTS, STATUS, CYCLE_LO/HI, ERR_*, SYNC_BREAK and TILE_SEL;
/// std::nullopt for any other offset.
std::optional<uint32_t> readChipRegister(uint32_t offset, const ChipRegisterView& chip);

/// Whether the offset is one of the selected tile's T_ENABLE, T_STATE, T_EXIT or counter
/// registers (T_INSTR_LO .. T_EXCH_HI), which readTileRegister answers.
bool isTileRegister(uint32_t offset);

/// The selected tile's T_* register at `offset` (isTileRegister(offset) must hold), from its
/// statistics, whether it is enabled and whether it has arrived at a sync.
uint32_t readTileRegister(uint32_t offset, const TileStats& stats, bool enabled, bool arrived);

/// The low and high words of a 64-bit counter, as its _LO and _HI registers show it.
inline uint32_t lo(uint64_t v) {
  return static_cast<uint32_t>(v);
}
inline uint32_t hi(uint64_t v) {
  return static_cast<uint32_t>(v >> 32);
}

}  // namespace tessera::model
