// ServerProcess: starts tessera-server as a child for a test and reads where it listens.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace tessera::link {

/// A running tessera-server child; killed (SIGKILL) and reaped on destruction.
class ServerProcess {
 public:
  /// Start serverPath with args; waits up to 20 s for its "listening on"/"pty" line.
  ServerProcess(const std::string& serverPath, const std::vector<std::string>& args);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  /// The device string a client opens: "tcp://127.0.0.1:PORT" or "serial:/dev/pts/N".
  const std::string& deviceString() const { return device_; }
  /// The TCP port (0 for a pty server).
  unsigned port() const { return port_; }
  /// The server's process id.
  pid_t pid() const { return pid_; }
  /// Send sig to the server.
  void signal(int sig);
  /// Wait for the server to exit; returns its wait status.
  int wait();

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string device_;
  unsigned port_ = 0;
};

}  // namespace tessera::link
