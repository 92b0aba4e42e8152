// Payload layouts of the link operations (little-endian; docs/link-protocol.md, "Operations").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "frame.hpp"
#include "tessera/device.hpp"

namespace tessera::link {

/// Appends little-endian fields to a payload.
class PayloadWriter {
 public:
  /// Append a 32-bit field.
  PayloadWriter& u32(uint32_t v);
  /// Append a 64-bit field.
  PayloadWriter& u64(uint64_t v);
  /// Append raw bytes.
  PayloadWriter& bytes(std::span<const uint8_t> b);
  /// The payload built so far.
  std::vector<uint8_t>& data() { return out_; }

 private:
  std::vector<uint8_t> out_;
};

/// Reads little-endian fields from a payload; a short payload throws tessera::Error.
class PayloadReader {
 public:
  /// Read from p (kept by reference).
  explicit PayloadReader(std::span<const uint8_t> p) : p_(p) {}
  /// Next 32-bit field.
  uint32_t u32();
  /// Next 64-bit field.
  uint64_t u64();
  /// The bytes not read yet.
  std::span<const uint8_t> rest() const { return p_.subspan(pos_); }

 private:
  std::span<const uint8_t> p_;
  size_t pos_ = 0;
};

/// INFO reply: protocol version, tiles, SRAM bytes, contexts, max payload, counter bits,
/// extensions (kInfoExt* of frame.hpp: F, M, exchange engines, checkpoint registers), backend name.
std::vector<uint8_t> encodeInfo(const ChipInfo& info);
/// Decode an INFO reply (the protocol version is checked by the caller via the frame header).
ChipInfo decodeInfo(std::span<const uint8_t> payload);
/// WAIT reply (40 bytes): reason, cycles, exit code, trap (5 words), host sync id.
std::vector<uint8_t> encodeRunResult(const RunResult& r);
/// Decode a WAIT reply.
RunResult decodeRunResult(std::span<const uint8_t> payload);
/// STATS reply (104 bytes): cycles, instructions, 6 per-context counts, idle, sync wait, exchange
/// (all u64), halted, exit code (u32).
std::vector<uint8_t> encodeStats(const TileStats& s);
/// Decode a STATS reply.
TileStats decodeStats(std::span<const uint8_t> payload);

}  // namespace tessera::link
