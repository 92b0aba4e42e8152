// A tessera executable (*.tess, docs/executable-format.md): the target it was built for, what to
// put in every tile's memory, what the host copies at each host sync, and where named tensors
// live. serialize()/parse() are the writer and reader; validateFor() and load() check everything
// against a device before a single byte is written to it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tessera/device.hpp"

namespace tessera {

/// Bytes of blob `blob` placed at `addr` of tile `tile` (several segments may share a blob).
struct ExeSegment {
  uint32_t tile = 0;
  uint32_t addr = 0;
  uint32_t blob = 0;
  bool operator==(const ExeSegment&) const = default;
};

/// Which way a stream's data goes.
enum class StreamDirection : uint32_t { HostToDevice = 0, DeviceToHost = 1 };

/// A named stream of bytes between the host program and the device.
struct ExeStream {
  std::string name;
  StreamDirection direction = StreamDirection::HostToDevice;
  bool operator==(const ExeStream&) const = default;
};

/// A contiguous piece of one tile's memory.
struct ExeRegion {
  uint32_t tile = 0;
  uint32_t addr = 0;
  uint32_t bytes = 0;
  bool operator==(const ExeRegion&) const = default;
};

/// One copy at a host sync: the next region.bytes bytes of stream `stream` (an index into
/// Executable::streams) to or from region, in the stream's direction.
struct ExeStreamCopy {
  uint32_t stream = 0;
  ExeRegion region;
  bool operator==(const ExeStreamCopy&) const = default;
};

/// What the host does at host sync `id`: the copies, in order, then the release.
struct ExeHostSync {
  uint32_t id = 0;
  std::vector<ExeStreamCopy> copies;
  bool operator==(const ExeHostSync&) const = default;
};

/// A named tensor: the concatenation of its regions, in order (possibly across tiles).
struct ExeTensor {
  std::string name;
  std::vector<ExeRegion> regions;
  bool operator==(const ExeTensor&) const = default;
};

/// A whole executable; plain data, checked by validateFor().
class Executable {
 public:
  /// Format version this code writes and the only one it reads.
  static constexpr uint32_t kVersion = 1;
  /// The 8 magic bytes every *.tess file starts with.
  static constexpr char kMagic[8] = {'T', 'E', 'S', 'S', 'E', 'X', 'E', '\x1a'};
  /// Largest *.tess file fromFile reads (docs/limits.md).
  static constexpr uint64_t kMaxFileBytes = uint64_t{1} << 30;
  /// Most tiles and contexts a target may name (a device may allow fewer: DeviceOptions).
  static constexpr uint32_t kMaxTiles = 65536;
  static constexpr uint32_t kMaxContexts = 64;

  /// The chip it is built for; the file records tiles, tileMemBytes and contexts, which a device
  /// must report exactly (validateFor); the other fields read back as the defaults.
  ChipShape target;
  std::vector<std::vector<uint8_t>> blobs;
  std::vector<ExeSegment> segments;
  std::vector<ExeStream> streams;
  std::vector<ExeHostSync> hostSyncs;
  std::vector<ExeTensor> tensors;

  /// True if bytes start with the *.tess magic (to tell a .tess from an ELF).
  static bool hasMagic(std::span<const uint8_t> bytes);
  /// Decode and check a *.tess image (magic, version, length, checksum, structure, internal
  /// consistency); name is used in error messages. Throws tessera::Error.
  static Executable parse(std::span<const uint8_t> bytes, const std::string& name);
  /// Read and parse a *.tess file.
  static Executable fromFile(const std::string& path);
  /// Encode as a *.tess image (checks internal consistency first).
  std::vector<uint8_t> serialize() const;
  /// Write serialize() to path.
  void writeFile(const std::string& path) const;

  /// Internal consistency: indexes in range, regions inside the target's memory, segments not
  /// overlapping, stream and tensor names unique and non-empty, copies in the stream's direction.
  void validate() const;
  /// validate(), and the target equals what the device reports.
  void validateFor(const ChipInfo& info) const;
  /// Validate against dev, then write every segment, disable tiles with no segment and reset dev.
  /// Nothing is written when validation fails.
  void load(Device& dev) const;
  /// Reset dev and disable the tiles with no segment, as load() ends, without writing memory: the
  /// loaded program starts again from its first instruction on what memory holds now.
  void restart(Device& dev) const;

  /// Index of the stream called name, or -1.
  int findStream(const std::string& name) const;
  /// The tensor called name, or nullptr.
  const ExeTensor* findTensor(const std::string& name) const;
  /// The host sync entry for id, or nullptr (a host sync without an entry only releases).
  const ExeHostSync* findHostSync(uint32_t id) const;

  bool operator==(const Executable&) const = default;
};

/// "host-to-device" or "device-to-host".
const char* streamDirectionName(StreamDirection d);

}  // namespace tessera
