#include "raw_serial.hpp"

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <span>

#include "tessera/error.hpp"

namespace tessera::link {

RawSerialLine::RawSerialLine(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_NOCTTY);
  if (fd_ < 0) throw Error("cannot open " + path);
  termios tio{};
  if (::tcgetattr(fd_, &tio) == 0) {
    ::cfmakeraw(&tio);
    ::tcsetattr(fd_, TCSANOW, &tio);
  }
  ::tcflush(fd_, TCIOFLUSH);
}

RawSerialLine::~RawSerialLine() {
  ::close(fd_);
}

void RawSerialLine::write(const std::vector<uint8_t>& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + off, bytes.size() - off);
    if (n <= 0) throw Error("write to " + path_ + " failed");
    off += static_cast<size_t>(n);
  }
}

std::optional<DecodeEvent> RawSerialLine::read(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto ev = codec_.poll()) return ev;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    uint8_t buf[2048];
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n > 0) codec_.feed(std::span<const uint8_t>(buf, static_cast<size_t>(n)));
  }
}

}  // namespace tessera::link
