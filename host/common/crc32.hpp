// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320, as zlib): the *.tess checksum
// (docs/executable-format.md) and the link frames (docs/link-protocol.md).
#pragma once

#include <cstdint>
#include <span>

namespace tessera {

/// CRC-32 of data, continuing from crc (0 to start); crc32("123456789") == 0xCBF43926.
uint32_t crc32(std::span<const uint8_t> data, uint32_t crc = 0);

}  // namespace tessera
