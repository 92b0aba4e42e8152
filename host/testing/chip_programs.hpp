// Hand-encoded tile and exchange programs shared by the chip tests of every backend
// (host/device/tests/chip_suite_test.cpp) and the model's own (host/model/tests).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "exchange_encoding.hpp"
#include "rv_encode.hpp"
#include "tessera/chip_params.h"
#include "tessera/device.hpp"

namespace chipprog {

/// Exchange instruction encodings (docs/chip.md, "Exchange programs").
namespace xc {
constexpr uint32_t end() {
  return tessera::xchg::word0(TESS_XOP_END, 0);
}
constexpr uint32_t delay(uint32_t n) {
  return tessera::xchg::word0(TESS_XOP_DELAY, n);
}
inline std::vector<uint32_t> send(uint32_t n, uint32_t addr) {
  return {tessera::xchg::word0(TESS_XOP_SEND, n), addr};
}
inline std::vector<uint32_t> recv(uint32_t n, uint32_t bus, uint32_t addr) {
  return {tessera::xchg::word0(TESS_XOP_RECV, n), tessera::xchg::busAddr(bus, addr)};
}
inline std::vector<uint32_t> sendrecv(uint32_t n, uint32_t saddr, uint32_t bus, uint32_t raddr) {
  return {tessera::xchg::word0(TESS_XOP_SENDRECV, n), saddr, tessera::xchg::busAddr(bus, raddr)};
}
/// Concatenate instruction word lists.
inline std::vector<uint32_t> prog(std::initializer_list<std::vector<uint32_t>> parts) {
  std::vector<uint32_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
}  // namespace xc

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
constexpr uint32_t exitWith(uint32_t r) {
  return rv::sw(r, rv::t0, 0);
}

/// Write words (little-endian) at addr of a tile.
inline void place(tessera::Device& d, unsigned tile, uint32_t addr,
                  const std::vector<uint32_t>& words) {
  std::vector<uint8_t> bytes;
  bytes.reserve(words.size() * 4);
  for (uint32_t w : words) {
    for (unsigned k = 0; k < 4; ++k) bytes.push_back(static_cast<uint8_t>(w >> (8 * k)));
  }
  d.writeMemory(tile, addr, bytes);
}

/// Every tile: 5 supersteps of unequal compute (4(t+1) iterations), then a ring shift by
/// SENDRECV, then EXIT with its accumulator. The exchange program names the left neighbour.
inline void placeRing(tessera::Device& d) {
  using namespace rv;
  const std::vector<uint32_t> code{kMmio,                       // 0
                                   csrr(s0, TESS_CSR_TILE_ID),  // 4
                                   addi(s1, zero, 5),           // 8
                                   addi(a3, s0, 1),             // 12 outer
                                   slli(a3, a3, 2),             // 16
                                   lw(a4, zero, 0x400),         // 20 inner
                                   add(a4, a4, a3),             // 24
                                   sw(a4, zero, 0x400),         // 28
                                   addi(a3, a3, -1),            // 32
                                   bne(a3, zero, -16),          // 36 -> 20
                                   addi(a0, zero, 0x300),       // 40
                                   xchgProgFrom(a0),            // 44
                                   syncWith(zero),              // 48
                                   lw(a5, zero, 0x50c),         // 52
                                   lw(a4, zero, 0x400),         // 56
                                   add(a4, a4, a5),             // 60
                                   sw(a4, zero, 0x400),         // 64
                                   addi(s1, s1, -1),            // 68
                                   bne(s1, zero, -60),          // 72 -> 12
                                   lw(a4, zero, 0x400),         // 76
                                   exitWith(a4)};               // 80
  const unsigned tiles = d.info().tiles;
  for (unsigned t = 0; t < tiles; ++t) {
    place(d, t, 0, code);
    place(d, t, 0x300,
          xc::prog({xc::sendrecv(4, 0x400, (t + tiles - 1) % tiles, 0x500), {xc::end()}}));
  }
}

}  // namespace chipprog
