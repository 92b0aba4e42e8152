// The Engine on engine_stream (sw/tests/engine/engine_stream.c, whose header comment is the
// specification the expected values here are computed from): streams, tensors, host syncs on
// every backend with identical results and cycle counts, and the prefetch thread.
#include "tessera/engine.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <thread>

#include "backends.hpp"
#include "executable_packer.hpp"
#include "server_process.hpp"
#include "tessera/chip_params.h"

namespace tessera::test {
namespace {

constexpr uint32_t kTiles = 4;
constexpr uint32_t kN = 16;       // ENGINE_N
constexpr uint32_t kBatches = 6;  // ENGINE_BATCHES
constexpr uint32_t kBatchWords = kTiles * kN;

Executable engineStream() {
  std::ifstream in(std::string(TESSERA_ENGINE_SW_DIR) + "/engine_stream.json");
  const std::string json{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return packExecutable({kTiles, TESS_TILE_MEM_BYTES, TESS_NUM_CONTEXTS},
                        {std::string(TESSERA_SW_BIN_DIR) + "/engine_stream.elf"}, json,
                        "engine_stream.json");
}

std::unique_ptr<Device> open(const std::string& spec) {
  DeviceOptions o;
  o.tiles = kTiles;
  return openDevice(spec, o);
}

/// A backend of the one list (backends.hpp) with the test's tile count.
backends::Opened openBackend(const std::string& backend) {
  DeviceOptions o;
  o.tiles = kTiles;
  return backends::open(backend, o);
}

uint32_t weight(uint32_t t, uint32_t i) {
  return 3 + 2 * i + 100 * t;
}
uint32_t inputWord(uint64_t k) {
  return static_cast<uint32_t>(k * 2654435761u + 12345u);
}

void putWord(std::span<uint8_t> b, size_t word, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[4 * word + i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t getWord(std::span<const uint8_t> b, size_t word) {
  return uint32_t{b[4 * word]} | uint32_t{b[4 * word + 1]} << 8 | uint32_t{b[4 * word + 2]} << 16 |
         uint32_t{b[4 * word + 3]} << 24;
}

/// The minibatch stream: word k of the stream is inputWord(k).
void fillInput(uint64_t offset, std::span<uint8_t> data) {
  ASSERT_EQ(offset % 4, 0u);
  ASSERT_EQ(data.size() % 4, 0u);
  for (size_t w = 0; w < data.size() / 4; ++w) putWord(data, w, inputWord(offset / 4 + w));
}

void writeWeights(Engine& engine) {
  std::vector<uint8_t> w(engine.tensorBytes("weights"));
  for (uint32_t t = 0; t < kTiles; ++t) {
    for (uint32_t i = 0; i < kN; ++i) putWord(w, t * kN + i, weight(t, i));
  }
  engine.writeTensor("weights", w);
}

struct Outcome {
  RunResult result;
  std::vector<uint8_t> stream;
  std::vector<uint8_t> acc;
  EngineStats stats;
};

Outcome runEngineStream(Device& dev) {
  Engine engine(dev, engineStream());
  writeWeights(engine);
  Outcome o;
  o.stream.resize(kBatches * kBatchWords * 4);
  engine.connectStream("minibatch", fillInput);
  engine.connectStream("result", std::span<uint8_t>(o.stream));
  o.result = engine.run();
  o.acc = engine.readTensor("acc");
  o.stats = engine.stats();
  return o;
}

/// Check an outcome against the formulas of engine_stream.c.
void expectSpecified(const Outcome& o) {
  ASSERT_EQ(o.result.reason, StopReason::Halted) << describeTrap(o.result.trap);
  EXPECT_EQ(o.stats.hostSyncs, 2 * kBatches);
  EXPECT_EQ(o.stats.hostToDeviceBytes, kBatches * kBatchWords * 4);
  EXPECT_EQ(o.stats.deviceToHostBytes, kBatches * kBatchWords * 4);
  for (uint32_t t = 0; t < kTiles; ++t) {
    for (uint32_t i = 0; i < kN; ++i) {
      uint32_t acc = 0;
      for (uint32_t b = 0; b < kBatches; ++b) {
        const uint32_t k = b * kBatchWords + t * kN + i;
        const uint32_t out = inputWord(k) * weight(t, i) + (t << 24) + b;
        ASSERT_EQ(getWord(o.stream, k), out) << "batch " << b << " tile " << t << " word " << i;
        acc += out;
      }
      EXPECT_EQ(getWord(o.acc, t * kN + i), acc) << "tile " << t << " word " << i;
    }
  }
}

class EngineOnDevice : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { backends::skipIfExcluded(GetParam()); }
};

TEST_P(EngineOnDevice, StreamsMinibatchesAndResults) {
  const backends::Opened dev = openBackend(GetParam());
  const Outcome o = runEngineStream(*dev.device);
  expectSpecified(o);
  RecordProperty("cycles", std::to_string(o.result.cycles));
  RecordProperty("host_io_us_per_sync",
                 std::to_string(o.stats.hostIoSeconds / double(o.stats.hostSyncs) * 1e6));
}

INSTANTIATE_TEST_SUITE_P(Devices, EngineOnDevice, ::testing::ValuesIn(backends::names()),
                         [](const auto& info) { return info.param; });

TEST(Engine, BackendsAgreeOnTensorsStreamsAndCycles) {
  const std::vector<std::string> list = backends::names();
  const backends::Opened first = openBackend(list[0]);
  const Outcome a = runEngineStream(*first.device);
  for (size_t i = 1; i < list.size(); ++i) {
    const backends::Opened dev = openBackend(list[i]);
    const Outcome b = runEngineStream(*dev.device);
    EXPECT_EQ(b.result.cycles, a.result.cycles) << list[i] << " vs " << list[0];
    EXPECT_EQ(b.result.reason, a.result.reason);
    EXPECT_EQ(b.stream, a.stream);
    EXPECT_EQ(b.acc, a.acc);
    EXPECT_EQ(b.stats.hostSyncs, a.stats.hostSyncs);
  }
}

/// The same executable through tessera-server (tcp:// and serial: over a pty) fronting model and
/// rtl: bit-identical streams and tensors and the same cycle count as the backend in process.
struct LinkCase {
  std::string backend;
  bool pty;
};

void PrintTo(const LinkCase& c, std::ostream* os) {
  *os << c.backend << (c.pty ? " over pty" : " over tcp");
}

class EngineOverLink : public ::testing::TestWithParam<LinkCase> {};

TEST_P(EngineOverLink, MatchesTheBackendInProcess) {
  const LinkCase& c = GetParam();
  std::vector<std::string> args = {"--device", c.backend, "--tiles", std::to_string(kTiles)};
  if (c.pty) {
    args.push_back("--pty");
  } else {
    args.insert(args.end(), {"--listen", "127.0.0.1:0"});
  }
  link::ServerProcess server(TESSERA_SERVER_PATH, args);
  auto remote = openDevice(server.deviceString());
  const Outcome r = runEngineStream(*remote);
  expectSpecified(r);
  auto local = open(c.backend);
  const Outcome l = runEngineStream(*local);
  EXPECT_EQ(r.result.cycles, l.result.cycles);
  EXPECT_EQ(r.stream, l.stream);
  EXPECT_EQ(r.acc, l.acc);
  // Share of the minibatch loop's host time spent at host syncs (stream copies over the link).
  const double total = r.stats.deviceSeconds + r.stats.hostIoSeconds;
  RecordProperty("link_share_percent",
                 std::to_string(total > 0 ? 100.0 * r.stats.hostIoSeconds / total : 0.0));
}

INSTANTIATE_TEST_SUITE_P(Link, EngineOverLink,
                         ::testing::Values(LinkCase{"model", false}, LinkCase{"model", true},
                                           LinkCase{"rtl", false}, LinkCase{"rtl", true}),
                         [](const auto& info) {
                           return info.param.backend + (info.param.pty ? "_pty" : "_tcp");
                         });

// The Engine unchanged against the board simulation (UART link bridge in RTL, serial: on a pty).
TEST(EngineOverBoard, MatchesTheRtlDeviceInProcess) {
  link::ServerProcess board(TESSERA_BOARD_SIM_PATH, {});
  auto remote = openDevice(board.deviceString());
  const Outcome r = runEngineStream(*remote);
  expectSpecified(r);
  auto local = open("rtl");
  const Outcome l = runEngineStream(*local);
  EXPECT_EQ(r.result.cycles, l.result.cycles);
  EXPECT_EQ(r.stream, l.stream);
  EXPECT_EQ(r.acc, l.acc);
}

TEST(Engine, RefusesUnconnectedStreamsUnlessAllowed) {
  auto dev = open("model");
  Engine engine(*dev, engineStream());
  std::vector<uint8_t> results(kBatches * kBatchWords * 4, 0xee);
  engine.connectStream("result", std::span<uint8_t>(results));
  EXPECT_EQ(engine.unconnectedStreams(), std::vector<std::string>{"minibatch"});
  try {
    engine.run();
    FAIL() << "ran with an unconnected stream";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "host-to-device stream \"minibatch\" is not connected");
  }
  engine.setUnconnectedOk(true);
  writeWeights(engine);
  const RunResult r = engine.run();
  ASSERT_EQ(r.reason, StopReason::Halted);
  // Zero inputs: out = (t << 24) + b.
  for (uint32_t b = 0; b < kBatches; ++b) {
    for (uint32_t t = 0; t < kTiles; ++t) {
      EXPECT_EQ(getWord(results, b * kBatchWords + t * kN + 5), (t << 24) + b);
    }
  }
}

TEST(Engine, CycleLimitCountsEveryRunSinceTheLoad) {
  // A limit between two host syncs: the Engine must pass Device::run what is left, not the whole
  // limit again after each host sync. 3000 < the program's total (it runs 12 host syncs).
  auto dev = open("model");
  Engine engine(*dev, engineStream());
  engine.setUnconnectedOk(true);
  const RunResult r = engine.run(3000);
  EXPECT_EQ(r.reason, StopReason::MaxCycles);
  EXPECT_EQ(r.cycles, 3000u);
  EXPECT_GT(engine.stats().hostSyncs, 0u);
  EXPECT_LT(engine.stats().hostSyncs, 2 * kBatches);
}

TEST(Engine, NamesAndSizesAreChecked) {
  auto dev = open("model");
  Engine engine(*dev, engineStream());
  EXPECT_THROW(engine.connectStream("minibatches", fillInput), Error);
  EXPECT_THROW(engine.readTensor("accumulator"), Error);
  std::vector<uint8_t> small(8);
  try {
    engine.writeTensor("weights", small);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "tensor \"weights\" has 256 bytes, the buffer 8");
  }
}

TEST(Engine, ABufferTooSmallIsAnError) {
  auto dev = open("model");
  Engine engine(*dev, engineStream());
  std::vector<uint8_t> results(kBatchWords * 4 * 2);  // two batches only
  engine.connectStream("minibatch", fillInput);
  engine.connectStream("result", std::span<uint8_t>(results));
  try {
    engine.run();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "stream \"result\": bytes 512..576 are past the end of its 512-byte buffer"),
              std::string::npos)
        << e.what();
  }
}

