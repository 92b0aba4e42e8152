// Bounded, checked file I/O for everything a user names on a command line: program and
// executable files, descriptions, tokens, outputs (docs/limits.md, "Files").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

/// The bytes of the regular file at path, at most maxBytes. A directory, FIFO, device or socket,
/// a larger file, or a read error gives a tessera::Error naming path; what says what the file
/// should have been ("ELF program", ...). Never blocks on a FIFO with no writer.
std::vector<uint8_t> readRegularFile(const std::string& path, uint64_t maxBytes, const char* what);

/// Create or truncate path and write bytes, checking every write and the close: a full disk or
/// /dev/full is a tessera::Error naming path, never a silent success.
void writeFileChecked(const std::string& path, std::span<const uint8_t> bytes);
/// writeFileChecked for text (reports, traces, charts, JSON): the bytes of text as they are.
void writeFileChecked(const std::string& path, std::string_view text);

}  // namespace tessera
