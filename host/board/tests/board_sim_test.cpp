// The board top (UART link bridge + chip, FPGA variant of the RTL) simulated behind a pty, reached
// with serial: exactly as a board: the same programs give the same console, exit code, stop
// reasons, cycle counts and counters as the in-process rtl device; the bridge checks each frame's
// CRC before acting, rejects and counts bad frames, and reports a maximum payload that the host
// library splits its transfers to fit.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <thread>

#include "frame_codec.hpp"
#include "link_device.hpp"
#include "program_outcome.hpp"
#include "raw_serial.hpp"
#include "server_process.hpp"
#include "tessera/chip_params.h"
#include "tessera/device.hpp"
#include "tessera/error.hpp"

namespace tessera::link {
namespace {

// How long a test waits for a reply the board simulation sends within a second or so before it
// reports that none came: only a hang reaches it, never a slow, loaded machine.
constexpr std::chrono::milliseconds kHang{90000};

const std::string kBin = TESSERA_SW_BIN_DIR;
const std::string kBoardSim = TESSERA_BOARD_SIM_PATH;
constexpr uint64_t kMaxCycles = 20'000'000;

ProgramOutcome runProgram(Device& dev, const std::string& elf, bool allTiles) {
  return runProgramToEnd(dev, kBin + "/" + elf, allTiles, kMaxCycles);
}

class BoardSimTest : public testing::Test {
 protected:
  void SetUp() override {
    board_ = std::make_unique<ServerProcess>(kBoardSim, std::vector<std::string>{});
  }
  std::unique_ptr<Device> open() { return openDevice(board_->deviceString()); }
  std::string path() const { return board_->deviceString().substr(7); }
  /// Reset the board with tile 0 holding `jal x0, 0` (it spins forever) and the others disabled.
  void loadASpinningTile0() {
    auto dev = open();
    dev->reset();
    const uint32_t loop = 0x0000006f;
    dev->writeMemory(0, 0, std::span(reinterpret_cast<const uint8_t*>(&loop), 4));
    for (unsigned t = 1; t < dev->info().tiles; ++t) dev->setTileEnabled(t, false);
  }
  /// Raw requests on the line: send a frame; read() takes the next reply.
  static void send(RawSerialLine& line, uint8_t op, uint32_t seq, std::vector<uint8_t> payload) {
    Frame req;
    req.opcode = op;
    req.seq = seq;
    req.payload = std::move(payload);
    line.write(FrameCodec::encode(req));
  }
  std::unique_ptr<ServerProcess> board_;
};

// The simulated board's line is private to its owner, as tessera-server's pty is (issue 28).
TEST_F(BoardSimTest, ThePtyIsPrivateToItsOwner) {
  struct stat st {};
  ASSERT_EQ(::stat(path().c_str(), &st), 0) << path();
  EXPECT_EQ(st.st_mode & 077, 0u) << path() << " mode " << std::oct << (st.st_mode & 07777);
  EXPECT_EQ(st.st_uid, ::geteuid());
}

TEST_F(BoardSimTest, InfoReportsTheBoardAndItsMaximumPayload) {
  auto dev = open();
  const ChipInfo info = dev->info();
  EXPECT_EQ(info.tiles, 4u);
  EXPECT_EQ(info.tileMemBytes, 65536u);
  EXPECT_EQ(info.contexts, 6u);
  EXPECT_EQ(info.backend, "link:board");
  // The verilated board's chip has the default parameters (rtl/params.json).
  EXPECT_EQ(info.counterBits, TESS_COUNTER_BITS);
  EXPECT_EQ(info.hasFpu, TESS_HAS_FPU != 0);
  EXPECT_EQ(info.hasMulDiv, TESS_HAS_MULDIV != 0);
  EXPECT_EQ(info.hasMatrixUnit, TESS_MATRIX_UNIT != 0);
  auto* link = dynamic_cast<LinkDevice*>(dev.get());
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->maxPayload(), 1024u);
  EXPECT_EQ(dev->readControl(TESS_CR_ID), TESS_CHIP_ID);
}

TEST_F(BoardSimTest, TransfersLargerThanTheBridgeBufferAreSplit) {
  auto dev = open();
  std::mt19937 rng(7);
  std::vector<uint8_t> data(3001);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  dev->writeMemory(2, 0x1003, data);  // unaligned start and end, three frames and a bit
  std::vector<uint8_t> back(data.size());
  dev->readMemory(2, 0x1003, back);
  EXPECT_EQ(back, data);
  std::vector<uint8_t> tileZero(16);
  dev->readMemory(0, 0x1003, tileZero);  // another tile is untouched
  EXPECT_NE(std::vector<uint8_t>(data.begin(), data.begin() + 16), tileZero);
  std::vector<uint8_t> last(8);
  EXPECT_THROW(dev->readMemory(0, 65536 - 4, last), Error);  // out of range, refused
  dev->readMemory(0, 65536 - 8, last);                       // the link still works
}

TEST_F(BoardSimTest, ProgramsMatchTheInProcessRtlDevice) {
  auto board = open();
  DeviceOptions opts;
  opts.tiles = 4;
  auto rtl = openDevice("rtl", opts);
  for (const char* elf : {"hello.elf", "isa_rv32m.elf", "trap_ebreak.elf"}) {
    SCOPED_TRACE(elf);
    expectSameOutcome(runProgram(*board, elf, false), runProgram(*rtl, elf, false));
  }
  for (const char* elf : {"chip_ring_shift.elf", "chip_host_sync.elf"}) {
    SCOPED_TRACE(elf);
    expectSameOutcome(runProgram(*board, elf, true), runProgram(*rtl, elf, true));
  }
}

TEST_F(BoardSimTest, ACorruptedFrameIsRejectedCountedAndNeverExecuted) {
  uint32_t badBefore = 0;
  {
    auto dev = open();
    badBefore = dev->readControl(TESS_CR_LINK_BAD_FRAMES);
    dev->writeMemory(1, 0x100, std::vector<uint8_t>(8, 0x11));
  }
  RawSerialLine line(path());
  Frame req;
  req.opcode = 0x03;  // MEM_WRITE
  req.seq = 77;
  req.tile = 1;
  req.addr = 0x100;
  req.payload = std::vector<uint8_t>(8, 0xEE);
  std::vector<uint8_t> bytes = FrameCodec::encode(req);
  bytes[24 + 3] ^= 0x10;  // one bit of the payload flipped on the line
  line.write(bytes);
  auto ev = line.read(kHang);
  ASSERT_TRUE(ev.has_value());
  ASSERT_EQ(ev->kind, DecodeEvent::Kind::Frame);
  EXPECT_EQ(ev->frame.status, static_cast<uint16_t>(Status::BadCrc));
  EXPECT_EQ(ev->frame.seq, 77u);

  // A payload over the bridge's 1 KiB is answered with TooLong, not executed.
  req.seq = 78;
  req.payload = std::vector<uint8_t>(2000, 0xEE);
  line.write(FrameCodec::encode(req));
  ev = line.read(kHang);
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->frame.status, static_cast<uint16_t>(Status::TooLong));
  EXPECT_EQ(ev->frame.seq, 78u);

