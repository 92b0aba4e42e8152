// The link protocol's frame: opcodes, status codes and sizes (docs/link-protocol.md is the spec).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::link {

/// Protocol version carried in every frame; a peer with another version is refused.
/// 2: the INFO reply carries the tiles' counter width and ISA extensions (docs/link-protocol.md).
inline constexpr uint8_t kProtocolVersion = 2;
/// The 4 magic bytes that start every frame ("TsLk"); the decoder resynchronises on them.
inline constexpr uint8_t kMagic[4] = {0x54, 0x73, 0x4C, 0x6B};
/// Header bytes: magic 4, version 1, opcode 1, status 2, seq 4, tile 4, addr 4, length 4.
inline constexpr size_t kHeaderBytes = 24;
/// Trailer bytes: CRC-32 (IEEE) over header and payload.
inline constexpr size_t kCrcBytes = 4;
/// Largest payload of any frame (64 KiB); longer frames are refused with Status::TooLong.
inline constexpr size_t kMaxPayload = 65536;
/// Largest frame on the wire.
inline constexpr size_t kMaxFrameBytes = kHeaderBytes + kMaxPayload + kCrcBytes;
/// Replies carry the request's opcode with this bit set.
inline constexpr uint8_t kReplyBit = 0x80;

/// Request opcodes (docs/link-protocol.md, "Operations").
enum class Opcode : uint8_t {
  Info = 0x01,
  MemRead = 0x02,
  MemWrite = 0x03,
  CtrlRead = 0x04,
  CtrlWrite = 0x05,
  Run = 0x06,
  Wait = 0x07,
  Reset = 0x08,
  Stats = 0x09,
  Console = 0x0A,
  Auth = 0x0B,
};

/// Reply status codes (docs/link-protocol.md, "Status codes").
enum class Status : uint16_t {
  Ok = 0,
  BadCrc = 1,
  UnknownOpcode = 2,
  TooLong = 3,
  OutOfRange = 4,
  Busy = 5,
  DeviceError = 6,
  BadRequest = 7,
  Running = 8,
  NotRunning = 9,
  BadVersion = 10,
  Unauthorized = 11,
};

/// Name of a status code for error messages ("bad CRC", ...).
const char* statusName(uint16_t status);

/// One decoded frame, request or reply. opcode is kept raw so unknown opcodes survive decoding.
struct Frame {
  uint8_t opcode = 0;
  uint16_t status = 0;
  uint32_t seq = 0;
  uint32_t tile = 0;
  uint32_t addr = 0;
  std::vector<uint8_t> payload;
  bool operator==(const Frame&) const = default;
};

}  // namespace tessera::link
