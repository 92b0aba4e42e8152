// Device checkpoints (docs/checkpoint.md): the whole state of a chip stopped at a sync (a host
// sync, or an internal sync stopped by SYNC_BREAK), saved through the host port's control
// registers and memory port only, so that it works on every backend (model, rtl, tcp://,
// serial:) and a checkpoint saved on one backend restores on any other.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tessera/device.hpp"

namespace tessera {

/// What a checkpoint holds besides the device state proper.
struct CheckpointInfo {
  unsigned tiles = 0;  ///< chip configuration the checkpoint was saved on
  uint32_t tileMemBytes = 0;
  unsigned contexts = 0;
  uint64_t paramHash = 0;             ///< checkpointParamHash() of the saving build
  uint32_t version = 0;               ///< the file's format version (saving writes the newest)
  bool matrixUnit = false;            ///< the file holds the tiles' matrix-unit state
  uint64_t cycle = 0;                 ///< chip cycle of the sync stop (its release cycle R)
  uint32_t syncDescriptor = 0;        ///< bit 31 host sync, bits 15..0 sync id
  bool syncBreak = false;             ///< SYNC_BREAK at the time of the save
  std::vector<std::string> consoles;  ///< each tile's console up to the stop
  std::vector<uint8_t> appData;       ///< opaque bytes of the caller (e.g. stream positions)
};

/// True if dev reports checkpoint control registers (ChipInfo::hasCheckpoint): false on a chip
/// built without them (rtl/params.json HAS_CHECKPOINT = 0, the iCE40 board's configuration).
bool hasCheckpointSupport(Device& dev);

/// Hash of the chip parameters (rtl/params.json) that a saved state depends on.
uint64_t checkpointParamHash();

/// Save the state of dev, which must be stopped at a sync (else tessera::Error, nothing saved).
/// appData is stored as is (CheckpointInfo::appData).
std::vector<uint8_t> saveCheckpoint(Device& dev, std::span<const uint8_t> appData = {});
/// Save to a file (written completely or an error).
void saveCheckpoint(Device& dev, const std::string& path, std::span<const uint8_t> appData = {});

/// Parse and check a checkpoint (magic, version, every section's CRC and length) without a device.
CheckpointInfo readCheckpointInfo(std::span<const uint8_t> bytes);

/// Restore a checkpoint into dev: the device is reset and ends stopped at the saved sync, so that
/// the next run() continues exactly as the saved device would have (same cycles, same results).
/// A corrupted or truncated checkpoint, or one from another chip configuration, is refused with a
/// tessera::Error before anything is written to the device. The device's consoles start empty
/// (the saved ones are in the returned CheckpointInfo).
CheckpointInfo restoreCheckpoint(Device& dev, std::span<const uint8_t> bytes);
/// Restore from a file.
CheckpointInfo restoreCheckpoint(Device& dev, const std::string& path);

}  // namespace tessera
