// tessera-run's checkpoints (docs/checkpoint.md; tessera_run.cpp): what it keeps in a
// checkpoint's application data, and saving and restoring one around a run. With --shard every
// rank takes part (the device calls are collective) and rank 0 alone writes the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "run_options.hpp"
#include "tessera/checkpoint.hpp"
#include "tessera/device.hpp"

namespace tessera::tools {

/// What tessera-run keeps in a checkpoint's application data: the syncs since the program
/// start, and for a *.tess the executable's CRC and its stream positions. Text, one item a line.
struct RunCheckpoint {
  uint64_t syncs = 0;
  bool executable = false;
  uint32_t exeCrc = 0;
  std::vector<uint64_t> offsets;
  std::vector<uint64_t> hostSyncCounts;  ///< per Executable::hostSyncs entry (Engine)
};

/// The application data of c (text, one item a line).
std::vector<uint8_t> encodeRunCheckpoint(const RunCheckpoint& c);
/// c from the application data of the checkpoint at path; throws naming path if it is not one.
RunCheckpoint decodeRunCheckpoint(const std::vector<uint8_t>& data, const std::string& path);

/// A checkpoint file's bytes and what it says (before any device is touched).
struct LoadedCheckpoint {
  std::vector<uint8_t> bytes;
  CheckpointInfo info;
};

/// Reads and checks the checkpoint file at path.
LoadedCheckpoint loadCheckpoint(const std::string& path);
/// Restore into device; returns what tessera-run stored in the checkpoint, consoles = the
/// consoles up to the checkpoint.
RunCheckpoint restoreInto(Device& device, const LoadedCheckpoint& c, const std::string& path,
                          std::vector<std::string>& consoles);
/// The CRC-32 of the file at path (a *.tess executable).
uint32_t fileCrc(const std::string& path);
/// Save the checkpoint of a run stopped at its syncs-th sync to o.save, and say so on stderr.
void saveRun(Device& device, const Options& o, const RunCheckpoint& c, uint64_t cycles);
/// --checkpoint-at on a device without checkpoint registers fails before the run, not at the
/// sync.
void requireCheckpoints(Device& device, const std::string& name);

}  // namespace tessera::tools
