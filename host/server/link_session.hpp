// LinkSession: one client connection on a Boost.Asio stream (TCP socket or pty master), feeding a
// LinkServer. Reads are never blocked by a run: run slices are posted to the io_context between
// reads. A partial frame that sees no byte for kStallTimeout is dropped (its sender went away).
#pragma once

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <deque>
#include <functional>
#include <memory>

#include "boost_asio.hpp"
#include "frame_codec.hpp"
#include "link_server.hpp"

namespace tessera::link {

/// Serves one client on stream until it disconnects; then calls onClose.
template <class Stream>
class LinkSession : public std::enable_shared_from_this<LinkSession<Stream>> {
 public:
  /// Silence after which an unfinished frame is abandoned.
  static constexpr std::chrono::milliseconds kStallTimeout{500};

  /// Serve server's requests arriving on stream.
  LinkSession(Stream stream, LinkServer& server, std::function<void()> onClose)
      : stream_(std::move(stream)),
        server_(server),
        stall_(stream_.get_executor()),
        onClose_(std::move(onClose)) {}

  /// Replace what runs when the session ends.
  void setOnClose(std::function<void()> onClose) { onClose_ = std::move(onClose); }
  /// Begin reading.
  void start() { read(); }
  /// End the session now (a signal, or its peer found gone): the stream closes, the server
  /// forgets this client, onClose runs; pending handlers then finish with an error and return.
  void stop() { close(); }
  /// True when the peer has hung up but its EOF has not been read yet (sockets only).
  bool peerGone() {
    char c;
    const ssize_t n = ::recv(stream_.native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }

 private:
  void read() {
    auto self = this->shared_from_this();
    stream_.async_read_some(boost::asio::buffer(buf_), [self](const boost::system::error_code& ec,
                                                              size_t n) { self->onRead(ec, n); });
  }

  void onRead(const boost::system::error_code& ec, size_t n) {
    if (ec) return close();
    for (size_t off = 0; off < n;) {
      off += codec_.feed(std::span<const uint8_t>(buf_.data() + off, n - off));
      while (auto ev = codec_.poll())
        if (auto reply = server_.handle(*ev)) send(FrameCodec::encode(*reply));
    }
    armStallTimer();
    scheduleStep();
    read();
  }

  void armStallTimer() {
    stall_.cancel();
    if (!codec_.hasPartial()) return;
    auto self = this->shared_from_this();
    stall_.expires_after(kStallTimeout);
    stall_.async_wait([self](const boost::system::error_code& ec) {
      if (ec || self->closed_) return;
      // Drop the stalled frame, then decode whatever complete frames the bytes behind it hold.
      self->codec_.dropPartial();
      while (auto ev = self->codec_.poll())
        if (auto reply = self->server_.handle(*ev)) self->send(FrameCodec::encode(*reply));
      self->armStallTimer();
      self->scheduleStep();
    });
  }

  void scheduleStep() {
    if (auto reply = server_.pollWait()) send(FrameCodec::encode(*reply));
    if (stepping_ || !server_.running() || closed_) return;
    stepping_ = true;
    auto self = this->shared_from_this();
    // post: queued behind pending reads, so requests are answered between slices.
    boost::asio::post(stream_.get_executor(), [self]() {
      self->stepping_ = false;
      if (self->closed_) return;
      self->server_.step();
      self->scheduleStep();
    });
  }

  void send(std::vector<uint8_t> bytes) {
    if (closed_) return;
    out_.push_back(std::move(bytes));
    if (out_.size() == 1) writeNext();
  }

  void writeNext() {
    auto self = this->shared_from_this();
    boost::asio::async_write(stream_, boost::asio::buffer(out_.front()),
                             [self](const boost::system::error_code& ec, size_t) {
                               if (ec) return self->close();
                               self->out_.pop_front();
                               if (!self->out_.empty()) self->writeNext();
                             });
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    stream_.close(ignored);
    stall_.cancel();
    server_.clientGone();
    if (onClose_) onClose_();
  }

  Stream stream_;
  LinkServer& server_;
  boost::asio::steady_timer stall_;
  std::function<void()> onClose_;
  FrameCodec codec_;
  std::array<uint8_t, 16384> buf_{};
  std::deque<std::vector<uint8_t>> out_;
  bool stepping_ = false;
  bool closed_ = false;
};

}  // namespace tessera::link
