// The one link-level step of a board bring-up that the Device interface never takes: a frame with
// a bad CRC sent straight onto a serial line, to check that the device drops or rejects it and
// does not act on it (tessera-bringup's link step, docs/bringup.md). Everything else a bring-up
// needs it reaches through openDevice and ChipInfo.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

namespace tessera::link {

/// The bytes the bad frame's MEM_WRITE carries for tile 0 address 0, and the same bytes with the
/// bit flipped that breaks the CRC: tile memory must hold neither after the probe.
inline constexpr std::array<uint8_t, 4> kBadFrameWord = {0xde, 0xad, 0xbe, 0xef};
/// kBadFrameWord with the flipped bit (what a device that ignores the CRC would write).
inline constexpr std::array<uint8_t, 4> kBadFrameFlippedWord = {0xde, 0xa9, 0xbe, 0xef};

/// What came back for the bad frame.
struct BadFrameReply {
  bool answered = false;     ///< a reply came back within the timeout (false: the device dropped
                             ///< the frame, which is also right)
  bool notRejected = false;  ///< the reply is a frame whose status is not BadCrc: the device did
                             ///< not check the CRC
  uint16_t status = 0;       ///< that frame's status
};

/// Sends a MEM_WRITE of kBadFrameWord to tile 0 address 0 with one payload bit flipped (its CRC
/// then fails) to the device string `device` ("serial:PATH[?options]"), whose line no open Device
/// may hold, and waits up to `timeout` for a reply. Throws tessera::Error naming the device for
/// any other kind of device string or a line that cannot be opened.
BadFrameReply sendBadCrcFrame(const std::string& device, std::chrono::milliseconds timeout);

}  // namespace tessera::link
