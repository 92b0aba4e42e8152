// The exchange-program encoding (docs/chip.md, "Exchange programs") for host code, from the
// generated chip parameters (rtl/params.json): the graph compiler writes programs with it.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/chip_params.h"

namespace tessera::xchg {

/// Cycles between a word on a sender's bus and its receive.
inline constexpr uint32_t kLatency = TESS_EXCHANGE_LATENCY;
/// Largest n of one instruction (24 bits).
inline constexpr uint32_t kMaxCount = (1u << 24) - 1;
/// Words (= read cycles) of each instruction.
inline constexpr uint32_t kWordsSend = 2, kWordsRecv = 2, kWordsSendRecv = 3, kWordsDelay = 1;

/// First word of an instruction.
constexpr uint32_t word0(uint32_t op, uint32_t n) { return (op << 28) | n; }
/// Receive operand: bus in bits 31..20, address in bits 19..0.
constexpr uint32_t busAddr(uint32_t bus, uint32_t addr) { return (bus << 20) | addr; }

/// Appends instructions to a program.
struct Writer {
  std::vector<uint32_t> words;
  void end() { words.push_back(word0(TESS_XOP_END, 0)); }
  void delay(uint32_t n) { words.push_back(word0(TESS_XOP_DELAY, n)); }
  void send(uint32_t n, uint32_t addr) { words.insert(words.end(), {word0(TESS_XOP_SEND, n), addr}); }
  void recv(uint32_t n, uint32_t bus, uint32_t addr) {
    words.insert(words.end(), {word0(TESS_XOP_RECV, n), busAddr(bus, addr)});
  }
  void sendRecv(uint32_t n, uint32_t saddr, uint32_t bus, uint32_t raddr) {
    words.insert(words.end(), {word0(TESS_XOP_SENDRECV, n), saddr, busAddr(bus, raddr)});
  }
};

}  // namespace tessera::xchg
