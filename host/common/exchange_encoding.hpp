// The exchange-program encoding (docs/chip.md, "Exchange programs") for host code: the one encoder
// and decoder of the compiler, the model's exchange engine and the tests, built on the constants
// that scripts/gen_params.py generates from rtl/params.json (as the RTL's package is).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "tessera/chip_params.h"

namespace tessera::xchg {

/// Cycles between a word on a sender's bus and its receive.
inline constexpr uint32_t kLatency = TESS_EXCHANGE_LATENCY;
/// Bit fields of an instruction's word 0 and of a receive operand.
inline constexpr uint32_t kOpLsb = TESS_XCHG_OP_LSB;
inline constexpr uint32_t kCountBits = TESS_XCHG_COUNT_BITS;
inline constexpr uint32_t kBusLsb = TESS_XCHG_BUS_LSB;
/// Largest n of one instruction.
inline constexpr uint32_t kMaxCount = (1u << kCountBits) - 1;
/// Largest address a receive operand can name, and largest bus (tile).
inline constexpr uint32_t kMaxAddr = (1u << kBusLsb) - 1;
inline constexpr uint32_t kMaxBus = (1u << (32 - kBusLsb)) - 1;
/// Words (= read cycles) of each instruction.
inline constexpr uint32_t kWordsSend = 2, kWordsRecv = 2, kWordsSendRecv = 3, kWordsDelay = 1,
                          kWordsEnd = 1;

/// First word of an instruction.
constexpr uint32_t word0(uint32_t op, uint32_t n) {
  return (op << kOpLsb) | n;
}
/// Receive operand: bus and address.
constexpr uint32_t busAddr(uint32_t bus, uint32_t addr) {
  return (bus << kBusLsb) | addr;
}

/// Opcode of word 0.
constexpr uint32_t opOf(uint32_t w0) {
  return w0 >> kOpLsb;
}
/// n of word 0.
constexpr uint32_t countOf(uint32_t w0) {
  return w0 & kMaxCount;
}
/// The reserved bits of word 0 (between n and the opcode), which must be 0.
constexpr uint32_t reservedOf(uint32_t w0) {
  return (w0 >> kCountBits) & ((1u << (kOpLsb - kCountBits)) - 1);
}
/// Bus of a receive operand.
constexpr uint32_t busOf(uint32_t operand) {
  return operand >> kBusLsb;
}
/// Address of a receive operand.
constexpr uint32_t addrOf(uint32_t operand) {
  return operand & kMaxAddr;
}

/// Appends instructions to a program.
struct Writer {
  std::vector<uint32_t> words;
  void end() { words.push_back(word0(TESS_XOP_END, 0)); }
  void delay(uint32_t n) { words.push_back(word0(TESS_XOP_DELAY, n)); }
  void send(uint32_t n, uint32_t addr) {
    words.insert(words.end(), {word0(TESS_XOP_SEND, n), addr});
  }
  void recv(uint32_t n, uint32_t bus, uint32_t addr) {
    words.insert(words.end(), {word0(TESS_XOP_RECV, n), busAddr(bus, addr)});
  }
  void sendRecv(uint32_t n, uint32_t saddr, uint32_t bus, uint32_t raddr) {
    words.insert(words.end(), {word0(TESS_XOP_SENDRECV, n), saddr, busAddr(bus, raddr)});
  }
};

}  // namespace tessera::xchg
