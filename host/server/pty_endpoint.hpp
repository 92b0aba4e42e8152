// PtyEndpoint: a pseudo-terminal served as a serial line for a LinkServer (docs/link-protocol.md,
// "Transports"). The server holds the slave open itself so clients may come and go.
#pragma once

#include <memory>
#include <string>

#include "boost_asio.hpp"
#include "link_server.hpp"
#include "link_session.hpp"

namespace tessera::link {

/// A pseudo-terminal whose slave side a client opens as a serial port.
class PtyEndpoint {
 public:
  /// Create the pty; throws tessera::Error when the system has none to give.
  PtyEndpoint(boost::asio::io_context& io, LinkServer& server, SessionLimits limits = {});
  ~PtyEndpoint();
  PtyEndpoint(const PtyEndpoint&) = delete;
  PtyEndpoint& operator=(const PtyEndpoint&) = delete;
  /// The slave path clients open ("/dev/pts/N").
  const std::string& path() const { return path_; }
  /// Begin serving.
  void start() { session_->start(); }
  /// Stop serving (on a signal).
  void stop() { session_->stop(); }

 private:
  std::string path_;
  int slave_ = -1;
  std::shared_ptr<LinkSession<boost::asio::posix::stream_descriptor>> session_;
};

}  // namespace tessera::link
