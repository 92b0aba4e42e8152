// TcpListener: accepts TCP clients for a LinkServer, one at a time (docs/link-protocol.md,
// "Transports"): a second client is answered by a RefusingSession (INFO, then Busy with the
// reason), a client that already hung up is replaced.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <string>

#include "boost_asio.hpp"
#include "link_server.hpp"
#include "link_session.hpp"
#include "refusing_session.hpp"

namespace tessera::link {

using boost::asio::ip::tcp;

/// Accepts TCP clients one at a time.
class TcpListener {
 public:
  /// Listen on ep for server's clients.
  TcpListener(boost::asio::io_context& io, const tcp::endpoint& ep, LinkServer& server,
              SessionLimits limits = {})
      : acceptor_(io, ep), server_(server), limits_(std::move(limits)) {}
  /// The port actually bound (useful with port 0).
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  /// Begin accepting.
  void start() { accept(); }
  /// Stop accepting and end the current client (on a signal).
  void stop() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    // A local owner: stop() runs onClose, which drops session_ while the call is in progress.
    if (auto current = session_) current->stop();
  }

 private:
  /// "client HOST:PORT" for messages ("client" when the peer is already gone).
  static std::string peerOf(const tcp::socket& socket) {
    boost::system::error_code ec;
    const auto remote = socket.remote_endpoint(ec);
    return ec ? "client" : fmt::format("client {}:{}", remote.address().to_string(), remote.port());
  }

  void accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
      if (ec == boost::asio::error::operation_aborted) return;  // closed by a signal
      if (!ec) {
        // A client that just hung up may not have been noticed yet: it must not block the next.
        if (auto current = session_; current && current->peerGone()) current->stop();
        if (session_ && refusing_ < kMaxRefusing) {
          // One client at a time: a second one gets INFO and a Busy naming the holder
          // (RefusingSession), then EOF; it is never left hanging.
          const std::string peer = peerOf(socket);
          ++refusing_;
          auto refused = std::make_shared<RefusingSession>(
              std::move(socket), server_.info(), limits_.token.empty(),
              fmt::format("another client ({}) holds this server's device; it serves one client "
                          "at a time: try again when that client has disconnected",
                          session_->peer()),
              peer);
          refused->start([this]() { --refusing_; });
        } else if (session_) {
          // More refused clients than kMaxRefusing at once: EOF at once, nothing read.
          boost::system::error_code ignored;
          socket.close(ignored);
        } else {
          boost::system::error_code ignored;
          socket.set_option(tcp::no_delay(true), ignored);
          const std::string peer = peerOf(socket);
          auto session = std::make_shared<LinkSession<tcp::socket>>(std::move(socket), server_,
                                                                    nullptr, limits_, peer);
          // Reset only if still current: an old session may close after a new one started.
          session->setOnClose([this, raw = session.get()]() {
            if (session_.get() == raw) session_.reset();
          });
          session_ = std::move(session);
          session_->start();
        }
      }
      accept();
    });
  }

  /// Refused clients answered at the same time at most; more are closed at once (a flood of
  /// connections costs the server no more than this).
  static constexpr unsigned kMaxRefusing = 4;

  tcp::acceptor acceptor_;
  unsigned refusing_ = 0;
  LinkServer& server_;
  SessionLimits limits_;
  std::shared_ptr<LinkSession<tcp::socket>> session_;
};

}  // namespace tessera::link
