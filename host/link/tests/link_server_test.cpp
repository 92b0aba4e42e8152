// LinkServer without a transport: replies, range checks before the device is touched (a device
// that records every call; the real backends are tested end to end in host/server/tests), the
// busy rule during a run, WAIT, and sliced runs equal to one in-process run.
#include "link_server.hpp"

#include <gtest/gtest.h>

#include "frame_codec.hpp"
#include "messages.hpp"
#include "tessera/error.hpp"

namespace tessera::link {
namespace {

/// Records every call; memory accesses must only arrive in range.
class RecordingDevice : public Device {
 public:
  ChipInfo info() const override { return ChipInfo{{2, 4096, 6}, "recording"}; }
  void reset() override { ++calls; }
  void writeMemory(unsigned, uint32_t, std::span<const uint8_t>) override { ++calls; }
  void readMemory(unsigned, uint32_t, std::span<uint8_t> d) override {
    ++calls;
    std::fill(d.begin(), d.end(), uint8_t{0x5A});
  }
  RunResult run(uint64_t maxCycles) override {
    ++calls;
    // A chip that halts at cycle haltAt; RunResult::cycles is the chip's cycle counter.
    const uint64_t stop = std::min(haltAt, now + maxCycles);
    now = stop;
    RunResult r;
    r.cycles = now;
    r.reason = now == haltAt ? StopReason::Halted : StopReason::MaxCycles;
    r.exitCode = r.reason == StopReason::Halted ? 7 : 0;
    return r;
  }
  std::string console(unsigned) const override { return std::string(70000, 'c'); }
  TileStats stats(unsigned) const override { return TileStats{}; }
  void setRetireSink(std::function<void(const RetireRecord&)>) override {}
  uint32_t readControl(uint32_t offset) override {
    if (offset == TESS_CR_CYCLE_LO) return static_cast<uint32_t>(now);
    if (offset == TESS_CR_CYCLE_HI) return static_cast<uint32_t>(now >> 32);
    if (offset > 0x100) throw Error("recording: no such register");
    return 0;
  }
  void writeControl(uint32_t, uint32_t) override { ++calls; }