TEST(Engine, WrongTargetWritesNothing) {
  DeviceOptions o;
  o.tiles = 16;
  auto dev = openDevice("model", o);
  std::vector<uint8_t> before(64), after(64);
  dev->readMemory(0, 0, before);
  EXPECT_THROW(Engine(*dev, engineStream()), Error);
  dev->readMemory(0, 0, after);
  EXPECT_EQ(before, after);
}

/// Orders the prefetch callback of "minibatch" against the device's runs with a mutex and a
/// condition variable instead of sleeps. Every wait is bounded by kHangLimit, which only a broken
/// Engine reaches: the first wait that reaches it is recorded in `failure` and releases every
/// other wait (so a broken prefetcher makes the test fail, once, instead of hanging).
struct Gate {
  static constexpr std::chrono::seconds kHangLimit{60};
  std::mutex mutex;
  std::condition_variable changed;
  uint64_t produced = 0;  // end of the minibatch bytes ready for a take
  uint64_t reached = 0;   // minibatch bytes taken by the host syncs the device has reached
  bool inRun = false;     // a GatedDevice::run() is in progress (past its inner run)
  bool finished = false;  // Engine::run() returned: release whatever still waits
  std::string failure;    // the wait that reached kHangLimit, if any

  /// Wait (lock held) until ready(); false if released by `finished` or a failure instead.
  template <class Ready>
  bool wait(std::unique_lock<std::mutex>& lock, Ready ready, const std::string& what) {
    const bool ok =
        changed.wait_for(lock, kHangLimit, [&] { return ready() || finished || !failure.empty(); });
    if (!ok) {
      failure = what;
      changed.notify_all();
    }
    return ready();
  }
  void finish() {
    std::lock_guard lock(mutex);
    finished = true;
    changed.notify_all();
  }
};

