#include "file_io.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tessera/error.hpp"

namespace tessera {
namespace {

std::string why() {
  return std::strerror(errno);
}

const char* kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/// Closes a file descriptor on scope exit unless released.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::vector<uint8_t> readRegularFile(const std::string& path, uint64_t maxBytes, const char* what) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (f.fd < 0) throw Error(fmt::format("{}: cannot open: {}", path, why()));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw Error(fmt::format("{}: cannot stat: {}", path, why()));
  if (!S_ISREG(st.st_mode))
    throw Error(fmt::format("{}: is {}, not a file (expected {})", path, kindOf(st.st_mode), what));
  if (static_cast<uint64_t>(st.st_size) > maxBytes)
    throw Error(fmt::format("{}: {} bytes, more than the {} bytes allowed for {} (docs/limits.md)",
                            path, st.st_size, maxBytes, what));
  std::vector<uint8_t> bytes;
  bytes.reserve(static_cast<size_t>(st.st_size));
  std::vector<uint8_t> chunk(65536);
  // The file may grow while it is read: the limit holds whatever stat said.
  for (;;) {
    const ssize_t n = ::read(f.fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(fmt::format("{}: read error: {}", path, why()));
    if (n == 0) break;
    if (bytes.size() + static_cast<size_t>(n) > maxBytes)
      throw Error(fmt::format("{}: more than the {} bytes allowed for {} (docs/limits.md)", path,
                              maxBytes, what));
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + n);
  }
  return bytes;
}

void writeFileChecked(const std::string& path, std::span<const uint8_t> bytes) {
  Fd f{::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)};
  if (f.fd < 0) throw Error(fmt::format("{}: cannot create: {}", path, why()));
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(f.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(fmt::format("{}: write failed: {}", path, n < 0 ? why() : "no progress"));
    done += static_cast<size_t>(n);
  }
  const int fd = f.fd;
  f.fd = -1;
  if (::close(fd) != 0) throw Error(fmt::format("{}: write failed: {}", path, why()));
}

void writeFileChecked(const std::string& path, std::string_view text) {
  writeFileChecked(path, std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace tessera
