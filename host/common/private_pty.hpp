// A pseudo-terminal that only its owner can open: the serial line of tessera-server --pty and of
// tessera-board-sim (docs/limits.md, "Who may reach a device"). A pty has no token: whoever can
// open its slave is the client, so the slave is made mode 0600 and refused when it stays
// reachable by others (a devpts mounted with another mode, or owned by someone else).
#pragma once

#include <string>

namespace tessera {

/// Both ends of a pty in raw mode; the caller owns the descriptors.
struct PrivatePty {
  int master = -1;
  int slave = -1;    ///< held open so the master never reads EIO when a client closes
  std::string path;  ///< the slave's path, for the client
};

/// Create a pty, make its slave mode 0600 and raw; throws tessera::Error naming the path and
/// the mode when others could still open it.
PrivatePty openPrivatePty();

}  // namespace tessera
