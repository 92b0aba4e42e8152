#include "token.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>

#include "file_io.hpp"
#include "tessera/error.hpp"

namespace tessera::link {

std::string loadToken(const std::string& file) {
  std::string token;
  std::string source;
  if (!file.empty()) {
    // Like ssh with a private key: a token others can read is no secret, so it is refused.
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) != 0)
      throw Error(fmt::format(
          "{}: the token file can be read or written by others (mode {:04o}); make it private "
          "with `chmod 600 {}`",
          file, st.st_mode & 07777, file));
    const auto bytes = readRegularFile(file, kMaxTokenBytes + 64, "a token file");
    token.assign(bytes.begin(), bytes.end());
    source = file;
  } else if (const char* env = std::getenv(kTokenEnv); env && *env) {
    token = env;
    source = std::string("$") + kTokenEnv;
  } else {
    return {};
  }
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ' ||
                            token.back() == '\t'))
    token.pop_back();
  if (token.size() < kMinTokenBytes || token.size() > kMaxTokenBytes)
    throw Error(
        fmt::format("{}: the token has {} bytes; it needs {} to {} (e.g. `openssl rand "
                    "-hex 32`)",
                    source, token.size(), kMinTokenBytes, kMaxTokenBytes));
  for (size_t i = 0; i < token.size(); ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c < 0x20 || c >= 0x7f)
      throw Error(fmt::format(
          "{}: byte {} of the token is 0x{:02x}; a token is one line of printable ASCII", source, i,
          c));
  }
  return token;
}

}  // namespace tessera::link
