// LinkSession: one client connection on a Boost.Asio stream (TCP socket or pty master), feeding a
// LinkServer. Reads are never blocked by a run: run slices are posted to the io_context between
// reads. A partial frame that sees no byte for kStallTimeout is dropped (its sender went away).
// Everything a client controls is bounded (docs/limits.md): the reply bytes queued for it, the
// time it may stay silent, and, with a token, the time it has to present it.
#pragma once

#include <fmt/format.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "boost_asio.hpp"
#include "frame_codec.hpp"
#include "link_server.hpp"

namespace tessera::link {

/// Per-session limits of tessera-server (docs/limits.md; the server's options set them).
struct SessionLimits {
  /// Reply bytes queued for a client that does not read them; one more reply closes the session.
  size_t maxReplyQueueBytes = size_t{4} << 20;
  /// No request for this long (and no WAIT pending): a TCP client is disconnected, a pty
  /// session's run is abandoned. Zero: never.
  std::chrono::milliseconds idleTimeout{30000};
  /// The shared token a client must present with AUTH before anything else; "" = none needed.
  std::string token;
  /// With a token: time a new client has to present it. A client presents it with its first
  /// frame, so less than a second is plenty, and a silent connection holds the one client slot
  /// no longer than that (docs/limits.md, "Exposure").
  std::chrono::milliseconds authTimeout{800};
  /// With a token: a wrong or missing one is answered (Unauthorized) this long after it arrives,
  /// then the connection closes. With one client at a time, that is one guess, and one log line,
  /// per delay (docs/limits.md, "Exposure").
  std::chrono::milliseconds refusalDelay{1000};
  /// Sessions that can be closed (TCP) are; a pty session only abandons its run and carries on.
  bool closable = true;
};

/// True if a and b are equal, in a time that depends only on their lengths.
inline bool sameToken(const std::string& a, const std::vector<uint8_t>& b) {
  if (a.size() != b.size()) return false;
  unsigned diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<uint8_t>(a[i]) ^ b[i];
  return diff == 0;
}

/// Serves one client on stream until it disconnects; then calls onClose.
template <class Stream>
class LinkSession : public std::enable_shared_from_this<LinkSession<Stream>> {
 public:
  /// Who the client is ("client HOST:PORT", "pty client"), for messages.
  const std::string& peer() const { return peer_; }
  /// Silence after which an unfinished frame is abandoned.
  static constexpr std::chrono::milliseconds kStallTimeout{500};

  /// Serve server's requests arriving on stream (peer names the client in log lines).
  LinkSession(Stream stream, LinkServer& server, std::function<void()> onClose,
              SessionLimits limits = {}, std::string peer = "client")
      : stream_(std::move(stream)),
        server_(server),
        stall_(stream_.get_executor()),
        idle_(stream_.get_executor()),
        refusal_(stream_.get_executor()),
        onClose_(std::move(onClose)),
        limits_(std::move(limits)),
        peer_(std::move(peer)),
        authed_(limits_.token.empty()) {}

  /// Replace what runs when the session ends.
  void setOnClose(std::function<void()> onClose) { onClose_ = std::move(onClose); }
  /// Begin reading.
  void start() {
    lastActivity_ = Clock::now();
    armIdleTimer();
    read();
  }
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
  using Clock = std::chrono::steady_clock;

  void read() {
    auto self = this->shared_from_this();
    stream_.async_read_some(boost::asio::buffer(buf_), [self](const boost::system::error_code& ec,
                                                              size_t n) { self->onRead(ec, n); });
  }

  void onRead(const boost::system::error_code& ec, size_t n) {
    if (ec || closed_) return close();
    for (size_t off = 0; off < n && !closed_ && !closing_;) {
      off += codec_.feed(std::span<const uint8_t>(buf_.data() + off, n - off));
      handleDecoded();
    }
    if (closed_ || closing_) return;
    armStallTimer();
    scheduleStep();
    read();
  }

  // Answer every complete frame the decoder holds (stops once the session is ending).
  void handleDecoded() {
    while (!closed_ && !closing_) {
      auto ev = codec_.poll();
      if (!ev) return;
      if (!authed_) {
        authenticate(*ev);
        continue;
      }
      if (ev->kind == DecodeEvent::Kind::Frame) lastActivity_ = Clock::now();
      if (auto reply = server_.handle(*ev)) send(FrameCodec::encode(*reply));
    }
  }

  // A server with a token answers only AUTH with that token until it has seen one; anything else
  // gets Unauthorized and the session ends (a closable one; a pty session just stays locked).
  void authenticate(const DecodeEvent& ev) {
    const Frame& f = ev.frame;
    Frame out;
    out.opcode = static_cast<uint8_t>(f.opcode | kReplyBit);
    out.seq = f.seq;
    if (ev.kind == DecodeEvent::Kind::Frame && f.opcode == static_cast<uint8_t>(Opcode::Auth) &&
        sameToken(limits_.token, f.payload)) {
      authed_ = true;
      lastActivity_ = Clock::now();
      out.status = static_cast<uint16_t>(Status::Ok);
      send(FrameCodec::encode(out));
      return;
    }
    const bool tried =
        ev.kind == DecodeEvent::Kind::Frame && f.opcode == static_cast<uint8_t>(Opcode::Auth);
    const std::string msg = tried ? "wrong token"
                                  : "this server needs a token: present it with AUTH first "
                                    "(device string ?token_file=PATH or TESSERA_TOKEN)";
    out.status = static_cast<uint16_t>(Status::Unauthorized);
    out.payload.assign(msg.begin(), msg.end());
    const std::string what = tried ? "presented a wrong token" : "sent a request before AUTH";
    if (!limits_.closable || limits_.refusalDelay.count() == 0) {
      send(FrameCodec::encode(out));
      log(what);
      if (limits_.closable) closeAfterSending();
      return;
    }
    // Nothing more is read from this client; the refusal goes out after the delay.
    closing_ = true;
    auto self = this->shared_from_this();
    refusal_.expires_after(limits_.refusalDelay);
    refusal_.async_wait([self, out, what](const boost::system::error_code& ec) {
      if (ec || self->closed_) return;
      self->send(FrameCodec::encode(out));
      self->log(what);
      if (!self->writing_) self->close();
    });
  }

