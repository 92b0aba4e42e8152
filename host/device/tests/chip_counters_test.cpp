// Chip suite: the tiles' counters past their low word, at each counter width.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "chip_programs.hpp"
#include "chip_suite.hpp"

namespace tessera::chipsuite {
namespace {

class CounterSuite : public DeviceHelpers,
                     public ::testing::TestWithParam<std::tuple<std::string, unsigned>> {
 protected:
  void SetUp() override {
    DeviceOptions o = chipOptions(0, 0);
    o.counterBits = std::get<1>(GetParam());
    if (!openUnlessExcluded(std::get<0>(GetParam()), o)) return;
    for (unsigned t = 1; t < tiles(); ++t) device_->setTileEnabled(t, false);
  }
  std::vector<RetireRecord> retired_;
};

TEST_P(CounterSuite, WrapModuloTheirWidthWhileTheChipCycleCounts) {
  // Tile 0: SYNC at 6 (descriptor 0: stops at R = 13 with SYNC_BREAK); there the host moves the
  // cycle counter to B, 12 to 17 below 2^33 (B = R mod 6: the slot phase is kept), context 0's
  // instret to P = 2^33 - 1, the idle and sync-wait counters to I and W, each by a low and a high
  // word. The supervisor resumes at S, B <= S < B + 6; three nops, then csrr cycle at
  // c0 = S + 18 > 2^33, cycleh, instret, instreth, four stores, EXIT at c0 + 48.
  // Every counter is read modulo 2^bits: at 32 bits the high-word writes are ignored and the
  // counters wrap (cycleh and instreth read 0); at 64 bits they carry (both read 2). The chip's
  // CYCLE counts in 64 bits at either width.
  using namespace rv;
  const unsigned bits = std::get<1>(GetParam());
  ASSERT_EQ(device_->info().counterBits, bits);
  const std::vector<uint32_t> prog{
      lui(1, kMmio),   sw(0, 1, kSync), addi(0, 0, 0),   addi(0, 0, 0),  addi(0, 0, 0),
      csrr(3, 0xc00),  csrr(4, 0xc80),  csrr(5, 0xc02),  csrr(6, 0xc82), sw(3, 0, 0x400),
      sw(4, 0, 0x404), sw(5, 0, 0x408), sw(6, 0, 0x40c), sw(0, 1, 0)};
  load(0, 0, prog);
  device_->setSyncBreak(true);
  device_->setRetireSink([this](const RetireRecord& r) { retired_.push_back(r); });
  RunResult r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::SyncBreak) << trapText(r.trap);
  ASSERT_EQ(r.cycles, 13u);
  uint64_t b = (uint64_t{1} << 33) - 12;
  b -= (b - 13) % 6;
  const uint64_t p = (uint64_t{1} << 33) - 1, i = (uint64_t{1} << 33) - 16,
                 w = (uint64_t{1} << 33) - 2;
  auto write64 = [this](uint32_t lo, uint32_t hi, uint64_t v) {
    device_->writeControl(lo, static_cast<uint32_t>(v));
    device_->writeControl(hi, static_cast<uint32_t>(v >> 32));
  };
  write64(TESS_CR_CYCLE_LO, TESS_CR_CYCLE_HI, b);
  device_->writeControl(TESS_CR_TILE_SEL, 0);
  device_->writeControl(TESS_CR_CTX_SEL, 0);
  write64(TESS_CR_C_INSTRET_LO, TESS_CR_C_INSTRET_HI, p);
  write64(TESS_CR_T_IDLE_LO, TESS_CR_T_IDLE_HI, i);
  write64(TESS_CR_T_SYNCWAIT_LO, TESS_CR_T_SYNCWAIT_HI, w);
  r = device_->run(kMaxCycles);
  ASSERT_EQ(r.reason, StopReason::Halted) << trapText(r.trap);
  EXPECT_GT(r.cycles, uint64_t{1} << 33);
  EXPECT_LT(r.cycles, b + 100);
  EXPECT_EQ(device_->readControl(TESS_CR_CYCLE_LO) |
                uint64_t{device_->readControl(TESS_CR_CYCLE_HI)} << 32,
            r.cycles);
  const uint64_t c0 = r.cycles - 49;
  const std::vector<uint32_t> got = read(0, 0x400, 4);
  EXPECT_EQ(got[0], static_cast<uint32_t>(c0));
  EXPECT_EQ(got[1], wrapCounter(c0 + 6, bits) >> 32);
  EXPECT_EQ(got[2], static_cast<uint32_t>(p + 5));  // lui and SYNC were before the write
  EXPECT_EQ(got[3], wrapCounter(p + 6, bits) >> 32);
  // After the write: 3 nops, 4 csrr, 4 stores and EXIT retire; r.cycles - b slots, 12 issued.
  const TileStats s = device_->stats(0);
  EXPECT_EQ(s.cycles, wrapCounter(r.cycles, bits));
  EXPECT_EQ(s.contextInstructions[0], wrapCounter(p + 12, bits));
  EXPECT_EQ(s.instructions, wrapCounter(p + 12, bits));
  EXPECT_EQ(s.idleSlots, wrapCounter(i + (r.cycles - b) - 12, bits));
  EXPECT_EQ(s.syncWaitCycles, wrapCounter(w, bits));
  EXPECT_EQ(device_->readControl(TESS_CR_T_INSTR_HI), wrapCounter(p + 12, bits) >> 32);
  EXPECT_EQ(device_->readControl(TESS_CR_T_IDLE_HI), s.idleSlots >> 32);
  EXPECT_EQ(device_->readControl(TESS_CR_T_SYNCWAIT_HI), s.syncWaitCycles >> 32);
  EXPECT_EQ(device_->readControl(TESS_CR_C_INSTRET_HI), s.contextInstructions[0] >> 32);
  // The retirement trace's cycles are the tile's counter too: the csrr cycle retired at c0.
  const auto rec = std::find_if(retired_.begin(), retired_.end(),
                                [](const RetireRecord& x) { return x.pc == 20; });
  ASSERT_NE(rec, retired_.end());
  EXPECT_EQ(rec->cycle, wrapCounter(c0, bits));
  EXPECT_EQ(retired_.back().cycle, wrapCounter(c0 + 48, bits));
}

// 64 bits on every backend, 32 on the model.
std::vector<std::tuple<std::string, unsigned>> widths() {
  std::vector<std::tuple<std::string, unsigned>> out;
  for (const std::string& b : backends::names()) out.emplace_back(b, 64u);
  out.emplace_back("model", 32u);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Widths, CounterSuite, ::testing::ValuesIn(widths()), [](const auto& info) {
  return std::get<0>(info.param) + std::to_string(std::get<1>(info.param));
});

}  // namespace
}  // namespace tessera::chipsuite
