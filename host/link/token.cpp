#include "token.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "file_io.hpp"
#include "tessera/error.hpp"

namespace tessera::link {

std::string loadToken(const std::string& file) {
  std::string token;
  std::string source;
  if (!file.empty()) {
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
  for (char c : token) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      throw Error(fmt::format("{}: the token has a control byte", source));
  }
  return token;
}

}  // namespace tessera::link