/// Releases the gate's waits when the test leaves its scope, even by a failed ASSERT: declared
/// after the Engine, so the prefetch thread is released before the Engine joins it.
struct GateRelease {
  Gate& gate;
  ~GateRelease() { gate.finish(); }
};

/// Wraps a device: after each inner run that stops at a host sync, adds the minibatch bytes that
/// host sync takes to gate.reached, then calls `atStop` (gate locked) before returning.
class GatedDevice : public Device {
 public:
  GatedDevice(std::unique_ptr<Device> inner, const Executable& exe, Gate& gate,
              std::function<void(std::unique_lock<std::mutex>&)> atStop)
      : inner_(std::move(inner)), gate_(gate), atStop_(std::move(atStop)) {
    const int minibatch = exe.findStream("minibatch");
    for (const ExeHostSync& h : exe.hostSyncs) {
      for (const ExeStreamCopy& c : h.copies) {
        if (static_cast<int>(c.stream) == minibatch) takes_[h.id] += c.region.bytes;
      }
    }
  }
  ChipInfo info() const override { return inner_->info(); }
  void reset() override { inner_->reset(); }
  void writeMemory(unsigned t, uint32_t a, std::span<const uint8_t> d) override {
    inner_->writeMemory(t, a, d);
  }
  void readMemory(unsigned t, uint32_t a, std::span<uint8_t> d) override {
    inner_->readMemory(t, a, d);
  }
  RunResult run(uint64_t maxCycles) override {
    const RunResult r = inner_->run(maxCycles);
    std::unique_lock lock(gate_.mutex);
    if (r.reason == StopReason::HostSync) gate_.reached += takes_[r.hostSyncId];
    atStop_(lock);
    return r;
  }
  std::string console(unsigned t) const override { return inner_->console(t); }
  TileStats stats(unsigned t) const override { return inner_->stats(t); }
  void setRetireSink(std::function<void(const RetireRecord&)> s) override {
    inner_->setRetireSink(std::move(s));
  }
  uint32_t readControl(uint32_t o) override { return inner_->readControl(o); }
  void writeControl(uint32_t o, uint32_t v) override { inner_->writeControl(o, v); }

