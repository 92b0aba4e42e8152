#include "bad_frame_probe.hpp"

#include <fmt/format.h>

#include "frame_codec.hpp"
#include "raw_serial.hpp"
#include "tessera/error.hpp"

namespace tessera::link {

BadFrameReply sendBadCrcFrame(const std::string& device, std::chrono::milliseconds timeout) {
  if (device.rfind("serial:", 0) != 0) {
    throw Error(fmt::format("bad-frame probe: \"{}\" is not a serial: device", device));
  }
  std::string path = device.substr(7);
  path = path.substr(0, path.find('?'));
  RawSerialLine line(path);
  Frame req;
  req.opcode = static_cast<uint8_t>(Opcode::MemWrite);
  req.seq = 0xB0B0;
  req.payload.assign(kBadFrameWord.begin(), kBadFrameWord.end());
  std::vector<uint8_t> bytes = FrameCodec::encode(req);
  bytes[kHeaderBytes + 1] ^= kBadFrameWord[1] ^ kBadFrameFlippedWord[1];
  line.write(bytes);
  BadFrameReply out;
  if (auto ev = line.read(timeout)) {
    out.answered = true;
    out.notRejected = ev->kind == DecodeEvent::Kind::Frame &&
                      ev->frame.status != static_cast<uint16_t>(Status::BadCrc);
    out.status = ev->frame.status;
  }
  return out;
}

}  // namespace tessera::link
