#include "chip_registers.hpp"

#include "tessera/chip_params.h"
#include "tile_model.hpp"

namespace tessera::model {

namespace {

uint32_t status(ChipState state, uint32_t pendingDesc) {
  switch (state) {
    case ChipState::Reset:
      return TESS_ST_RESET;
    case ChipState::Running:
      return TESS_ST_RUNNING;
    case ChipState::SyncPending:
      return TESS_ST_HOST_SYNC | ((pendingDesc & TESS_SYNC_HOST_BIT) ? 1u << 4 : 0u) |
             (pendingDesc & 0xffffu) << 16;
    case ChipState::Halted:
      return TESS_ST_HALTED;
    case ChipState::Error:
      return TESS_ST_ERROR;
  }
  return 0;
}

}  // namespace

std::optional<uint32_t> readChipRegister(uint32_t offset, const ChipRegisterView& chip) {
  switch (offset) {
    case TESS_CR_ID:
      return TESS_CHIP_ID;
    case TESS_CR_TILES:
      return chip.tiles;
    case TESS_CR_MEM_BYTES:
      return chip.memBytes;
    case TESS_CR_CONTEXTS:
      return chip.contexts;
    case TESS_CR_STATUS:
      return status(chip.state, chip.pendingDesc);
    case TESS_CR_CYCLE_LO:
      return lo(chip.now);
    case TESS_CR_CYCLE_HI:
      return hi(chip.now);
    case TESS_CR_ERR_TILE:
      return chip.error.tile;
    case TESS_CR_ERR_CONTEXT:
      return chip.error.context;
    case TESS_CR_ERR_PC:
      return chip.error.pc;
    case TESS_CR_ERR_CAUSE:
      return chip.error.cause;
    case TESS_CR_ERR_VALUE:
      return chip.error.value;
    case TESS_CR_SYNC_BREAK:
      return chip.syncBreak ? 1u : 0u;
    case TESS_CR_TILE_SEL:
      return chip.tileSel;
    default:
      return std::nullopt;
  }
}

bool isTileRegister(uint32_t offset) {
  switch (offset) {
    case TESS_CR_T_ENABLE:
    case TESS_CR_T_STATE:
    case TESS_CR_T_EXIT:
    case TESS_CR_T_INSTR_LO:
    case TESS_CR_T_INSTR_HI:
    case TESS_CR_T_IDLE_LO:
    case TESS_CR_T_IDLE_HI:
    case TESS_CR_T_SYNCWAIT_LO:
    case TESS_CR_T_SYNCWAIT_HI:
    case TESS_CR_T_EXCH_LO:
    case TESS_CR_T_EXCH_HI:
      return true;
    default:
      return false;
  }
}

uint32_t readTileRegister(uint32_t offset, const TileStats& stats, bool enabled, bool arrived) {
  switch (offset) {
    case TESS_CR_T_ENABLE:
      return enabled ? 1u : 0u;
    case TESS_CR_T_STATE:
      return (stats.halted ? 1u : 0u) | (arrived ? 2u : 0u);
    case TESS_CR_T_EXIT:
      return stats.exitCode;
    case TESS_CR_T_INSTR_LO:
      return lo(stats.instructions);
    case TESS_CR_T_INSTR_HI:
      return hi(stats.instructions);
    case TESS_CR_T_IDLE_LO:
      return lo(stats.idleSlots);
    case TESS_CR_T_IDLE_HI:
      return hi(stats.idleSlots);
    case TESS_CR_T_SYNCWAIT_LO:
      return lo(stats.syncWaitCycles);
    case TESS_CR_T_SYNCWAIT_HI:
      return hi(stats.syncWaitCycles);
    case TESS_CR_T_EXCH_LO:
      return lo(stats.exchangeCycles);
    case TESS_CR_T_EXCH_HI:
      return hi(stats.exchangeCycles);
    default:
      return 0;  // not a tile register: callers check isTileRegister first
  }
}

}  // namespace tessera::model
