// The sync controller on its own (docs/chip.md "Sync"): decisions from hand-made block summaries,
// with the chip split into one block or several, as the sharded model splits it.
#include "sync_controller.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "tessera/chip_params.h"

namespace tessera::model {
namespace {

using Kind = SyncDecision::Kind;
constexpr uint64_t kLimit = 1'000'000;

// A block in which `tile` has arrived at cycle a with descriptor desc (SYNC at pc).
BlockSummary arrived(uint32_t tile, uint64_t a, uint32_t desc, uint32_t pc = 0x40) {
  BlockSummary s;
  s.firstArrived = tile;
  s.firstDesc = desc;
  s.firstPc = pc;
  s.lastArrival = a;
  return s;
}

TEST(SyncController, RunsWhileAnyTileIsActive) {
  BlockSummary busy;
  busy.active = 1;
  const std::vector<BlockSummary> blocks = {arrived(0, 10, 1), busy};
  EXPECT_EQ(decideSync(blocks, 100, kLimit, false).kind, Kind::Run);
  // At the limit an active chip stops there.
  const SyncDecision d = decideSync(blocks, kLimit, kLimit, false);
  EXPECT_EQ(d.kind, Kind::Stop);
  EXPECT_EQ(d.reason, StopReason::MaxCycles);
  EXPECT_EQ(d.cycle, kLimit);
}

TEST(SyncController, ReleasesSyncLatencyAfterTheLastArrival) {
  const std::vector<BlockSummary> blocks = {arrived(0, 10, 7), arrived(2, 25, 7),
                                            arrived(5, 17, 7)};
  const SyncDecision d = decideSync(blocks, 30, kLimit, false);
  EXPECT_EQ(d.kind, Kind::Release);
  EXPECT_EQ(d.cycle, 25u + TESS_SYNC_LATENCY);
  EXPECT_EQ(d.desc, 7u);
  EXPECT_FALSE(d.exchange);
}

TEST(SyncController, ReportsAnExchangeOfAnyBlock) {
  std::vector<BlockSummary> blocks = {arrived(0, 10, 7), arrived(3, 12, 7)};
  blocks[1].exchange = 1;
  EXPECT_TRUE(decideSync(blocks, 20, kLimit, false).exchange);
}

TEST(SyncController, StopsAtHostSyncsAndWithSyncBreak) {
  const uint32_t host = TESS_SYNC_HOST_BIT | 5;
  const std::vector<BlockSummary> hostSync = {arrived(0, 10, host), arrived(1, 11, host)};
  SyncDecision d = decideSync(hostSync, 20, kLimit, false);
  EXPECT_EQ(d.kind, Kind::Pending);
  EXPECT_EQ(d.reason, StopReason::HostSync);
  EXPECT_EQ(d.cycle, 11u + TESS_SYNC_LATENCY);
  EXPECT_EQ(d.desc, host);
  const std::vector<BlockSummary> internal = {arrived(0, 10, 3)};
  d = decideSync(internal, 20, kLimit, true);
  EXPECT_EQ(d.kind, Kind::Pending);
  EXPECT_EQ(d.reason, StopReason::SyncBreak);
  EXPECT_EQ(d.cycle, 10u + TESS_SYNC_LATENCY);
}

TEST(SyncController, EndsTheRunWhenEveryTileHalted) {
  BlockSummary a, b;
  a.firstHalted = 0;
  a.haltEnd = 90;
  b.firstHalted = 4;
  b.haltEnd = 120;
  const SyncDecision d = decideSync(std::vector<BlockSummary>{a, b}, 120, kLimit, false);
  EXPECT_EQ(d.kind, Kind::Stop);
  EXPECT_EQ(d.reason, StopReason::Halted);
  EXPECT_EQ(d.cycle, 120u);
}

TEST(SyncController, ASyncWithAHaltedTileIsAnError) {
  BlockSummary halted;
  halted.firstHalted = 1;
  halted.haltEnd = 50;
  const std::vector<BlockSummary> blocks = {arrived(0, 40, 3, 0x88), halted};
  const SyncDecision d = decideSync(blocks, 50, kLimit, false);
  EXPECT_EQ(d.kind, Kind::Fail);
  EXPECT_EQ(d.cycle, 50u);  // max(a_t, h_t + 1)
  EXPECT_EQ(d.error.tile, 0u);
  EXPECT_EQ(d.error.pc, 0x88u);
  EXPECT_EQ(d.error.cause, uint32_t{TESS_CAUSE_SYNC_HALTED});
  EXPECT_EQ(d.error.value, 1u);  // the halted tile
  // Past the limit the run just stops there.
  EXPECT_EQ(decideSync(blocks, 40, 45, false).kind, Kind::Stop);
}

TEST(SyncController, NamesTheLowestTileWithAnotherDescriptor) {
  // In one block: tile 3 differs from tile 1.
  BlockSummary one = arrived(1, 10, 7);
  one.mismatch = 3;
  one.mismatchDesc = 8;
  one.mismatchPc = 0x90;
  SyncDecision d = decideSync(std::vector<BlockSummary>{one}, 20, kLimit, false);
  EXPECT_EQ(d.kind, Kind::Fail);
  EXPECT_EQ(d.cycle, 10u);
  EXPECT_EQ(d.error.tile, 3u);
  EXPECT_EQ(d.error.pc, 0x90u);
  EXPECT_EQ(d.error.cause, uint32_t{TESS_CAUSE_SYNC_MISMATCH});
  EXPECT_EQ(d.error.value, 8u);
  // Split over blocks: the second block's first tile differs from the first block's.
  const std::vector<BlockSummary> split = {arrived(0, 10, 7), arrived(2, 14, 9, 0x94),
                                           arrived(4, 12, 8)};
  d = decideSync(split, 20, kLimit, false);
  EXPECT_EQ(d.kind, Kind::Fail);
  EXPECT_EQ(d.cycle, 14u);
  EXPECT_EQ(d.error.tile, 2u);
  EXPECT_EQ(d.error.value, 9u);
}

TEST(SyncController, OneBlockAndManyBlocksDecideAlike) {
  // Tiles 0..3 arrived at 5, 9, 7, 8 with one descriptor: as one block or as four.
  BlockSummary whole = arrived(0, 9, 2);
  std::vector<BlockSummary> split = {arrived(0, 5, 2), arrived(1, 9, 2), arrived(2, 7, 2),
                                     arrived(3, 8, 2)};
  const SyncDecision a = decideSync(std::vector<BlockSummary>{whole}, 10, kLimit, false);
  const SyncDecision b = decideSync(split, 10, kLimit, false);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.cycle, b.cycle);
  // Empty blocks (ranks without tiles) change nothing.
  split.push_back(BlockSummary{});
  EXPECT_EQ(decideSync(split, 10, kLimit, false).cycle, a.cycle);
}

TEST(SyncController, StopsAtTheLimitBeforeALateRelease) {
  const std::vector<BlockSummary> blocks = {arrived(0, 100, 1)};
  const SyncDecision d = decideSync(blocks, 100, 100 + TESS_SYNC_LATENCY - 1, false);
  EXPECT_EQ(d.kind, Kind::Stop);
  EXPECT_EQ(d.reason, StopReason::MaxCycles);
  EXPECT_EQ(d.cycle, 100u + TESS_SYNC_LATENCY - 1);
}

}  // namespace
}  // namespace tessera::model
