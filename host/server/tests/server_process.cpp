// fork/exec with the child's stdout on a pipe; the first line says where the server listens.
#include "server_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "tessera/error.hpp"

namespace tessera::link {

ServerProcess::ServerProcess(const std::string& serverPath, const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe(fds) != 0) throw Error("pipe failed");
  std::vector<std::string> argv = {serverPath};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execv(serverPath.c_str(), cargv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  out_ = fds[0];
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (line.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{out_, POLLIN, 0};
    char c[256];
    ssize_t n = 0;
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0 ||
        (n = ::read(out_, c, sizeof c)) <= 0)
      throw Error("tessera-server did not start: \"" + line + "\"");
    line.append(c, static_cast<size_t>(n));
  }
  line.resize(line.find('\n'));
  const std::string listening = "listening on ";
  const std::string pty = "pty ";
  if (auto at = line.find(listening); at != std::string::npos) {
    device_ = "tcp://" + line.substr(at + listening.size());
    port_ = static_cast<unsigned>(std::stoul(line.substr(line.rfind(':') + 1)));
  } else if (auto at2 = line.find(pty); at2 != std::string::npos) {
    device_ = "serial:" + line.substr(at2 + pty.size());
  } else {
    throw Error("unexpected tessera-server output: " + line);
  }
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    wait();
  }
  if (out_ >= 0) ::close(out_);
}

void ServerProcess::signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

int ServerProcess::wait() {
  int status = 0;
  if (pid_ > 0) ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

}  // namespace tessera::link