  int calls = 0;
  uint64_t now = 0;
  uint64_t haltAt = 5'000'000;
};

DecodeEvent request(Opcode op, uint32_t tile, uint32_t addr, std::vector<uint8_t> payload) {
  static uint32_t seq = 100;
  DecodeEvent ev;
  ev.frame.opcode = static_cast<uint8_t>(op);
  ev.frame.seq = ++seq;
  ev.frame.tile = tile;
  ev.frame.addr = addr;
  ev.frame.payload = std::move(payload);
  return ev;
}

Status statusOf(const std::optional<Frame>& f) {
  return static_cast<Status>(f.value().status);
}

TEST(LinkServer, RepliesEchoSeqAndSetTheReplyBit) {
  RecordingDevice dev;
  LinkServer server(dev);
  const auto req = request(Opcode::Info, 0, 0, {});
  const auto rep = server.handle(req);
  ASSERT_TRUE(rep);
  EXPECT_EQ(rep->seq, req.frame.seq);
  EXPECT_EQ(rep->opcode, static_cast<uint8_t>(Opcode::Info) | kReplyBit);
  EXPECT_EQ(decodeInfo(rep->payload).tiles, 2u);
  EXPECT_EQ(decodeInfo(rep->payload).backend, "recording");
}

TEST(LinkMessages, InfoCarriesTheCounterWidthAndTheExtensions) {
  // Protocol version 2: counter bits and extensions after the max payload, the name last.
  ChipInfo in{{1, 4096, 6, false, true, 32, false, false, false}, "board"};
  const std::vector<uint8_t> p = encodeInfo(in);
  ASSERT_EQ(p.size(), 7 * 4 + 5u);
  EXPECT_EQ(p[0], kProtocolVersion);
  EXPECT_EQ(p[20], 32u);  // counter bits
  EXPECT_EQ(p[24], 2u);   // extensions: M only
  const ChipInfo out = decodeInfo(p);
  EXPECT_EQ(out.tiles, 1u);
  EXPECT_EQ(out.counterBits, 32u);
  EXPECT_FALSE(out.hasFpu);
  EXPECT_TRUE(out.hasMulDiv);
  EXPECT_FALSE(out.hasExchange);
  EXPECT_FALSE(out.hasCheckpoint);
  EXPECT_EQ(out.maxPayload, kMaxPayload);
  EXPECT_EQ(out.backend, "board");
  // Bits 2 and 3: exchange engines and checkpoint registers.
  in.hasExchange = true;
  EXPECT_EQ(encodeInfo(in)[24], 2u | 4u);
  EXPECT_TRUE(decodeInfo(encodeInfo(in)).hasExchange);
  EXPECT_FALSE(decodeInfo(encodeInfo(in)).hasCheckpoint);
  in.hasExchange = false;
  in.hasCheckpoint = true;
  EXPECT_EQ(encodeInfo(in)[24], 2u | 8u);
  EXPECT_FALSE(decodeInfo(encodeInfo(in)).hasExchange);
  EXPECT_TRUE(decodeInfo(encodeInfo(in)).hasCheckpoint);
  EXPECT_FALSE(decodeInfo(encodeInfo(in)).hasMatrixUnit);
  // Bit 4: the matrix unit.
  in.hasCheckpoint = false;
  in.hasMatrixUnit = true;
  EXPECT_EQ(encodeInfo(in)[24], 2u | 16u);
  EXPECT_TRUE(decodeInfo(encodeInfo(in)).hasMatrixUnit);
  EXPECT_FALSE(decodeInfo(encodeInfo(in)).hasCheckpoint);
  in.hasFpu = true;
  in.hasMulDiv = false;
  in.counterBits = 64;
  EXPECT_TRUE(decodeInfo(encodeInfo(in)).hasFpu);
  EXPECT_FALSE(decodeInfo(encodeInfo(in)).hasMulDiv);
  EXPECT_EQ(decodeInfo(encodeInfo(in)).counterBits, 64u);
  // A width the chips cannot have is a protocol error, not a silent misread.
  in.counterBits = 48;
  EXPECT_THROW(decodeInfo(encodeInfo(in)), Error);
}

TEST(LinkServer, OutOfRangeIsRefusedBeforeTheDeviceIsTouched) {
  RecordingDevice dev;
  LinkServer server(dev);
  const auto count = [](uint32_t n) { return PayloadWriter().u32(n).data(); };
  EXPECT_EQ(statusOf(server.handle(request(Opcode::MemRead, 2, 0, count(4)))), Status::OutOfRange);
  EXPECT_EQ(statusOf(server.handle(request(Opcode::MemRead, 0, 4093, count(4)))),
            Status::OutOfRange);
  EXPECT_EQ(statusOf(server.handle(request(Opcode::MemRead, 0, 0xFFFFFFFF, count(2)))),
            Status::OutOfRange);  // no 32-bit wrap-around
  EXPECT_EQ(statusOf(server.handle(request(Opcode::MemWrite, 0, 4095, {1, 2}))),
            Status::OutOfRange);
  EXPECT_EQ(statusOf(server.handle(request(Opcode::Stats, 5, 0, {}))), Status::OutOfRange);
  EXPECT_EQ(statusOf(server.handle(request(Opcode::Console, 2, 0, {}))), Status::OutOfRange);
  EXPECT_EQ(dev.calls, 0);
  EXPECT_EQ(statusOf(server.handle(request(Opcode::MemRead, 1, 4092, count(4)))), Status::Ok);
  EXPECT_EQ(dev.calls, 1);
}

TEST(LinkServer, BadRequestsGetErrorReplies) {
  RecordingDevice dev;
  LinkServer server(dev);
  EXPECT_EQ(statusOf(server.handle(request(static_cast<Opcode>(0x33), 0, 0, {}))),
            Status::UnknownOpcode);
  EXPECT_EQ(statusOf(server.handle(request(Opcode::CtrlWrite, 0, 0, {1}))), Status::DeviceError)
      << "short payload";
  const auto devErr = server.handle(request(Opcode::CtrlRead, 0, 0x200, {}));
  EXPECT_EQ(statusOf(devErr), Status::DeviceError);
  EXPECT_EQ(std::string(devErr->payload.begin(), devErr->payload.end()),
            "recording: no such register");
  DecodeEvent bad = request(Opcode::MemWrite, 0, 0, {});
  bad.kind = DecodeEvent::Kind::BadCrc;
  EXPECT_EQ(statusOf(server.handle(bad)), Status::BadCrc);
  EXPECT_EQ(statusOf(server.handle(request(Opcode::Wait, 0, 0, PayloadWriter().u32(0).data()))),
            Status::NotRunning);
  EXPECT_EQ(dev.calls, 0);
}

TEST(LinkServer, ConsoleIsPagedByOffset) {
  RecordingDevice dev;
  LinkServer server(dev);
  EXPECT_EQ(server.handle(request(Opcode::Console, 0, 0, {}))->payload.size(), kMaxPayload);
  EXPECT_EQ(server.handle(request(Opcode::Console, 0, kMaxPayload, {}))->payload.size(),
            70000 - kMaxPayload);
}

TEST(LinkServer, RunAdvancesInSlicesAndIsBusyMeanwhile) {
  RecordingDevice dev;
  LinkServer server(dev);
  EXPECT_EQ(statusOf(server.handle(request(Opcode::Run, 0, 0, PayloadWriter().u64(~0ull).data()))),
            Status::Ok);
  EXPECT_TRUE(server.running());
  EXPECT_EQ(statusOf(server.handle(request(Opcode::MemWrite, 0, 0, {1}))), Status::Busy);
  EXPECT_EQ(statusOf(server.handle(request(Opcode::Run, 0, 0, PayloadWriter().u64(1).data()))),
            Status::Busy);
  // A WAIT whose deadline has passed while the run continues answers "running".
  const auto t0 = LinkServer::Clock::now();
  EXPECT_FALSE(server.handle(request(Opcode::Wait, 0, 0, PayloadWriter().u32(10).data()), t0));
  EXPECT_FALSE(server.pollWait(t0));
  EXPECT_EQ(statusOf(server.pollWait(t0 + std::chrono::milliseconds(11))), Status::Running);
  int slices = 0;
  EXPECT_FALSE(server.handle(request(Opcode::Wait, 0, 0, PayloadWriter().u32(60000).data())));
  std::optional<Frame> done;
  while (!done) {
    server.step();
    ++slices;
    done = server.pollWait();
  }
  EXPECT_GT(slices, 1);
  const RunResult r = decodeRunResult(done->payload);
  EXPECT_EQ(r.reason, StopReason::Halted);
  EXPECT_EQ(r.cycles, dev.haltAt);
  EXPECT_EQ(r.exitCode, 7u);
  EXPECT_FALSE(server.running());
}

TEST(LinkServer, ACycleLimitSpanningSlicesStopsExactlyThere) {
  RecordingDevice dev;
  dev.now = 1000;  // a chip that already ran: the limit counts from here
  LinkServer server(dev);
  server.handle(request(Opcode::Run, 0, 0, PayloadWriter().u64(123'457).data()));
  server.handle(request(Opcode::Wait, 0, 0, PayloadWriter().u32(60000).data()));
  std::optional<Frame> done;
  while (!done) {
    server.step();
    done = server.pollWait();
  }
  const RunResult r = decodeRunResult(done->payload);
  EXPECT_EQ(r.reason, StopReason::MaxCycles);
  EXPECT_EQ(r.cycles, 1000u + 123'457u);
}

}  // namespace
}  // namespace tessera::link
