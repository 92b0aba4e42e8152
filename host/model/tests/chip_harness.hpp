// A multi-tile ModelDevice with helpers to place hand-encoded tile and exchange programs.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "model_device.hpp"
#include "rv_encode.hpp"
#include "exchange_encoding.hpp"
#include "tessera/chip_params.h"

namespace tessera::model::test {

/// Exchange instruction encodings (docs/chip.md, "Exchange programs").
namespace xc {
constexpr uint32_t end() { return xchg::word0(TESS_XOP_END, 0); }
constexpr uint32_t delay(uint32_t n) { return xchg::word0(TESS_XOP_DELAY, n); }
inline std::vector<uint32_t> send(uint32_t n, uint32_t addr) { return {xchg::word0(TESS_XOP_SEND, n), addr}; }
inline std::vector<uint32_t> recv(uint32_t n, uint32_t bus, uint32_t addr) {
  return {xchg::word0(TESS_XOP_RECV, n), xchg::busAddr(bus, addr)};
}
inline std::vector<uint32_t> sendrecv(uint32_t n, uint32_t saddr, uint32_t bus, uint32_t raddr) {
  return {xchg::word0(TESS_XOP_SENDRECV, n), saddr, xchg::busAddr(bus, raddr)};
}
/// Concatenate instruction word lists.
inline std::vector<uint32_t> prog(std::initializer_list<std::vector<uint32_t>> parts) {
  std::vector<uint32_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
}  // namespace xc

/// A chip of `tiles` tiles of memBytes each.
struct ChipHarness {
  ModelDevice dev;

  explicit ChipHarness(unsigned tiles, uint32_t memBytes = 65536, unsigned threads = 1)
      : dev(options(tiles, memBytes, threads)) {}

  static DeviceOptions options(unsigned tiles, uint32_t memBytes, unsigned threads) {
    DeviceOptions o;
    o.tiles = tiles;
    o.tileMemBytes = memBytes;
    o.threads = threads;
    return o;
  }
  /// Write words at addr of a tile.
  void place(unsigned tile, uint32_t addr, const std::vector<uint32_t>& words) {
    std::vector<uint8_t> bytes(words.size() * 4);
    std::memcpy(bytes.data(), words.data(), bytes.size());
    dev.writeMemory(tile, addr, bytes);
  }
  /// Read a word of a tile's SRAM.
  uint32_t word(unsigned tile, uint32_t addr) {
    uint8_t b[4];
    dev.readMemory(tile, addr, b);
    return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
  }
};

/// t0 = MMIO base.
inline constexpr uint32_t kMmio = rv::lui(rv::t0, 0x80000);
/// SYNC with the descriptor in register r (through t0).
constexpr uint32_t syncWith(uint32_t r) {
  return rv::sw(r, rv::t0, static_cast<int32_t>(TESS_MMIO_SYNC - TESS_MMIO_BASE));
}
/// XCHG_PROG = register r.
constexpr uint32_t xchgProgFrom(uint32_t r) {
  return rv::sw(r, rv::t0, static_cast<int32_t>(TESS_MMIO_XCHG_PROG - TESS_MMIO_BASE));
}
/// EXIT with the value of register r.
constexpr uint32_t exitWith(uint32_t r) { return rv::sw(r, rv::t0, 0); }

}  // namespace tessera::model::test