  void armStallTimer() {
    stall_.cancel();
    if (!codec_.hasPartial()) return;
    auto self = this->shared_from_this();
    stall_.expires_after(kStallTimeout);
    stall_.async_wait([self](const boost::system::error_code& ec) {
      if (ec || self->closed_ || self->closing_) return;
      // Drop the stalled frame, then decode whatever complete frames the bytes behind it hold.
      self->codec_.dropPartial();
      self->handleDecoded();
      if (self->closed_ || self->closing_) return;
      self->armStallTimer();
      self->scheduleStep();
    });
  }

  // One timer for the whole session, checked against lastActivity_ when it fires (no re-arming
  // per request). A pending WAIT counts as activity: the server owes that client a reply.
  void armIdleTimer() {
    const auto limit = authed_ ? limits_.idleTimeout : limits_.authTimeout;
    if (limit.count() == 0 || closed_) return;
    const auto due = lastActivity_ + limit;
    auto self = this->shared_from_this();
    idle_.expires_at(due);
    idle_.async_wait([self](const boost::system::error_code& ec) {
      if (ec || self->closed_) return;
      self->onIdleTimer();
    });
  }

  void onIdleTimer() {
    if (closing_) return;  // a refusal is on its way, and closes the session after its delay
    const auto limit = authed_ ? limits_.idleTimeout : limits_.authTimeout;
    const auto now = Clock::now();
    if (server_.waitPending()) lastActivity_ = now;
    if (now - lastActivity_ < limit) return armIdleTimer();
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(limit).count();
    if (limits_.closable) {
      log(authed_ ? fmt::format("idle for {} ms: disconnected, its run (if any) stopped", ms)
                  : fmt::format("no token within {} ms: disconnected", ms));
      return close();
    }
    if (server_.running()) log(fmt::format("idle for {} ms: its run is abandoned", ms));
    server_.clientGone();
    codec_.dropPartial();
    lastActivity_ = now;
    armIdleTimer();
  }

  void scheduleStep() {
    if (auto reply = server_.pollWait()) {
      lastActivity_ = Clock::now();
      send(FrameCodec::encode(*reply));
    }
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

  // A client that does not read its replies is disconnected, not buffered for.
  void send(std::vector<uint8_t> bytes) {
    if (closed_) return;
    if (queuedBytes_ + bytes.size() > limits_.maxReplyQueueBytes) {
      log(fmt::format("does not read its replies ({} bytes queued, limit {}): disconnected",
                      queuedBytes_, limits_.maxReplyQueueBytes));
      if (limits_.closable) return close();
      // A pty cannot be closed for one client: forget the replies it left and its run.
      out_.erase(out_.begin() + (writing_ ? 1 : 0), out_.end());
      queuedBytes_ = writing_ ? out_.front().size() : 0;
      server_.clientGone();
      return;
    }
    queuedBytes_ += bytes.size();
    out_.push_back(std::move(bytes));
    if (!writing_) writeNext();
  }

  void writeNext() {
    writing_ = true;
    auto self = this->shared_from_this();
    boost::asio::async_write(stream_, boost::asio::buffer(out_.front()),
                             [self](const boost::system::error_code& ec, size_t) {
                               self->writing_ = false;
                               if (ec || self->closed_) return self->close();
                               self->queuedBytes_ -= self->out_.front().size();
                               self->out_.pop_front();
                               if (!self->out_.empty()) return self->writeNext();
                               if (self->closing_) self->close();
                             });
  }

  // Stop reading; close once the queued replies are written (the idle timer bounds the wait).
  void closeAfterSending() {
    closing_ = true;
    if (!writing_) close();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    stream_.close(ignored);
    stall_.cancel();
    idle_.cancel();
    refusal_.cancel();
    // A write in flight still refers to the front buffer until its handler runs.
    out_.erase(out_.begin() + (writing_ && !out_.empty() ? 1 : 0), out_.end());
    queuedBytes_ = 0;
    server_.clientGone();
    if (onClose_) onClose_();
  }

  void log(const std::string& what) const {
    std::fprintf(stderr, "tessera-server: %s %s\n", peer_.c_str(), what.c_str());
  }

  Stream stream_;
  LinkServer& server_;
  boost::asio::steady_timer stall_;
  boost::asio::steady_timer idle_;
  boost::asio::steady_timer refusal_;
  std::function<void()> onClose_;
  SessionLimits limits_;
  std::string peer_;
  FrameCodec codec_;
  std::array<uint8_t, 16384> buf_{};
  std::deque<std::vector<uint8_t>> out_;
  size_t queuedBytes_ = 0;          // bytes in out_ (the one being written included)
  Clock::time_point lastActivity_;  // last request, AUTH, or WAIT reply
  bool authed_;
  bool writing_ = false;
  bool stepping_ = false;
  bool closing_ = false;
  bool closed_ = false;
};

}  // namespace tessera::link
