// Checkpoints that declare more than they hold, or a cycle no sync stop can have (docs/limits.md,
// "Sizes read from files"; docs/checkpoint.md): a tile of 2 GiB costs the host what is written
// into it, not what the file declares; a chip over the limit is refused before anything is
// reserved; a saved cycle out of the sync stops' slot phase is refused, and one in phase restores
// to the same end on the model and the RTL.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "checkpoint_format.hpp"
#include "rv_encode.hpp"
#include "tessera/checkpoint.hpp"
#include "tessera/chip_params.h"
#include "tessera/device.hpp"

namespace tessera::test {
namespace {

constexpr uint32_t kMmioPage = TESS_MMIO_BASE >> 12;
constexpr int32_t kSyncOffset = static_cast<int32_t>(TESS_MMIO_SYNC - TESS_MMIO_BASE);
constexpr uint32_t kHuge = 0x7ffffffc;  // the largest tile the address map allows
constexpr uint64_t kMaxCycles = 100000;

uint64_t peakRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;
}

// Tile 0: x5 = 7, an internal sync (descriptor 3), then exit with x5 + 35 = 42.
std::vector<uint8_t> syncThenExit() {
  const std::vector<uint32_t> words = {rv::lui(1, kMmioPage), rv::addi(5, 0, 7),
                                       rv::addi(2, 0, 3),     rv::sw(2, 1, kSyncOffset),
                                       rv::addi(10, 5, 35),   rv::sw(10, 1, 0)};
  std::vector<uint8_t> bytes;
  for (uint32_t w : words) {
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(w >> (8 * i)));
  }
  return bytes;
}

DeviceOptions chip(unsigned tiles, uint32_t memBytes) {
  DeviceOptions o;
  o.tiles = tiles;
  o.tileMemBytes = memBytes;
  return o;
}

// A checkpoint of syncThenExit on tile 0 of a chip of `tiles` (the others disabled), at its sync.
checkpoint::Image savedAtTheSync(const std::string& device, unsigned tiles) {
  auto dev = openDevice(device, chip(tiles, 0));
  dev->writeMemory(0, 0, syncThenExit());
  for (unsigned t = 1; t < tiles; ++t) dev->setTileEnabled(t, false);
  dev->setSyncBreak(true);
  const RunResult r = dev->run(kMaxCycles);
  EXPECT_EQ(r.reason, StopReason::SyncBreak);
  return checkpoint::decode(saveCheckpoint(*dev));
}

TEST(CheckpointLimits, AHugeDeclaredTileCostsWhatIsWrittenNotWhatIsDeclared) {
  checkpoint::Image img = savedAtTheSync("model", 1);
  img.info.tileMemBytes = kHuge;
  const std::vector<uint8_t> top(64, 0xab);
  img.tiles[0].runs.emplace_back(kHuge - 64, top);
  const std::vector<uint8_t> file = checkpoint::encode(img);

  const uint64_t before = peakRssBytes();
  auto dev = openDevice("model", chip(1, kHuge));
  restoreCheckpoint(*dev, file);
  const RunResult r = dev->run(kMaxCycles);
  EXPECT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.exitCode, 42u);
  std::vector<uint8_t> back(64);
  dev->readMemory(0, kHuge - 64, back);
  EXPECT_EQ(back, top);
  // Before: the restore's buffer and the tile's memory, both of the declared 2 GiB, committed.
  const uint64_t grew = peakRssBytes() - before;
  EXPECT_LT(grew, uint64_t{256} << 20) << fmt::format("peak RSS grew by {} MiB", grew >> 20);
}

