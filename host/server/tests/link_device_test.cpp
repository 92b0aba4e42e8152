// End to end: tessera-server fronting model and rtl, reached over tcp:// (loopback only) and
// serial: (a pty). The same programs must give the same console, exit code, stop reason, cycle
// count and counters as the same backend in process; failures must be clear and bounded in time.
#include "link_device.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "boost_asio.hpp"
#include "frame_codec.hpp"
#include "program_outcome.hpp"
#include "server_process.hpp"
#include "tessera/device.hpp"
#include "tessera/error.hpp"

namespace tessera::link {
namespace {

const std::string kBin = TESSERA_SW_BIN_DIR;
const std::string kServer = TESSERA_SERVER_PATH;
constexpr uint64_t kMaxCycles = 20'000'000;

struct Param {
  std::string backend;  // what the server fronts
  bool pty;             // serial: over a pty instead of tcp://
};

/// Readable test parameters in gtest and ctest output.
void PrintTo(const Param& p, std::ostream* os) {
  *os << p.backend << (p.pty ? " over pty" : " over tcp");
}

std::string paramName(const testing::TestParamInfo<Param>& info) {
  return info.param.backend + (info.param.pty ? "_pty" : "_tcp");
}

std::vector<std::string> serverArgs(const Param& p, unsigned port = 0) {
  std::vector<std::string> args = {"--device", p.backend};
  if (p.pty)
    args.push_back("--pty");
  else
    args.insert(args.end(), {"--listen", "127.0.0.1:" + std::to_string(port)});
  return args;
}

/// Everything a run leaves that a user can see.
ProgramOutcome runProgram(Device& dev, const std::string& elf, bool allTiles) {
  return runProgramToEnd(dev, kBin + "/" + elf, allTiles, kMaxCycles);
}

class LinkDeviceTest : public testing::TestWithParam<Param> {};

TEST_P(LinkDeviceTest, ProgramsMatchInProcess) {
  ServerProcess server(kServer, serverArgs(GetParam()));
  auto remote = openDevice(server.deviceString());
  auto local = openDevice(GetParam().backend);
  EXPECT_EQ(remote->info().tiles, local->info().tiles);
  EXPECT_EQ(remote->info().tileMemBytes, local->info().tileMemBytes);
  EXPECT_EQ(remote->info().counterBits, local->info().counterBits);
  EXPECT_EQ(remote->info().hasFpu, local->info().hasFpu);
  EXPECT_EQ(remote->info().hasMulDiv, local->info().hasMulDiv);
  EXPECT_EQ(remote->info().hasMatrixUnit, local->info().hasMatrixUnit);
  for (const char* elf : {"hello.elf", "wl_int_fp_loop.elf"}) {
    SCOPED_TRACE(elf);
    const ProgramOutcome l = runProgram(*local, elf, false);
    ASSERT_EQ(l.stops.back().reason, StopReason::Halted);  // the comparison is of a real run
    expectSameOutcome(runProgram(*remote, elf, false), l);
  }
  for (const char* elf : {"chip_ring_shift.elf", "chip_host_sync.elf"}) {
    SCOPED_TRACE(elf);
    expectSameOutcome(runProgram(*remote, elf, true), runProgram(*local, elf, true));
  }
}

TEST_P(LinkDeviceTest, MemoryAndControlRoundTrip) {
  ServerProcess server(kServer, serverArgs(GetParam()));
  auto dev = openDevice(server.deviceString());
  const ChipInfo info = dev->info();
  // Larger than one frame, so chunking is exercised; ends at the last byte of the last tile.
  std::vector<uint8_t> data(info.tileMemBytes);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
  dev->writeMemory(info.tiles - 1, 0, data);
  std::vector<uint8_t> back(data.size());
  dev->readMemory(info.tiles - 1, 0, back);
  EXPECT_EQ(back, data);
  EXPECT_EQ(dev->readControl(TESS_CR_TILES), info.tiles);
  dev->writeControl(TESS_CR_TILE_SEL, 1);
  EXPECT_EQ(dev->readControl(TESS_CR_TILE_SEL), 1u);
}

TEST_P(LinkDeviceTest, BadRequestsGiveClearErrorsAndTheLinkSurvives) {
  ServerProcess server(kServer, serverArgs(GetParam()));
  auto dev = openDevice(server.deviceString());
  const ChipInfo info = dev->info();
  std::vector<uint8_t> buf(16);
  try {
    dev->readMemory(0, info.tileMemBytes - 8, buf);
    FAIL() << "read past the end of SRAM accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
  EXPECT_THROW(dev->writeMemory(info.tiles, 0, buf), Error);
  // A device's own refusal (an unknown control offset) crosses the link as the same refusal.
  bool localRefuses = false;
  try {
    openDevice(GetParam().backend)->readControl(0xFFC);
  } catch (const Error&) {
    localRefuses = true;
  }
  bool remoteRefuses = false;
  try {
    dev->readControl(0xFFC);
  } catch (const Error& e) {
    remoteRefuses = true;
    EXPECT_NE(std::string(e.what()).find("device error"), std::string::npos) << e.what();
  }
  EXPECT_EQ(remoteRefuses, localRefuses);
  EXPECT_THROW(dev->stats(info.tiles), Error);
  EXPECT_THROW(dev->setRetireSink([](const RetireRecord&) {}), Error);
  dev->setRetireSink({});  // clearing is always fine
  EXPECT_EQ(dev->readControl(TESS_CR_ID), 0x7E550001u);
}

TEST_P(LinkDeviceTest, KilledServerGivesAClearErrorWithinTheTimeout) {
  auto server = std::make_unique<ServerProcess>(kServer, serverArgs(GetParam()));
  auto dev = openDevice(server->deviceString() + "?timeout_ms=2000");
  loadProgram(*dev, kBin + "/wl_int_fp_loop.elf", 0);
  std::chrono::steady_clock::time_point killedAt;
  std::thread killer([&]() {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    killedAt = std::chrono::steady_clock::now();
    server->signal(SIGKILL);
  });
  std::string message;
  try {
    for (int i = 0; i < 10000; ++i) {
      dev->reset();
      dev->run(kMaxCycles);
    }
  } catch (const Error& e) {
    message = e.what();
  }
  const auto failedAt = std::chrono::steady_clock::now();
  killer.join();
  ASSERT_FALSE(message.empty()) << "the client never noticed the dead server";
  RecordProperty("error", message);
  EXPECT_NE(message.find(server->deviceString()), std::string::npos) << message;
  // No upper bound on the wall time: a loaded machine may take any time to notice; a client that
  // never notices hangs, and the CTest timeout catches that.
  EXPECT_GE(failedAt, killedAt);
}

TEST_P(LinkDeviceTest, RestartedServerServesANewClient) {
  unsigned port = 0;
  {
    ServerProcess first(kServer, serverArgs(GetParam()));
    port = first.port();
    auto dev = openDevice(first.deviceString() + "?timeout_ms=2000");
    EXPECT_GT(dev->info().tiles, 0u);
    first.signal(SIGTERM);  // a clean stop: the server exits 0
    const int status = first.wait();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    EXPECT_THROW(dev->readControl(TESS_CR_ID), Error);
  }
  ServerProcess second(kServer, serverArgs(GetParam(), port));  // the same port for tcp
  auto dev = openDevice(second.deviceString());
  const ProgramOutcome o = runProgram(*dev, "hello.elf", false);
  EXPECT_EQ(o.stops.back().reason, StopReason::Halted);
  EXPECT_NE(o.consoles[0].find("hello"), std::string::npos);
}

TEST_P(LinkDeviceTest, AFrozenServerGivesATimeoutNotAHang) {
  ServerProcess server(kServer, serverArgs(GetParam()));
  auto dev = openDevice(server.deviceString() + "?timeout_ms=500");
  server.signal(SIGSTOP);  // alive but silent: only the client's timeout can notice
  const auto t0 = std::chrono::steady_clock::now();
  try {
    dev->readControl(TESS_CR_ID);
    ADD_FAILURE() << "a frozen server answered";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("500 ms"), std::string::npos) << e.what();
  }
  // The client waited for its timeout, less the rounding of its per-read slices (a lower bound
  // that load cannot break); no upper bound.
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, std::chrono::milliseconds(450));
  server.signal(SIGCONT);
}

TEST_P(LinkDeviceTest, AClientThatDiesMidFrameDoesNotBlockTheNextOne) {
  ServerProcess server(kServer, serverArgs(GetParam()));
  Frame f;
  f.opcode = static_cast<uint8_t>(Opcode::MemWrite);
  f.payload.assign(1000, 1);
  const auto bytes = FrameCodec::encode(f);
  {
    boost::asio::io_context io;
    if (GetParam().pty) {
      boost::asio::serial_port port(io, server.deviceString().substr(7));
      boost::asio::write(port, boost::asio::buffer(bytes.data(), 500));
    } else {
      boost::asio::ip::tcp::socket s(io);
      s.connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(server.port())});
      boost::asio::write(s, boost::asio::buffer(bytes.data(), 500));
    }
  }
  // On a pty the half frame stays in the server's decoder until its stall timeout (500 ms) drops
  // it. The client's timeout is only a hang detector, so a loaded machine cannot fail the test.
  auto dev = openDevice(server.deviceString() + "?timeout_ms=60000");
  EXPECT_EQ(dev->readControl(TESS_CR_ID), 0x7E550001u);
}

