// The chip suite's fixtures and helpers (chip_suite_test.cpp says what the suite is; its tests are
// in the files beside it, by topic). Every expected value is worked out from docs/chip.md and
// docs/tile.md in the tests' comments.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends.hpp"
#include "exchange_encoding.hpp"
#include "little_endian.hpp"
#include "rv_encode.hpp"
#include "tessera/chip_params.h"
#include "tessera/device.hpp"

namespace tessera::chipsuite {

// Options of a device: tile count (0 = default, 4), memory per tile (0 = default).
inline DeviceOptions chipOptions(unsigned tiles, uint32_t memBytes) {
  DeviceOptions o;
  o.tiles = tiles;
  o.tileMemBytes = memBytes;
  return o;
}

inline constexpr uint32_t kMmio = 0x80000;  // lui immediate of the MMIO page
inline constexpr int32_t kXchgProg = 0x40;  // offsets in the MMIO page
inline constexpr int32_t kSync = 0x44;
inline constexpr uint64_t kMaxCycles = 100000;
inline constexpr uint32_t kCycleCsr = 0xc00;

static_assert(TESS_SYNC_LATENCY == 4 && TESS_EXCHANGE_LATENCY == 3,
              "the expected cycles below assume these latencies");

// Exchange instructions (docs/chip.md, "Exchange programs").
constexpr uint32_t xEnd() {
  return xchg::word0(TESS_XOP_END, 0);
}
constexpr uint32_t xDelay(uint32_t n) {
  return xchg::word0(TESS_XOP_DELAY, n);
}
constexpr uint32_t xSend(uint32_t n) {
  return xchg::word0(TESS_XOP_SEND, n);
}
constexpr uint32_t xRecv(uint32_t n) {
  return xchg::word0(TESS_XOP_RECV, n);
}
constexpr uint32_t xSendRecv(uint32_t n) {
  return xchg::word0(TESS_XOP_SENDRECV, n);
}
constexpr uint32_t xBus(uint32_t bus, uint32_t addr) {
  return xchg::busAddr(bus, addr);
}

// The error a failed run reports, for assertion messages.
inline std::string trapText(const TrapInfo& t) {
  return "tile " + std::to_string(t.tile) + " context " + std::to_string(t.context) + " pc " +
         std::to_string(t.pc) + " cause " + std::to_string(t.cause) + " value " +
         std::to_string(t.value);
}

// A chip error: the stop, its chip cycle count and every field of the trap.
inline void expectTrap(const RunResult& r, uint64_t cycles, const TrapInfo& want) {
  ASSERT_EQ(r.reason, StopReason::Trap) << trapText(r.trap);
  EXPECT_EQ(r.cycles, cycles);
  EXPECT_EQ(r.trap.tile, want.tile);
  EXPECT_EQ(r.trap.context, want.context);
  EXPECT_EQ(r.trap.pc, want.pc);
  EXPECT_EQ(r.trap.cause, want.cause);
  EXPECT_EQ(r.trap.value, want.value);
}

// A device of the backend under test and the host-side helpers every scenario uses.
class DeviceHelpers {
 protected:
  void open(const std::string& backend, unsigned tiles = 0) {
    open(backend, chipOptions(tiles, 0));
  }
  void open(const std::string& backend, const DeviceOptions& options) {
    opened_.device.reset();  // before its server, on tcp
    opened_ = backends::open(backend, options);
    device_ = opened_.device.get();
  }
  // In SetUp: open a device of backend, or skip the test if backend excludes it (false).
  bool openUnlessExcluded(const std::string& backend, const DeviceOptions& options = {}) {
    backends::skipIfExcluded(backend);
    if (::testing::Test::IsSkipped()) return false;
    open(backend, options);
    return true;
  }
  void load(unsigned tile, uint32_t addr, const std::vector<uint32_t>& words) {
    std::vector<uint8_t> bytes;
    for (uint32_t w : words) appendLe32(bytes, w);
    device_->writeMemory(tile, addr, bytes);
  }
  void loadAll(uint32_t addr, const std::vector<uint32_t>& words) {
    for (unsigned t = 0; t < tiles(); ++t) load(t, addr, words);
  }
  std::vector<uint32_t> read(unsigned tile, uint32_t addr, size_t words) {
    std::vector<uint8_t> bytes(4 * words);
    device_->readMemory(tile, addr, bytes);
    std::vector<uint32_t> out(words);
    for (size_t i = 0; i < words; ++i) out[i] = loadLe32(bytes.data() + 4 * i);
    return out;
  }
  unsigned tiles() const { return device_->info().tiles; }

  // After an error: reset and run a short program on every tile to show the chip goes on.
  void expectRecovers() {
    device_->reset();
    for (unsigned t = 0; t < tiles(); ++t) {
      load(t, 0,
           {rv::lui(1, kMmio), rv::addi(2, 0, static_cast<int32_t>(10 + t)), rv::sw(2, 1, 0)});
    }
    const RunResult r = device_->run(kMaxCycles);
    ASSERT_EQ(r.reason, StopReason::Halted);
    EXPECT_EQ(r.cycles, 13u);
    EXPECT_EQ(r.exitCode, 10u);
    for (unsigned t = 0; t < tiles(); ++t) EXPECT_EQ(device_->stats(t).exitCode, 10u + t);
  }

  backends::Opened opened_;  // the device and, on tcp, the server behind it
  Device* device_ = nullptr;
};

// Chip scenarios on the default 4-tile chip.
class ChipSuite : public DeviceHelpers, public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { openUnlessExcluded(GetParam()); }
};

// Single-tile scenarios: tile 0 of the default chip with tiles 1..3 disabled, which changes none
// of tile 0's cycle counts (docs/chip.md, T_ENABLE). run() records every retired instruction.
class TileSuite : public ChipSuite {
 protected:
  void SetUp() override {
    if (!openUnlessExcluded(GetParam())) return;
    for (unsigned t = 1; t < tiles(); ++t) device_->setTileEnabled(t, false);
  }
  using DeviceHelpers::load;
  void load(uint32_t addr, const std::vector<uint32_t>& words) {
    DeviceHelpers::load(0, addr, words);
  }
  // Run, recording every retired instruction in retired_ unless withRecords is false (a test
  // that reads no record runs on backends without a retirement trace).
  RunResult run(bool withRecords = true) {
    if (withRecords) {
      device_->setRetireSink([this](const RetireRecord& r) { retired_.push_back(r); });
    }
    return device_->run(kMaxCycles);
  }
  std::vector<RetireRecord> retired_;
};

// The common supervisor of the exchange tests: names the exchange program at 0x600, syncs with
// descriptor 0 at c = 18 (a = 21, R = 25), stores its resume cycle at 0x300, exits with 0.
inline std::vector<uint32_t> exchangeSupervisor() {
  return {rv::lui(1, kMmio),   rv::addi(2, 0, 0x600),      rv::sw(2, 1, kXchgProg),
          rv::sw(0, 1, kSync), rv::csrrs(3, kCycleCsr, 0), rv::sw(3, 0, 0x300),
          rv::sw(0, 1, 0)};
}

}  // namespace tessera::chipsuite