  // Garbage before a good frame is skipped; the good frame is answered.
  std::vector<uint8_t> noisy = {0x54, 0x73, 0x00, 0xFF, 0x54};
  req.seq = 79;
  req.opcode = 0x01;  // INFO
  req.payload.clear();
  const auto good = FrameCodec::encode(req);
  noisy.insert(noisy.end(), good.begin(), good.end());
  line.write(noisy);
  ev = line.read(kHang);
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->frame.status, static_cast<uint16_t>(Status::Ok));
  EXPECT_EQ(ev->frame.seq, 79u);

  auto dev = open();
  EXPECT_EQ(dev->readControl(TESS_CR_LINK_BAD_FRAMES), badBefore + 1);
  std::vector<uint8_t> mem(8);
  dev->readMemory(1, 0x100, mem);
  EXPECT_EQ(mem, std::vector<uint8_t>(8, 0x11));  // neither bad frame wrote
}

// The board's bridge keeps the control-register contract of docs/chip.md as tessera-server
// --device rtl does (issue 29, item 9): reads of unknown or write-only offsets and of offsets of
// 0x1000 or more, and writes of the bridge's read-only registers, are refused on both, so the
// board cannot report registers (and checkpoint support) it does not have.
TEST_F(BoardSimTest, ControlRegistersAreRefusedAsTheServerRefusesThem) {
  ServerProcess server(TESSERA_SERVER_PATH,
                       std::vector<std::string>{"--device", "rtl", "--tiles", "4", "--pty"});
  auto refused = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error&) {
      return true;
    }
    return false;
  };
  for (const std::string& spec : {board_->deviceString(), server.deviceString()}) {
    SCOPED_TRACE(spec);
    auto dev = openDevice(spec);
    for (const uint32_t offset : {0x38u, 0xffcu, 0x1000u, 0x1000u + TESS_CR_ID, 0xffffffffu}) {
      EXPECT_TRUE(refused([&] { dev->readControl(offset); })) << "read of " << offset;
    }
    EXPECT_TRUE(refused([&] { dev->writeControl(TESS_CR_LINK_BAD_FRAMES, 1); }));
    EXPECT_TRUE(refused([&] { dev->writeControl(0x1000u + TESS_CR_TILE_SEL, 1); }));
    EXPECT_EQ(dev->readControl(TESS_CR_TILE_SEL), 0u);  // the refused write changed nothing
    EXPECT_EQ(dev->readControl(TESS_CR_ID), TESS_CHIP_ID);
  }
}

