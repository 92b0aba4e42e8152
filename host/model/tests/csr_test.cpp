// CSRs per docs/tile.md "CSRs": cycle/instret at issue, ids, fflags/frm/fcsr.
#include <gtest/gtest.h>

#include "tile_harness.hpp"

namespace tessera::model::test {
namespace {

using namespace rv;

TEST(Csr, CycleIsTheIssueCycleAndInstretCountsOlderInstructions) {
  TileHarness h;
  h.place(0, {addi(a0, zero, 1), addi(a0, zero, 2), csrr(a1, kCycle), csrr(a2, kInstret),
              csrr(a3, kCycleh), csrr(a4, kInstreth), kLoadMmioBase, kExit});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(0, a1), 12u);
  EXPECT_EQ(h.tile.xreg(0, a2), 3u);
  EXPECT_EQ(h.tile.xreg(0, a3), 0u);
  EXPECT_EQ(h.tile.xreg(0, a4), 0u);
}

TEST(Csr, InstretIsPerContext) {
  TileHarness h;
  h.place(0, {kLoadMmioBase, addi(t1, zero, 0x100), sw(t1, t0, 0x24), sw(zero, t0, 0x8),
              csrr(a2, kInstret), kExit});
  h.place(0x100, {addi(a0, zero, 5), csrr(a1, kInstret), csrr(a3, kContextId), kLoadMmioBase,
                  sw(zero, t0, 0xc)});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(2, a1), 1u);
  EXPECT_EQ(h.tile.xreg(2, a3), 2u);
  EXPECT_EQ(h.tile.xreg(0, a2), 4u);
}

TEST(Csr, Ids) {
  TileModel tile(TileConfig{7, 16, 4096});
  const std::vector<uint32_t> prog{csrr(a0, kTileId),  csrr(a1, kContextId), csrr(a2, kTileCount),
                                   csrr(a3, kMemSize), kLoadMmioBase,        kExit};
  std::vector<uint8_t> bytes(prog.size() * 4);
  std::memcpy(bytes.data(), prog.data(), bytes.size());
  tile.writeMemory(0, bytes);
  ASSERT_EQ(tile.run(1000), TileState::Halted);
  EXPECT_EQ(tile.xreg(0, a0), 7u);
  EXPECT_EQ(tile.xreg(0, a1), 0u);
  EXPECT_EQ(tile.xreg(0, a2), 16u);
  EXPECT_EQ(tile.xreg(0, a3), 4096u);
}

TEST(Csr, FcsrFieldsAndReadModifyWrite) {
  TileHarness h;
  h.place(0, {addi(a0, zero, -1), csrrw(a1, kFcsr, a0),  // a1 = 0; fcsr = 0xff
              csrr(a2, kFcsr),                           // 0xff: upper bits ignored
              csrr(a3, kFrm),                            // 7
              csrr(a4, kFflags),                         // 0x1f
              csrrci(a5, kFflags, 0x3),                  // a5 = 0x1f, fflags = 0x1c
              csrrsi(a6, kFrm, 0),                       // a6 = 7, no write
              csrrwi(zero, kFrm, 2),                     // frm = 2
              csrr(a7, kFcsr),                           // 2 << 5 | 0x1c
              kLoadMmioBase, kExit});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(0, a1), 0u);
  EXPECT_EQ(h.tile.xreg(0, a2), 0xffu);
  EXPECT_EQ(h.tile.xreg(0, a3), 7u);
  EXPECT_EQ(h.tile.xreg(0, a4), 0x1fu);
  EXPECT_EQ(h.tile.xreg(0, a5), 0x1fu);
  EXPECT_EQ(h.tile.xreg(0, a6), 7u);
  EXPECT_EQ(h.tile.xreg(0, a7), (2u << 5) | 0x1cu);
}

TEST(Csr, ReadOnlyCsrsReadableWithZeroSource) {
  // csrrs/csrrc with rs1 = x0 and csrrsi/csrrci with uimm = 0 do not write: legal on cycle.
  TileHarness h;
  h.place(0, {csrrc(a0, kCycle, zero), csrrsi(a1, kCycle, 0), csrrci(a2, kTileId, 0), kLoadMmioBase,
              kExit});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(0, a0), 0u);
  EXPECT_EQ(h.tile.xreg(0, a1), 6u);
}

// 1.0f and 3.0f bit patterns (IEEE 754 binary32).
constexpr uint32_t kOne = 0x3f800000u, kThree = 0x40400000u, kTwoPointFive = 0x40200000u;

TEST(Csr, FpFlagsAccrueAndDynamicRoundingUsesFrm) {
  // fcvt.w.s of 2.5 under each rounding mode: RNE 2, RTZ 2, RDN 2, RUP 3, RMM 3 (RISC-V F spec).
  const uint32_t expected[5] = {2, 2, 2, 3, 3};
  for (uint32_t mode = 0; mode < 5; ++mode) {
    TileHarness h;
    h.place(0, {lui(a0, kTwoPointFive >> 12), fmv_w_x(1, a0), csrrwi(zero, kFrm, mode),
                fcvt_w_s(a1, 1), csrr(a2, kFflags), fcvt_w_s(a3, 1, 1), kLoadMmioBase, kExit});
    ASSERT_EQ(h.run(), TileState::Halted);
    EXPECT_EQ(h.tile.xreg(0, a1), expected[mode]) << "rm " << mode;
    EXPECT_EQ(h.tile.xreg(0, a2), 1u) << "2.5 → integer is inexact: NX";
    EXPECT_EQ(h.tile.xreg(0, a3), 2u) << "static RTZ ignores frm";
  }
}

TEST(Csr, FdivFlagsLandAtRetire) {
  // 1/3 is inexact (NX); 1/0 is DZ; both accrue into fflags.
  TileHarness h;
  h.place(0, {lui(a0, kOne >> 12), fmv_w_x(1, a0), lui(a0, kThree >> 12), fmv_w_x(2, a0),
              fdiv(3, 1, 2), csrr(a1, kFflags), fmv_w_x(4, zero), fdiv(5, 1, 4), csrr(a2, kFflags),
              fmv_x_w(a3, 5), kLoadMmioBase, kExit});
  ASSERT_EQ(h.run(), TileState::Halted);
  EXPECT_EQ(h.tile.xreg(0, a1), 1u);
  EXPECT_EQ(h.tile.xreg(0, a2), 1u | 8u);
  EXPECT_EQ(h.tile.xreg(0, a3), 0x7f800000u);  // +inf
  EXPECT_EQ(h.tile.freg(0, 3), 0x3eaaaaabu);   // 1/3 rounded to nearest even
}

}  // namespace
}  // namespace tessera::model::test
