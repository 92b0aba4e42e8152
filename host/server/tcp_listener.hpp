// TcpListener: accepts TCP clients for a LinkServer, one at a time (docs/link-protocol.md,
// "Transports"): a second client is closed at once, a client that already hung up is replaced.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <string>

#include "boost_asio.hpp"
#include "link_server.hpp"
#include "link_session.hpp"

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
  void accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
      if (ec == boost::asio::error::operation_aborted) return;  // closed by a signal
      if (!ec) {
        // A client that just hung up may not have been noticed yet: it must not block the next.
        if (auto current = session_; current && current->peerGone()) current->stop();
        if (session_) {
          // One client at a time: a second one is told at once (EOF), not left hanging.
          boost::system::error_code ignored;
          socket.close(ignored);
        } else {
          boost::system::error_code ignored;
          socket.set_option(tcp::no_delay(true), ignored);
          const auto remote = socket.remote_endpoint(ignored);
          const std::string peer =
              ignored ? "client"
                      : fmt::format("client {}:{}", remote.address().to_string(), remote.port());
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

  tcp::acceptor acceptor_;
  LinkServer& server_;
  SessionLimits limits_;
  std::shared_ptr<LinkSession<tcp::socket>> session_;
};

}  // namespace tessera::link
