// Every range check happens here, before the device is touched (docs/link-protocol.md).
#include "link_server.hpp"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

#include "messages.hpp"
#include "tessera/error.hpp"

namespace tessera::link {
namespace {

Frame reply(const Frame& req, Status status, std::vector<uint8_t> payload = {}) {
  Frame out;
  out.opcode = static_cast<uint8_t>(req.opcode | kReplyBit);
  out.status = static_cast<uint16_t>(status);
  out.seq = req.seq;
  out.tile = req.tile;
  out.addr = req.addr;
  out.payload = std::move(payload);
  if (out.payload.size() > kMaxPayload) out.payload.resize(kMaxPayload);
  return out;
}

Frame errorReply(const Frame& req, Status status, const std::string& message) {
  return reply(req, status, std::vector<uint8_t>(message.begin(), message.end()));
}

}  // namespace

LinkServer::LinkServer(Device& dev) : dev_(dev), info_(dev.info()) {}

std::optional<Frame> LinkServer::handle(const DecodeEvent& ev, Clock::time_point now) {
  switch (ev.kind) {
    case DecodeEvent::Kind::BadCrc:
      // The header may be corrupt too; answering tells an honest client its request was lost.
      return errorReply(ev.frame, Status::BadCrc, "request failed its CRC");
    case DecodeEvent::Kind::TooLong:
      return errorReply(ev.frame, Status::TooLong, "payload longer than 65536 bytes");
    case DecodeEvent::Kind::BadVersion:
      return errorReply(ev.frame, Status::BadVersion,
                        "server speaks link protocol version " + std::to_string(kProtocolVersion));
    case DecodeEvent::Kind::Frame:
      break;
  }
  bool deferred = false;
  Frame out = execute(ev.frame, now, deferred);
  if (deferred) return pollWait(now);
  return out;
}

Frame LinkServer::execute(const Frame& req, Clock::time_point now, bool& deferred) {
  if (req.opcode & kReplyBit)
    return errorReply(req, Status::UnknownOpcode, "a reply sent as request");
  const auto op = static_cast<Opcode>(req.opcode);
  const bool tileOk = req.tile < info_.tiles;
  auto needIdle = [&]() { return running_ || wait_; };
  try {
    switch (op) {
      case Opcode::Info:
        return reply(req, Status::Ok, encodeInfo(info_));
      case Opcode::Auth:
        // The session checks tokens; one that reaches here needs none or has presented it.
        return reply(req, Status::Ok);
      case Opcode::MemRead: {
        if (needIdle()) return errorReply(req, Status::Busy, "memory read during a run");
        const uint32_t count = PayloadReader(req.payload).u32();
        if (!tileOk || count > kMaxPayload ||
            uint64_t{req.addr} + count > uint64_t{info_.tileMemBytes})
          return errorReply(req, Status::OutOfRange, "tile or address range outside the chip");
        std::vector<uint8_t> data(count);
        dev_.readMemory(req.tile, req.addr, data);
        return reply(req, Status::Ok, std::move(data));
      }
      case Opcode::MemWrite:
        if (needIdle()) return errorReply(req, Status::Busy, "memory write during a run");
        if (!tileOk || uint64_t{req.addr} + req.payload.size() > uint64_t{info_.tileMemBytes})
          return errorReply(req, Status::OutOfRange, "tile or address range outside the chip");
        dev_.writeMemory(req.tile, req.addr, req.payload);
        return reply(req, Status::Ok);
      case Opcode::CtrlRead:
        if (needIdle()) return errorReply(req, Status::Busy, "control read during a run");
        return reply(req, Status::Ok, PayloadWriter().u32(dev_.readControl(req.addr)).data());
      case Opcode::CtrlWrite: {
        if (needIdle()) return errorReply(req, Status::Busy, "control write during a run");
        const uint32_t value = PayloadReader(req.payload).u32();
        dev_.writeControl(req.addr, value);
        return reply(req, Status::Ok);
      }
      case Opcode::Run:
        if (needIdle()) return errorReply(req, Status::Busy, "a run is already in progress");
        remaining_ = PayloadReader(req.payload).u64();
        // RunResult::cycles is the chip's cycle counter, so slices are measured against it.
        now_ = dev_.readControl(TESS_CR_CYCLE_LO) |
               (uint64_t{dev_.readControl(TESS_CR_CYCLE_HI)} << 32);
        result_ = RunResult{};
        runError_.clear();
        running_ = true;
        haveResult_ = false;
        return reply(req, Status::Ok);
      case Opcode::Wait: {
        if (wait_) return errorReply(req, Status::Busy, "a WAIT is already pending");
        if (!running_ && !haveResult_)
          return errorReply(req, Status::NotRunning, "nothing to wait for");
        const uint32_t ms = std::min(PayloadReader(req.payload).u32(), kMaxWaitMs);
        wait_ = req;
        waitDeadline_ = now + std::chrono::milliseconds(ms);
        deferred = true;
        return Frame{};
      }
      case Opcode::Reset:
        if (needIdle()) return errorReply(req, Status::Busy, "reset during a run");
        dev_.reset();
        haveResult_ = false;
        return reply(req, Status::Ok);
      case Opcode::Stats:
        if (needIdle()) return errorReply(req, Status::Busy, "stats during a run");
        if (!tileOk) return errorReply(req, Status::OutOfRange, "tile outside the chip");
        return reply(req, Status::Ok, encodeStats(dev_.stats(req.tile)));
      case Opcode::Console: {
        if (needIdle()) return errorReply(req, Status::Busy, "console during a run");
        if (!tileOk) return errorReply(req, Status::OutOfRange, "tile outside the chip");
        const std::string text = dev_.console(req.tile);
        const size_t from = std::min<size_t>(req.addr, text.size());
        const size_t n = std::min(text.size() - from, kMaxPayload);
        return reply(req, Status::Ok,
                     std::vector<uint8_t>(text.begin() + from, text.begin() + from + n));
      }
    }
  } catch (const std::exception& e) {
    // Device refusals (bad control offset, ...) and short request payloads.
    return errorReply(req, Status::DeviceError, e.what());
  }
  return errorReply(req, Status::UnknownOpcode, "unknown opcode " + std::to_string(req.opcode));
}

void LinkServer::step() {
  if (!running_) return;
  const uint64_t n = std::min(slice_, remaining_);
  const auto t0 = Clock::now();
  RunResult r;
  try {
    r = dev_.run(n);
  } catch (const std::exception& e) {
    // A device failure ends the run; the WAIT that collects it reports the message.
    runError_ = e.what();
    running_ = false;
    haveResult_ = true;
    return;
  }
  const auto took = Clock::now() - t0;
  remaining_ -= std::min(remaining_, r.cycles - std::min(r.cycles, now_));
  now_ = r.cycles;
  // Adapt the slice so one step takes about kSliceTarget (bounded growth/shrink per step).
  if (took < kSliceTarget / 2)
    slice_ = std::min<uint64_t>(slice_ * 2, uint64_t{1} << 40);
  else if (took > kSliceTarget * 2 && slice_ > 64)
    slice_ /= 2;
  if (r.reason == StopReason::MaxCycles && remaining_ > 0) return;  // the slice ended, not the run
  result_ = r;
  running_ = false;
  haveResult_ = true;
}

Frame LinkServer::finishWait() {
  Frame req = *wait_;
  wait_.reset();
  if (running_) return reply(req, Status::Running);
  haveResult_ = false;
  if (!runError_.empty()) return errorReply(req, Status::DeviceError, std::exchange(runError_, {}));
  return reply(req, Status::Ok, encodeRunResult(result_));
}

std::optional<Frame> LinkServer::pollWait(Clock::time_point now) {
  if (!wait_) return std::nullopt;
  if (running_ && now < waitDeadline_) return std::nullopt;
  return finishWait();
}

void LinkServer::clientGone() {
  wait_.reset();
  running_ = false;
  haveResult_ = false;
}

}  // namespace tessera::link
