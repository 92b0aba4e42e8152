// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320, as zlib): the *.tess checksum
// (docs/executable-format.md) and the link frames (docs/link-protocol.md).
#pragma once

#include <cstdint>
#include <span>

namespace tessera {

/// CRC-32 of data, continuing from crc (0 to start); crc32("123456789") == 0xCBF43926.
uint32_t crc32(std::span<const uint8_t> data, uint32_t crc = 0);

/// The raw CRC register (no pre/post inversion) after data, starting from reg: with
/// R(i) = crc32Raw(first i bytes of a buffer, 0), the CRC of bytes [a, b) is
/// crc32Substring(R(a), R(b), b - a) in O(log(b - a)), whatever came before a.
uint32_t crc32Raw(std::span<const uint8_t> data, uint32_t reg);
/// One byte of crc32Raw.
uint32_t crc32RawByte(uint32_t reg, uint8_t byte);
/// The CRC-32 of the n bytes between two raw registers regA (before them) and regB (after them).
uint32_t crc32Substring(uint32_t regA, uint32_t regB, uint64_t n);

}  // namespace tessera
