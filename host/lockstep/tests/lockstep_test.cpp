// runLockstep: a multi-tile program with exchange and syncs agrees with itself, a memory
// difference is reported at the first sync with its tile and address, and a program without
// syncs is compared in chunks (model vs rtl) that still find a divergence.
#include "lockstep.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "exchange_encoding.hpp"
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

// A loop with no sync: addi a0, a0, 1; blt a0, a1, -4 (a1 = 300), then EXIT a0. The register
// values retired differ from the first instruction on when the two devices start from a different
// a1 (the loop bound), so a divergence shows only in the retirements, never at a sync.
std::vector<uint32_t> loopTo(uint32_t bound) {
  return {
      0x800002b7u,                  // lui t0, 0x80000
      0x00000513u,                  // addi a0, zero, 0
      (bound << 20) | 0x00000593u,  // addi a1, zero, bound
      0x00150513u,                  // addi a0, a0, 1
      0xfeb54ee3u,                  // blt a0, a1, -4
      0x00a2a023u,                  // sw a0, 0(t0): EXIT a0
  };
}

TEST(Lockstep, ChunksWithoutSyncsAgreeAndCountEveryRetirement) {
  // 300 iterations, paused every 7 cycles: every pause must continue exactly on both devices,
  // and the RTL's retirements held back at a pause must be matched after it.
  tessera::LockstepOptions o;
  o.tiles = 4;  // the rtl chips have 4 or 16 tiles: tile 0 runs, the others are disabled
  o.chunkCycles = 7;
  const auto load = [](tessera::Device& d) {
    place(d, 0, 0, loopTo(300));
    d.reset();
    for (unsigned t = 1; t < 4; ++t) d.setTileEnabled(t, false);
  };
  const tessera::LockstepReport r = tessera::runLockstep(load, "model", "rtl", o);
  EXPECT_TRUE(r.agree()) << r.describe();
  EXPECT_EQ(r.a.stops, 0u);
  EXPECT_EQ(r.a.result.reason, tessera::StopReason::Halted);
  EXPECT_EQ(r.a.result.exitCode, 300u);
  EXPECT_EQ(r.a.retired, 4u + 2u * 300u);
  EXPECT_EQ(r.a.retired, r.a.stats.instructions);
}

TEST(Lockstep, ChunksFindADivergenceAfterManyPauses) {
  // Device b's loop bound is 301: the first differing retirement is the addi of a1 (cycle 12),
  // after one pause; with pauses of 5 cycles it is found in the third chunk.
  tessera::LockstepOptions o;
  o.tiles = 1;
  o.chunkCycles = 5;
  int calls = 0;
  const auto load = [&](tessera::Device& d) {
    place(d, 0, 0, loopTo(calls++ == 0 ? 300 : 301));
    d.reset();
  };
  const tessera::LockstepReport r = tessera::runLockstep(load, "model", "model", o);
  ASSERT_FALSE(r.agree());
  ASSERT_TRUE(r.divergence.has_value()) << r.describe();
  EXPECT_NE(r.describe().find("0x00000008"), std::string::npos) << r.describe();
  EXPECT_LT(r.a.result.cycles, 30u) << "the divergence was not found at the first chunk after it";
}

}  // namespace
