// FrameCodec: encodes frames, and decodes a byte stream that arrives in pieces into frames.
// The decoder holds at most kMaxFrameBytes pending (its buffers are allocated once), resynchronises
// on the magic after garbage, and reports rejected candidate frames so a server can answer them.
// Work per received byte is bounded: a running CRC register is kept for every buffered byte, so
// checking a candidate frame costs O(log length), not O(length) — otherwise headers that each
// claim 64 KiB, sent back to back, would cost a 64 KiB CRC per 24 bytes received.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "frame.hpp"

namespace tessera::link {

/// What the decoder found: a good frame, or a rejected one (its header as read, for the reply).
struct DecodeEvent {
  enum class Kind { Frame, BadCrc, TooLong, BadVersion };
  Kind kind = Kind::Frame;
  Frame frame;  ///< the frame (Kind::Frame) or the unverified header fields (others, no payload)
};

/// Incremental frame encoder/decoder (docs/link-protocol.md, "Framing").
class FrameCodec {
 public:
  FrameCodec();
  /// Serialise a frame (payload at most kMaxPayload, else tessera::Error).
  static std::vector<uint8_t> encode(const Frame& frame);
  /// Take bytes from data as far as the buffer has room; returns how many were taken.
  /// Call poll() until it returns nothing, then feed the rest.
  size_t feed(std::span<const uint8_t> data);
  /// The next decoded or rejected frame, if the buffered bytes hold one.
  std::optional<DecodeEvent> poll();
  /// True when bytes of an unfinished frame are buffered.
  bool hasPartial() const { return end_ > begin_; }
  /// Give up on a stalled partial frame (its sender went away): skip to the next magic.
  void dropPartial();
  /// Candidate frames rejected so far (bad CRC, too long, bad version, or dropped when stalled).
  uint64_t droppedFrames() const { return droppedFrames_; }
  /// Bytes skipped so far while looking for a magic.
  uint64_t droppedBytes() const { return droppedBytes_; }

 private:
  void skip(size_t n);
  void compact();

  std::vector<uint8_t> buf_;   // capacity 2 * kMaxFrameBytes; bytes [begin_, end_) are pending
  std::vector<uint32_t> reg_;  // reg_[i]: raw CRC register after buf_[0, i) (crc32Raw)
  size_t begin_ = 0;
  size_t end_ = 0;
  uint64_t droppedFrames_ = 0;
  uint64_t droppedBytes_ = 0;
};

}  // namespace tessera::link
