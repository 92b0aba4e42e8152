// posix_openpt + grantpt + unlockpt; raw mode on the slave so no byte is translated or echoed.
#include "pty_endpoint.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

#include "tessera/error.hpp"

namespace tessera::link {

PtyEndpoint::PtyEndpoint(boost::asio::io_context& io, LinkServer& server, SessionLimits limits) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0)
    throw Error("cannot create a pseudo-terminal");
  path_ = ::ptsname(master);
  // Hold the slave open ourselves: the master then never reads EIO when a client closes, so
  // clients may come and go.
  slave_ = ::open(path_.c_str(), O_RDWR | O_NOCTTY);
  termios tio{};
  if (slave_ < 0 || ::tcgetattr(slave_, &tio) != 0) throw Error("cannot open " + path_);
  ::cfmakeraw(&tio);
  ::tcsetattr(slave_, TCSANOW, &tio);
  session_ = std::make_shared<LinkSession<boost::asio::posix::stream_descriptor>>(
      boost::asio::posix::stream_descriptor(io, master), server, nullptr, std::move(limits),
      "pty client");
}

PtyEndpoint::~PtyEndpoint() {
  ::close(slave_);
}

}  // namespace tessera::link
