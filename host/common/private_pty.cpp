#include "private_pty.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tessera/error.hpp"

namespace tessera {

PrivatePty openPrivatePty() {
  PrivatePty p;
  p.master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (p.master < 0 || ::grantpt(p.master) != 0 || ::unlockpt(p.master) != 0) {
    const std::string why = std::strerror(errno);
    if (p.master >= 0) ::close(p.master);
    throw Error(fmt::format("cannot create a pseudo-terminal: {}", why));
  }
  p.path = ::ptsname(p.master);
  p.slave = ::open(p.path.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  termios tio{};
  struct stat st {};
  auto fail = [&](const std::string& what) {
    const std::string why = std::strerror(errno);
    if (p.slave >= 0) ::close(p.slave);
    ::close(p.master);
    throw Error(fmt::format("{}: {}: {}", p.path, what, why));
  };
  if (p.slave < 0) fail("cannot open");
  // grantpt leaves the group (tty) able to write, so `write` and `wall` could put bytes on the
  // link; others may read and write it on a devpts mounted with mode=666.
  if (::fchmod(p.slave, 0600) != 0) fail("cannot make it private (chmod 600)");
  if (::fstat(p.slave, &st) != 0) fail("cannot stat");
  if ((st.st_mode & 077) != 0 || st.st_uid != ::geteuid()) {
    ::close(p.slave);
    ::close(p.master);
    throw Error(fmt::format(
        "{}: others can open it (mode {:04o}, owner {}); a pty is the device's only lock, so "
        "it is refused",
        p.path, st.st_mode & 07777, st.st_uid));
  }
  if (::tcgetattr(p.slave, &tio) != 0) fail("not a terminal");
  ::cfmakeraw(&tio);
  if (::tcsetattr(p.slave, TCSANOW, &tio) != 0) fail("cannot set raw mode");
  return p;
}

}  // namespace tessera
