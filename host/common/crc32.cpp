#include "crc32.hpp"

#include <array>

namespace tessera {
namespace {

constexpr std::array<uint32_t, 256> makeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = makeTable();

constexpr uint32_t kPoly = 0xEDB88320u;

// a * b modulo the CRC polynomial, bit-reflected (x^0 is bit 31), as zlib's multmodp.
constexpr uint32_t mulModP(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
    if (a & m) product ^= b;
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;
  }
  return product;
}

// x^(8 * 2^k) modulo the polynomial, k = 0..63.
constexpr std::array<uint32_t, 64> makePowers() {
  std::array<uint32_t, 64> p{};
  uint32_t v = 1u << 23;  // x^8
  for (auto& e : p) {
    e = v;
    v = mulModP(v, v);
  }
  return p;
}

constexpr std::array<uint32_t, 64> kBytePowers = makePowers();

// reg advanced over n zero bytes without the table walk: reg * x^(8n).
uint32_t shiftBytes(uint32_t reg, uint64_t n) {
  for (unsigned k = 0; n != 0; n >>= 1, ++k)
    if (n & 1) reg = mulModP(kBytePowers[k], reg);
  return reg;
}

}  // namespace

uint32_t crc32RawByte(uint32_t reg, uint8_t byte) {
  return kTable[(reg ^ byte) & 0xff] ^ (reg >> 8);
}

uint32_t crc32Raw(std::span<const uint8_t> data, uint32_t reg) {
  for (uint8_t b : data) reg = kTable[(reg ^ b) & 0xff] ^ (reg >> 8);
  return reg;
}

uint32_t crc32Substring(uint32_t regA, uint32_t regB, uint64_t n) {
  // R(b) = shift(R(a), n) ^ R0(bytes); the CRC starts from ~0 and ends inverted.
  return ~(regB ^ shiftBytes(regA ^ 0xFFFFFFFFu, n));
}

uint32_t crc32(std::span<const uint8_t> data, uint32_t crc) {
  crc = ~crc;
  for (uint8_t b : data) crc = kTable[(crc ^ b) & 0xff] ^ (crc >> 8);
  return ~crc;
}

}  // namespace tessera
