// runLockstep on two model devices: a multi-tile program with exchange and syncs agrees with
// itself, and a memory difference is reported at the first sync with its tile and address.
#include <gtest/gtest.h>

#include <cstring>

#include "exchange_encoding.hpp"
#include "lockstep.hpp"
#include "tessera/chip_params.h"

namespace {

// Every tile: XCHG_PROG = 0x300, SYNC 1 (an internal sync), EXIT 0. Exchange program: SEND 2
// words from 0x400 on the tile's bus, END. (RISC-V encodings written out by hand.)
const std::vector<uint32_t> kCode{
    0x800002b7u,  // lui t0, 0x80000
    0x30000513u,  // addi a0, zero, 0x300
    0x04a2a023u,  // sw a0, 0x40(t0)
    0x00100593u,  // addi a1, zero, 1
    0x04b2a223u,  // sw a1, 0x44(t0)
    0x0002a023u,  // sw zero, 0(t0)
};
const std::vector<uint32_t> kExchange{tessera::xchg::word0(TESS_XOP_SEND, 2), 0x400, 0};

void place(tessera::Device& d, unsigned tile, uint32_t addr, const std::vector<uint32_t>& w) {
  std::vector<uint8_t> bytes(w.size() * 4);
  std::memcpy(bytes.data(), w.data(), bytes.size());
  d.writeMemory(tile, addr, bytes);
}

TEST(Lockstep, ModelAgreesWithItselfOnFourTiles) {
  tessera::LockstepOptions o;
  o.tiles = 4;
  const auto load = [](tessera::Device& d) {
    for (unsigned t = 0; t < 4; ++t) {
      place(d, t, 0, kCode);
      place(d, t, 0x300, kExchange);
      place(d, t, 0x400, {t, t + 1});
    }
    d.reset();
  };
  const tessera::LockstepReport r = tessera::runLockstep(load, "model", "model", o);
  EXPECT_TRUE(r.agree()) << r.describe();
  EXPECT_EQ(r.a.stops, 1u);
  EXPECT_EQ(r.a.result.reason, tessera::StopReason::Halted);
  EXPECT_EQ(r.a.retired, 4u * kCode.size());
}

TEST(Lockstep, ReportsTheFirstMemoryDifferenceAtASync) {
  tessera::LockstepOptions o;
  o.tiles = 4;
  int calls = 0;
  const auto load = [&](tessera::Device& d) {
    for (unsigned t = 0; t < 4; ++t) {
      place(d, t, 0, kCode);
      place(d, t, 0x300, kExchange);
    }
    if (calls++ == 1) place(d, 2, 0x404, {0xbad});
    d.reset();
  };
  const tessera::LockstepReport r = tessera::runLockstep(load, "model", "model", o);
  ASSERT_FALSE(r.agree());
  const std::string text = r.describe();
  EXPECT_NE(text.find("at sync stop 1"), std::string::npos) << text;
  EXPECT_NE(text.find("tile 2 memory differs first at 0x00000404: 0x00000000 vs 0x00000bad"),
            std::string::npos)
      << text;
}

}  // namespace