 private:
  std::unique_ptr<Device> inner_;
  Gate& gate_;
  std::function<void(std::unique_lock<std::mutex>&)> atStop_;
  std::map<uint32_t, uint64_t> takes_;  // host sync id → minibatch bytes it takes
};

void expectResults(const std::vector<uint8_t>& results) {
  for (uint32_t k = 0; k < kBatches * kBatchWords; ++k) {
    const uint32_t t = (k % kBatchWords) / kN, i = k % kN, b = k / kBatchWords;
    ASSERT_EQ(getWord(results, k), inputWord(k) * weight(t, i) + (t << 24) + b) << k;
  }
}

TEST(EnginePrefetch, SlowCallbackOverlapsDeviceRuns) {
  // A device whose run() does not return until the prefetch thread has every minibatch byte of
  // the host sync it stopped at ready (the Engine's prefetch-ready observer), and a callback that
  // does not start producing until a run() that stopped at the host sync taking its first byte is
  // in progress: each minibatch is produced during the device run before its host sync, so a
  // prefetcher that asks for it ahead never makes a host sync wait. One that does not ask ahead
  // leaves the device waiting for bytes nobody produces: the hang limit, a failure.
  Gate gate;
  const Executable exe = engineStream();
  GatedDevice dev(open("model"), exe, gate, [&](std::unique_lock<std::mutex>& lock) {
    gate.inRun = true;
    gate.changed.notify_all();
    gate.wait(
        lock, [&] { return gate.produced >= gate.reached; },
        fmt::format("the device stopped at a host sync taking minibatch bytes up to {}; "
                    "the prefetch thread had bytes ready up to {}",
                    gate.reached, gate.produced));
    gate.inRun = false;
  });
  Engine engine(dev, exe);
  GateRelease release{gate};
  writeWeights(engine);
  std::vector<uint8_t> results(kBatches * kBatchWords * 4);
  unsigned calls = 0, duringRun = 0;  // under gate.mutex
  const auto mainThread = std::this_thread::get_id();
  std::atomic<bool> onMainThread{false};
  engine.connectStream("minibatch", [&](uint64_t offset, std::span<uint8_t> data) {
    if (std::this_thread::get_id() == mainThread) onMainThread = true;
    std::unique_lock lock(gate.mutex);
    if (gate.wait(
            lock, [&] { return gate.inRun && gate.reached > offset; },
            fmt::format("the callback for minibatch byte {} saw no device run stopped at "
                        "its host sync",
                        offset))) {
      ++duringRun;
    }
    ++calls;
    lock.unlock();
    fillInput(offset, data);
  });
  // Produced = ready for a take (published by the prefetch thread after the callback returned).
  engine.setPrefetchReadyObserver([&](const std::string& stream, uint64_t end) {
    EXPECT_EQ(stream, "minibatch");
    std::lock_guard lock(gate.mutex);
    gate.produced = std::max(gate.produced, end);
    gate.changed.notify_all();
  });
  engine.connectStream("result", std::span<uint8_t>(results));
  const RunResult r = engine.run();
  ASSERT_EQ(r.reason, StopReason::Halted);
  const EngineStats s = engine.stats();
  {
    std::lock_guard lock(gate.mutex);
    EXPECT_EQ(gate.failure, "");
    // One call per minibatch, each during the run before its host sync. The call for the
    // minibatch after the last (predicted, never taken) may have begun: it waits for a run that
    // never comes until the test's end releases it, so it is not counted here.
    EXPECT_EQ(duringRun, kBatches);
    EXPECT_EQ(calls, kBatches);
  }
  EXPECT_FALSE(onMainThread);
  EXPECT_EQ(s.prefetchWaits, 0u);
  EXPECT_EQ(s.prefetchWaitSeconds, 0.0);
  EXPECT_EQ(s.prefetchMissBytes, 0u);
  EXPECT_EQ(s.hostSyncs, 2 * kBatches);
  expectResults(results);
  RecordProperty("host_io_us_per_sync",
                 std::to_string(s.hostIoSeconds / double(s.hostSyncs) * 1e6));
}