// Console bytes in a checkpoint are the file's, not the program's: tessera-run shows their
// control bytes (a terminal escape here) and bytes over 0x7e as \xNN (issue 29, item 12).
TEST(CheckpointLimits, ConsoleBytesFromAFileNeverReachTheTerminalRaw) {
  // A checkpoint tessera-run saved (its own record of the run inside), with tile 0's saved
  // console replaced.
  const std::string saved = ::testing::TempDir() + "/console-saved.ckpt";
  const std::string path = ::testing::TempDir() + "/console-escape.ckpt";
  const std::string elf = std::string(TESSERA_SW_BIN_DIR) + "/chip_all_to_all.elf";
  ASSERT_EQ(std::system((std::string(TESSERA_RUN_PATH) + " --device model --all-tiles " +
                         "--checkpoint-at 1 --save " + saved + " " + elf + " > /dev/null 2>&1")
                            .c_str()),
            0);
  std::vector<uint8_t> bytes;
  {
    FILE* f = std::fopen(saved.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
      bytes.insert(bytes.end(), buf, buf + n);
    std::fclose(f);
  }
  checkpoint::Image img = checkpoint::decode(bytes);
  img.info.consoles[0] = std::string("saved \x1b[2J\x07\xff line\n");
  {
    const std::vector<uint8_t> file = checkpoint::encode(img);
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(file.data(), 1, file.size(), f), file.size());
    std::fclose(f);
  }
  FILE* p = ::popen(
      (std::string(TESSERA_RUN_PATH) + " --device model --restore " + path + " 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  EXPECT_NE(out.find("[tile 0] saved \\x1b[2J\\x07\\xff line\n"), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
}

TEST(CheckpointLimits, AChipOverTheLimitIsRefusedBeforeAnythingIsReserved) {
  const uint64_t before = peakRssBytes();
  try {
    openDevice("model", chip(TESS_MK2_NUM_TILES, kHuge));
    ADD_FAILURE() << "a chip of 1,472 tiles of 2 GiB was opened";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than the limit of 4096 MiB"), std::string::npos)
        << e.what();
  }
  DeviceOptions raised = chip(4, 0x40000000);  // 4 GiB exactly passes; one tile more does not
  EXPECT_NO_THROW(openDevice("model", raised));
  raised.tiles = 5;
  EXPECT_THROW(openDevice("model", raised), Error);
  raised.maxChipBytes = uint64_t{5} << 30;
  EXPECT_NO_THROW(openDevice("model", raised));
  EXPECT_LT(peakRssBytes() - before, uint64_t{256} << 20);
}

// The saved cycle's slot phase against the parking program's (docs/checkpoint.md): every sync
// stop is at R = c + 3 + SYNC_LATENCY with c a supervisor slot, so R mod 6 is fixed; a cycle of
// another phase is refused whether it is above or below the parking program's stop (cycle 25).
TEST(CheckpointLimits, ASavedCycleOutOfPhaseIsRefusedAndOneInPhaseRestoresAlikeOnModelAndRtl) {
  const checkpoint::Image saved = savedAtTheSync("model", 4);
  const uint64_t phase = saved.info.cycle % TESS_ROUND_CYCLES;
  // The rest of the program from the genuine checkpoint: what every in-phase restore must run.
  auto ref = openDevice("model", chip(4, 0));
  restoreCheckpoint(*ref, checkpoint::encode(saved));
  const RunResult rest = ref->run(kMaxCycles);
  ASSERT_EQ(rest.reason, StopReason::Halted);
  ASSERT_EQ(rest.exitCode, 42u);
  unsigned inPhase = 0, refused = 0;
  for (uint64_t cycle : {uint64_t{1}, uint64_t{3}, uint64_t{7}, uint64_t{9}, uint64_t{13},
                         uint64_t{21}, saved.info.cycle + 2, saved.info.cycle + 600}) {
    checkpoint::Image img = saved;
    img.info.cycle = cycle;
    const std::vector<uint8_t> file = checkpoint::encode(img);
    for (const char* device : {"model", "rtl"}) {
      auto dev = openDevice(device, chip(4, 0));
      if (cycle % TESS_ROUND_CYCLES != phase) {
        EXPECT_THROW(restoreCheckpoint(*dev, file), Error) << device << " cycle " << cycle;
        ++refused;
        continue;
      }
      restoreCheckpoint(*dev, file);
      const RunResult r = dev->run(kMaxCycles);
      EXPECT_EQ(r.reason, StopReason::Halted) << device << " cycle " << cycle;
      EXPECT_EQ(r.exitCode, 42u) << device << " cycle " << cycle;
      // RunResult::cycles is the chip's cycle counter: the restored cycle plus the same rest.
      EXPECT_EQ(r.cycles - cycle, rest.cycles - saved.info.cycle)
          << device << " restored at cycle " << cycle;
      const uint64_t end =
          dev->readControl(TESS_CR_CYCLE_LO) | uint64_t{dev->readControl(TESS_CR_CYCLE_HI)} << 32;
      EXPECT_EQ(end, r.cycles) << device << " restored at cycle " << cycle;
      ++inPhase;
    }
  }
  EXPECT_GT(inPhase, 0u);
  EXPECT_GT(refused, 0u);
}

// A counter near 2^64 would wrap as the run continues (a cycle counter of 2^64 - 1 stopped a run
// at once "after 18446744073709551615 cycles"): every counter of 2^62 or more is refused.
TEST(CheckpointLimits, CountersThatContinuingWouldWrapAreRefused) {
  const checkpoint::Image saved = savedAtTheSync("model", 4);
  const uint64_t limit = uint64_t{1} << 62;
  // In the sync stops' slot phase, so that only the size can be at fault.
  const uint64_t phase = saved.info.cycle % TESS_ROUND_CYCLES;
  const auto inPhaseFrom = [&](uint64_t v) {
    return v + (phase + TESS_ROUND_CYCLES - v % TESS_ROUND_CYCLES) % TESS_ROUND_CYCLES;
  };
  const uint64_t atLimit = inPhaseFrom(limit);
  const uint64_t nearWrap = inPhaseFrom(~uint64_t{0} - 2 * TESS_ROUND_CYCLES);
  using Edit = void (*)(checkpoint::Image&, uint64_t);
  const std::vector<std::pair<const char*, Edit>> edits = {
      {"cycle", [](checkpoint::Image& i, uint64_t v) { i.info.cycle = v; }},
      {"idle", [](checkpoint::Image& i, uint64_t v) { i.tiles[0].idle = v; }},
      {"sync wait", [](checkpoint::Image& i, uint64_t v) { i.tiles[0].syncWait = v; }},
      {"exchange", [](checkpoint::Image& i, uint64_t v) { i.tiles[0].exch = v; }},
      {"instret", [](checkpoint::Image& i, uint64_t v) {
         i.tiles[0].instr += v - i.tiles[0].contexts[0].instret;
         i.tiles[0].contexts[0].instret = v;
       }}};
  for (const auto& [name, edit] : edits) {
    for (uint64_t value : {atLimit, nearWrap}) {
      checkpoint::Image img = saved;
      edit(img, value);
      auto dev = openDevice("model", chip(4, 0));
      try {
        restoreCheckpoint(*dev, checkpoint::encode(img));
        ADD_FAILURE() << name << " " << value << " accepted";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("2^62"), std::string::npos)
            << name << ": " << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace tessera::test
