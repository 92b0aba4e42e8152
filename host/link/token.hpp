// The shared token of a tessera-server that listens beyond loopback (docs/limits.md,
// "Exposure"): read from a file or the TESSERA_TOKEN environment variable, by server and client.
#pragma once

#include <cstddef>
#include <string>

namespace tessera::link {

/// Environment variable holding the token when no file is given.
inline constexpr const char* kTokenEnv = "TESSERA_TOKEN";
/// Shortest and longest token accepted.
inline constexpr size_t kMinTokenBytes = 16;
inline constexpr size_t kMaxTokenBytes = 1024;

/// The token in file (trailing whitespace and newlines dropped) or, if file is "", in
/// $TESSERA_TOKEN ("" when unset or empty). A token shorter than kMinTokenBytes, longer than
/// kMaxTokenBytes or with a byte that is not printable ASCII (a second line included), or a file
/// that group or others may read or write, is a tessera::Error naming its source.
std::string loadToken(const std::string& file);

}  // namespace tessera::link