TEST(Engine, AtSyncStreamIsCalledOnTheRunThreadAfterTheEarlierResults) {
  // Each minibatch is produced only when its host sync comes, after the previous batch's result
  // arrived: what a replica's summed gradients need.
  auto dev = open("model");
  Engine engine(*dev, engineStream());
  writeWeights(engine);
  std::vector<uint8_t> results(kBatches * kBatchWords * 4);
  const auto mainThread = std::this_thread::get_id();
  uint64_t resultBytes = 0;
  unsigned calls = 0, offThread = 0, early = 0;
  engine.connectStreamAtSync("minibatch", [&](uint64_t offset, std::span<uint8_t> data) {
    if (std::this_thread::get_id() != mainThread) ++offThread;
    // Batch b (in several regions, one per tile) comes after the b batches of results before it.
    if (resultBytes != offset / (kBatchWords * 4) * (kBatchWords * 4)) ++early;
    ++calls;
    fillInput(offset, data);
  });
  engine.connectStream("result", [&](uint64_t offset, std::span<uint8_t> data) {
    std::memcpy(results.data() + offset, data.data(), data.size());
    resultBytes = offset + data.size();
  });
  ASSERT_EQ(engine.run().reason, StopReason::Halted);
  EXPECT_EQ(offThread, 0u);
  EXPECT_EQ(early, 0u);
  EXPECT_GE(calls, kBatches);
  EXPECT_EQ(engine.stats().prefetchMissBytes, 0u);
  for (uint32_t k = 0; k < kBatches * kBatchWords; ++k) {
    const uint32_t t = (k % kBatchWords) / kN, i = k % kN, b = k / kBatchWords;
    ASSERT_EQ(getWord(results, k), inputWord(k) * weight(t, i) + (t << 24) + b) << k;
  }
  EXPECT_THROW(engine.connectStreamAtSync("result", fillInput), Error);
}

