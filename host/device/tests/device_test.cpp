// openDevice(): the device strings it accepts and the error for the others.
#include "tessera/device.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

// lui t0, 0x80000; addi a0, x0, 'A'; sw a0, 4(t0); addi a1, x0, 3; sw a1, 0(t0)
// (console "A", EXIT 3; RISC-V U/I/S encodings written out by hand).
const std::vector<uint32_t> kProgram{0x800002b7u, 0x04100513u, 0x00a2a223u, 0x00300593u,
                                     0x00b2a023u};

std::vector<uint8_t> bytesOf(const std::vector<uint32_t>& words) {
  std::vector<uint8_t> bytes(words.size() * 4);
  std::memcpy(bytes.data(), words.data(), bytes.size());
  return bytes;
}

// A one-tile model chip: the program is on tile 0 only.
tessera::DeviceOptions oneTile() {
  tessera::DeviceOptions options;
  options.tiles = 1;
  return options;
}

TEST(ModelDevice, RunsInStepsAndReportsTheHalt) {
  auto device = tessera::openDevice("model", oneTile());
  device->writeMemory(0, 0, bytesOf(kProgram));
  device->reset();
  // 5 instructions on one context: EXIT issues at cycle 24, cycle count 25.
  tessera::RunResult r = device->run(10);
  EXPECT_EQ(r.reason, tessera::StopReason::MaxCycles);
  EXPECT_EQ(r.cycles, 10u);
  r = device->run(10);
  EXPECT_EQ(r.reason, tessera::StopReason::MaxCycles);
  EXPECT_EQ(r.cycles, 20u);
  r = device->run(1000);
  EXPECT_EQ(r.reason, tessera::StopReason::Halted);
  EXPECT_EQ(r.cycles, 25u);
  EXPECT_EQ(r.exitCode, 3u);
  EXPECT_EQ(device->console(0), "A");
  EXPECT_EQ(device->stats(0).instructions, 5u);
  std::vector<uint8_t> back(20);
  device->readMemory(0, 0, back);
  EXPECT_EQ(back, bytesOf(kProgram));
  EXPECT_THROW(device->readMemory(1, 0, back), tessera::Error);
  EXPECT_THROW(device->readMemory(0, 65536 - 4, back), tessera::Error);
}

TEST(ModelDevice, RetireSinkSeesEveryInstruction) {
  auto device = tessera::openDevice("model", oneTile());
  device->writeMemory(0, 0, bytesOf(kProgram));
  device->reset();
  std::vector<tessera::RetireRecord> records;
  device->setRetireSink([&](const tessera::RetireRecord& rec) { records.push_back(rec); });
  device->run(1000);
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(records[1].insn, kProgram[1]);
  EXPECT_EQ(records[1].dest, tessera::DestKind::X);
  EXPECT_EQ(records[1].rd, 10u);
  EXPECT_EQ(records[1].value, uint32_t{'A'});
  EXPECT_EQ(records[4].cycle, 24u);
}

TEST(OpenDevice, ModelReportsItsParameters) {
  tessera::DeviceOptions options;
  options.tileMemBytes = 4096;
  auto device = tessera::openDevice("model", options);
  const tessera::ChipInfo info = device->info();
  EXPECT_EQ(info.backend, "model");
  EXPECT_EQ(info.tiles, 4u);  // DeviceOptions::tiles = 0: the default chip (docs/decisions.md)
  EXPECT_EQ(info.tileMemBytes, 4096u);
  EXPECT_EQ(info.contexts, 6u);
}

TEST(OpenDevice, UnknownStringListsTheValidOnes) {
  try {
    tessera::openDevice("fpga");
    FAIL() << "no exception";
  } catch (const tessera::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("\"fpga\""), std::string::npos) << what;
    EXPECT_NE(what.find("\"model\""), std::string::npos) << what;
    EXPECT_NE(what.find("\"rtl\""), std::string::npos) << what;
  }
}

TEST(OpenDevice, ModelRefusesVcd) {
  tessera::DeviceOptions options;
  options.traceVcd = "x.vcd";
  EXPECT_THROW(tessera::openDevice("model", options), tessera::Error);
}

}  // namespace
