// A raw client of a serial line (a board's USB UART, or the pty of tessera-board-sim): writes
// bytes exactly as given and decodes the frames that come back. It is for what the Device
// interface never does — sending a corrupted frame to check that the device rejects and counts
// it (tessera-bringup's link check, the board tests).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frame_codec.hpp"

namespace tessera::link {

class RawSerialLine {
 public:
  /// Opens the line in raw mode and drops anything pending. Throws tessera::Error naming the
  /// path when it cannot be opened.
  explicit RawSerialLine(const std::string& path);
  ~RawSerialLine();
  RawSerialLine(const RawSerialLine&) = delete;
  RawSerialLine& operator=(const RawSerialLine&) = delete;

  /// Writes every byte; throws tessera::Error naming the path when the line refuses them.
  void write(const std::vector<uint8_t>& bytes);
  /// The next decoded event (a frame or a decoding error), or nothing if none came within the
  /// timeout.
  std::optional<DecodeEvent> read(std::chrono::milliseconds timeout);

 private:
  std::string path_;
  int fd_ = -1;
  FrameCodec codec_;
};

}  // namespace tessera::link
