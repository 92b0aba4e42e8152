#include "backends.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "tessera/error.hpp"

namespace tessera::backends {
namespace {

// A test a backend skips: the fixture and test name as GoogleTest prints them without the
// instantiation prefix or the parameter ("ChipSuite", "HostSyncStopsTheChipUntilReleased").
struct Exclusion {
  const char* backend;
  const char* fixture;
  const char* test;
  const char* reason;
};

// The retirement trace is an in-process sink: tessera-server does not forward it. (The sharded
// model records it: on its one rank in these tests, every tile's records.)
constexpr const char* kLinkNoTrace = "reads the retirement trace, which the link does not carry";

// Every test a backend skips, and why (docs/building.md, "Backends"). Keep it here, in one list.
const Exclusion kExclusions[] = {
    {"tcp", "TileSuite", "ExitCodeAndThreeInstructionTiming", kLinkNoTrace},
    {"tcp", "TileSuite", "LongOpsTakeEightRounds", kLinkNoTrace},
    {"tcp", "TileSuite", "DivisionEdgeCases", kLinkNoTrace},
    {"tcp", "TileSuite", "MultiplyAndSubwordMemory", kLinkNoTrace},
    {"tcp", "TileSuite", "WorkerStartedByRunAndAwaitedByWait", kLinkNoTrace},
    {"tcp", "TileSuite", "FloatingPointAddConvertAndFlags", kLinkNoTrace},
    {"tcp", "ChipSuite", "LimitsAroundTheEndGiveTheEndItself", kLinkNoTrace},
    // Counter widths other than the chip's are a model option (DeviceOptions::counterBits) that
    // tessera-server does not take.
    {"tcp", "CounterSuite", "WrapModuloTheirWidthWhileTheChipCycleCounts",
     "tessera-server takes no counter width, and the link carries no retirement trace"},
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string d; std::getline(ss, d, ',');) {
    if (!d.empty()) out.push_back(d);
  }
  return out;
}

// "Backends/ChipSuite" -> "ChipSuite"; "Name/tcp" -> "Name" (and "Name/tcp_Case" -> "Name").
std::string withoutPrefix(const std::string& s) {
  const size_t slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}
std::string withoutParameter(const std::string& s) {
  const size_t slash = s.find('/');
  return slash == std::string::npos ? s : s.substr(0, slash);
}

}  // namespace

std::vector<std::string> names() {
  std::vector<std::string> out = split(TESSERA_TEST_DEVICES);
  out.push_back("tcp");
  out.push_back("shard");
  return out;
}

Opened open(const std::string& backend, const DeviceOptions& options) {
  Opened o;
  if (backend == "tcp") {
    DeviceOptions plain;
    plain.tiles = options.tiles;
    plain.tileMemBytes = options.tileMemBytes;
    if (options.preset != plain.preset || options.noFpu || options.noMulDiv ||
        options.contexts != plain.contexts || options.counterBits != plain.counterBits ||
        options.shard || options.matrixUnit || options.tileMemBytes % 1024 != 0) {
      throw Error(
          "backend tcp: tessera-server takes the tile count and a tile memory in KiB; the test "
          "asks for more (preset, extensions, matrix unit, contexts, counter width, sharding or a "
          "memory size that is not whole KiB)");
    }
    o.server = std::make_unique<link::ServerProcess>(
        TESSERA_SERVER_PATH,
        std::vector<std::string>{"--device", "model", "--tiles", std::to_string(options.tiles),
                                 "--tile-mem", std::to_string(options.tileMemBytes / 1024),
                                 "--listen", "127.0.0.1:0"});
    o.device = openDevice(o.server->deviceString());
  } else if (backend == "shard") {
    DeviceOptions sharded = options;
    sharded.shard = true;
    o.device = openDevice("model", sharded);
  } else {
    o.device = openDevice(backend, options);
  }
  return o;
}

std::string exclusionReason(const std::string& backend) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return "";
  const std::string fixture = withoutPrefix(info->test_suite_name());
  const std::string test = withoutParameter(info->name());
  for (const Exclusion& e : kExclusions) {
    if (backend == e.backend && fixture == e.fixture && test == e.test) {
      return e.reason;
    }
  }
  return "";
}

void skipIfExcluded(const std::string& backend) {
  const std::string reason = exclusionReason(backend);
  if (!reason.empty()) GTEST_SKIP() << "excluded on " << backend << ": " << reason;
}

}  // namespace tessera::backends
