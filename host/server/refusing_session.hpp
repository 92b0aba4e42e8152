// RefusingSession: what a TCP client gets while another holds the server (docs/limits.md,
// "Exposure"). The server serves one client at a time; a second one used to see its connection
// closed at once, with nothing to tell it why. It now gets INFO answered (when the server needs
// no token: INFO before a token would tell a stranger the chip) and every other request refused
// with Busy and the reason, naming the client that holds the device; then the connection closes.
// It never touches the device or the holder's run: it reads the ChipInfo and nothing else.
#pragma once

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "boost_asio.hpp"
#include "frame_codec.hpp"
#include "messages.hpp"

namespace tessera::link {

/// One refused client: INFO (without a token) answered, anything else Busy with a reason.
class RefusingSession : public std::enable_shared_from_this<RefusingSession> {
 public:
  /// How long a refused client may stay connected in all.
  static constexpr std::chrono::milliseconds kLinger{1000};

  RefusingSession(boost::asio::ip::tcp::socket socket, ChipInfo info, bool answerInfo,
                  std::string reason, std::string peer)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        info_(std::move(info)),
        answerInfo_(answerInfo),
        reason_(std::move(reason)),
        peer_(std::move(peer)) {}

  /// Read requests until the first refusal is sent or kLinger passes; onClose runs once after.
  void start(std::function<void()> onClose) {
    onClose_ = std::move(onClose);
    auto self = shared_from_this();
    timer_.expires_after(kLinger);
    timer_.async_wait([self](const boost::system::error_code& ec) {
      if (!ec) self->close();
    });
    read();
  }

 private:
  void read() {
    auto self = shared_from_this();
    socket_.async_read_some(boost::asio::buffer(buf_),
                            [self](const boost::system::error_code& ec, size_t n) {
                              if (ec || self->closed_) return self->close();
                              self->codec_.feed(std::span<const uint8_t>(self->buf_.data(), n));
                              self->answer();
                            });
  }

  // One operation at a time: the replies to what one read brought go out in one write, then the
  // next read (or the close, after a refusal).
  void answer() {
    std::vector<uint8_t> replies;
    bool last = false;
    while (auto ev = codec_.poll()) {
      if (ev->kind != DecodeEvent::Kind::Frame) continue;  // not trusted enough to answer
      Frame out;
      out.opcode = static_cast<uint8_t>(ev->frame.opcode | kReplyBit);
      out.seq = ev->frame.seq;
      if (ev->frame.opcode == static_cast<uint8_t>(Opcode::Info) && answerInfo_) {
        out.status = static_cast<uint16_t>(Status::Ok);
        out.payload = encodeInfo(info_);
      } else {
        out.status = static_cast<uint16_t>(Status::Busy);
        out.payload.assign(reason_.begin(), reason_.end());
        std::fprintf(stderr, "tessera-server: %s refused: another client holds the device\n",
                     peer_.c_str());
        last = true;
      }
      const std::vector<uint8_t> bytes = FrameCodec::encode(out);
      replies.insert(replies.end(), bytes.begin(), bytes.end());
      if (last) break;
    }
    if (replies.empty()) return read();
    auto data = std::make_shared<std::vector<uint8_t>>(std::move(replies));
    auto self = shared_from_this();
    boost::asio::async_write(socket_, boost::asio::buffer(*data),
                             [self, data, last](const boost::system::error_code& ec, size_t) {
                               if (ec || last || self->closed_) return self->close();
                               self->read();
                             });
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    timer_.cancel();
    if (onClose_) onClose_();
  }

  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer timer_;
  ChipInfo info_;
  bool answerInfo_;
  std::string reason_;
  std::string peer_;
  FrameCodec codec_;
  std::array<uint8_t, 4096> buf_{};
  std::function<void()> onClose_;
  bool closed_ = false;
};

}  // namespace tessera::link