INSTANTIATE_TEST_SUITE_P(Link, LinkDeviceTest,
                         testing::Values(Param{"model", false}, Param{"model", true},
                                         Param{"rtl", false}, Param{"rtl", true}),
                         paramName);

TEST(LinkTcp, ASecondClientIsRefusedWhileOneIsConnected) {
  ServerProcess server(kServer, serverArgs(Param{"model", false}));
  auto first = openDevice(server.deviceString());
  // The second client is answered, not left to time out: INFO, then Busy naming the holder
  // (issue 28). No wall-clock bound, which a loaded machine could break.
  auto second = openDevice(server.deviceString() + "?timeout_ms=3000");
  EXPECT_EQ(second->info().tiles, first->info().tiles);
  std::string message;
  try {
    second->readControl(TESS_CR_ID);
  } catch (const Error& e) {
    message = e.what();
  }
  ASSERT_FALSE(message.empty()) << "a second client was served";
  EXPECT_NE(message.find("another client (client 127.0.0.1:"), std::string::npos) << message;
  EXPECT_NE(message.find("holds this server's device; it serves one client at a time"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("3000 ms"), std::string::npos) << message;
  EXPECT_EQ(first->readControl(TESS_CR_ID), 0x7E550001u);  // the first one is unaffected
  // Once the first has gone, the next client is served.
  first.reset();
  second.reset();
  std::unique_ptr<Device> third;
  for (int i = 0; i < 100 && !third; ++i) {
    try {
      third = openDevice(server.deviceString() + "?timeout_ms=3000");
      third->readControl(TESS_CR_ID);
    } catch (const Error&) {
      third.reset();  // the refused session may still be closing
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ASSERT_TRUE(third);
  EXPECT_EQ(third->readControl(TESS_CR_ID), 0x7E550001u);
}

// A pty has no token: whoever opens its slave is the client. grantpt leaves it writable by the
// tty group (`write`, `wall`), so the server makes it private to its owner (issue 28).
TEST(LinkPty, ThePtyIsPrivateToItsOwner) {
  ServerProcess server(kServer, serverArgs(Param{"model", true}));
  const std::string device = server.deviceString();
  ASSERT_EQ(device.rfind("serial:", 0), 0u) << device;
  struct stat st {};
  ASSERT_EQ(::stat(device.substr(7).c_str(), &st), 0) << device;
  EXPECT_EQ(st.st_mode & 077, 0u) << device << " mode " << std::oct << (st.st_mode & 07777);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(openDevice(device)->readControl(TESS_CR_ID), 0x7E550001u);  // and it serves
}

}  // namespace
}  // namespace tessera::link
