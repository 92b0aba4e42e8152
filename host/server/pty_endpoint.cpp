// A private pty (openPrivatePty: mode 0600, raw, so no byte is translated or echoed).
#include "pty_endpoint.hpp"

#include <unistd.h>

#include "private_pty.hpp"

namespace tessera::link {

PtyEndpoint::PtyEndpoint(boost::asio::io_context& io, LinkServer& server, SessionLimits limits) {
  PrivatePty pty = openPrivatePty();
  path_ = pty.path;
  slave_ = pty.slave;
  session_ = std::make_shared<LinkSession<boost::asio::posix::stream_descriptor>>(
      boost::asio::posix::stream_descriptor(io, pty.master), server, nullptr, std::move(limits),
      "pty client");
}

PtyEndpoint::~PtyEndpoint() {
  ::close(slave_);
}

}  // namespace tessera::link
