// A client byte stream with a deadline on every operation (TCP socket, serial port, ...).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

namespace tessera::link {

/// Blocking byte stream with a timeout on every call; a broken stream throws tessera::Error.
class Transport {
 public:
  virtual ~Transport() = default;
  /// Write all of data (tessera::Error when not done within timeout).
  virtual void write(std::span<const uint8_t> data, std::chrono::milliseconds timeout) = 0;
  /// Read at least one byte into buf; returns the count, or 0 when timeout passed first.
  virtual size_t readSome(std::span<uint8_t> buf, std::chrono::milliseconds timeout) = 0;
};

}  // namespace tessera::link
