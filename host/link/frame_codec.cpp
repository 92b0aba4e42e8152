// Frame layout (little-endian, docs/link-protocol.md "Framing"):
//   0 magic[4] | 4 version | 5 opcode | 6 status u16 | 8 seq | 12 tile | 16 addr | 20 length
//   24 payload[length] | 24+length crc32(bytes 0 .. 24+length-1)
// The CRC covers the header, so any corrupted field is caught; a corrupted length that is still
// legal only delays the rejection until that many bytes arrived (or dropPartial() on a stall).
#include "frame_codec.hpp"

#include <algorithm>
#include <cstring>

#include "crc32.hpp"
#include "little_endian.hpp"
#include "tessera/error.hpp"

namespace tessera::link {
namespace {}  // namespace

const char* statusName(uint16_t status) {
  switch (static_cast<Status>(status)) {
    case Status::Ok:
      return "ok";
    case Status::BadCrc:
      return "bad CRC";
    case Status::UnknownOpcode:
      return "unknown opcode";
    case Status::TooLong:
      return "too long";
    case Status::OutOfRange:
      return "out of range";
    case Status::Busy:
      return "busy (a run is in progress)";
    case Status::DeviceError:
      return "device error";
    case Status::BadRequest:
      return "bad request";
    case Status::Running:
      return "still running";
    case Status::NotRunning:
      return "no run in progress";
    case Status::BadVersion:
      return "protocol version mismatch";
    case Status::Unauthorized:
      return "unauthorized";
  }
  return "unknown status";
}

// Twice the largest frame: compaction then moves at most one frame per frame's worth of input.
FrameCodec::FrameCodec() : buf_(2 * kMaxFrameBytes), reg_(2 * kMaxFrameBytes + 1, 0) {}

std::vector<uint8_t> FrameCodec::encode(const Frame& frame) {
  if (frame.payload.size() > kMaxPayload) throw Error("link: frame payload longer than 64 KiB");
  std::vector<uint8_t> out(kHeaderBytes + frame.payload.size() + kCrcBytes);
  uint8_t* p = out.data();
  std::memcpy(p, kMagic, 4);
  p[4] = kProtocolVersion;
  p[5] = frame.opcode;
  storeLe16(p + 6, frame.status);
  storeLe32(p + 8, frame.seq);
  storeLe32(p + 12, frame.tile);
  storeLe32(p + 16, frame.addr);
  storeLe32(p + 20, static_cast<uint32_t>(frame.payload.size()));
  std::copy(frame.payload.begin(), frame.payload.end(), p + kHeaderBytes);
  const size_t body = kHeaderBytes + frame.payload.size();
  storeLe32(p + body, crc32(std::span<const uint8_t>(p, body)));
  return out;
}

void FrameCodec::compact() {
  if (begin_ == 0) return;
  std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
  // The registers keep their values: a substring's CRC needs only the two at its ends.
  std::memmove(reg_.data(), reg_.data() + begin_, (end_ - begin_ + 1) * sizeof(uint32_t));
  end_ -= begin_;
  begin_ = 0;
}

size_t FrameCodec::feed(std::span<const uint8_t> data) {
  // At most one frame pending: a full decoder holds a complete frame or a rejected candidate.
  const size_t n = std::min(data.size(), kMaxFrameBytes - (end_ - begin_));
  if (end_ + n > buf_.size()) compact();
  for (size_t i = 0; i < n; ++i) {
    buf_[end_ + i] = data[i];
    reg_[end_ + i + 1] = crc32RawByte(reg_[end_ + i], data[i]);
  }
  end_ += n;
  return n;
}

void FrameCodec::skip(size_t n) {
  begin_ += n;
  if (begin_ == end_) begin_ = end_ = 0;
}

void FrameCodec::dropPartial() {
  if (!hasPartial()) return;
  ++droppedFrames_;
  skip(1);  // the next poll() looks for a later magic among the buffered bytes
}

std::optional<DecodeEvent> FrameCodec::poll() {
  // Skip to the first magic; keep a trailing prefix of it, the rest may still arrive.
  size_t i = begin_;
  for (; i < end_; ++i) {
    const size_t avail = std::min<size_t>(4, end_ - i);
    if (std::memcmp(buf_.data() + i, kMagic, avail) == 0) break;
  }
  droppedBytes_ += i - begin_;
  skip(i - begin_);
  if (end_ - begin_ < kHeaderBytes) return std::nullopt;

  const uint8_t* p = buf_.data() + begin_;
  DecodeEvent ev;
  ev.frame.opcode = p[5];
  ev.frame.status = loadLe16(p + 6);
  ev.frame.seq = loadLe32(p + 8);
  ev.frame.tile = loadLe32(p + 12);
  ev.frame.addr = loadLe32(p + 16);
  const uint32_t length = loadLe32(p + 20);
  if (p[4] != kProtocolVersion || length > kMaxPayload) {
    ev.kind = p[4] != kProtocolVersion ? DecodeEvent::Kind::BadVersion : DecodeEvent::Kind::TooLong;
    ++droppedFrames_;
    skip(1);
    return ev;
  }
  const size_t body = kHeaderBytes + length;
  if (end_ - begin_ < body + kCrcBytes) return std::nullopt;
  if (crc32Substring(reg_[begin_], reg_[begin_ + body], body) != loadLe32(p + body)) {
    ev.kind = DecodeEvent::Kind::BadCrc;
    ++droppedFrames_;
    skip(1);
    return ev;
  }
  ev.frame.payload.assign(p + kHeaderBytes, p + body);
  skip(body + kCrcBytes);
  return ev;
}

}  // namespace tessera::link
