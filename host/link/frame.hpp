// The link protocol's frame: opcodes, status codes and sizes (docs/link-protocol.md is the spec).
// Every value comes from rtl/params.json ("link") through the generated tessera/link_params.h, the
// source the board's UART bridge (rtl/bridge) is built from too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/link_params.h"

namespace tessera::link {

/// Protocol version carried in every frame; a peer with another version is refused.
/// 2: the INFO reply carries the tiles' counter width and ISA extensions (docs/link-protocol.md).
inline constexpr uint8_t kProtocolVersion = TESS_LINK_VERSION;
/// The 4 magic bytes that start every frame ("TsLk"); the decoder resynchronises on them.
inline constexpr uint8_t kMagic[4] = {
    static_cast<uint8_t>(TESS_LINK_MAGIC), static_cast<uint8_t>(TESS_LINK_MAGIC >> 8),
    static_cast<uint8_t>(TESS_LINK_MAGIC >> 16), static_cast<uint8_t>(TESS_LINK_MAGIC >> 24)};
/// Header bytes: magic 4, version 1, opcode 1, status 2, seq 4, tile 4, addr 4, length 4.
inline constexpr size_t kHeaderBytes = TESS_LINK_HEADER_BYTES;
/// Trailer bytes: CRC-32 (IEEE) over header and payload.
inline constexpr size_t kCrcBytes = TESS_LINK_CRC_BYTES;
/// Largest payload of any frame (64 KiB); longer frames are refused with Status::TooLong.
inline constexpr size_t kMaxPayload = TESS_LINK_MAX_PAYLOAD;
/// Largest frame on the wire.
inline constexpr size_t kMaxFrameBytes = kHeaderBytes + kMaxPayload + kCrcBytes;
/// Replies carry the request's opcode with this bit set.
inline constexpr uint8_t kReplyBit = TESS_LINK_REPLY_BIT;
/// INFO reply, extensions word: the tiles have the F extension.
inline constexpr uint32_t kInfoExtFpu = TESS_LINK_INFO_EXT_F;
/// INFO reply, extensions word: the tiles have the M extension.
inline constexpr uint32_t kInfoExtMulDiv = TESS_LINK_INFO_EXT_M;
/// INFO reply, extensions word: the chip has exchange engines.
inline constexpr uint32_t kInfoExtExchange = TESS_LINK_INFO_EXT_EXCHANGE;
/// INFO reply, extensions word: the chip has the checkpoint registers.
inline constexpr uint32_t kInfoExtCheckpoint = TESS_LINK_INFO_EXT_CHECKPOINT;
/// INFO reply, extensions word: the tiles have the matrix unit.
inline constexpr uint32_t kInfoExtMatrix = TESS_LINK_INFO_EXT_MATRIX;

/// Request opcodes (docs/link-protocol.md, "Operations").
enum class Opcode : uint8_t {
  Info = TESS_LINK_OP_INFO,
  MemRead = TESS_LINK_OP_MEM_READ,
  MemWrite = TESS_LINK_OP_MEM_WRITE,
  CtrlRead = TESS_LINK_OP_CTRL_READ,
  CtrlWrite = TESS_LINK_OP_CTRL_WRITE,
  Run = TESS_LINK_OP_RUN,
  Wait = TESS_LINK_OP_WAIT,
  Reset = TESS_LINK_OP_RESET,
  Stats = TESS_LINK_OP_STATS,
  Console = TESS_LINK_OP_CONSOLE,
  Auth = TESS_LINK_OP_AUTH,
};

/// Reply status codes (docs/link-protocol.md, "Status codes").
enum class Status : uint16_t {
  Ok = TESS_LINK_ST_OK,
  BadCrc = TESS_LINK_ST_BAD_CRC,
  UnknownOpcode = TESS_LINK_ST_UNKNOWN_OP,
  TooLong = TESS_LINK_ST_TOO_LONG,
  OutOfRange = TESS_LINK_ST_OUT_OF_RANGE,
  Busy = TESS_LINK_ST_BUSY,
  DeviceError = TESS_LINK_ST_DEVICE_ERROR,
  BadRequest = TESS_LINK_ST_BAD_REQUEST,
  Running = TESS_LINK_ST_RUNNING,
  NotRunning = TESS_LINK_ST_NOT_RUNNING,
  BadVersion = TESS_LINK_ST_BAD_VERSION,
  Unauthorized = TESS_LINK_ST_UNAUTHORIZED,
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
