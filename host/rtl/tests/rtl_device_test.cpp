// What only the rtl backend has: its parameters, the chip sizes it offers, and the traced build
// (VCD). Every scenario both backends share (instruction timing, traps, sync, exchange, chip
// errors) is in host/device/tests/chip_suite_test.cpp and runs on model and rtl alike.
#include "rtl_device.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "rv_encode.hpp"
#include "tessera/chip_params.h"

namespace tessera {
namespace {

// Options of an rtl device: tile count (0 = default), memory per tile (0 = default), preset.
DeviceOptions chipOptions(unsigned tiles, uint32_t memBytes, const char* preset) {
  DeviceOptions o;
  o.tiles = tiles;
  o.tileMemBytes = memBytes;
  o.preset = preset;
  return o;
}

constexpr uint32_t kMmio = 0x80000;  // lui immediate of the MMIO page
constexpr uint64_t kMaxCycles = 100000;

class RtlDeviceTest : public ::testing::Test {
 protected:
  std::unique_ptr<Device> device_ = makeRtlDevice(chipOptions(0, 0, ""));
};

TEST_F(RtlDeviceTest, ReportsItsParameters) {
  const ChipInfo info = device_->info();
  EXPECT_EQ(info.tiles, 4u);  // DeviceOptions::tiles = 0: the default chip
  EXPECT_EQ(info.tileMemBytes, TESS_TILE_MEM_BYTES);
  EXPECT_EQ(info.contexts, 6u);
  EXPECT_EQ(info.backend, "rtl");
}

TEST(RtlDeviceOptions, OffersFourOrSixteenTilesOf64KiB) {
  EXPECT_EQ(makeRtlDevice(chipOptions(0, 0, ""))->info().tiles, 4u);
  EXPECT_EQ(makeRtlDevice(chipOptions(16, 0, ""))->info().tiles, 16u);
  for (unsigned tiles : {1u, 2u, 8u, 1472u}) {
    try {
      makeRtlDevice(chipOptions(tiles, 0, ""));
      FAIL() << tiles << " tiles: expected tessera::Error";
    } catch (const Error& e) {
      // The message names the configurations that exist.
      EXPECT_NE(std::string(e.what()).find("4 tiles"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("16"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(makeRtlDevice(chipOptions(4, 4096, "")), Error);
  EXPECT_THROW(makeRtlDevice(chipOptions(0, 0, "mk2")), Error);
  EXPECT_THROW(makeRtlDevice(chipOptions(0, 0, "ice40")), Error);
  // The verilated chips have the FPU: an integer-only chip is refused, not silently given one.
  DeviceOptions noFpu = chipOptions(0, 0, "");
  noFpu.noFpu = true;
  if (TESS_HAS_FPU != 0) {
    EXPECT_THROW(makeRtlDevice(noFpu), Error);
  }
  EXPECT_EQ(makeRtlDevice(chipOptions(0, 0, ""))->info().hasFpu, TESS_HAS_FPU != 0);
}

#if !TESSERA_RTL_TRACE_FULL
// The default build verilates no traced 16-tile chip: a VCD of one is refused by name, before
// anything runs, instead of silently running the untraced chip.
TEST(RtlDeviceTrace, AVcdOfAChipWithoutItsTracedTwinNamesTheOption) {
  DeviceOptions options;
  options.tiles = TESS_NUM_TILES;
  options.traceVcd = ::testing::TempDir() + "rtl_device_no_twin.vcd";
  try {
    makeRtlDevice(options);
    FAIL() << "a VCD of the untraced " << TESS_NUM_TILES << "-tile chip was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TESSERA_RTL_TRACE_FULL"), std::string::npos) << e.what();
  }
  std::ifstream in(options.traceVcd);
  EXPECT_FALSE(in.good()) << "the refused run created " << options.traceVcd;
}
#endif

#if TESSERA_RTL_TRACE
// A VCD request switches to the traced twin of the chip (rtl/CMakeLists.txt): same cycle count as
// the speed build, and a waveform of the chip's ports in the file.
TEST(RtlDeviceTrace, TracedChipWritesVcdWithTheSameTiming) {
  const std::string path = ::testing::TempDir() + "rtl_device_trace.vcd";
  DeviceOptions options;
  options.traceVcd = path;
  uint64_t cycles[2] = {0, 0};
  for (int traced = 0; traced < 2; ++traced) {
    auto dev = makeRtlDevice(traced ? options : DeviceOptions{});
    for (unsigned t = 1; t < dev->info().tiles; ++t) dev->setTileEnabled(t, false);
    std::vector<uint8_t> bytes;
    for (uint32_t w : {rv::lui(1, kMmio), rv::addi(2, 0, 42), rv::sw(2, 1, 0)}) {
      for (unsigned k = 0; k < 4; ++k) bytes.push_back(static_cast<uint8_t>(w >> (8 * k)));
    }
    dev->writeMemory(0, 0, bytes);
    const RunResult r = dev->run(kMaxCycles);
    ASSERT_EQ(r.reason, StopReason::Halted);
    EXPECT_EQ(r.exitCode, 42u);
    cycles[traced] = r.cycles;
  }
  EXPECT_EQ(cycles[0], cycles[1]);
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("$version", 0), 0u);
  EXPECT_NE(text.find("$var wire  1 "), std::string::npos);
  EXPECT_NE(text.find("run_i"), std::string::npos);
  std::remove(path.c_str());
}
#endif

}  // namespace
}  // namespace tessera