TEST(EnginePrefetch, CallbackSlowerThanTheDeviceIsCountedAsWaiting) {
  // A callback that does not return until the device's run() before the host sync taking its
  // bytes has returned and that host sync is waiting for them (the Engine's prefetch-wait
  // observer): the device is always ahead of the callback, and every minibatch host sync is
  // one counted wait, whose measured time is part of the host sync's.
  Gate gate;
  const Executable exe = engineStream();
  GatedDevice dev(open("model"), exe, gate,
                  [&](std::unique_lock<std::mutex>&) { gate.changed.notify_all(); });
  Engine engine(dev, exe);
  GateRelease release{gate};
  writeWeights(engine);
  std::vector<uint8_t> results(kBatches * kBatchWords * 4);
  unsigned observedWaits = 0;   // under gate.mutex
  uint64_t waitingFor = 0;      // minibatch bytes the waiting host syncs take, under gate.mutex
  unsigned releasedByWait = 0;  // callbacks that returned after their host sync waited
  engine.setPrefetchWaitObserver([&](const std::string& stream) {
    EXPECT_EQ(stream, "minibatch");
    std::lock_guard lock(gate.mutex);
    ++observedWaits;
    waitingFor = gate.reached;
    gate.changed.notify_all();
  });
  engine.connectStream("minibatch", [&](uint64_t offset, std::span<uint8_t> data) {
    std::unique_lock lock(gate.mutex);
    if (gate.wait(
            lock, [&] { return waitingFor > offset; },
            fmt::format("the callback for minibatch byte {}: no host sync waited for it "
                        "(device stopped at one taking bytes up to {})",
                        offset, gate.reached))) {
      ++releasedByWait;
    }
    lock.unlock();
    fillInput(offset, data);
  });
  engine.connectStream("result", std::span<uint8_t>(results));
  ASSERT_EQ(engine.run().reason, StopReason::Halted);
  const EngineStats s = engine.stats();
  {
    std::lock_guard lock(gate.mutex);
    EXPECT_EQ(gate.failure, "");
    EXPECT_EQ(observedWaits, kBatches);
    EXPECT_EQ(releasedByWait, kBatches);
  }
  EXPECT_EQ(s.prefetchWaits, kBatches);
  EXPECT_EQ(s.prefetchMissBytes, 0u);
  EXPECT_GT(s.prefetchWaitSeconds, 0.0);
  EXPECT_LE(s.prefetchWaitSeconds, s.hostIoSeconds);
  expectResults(results);
}

}  // namespace
}  // namespace tessera::test