TEST_F(BoardSimTest, ABoardLeftRunningIsBusyUntilReset) {
  loadASpinningTile0();
  RawSerialLine line(path());
  auto request = [&](uint8_t op, uint32_t seq, std::vector<uint8_t> payload) {
    send(line, op, seq, std::move(payload));
    auto ev = line.read(kHang);
    EXPECT_TRUE(ev.has_value()) << "no reply to opcode " << int{op};
    return ev ? ev->frame.status : uint16_t{0xffff};
  };
  // RUN for 2^40 cycles: the run starts and continues after its reply.
  EXPECT_EQ(request(0x06, 1, {0, 0, 0, 0, 0, 1, 0, 0}), static_cast<uint16_t>(Status::Ok));
  EXPECT_EQ(request(0x02, 2, {4, 0, 0, 0}), static_cast<uint16_t>(Status::Busy));
  EXPECT_EQ(request(0x07, 3, {20, 0, 0, 0}), static_cast<uint16_t>(Status::Running));
  EXPECT_EQ(request(0x08, 4, {}), static_cast<uint16_t>(Status::Ok));  // RESET ends the run
  EXPECT_EQ(request(0x02, 5, {4, 0, 0, 0}), static_cast<uint16_t>(Status::Ok));
  EXPECT_EQ(request(0x07, 6, {20, 0, 0, 0}), static_cast<uint16_t>(Status::NotRunning));

  // Left running again: a request says what holds the board and how to free it (issue 29,
  // item 5), and tessera-run --reset frees it.
  {
    auto dev = open();  // RESET enabled every tile again: tile 0 alone runs the loop
    for (unsigned t = 1; t < dev->info().tiles; ++t) dev->setTileEnabled(t, false);
  }
  EXPECT_EQ(request(0x06, 7, {0, 0, 0, 0, 0, 1, 0, 0}), static_cast<uint16_t>(Status::Ok));
  {
    auto dev = open();
    std::vector<uint8_t> word(4);
    try {
      dev->readMemory(0, 0, word);
      ADD_FAILURE() << "a memory read of a running board was answered";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "busy (a run is in progress): the device is running a program; a run "
                    "started by another client, or by one that went away, holds it until it "
                    "ends or the device is reset (tessera-run --reset, Device::reset)"),
                std::string::npos)
          << e.what();
    }
  }
  std::string out;
  FILE* p = ::popen((std::string(TESSERA_RUN_PATH) + " --reset --device " + board_->deviceString() +
                     " " + kBin + "/hello.elf 2>&1")
                        .c_str(),
                    "r");
  ASSERT_NE(p, nullptr);
  char buf[512];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_NE(out.find("hello from tessera tile 0"), std::string::npos) << out;
  EXPECT_EQ(request(0x07, 8, {20, 0, 0, 0}), static_cast<uint16_t>(Status::NotRunning));
}

// A client that sent a WAIT of 60,000 ms and went away used to leave the board deaf until the WAIT
// ended (171 s of wall time on the simulator), RESET included. The next request now ends the WAIT
// without a reply (issue 29, item 5): the first reply on the line is the RESET's.
TEST_F(BoardSimTest, AWaitFromAClientThatWentAwayEndsWhenTheNextRequestComes) {
  loadASpinningTile0();
  RawSerialLine line(path());
  send(line, 0x06, 1, {0, 0, 0, 0, 0, 1, 0, 0});  // RUN for 2^40 cycles
  auto ev = line.read(kHang);
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->frame.status, static_cast<uint16_t>(Status::Ok));
  send(line, 0x07, 2, {0x60, 0xea, 0, 0});  // WAIT 60,000 ms, whose client never reads the reply
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  send(line, 0x08, 3, {});  // the next client's RESET
  ev = line.read(kHang);
  ASSERT_TRUE(ev.has_value()) << "no reply to a RESET sent during a WAIT";
  EXPECT_EQ(ev->frame.seq, 3u) << "the WAIT was answered (status " << ev->frame.status << ")";
  EXPECT_EQ(ev->frame.status, static_cast<uint16_t>(Status::Ok));
  // The RESET ended the run; the board serves requests again.
  send(line, 0x07, 4, {20, 0, 0, 0});
  ev = line.read(kHang);
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->frame.seq, 4u);
  EXPECT_EQ(ev->frame.status, static_cast<uint16_t>(Status::NotRunning));
}

}  // namespace
}  // namespace tessera::link
