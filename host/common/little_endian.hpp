// Little-endian words in byte buffers: every file format and wire format of the project
// (executables, checkpoints, link frames and payloads, tile memory images) is little-endian, and
// these are the only places that assemble or split its words.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

/// The 16-bit little-endian value at p.
inline uint16_t loadLe16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | p[1] << 8);
}

/// The 32-bit little-endian value at p.
inline uint32_t loadLe32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

/// The 64-bit little-endian value at p.
inline uint64_t loadLe64(const uint8_t* p) {
  return uint64_t{loadLe32(p)} | uint64_t{loadLe32(p + 4)} << 32;
}

/// Write v at p, least significant byte first.
inline void storeLe16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

/// Write v at p, least significant byte first.
inline void storeLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

/// Append v to out, least significant byte first.
inline void appendLe16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}

/// Append v to out, least significant byte first.
inline void appendLe32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

/// Append v to out, least significant byte first.
inline void appendLe64(std::vector<uint8_t>& out, uint64_t v) {
  appendLe32(out, static_cast<uint32_t>(v));
  appendLe32(out, static_cast<uint32_t>(v >> 32));
}

}  // namespace tessera
