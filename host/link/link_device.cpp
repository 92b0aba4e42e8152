// Requests are strictly one at a time: send, then read until the reply with the same sequence
// number (stale replies of an earlier client on a shared serial line are skipped).
#include "link_device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <random>

#include "messages.hpp"
#include "tessera/error.hpp"

namespace tessera::link {
namespace {

const char* opName(Opcode op) {
  switch (op) {
    case Opcode::Info:
      return "INFO";
    case Opcode::MemRead:
      return "MEM_READ";
    case Opcode::MemWrite:
      return "MEM_WRITE";
    case Opcode::CtrlRead:
      return "CTRL_READ";
    case Opcode::CtrlWrite:
      return "CTRL_WRITE";
    case Opcode::Run:
      return "RUN";
    case Opcode::Wait:
      return "WAIT";
    case Opcode::Reset:
      return "RESET";
    case Opcode::Stats:
      return "STATS";
    case Opcode::Console:
      return "CONSOLE";
    case Opcode::Auth:
      return "AUTH";
  }
  return "?";
}

}  // namespace

LinkDevice::LinkDevice(std::unique_ptr<Transport> transport, std::string name,
                       std::chrono::milliseconds timeout, const std::string& token)
    : transport_(std::move(transport)),
      name_(std::move(name)),
      timeout_(timeout),
      seq_(std::random_device{}()) {
  if (!token.empty())
    transact(Opcode::Auth, 0, 0, std::vector<uint8_t>(token.begin(), token.end()));
  const Frame infoReply = transact(Opcode::Info, 0, 0, {});
  info_ = decodeInfo(infoReply.payload);
  info_.backend = "link:" + info_.backend;
  maxPayload_ = info_.maxPayload;
  if (maxPayload_ < 128 || maxPayload_ > kMaxPayload)
    throw Error(fmt::format("{}: the device reports a maximum payload of {} bytes (128..{})", name_,
                            maxPayload_, kMaxPayload));
}

Frame LinkDevice::transact(Opcode op, uint32_t tile, uint32_t addr, std::vector<uint8_t> payload,
                           std::chrono::milliseconds extra) const {
  Frame req;
  req.opcode = static_cast<uint8_t>(op);
  req.seq = ++seq_;
  req.tile = tile;
  req.addr = addr;
  req.payload = std::move(payload);
  transport_->write(FrameCodec::encode(req), timeout_);

  const auto deadline = std::chrono::steady_clock::now() + timeout_ + extra;
  // Our reply, if the decoder holds it; corrupted and stale frames are skipped.
  auto takeReply = [&]() -> std::optional<Frame> {
    while (auto ev = codec_.poll()) {
      Frame& f = ev->frame;
      if (ev->kind != DecodeEvent::Kind::Frame) continue;
      if (f.seq != req.seq || f.opcode != (req.opcode | kReplyBit)) continue;
      if (f.status == static_cast<uint16_t>(Status::Ok) ||
          f.status == static_cast<uint16_t>(Status::Running))
        return std::move(f);
      std::string why(f.payload.begin(), f.payload.end());
      // A board's Busy carries no reason (its bridge has no text): say what holds it and how to
      // free it. A server's Busy names its reason itself (its own client's run, another client).
      if (f.status == static_cast<uint16_t>(Status::Busy) && why.empty()) {
        why =
            "the device is running a program; a run started by another client, or by one that "
            "went away, holds it until it ends or the device is reset (tessera-run --reset, "
            "Device::reset)";
      }
      throw Error(fmt::format("{}: {} tile {} address 0x{:x}: {}: {}", name_, opName(op), tile,
                              addr, statusName(f.status), why));
    }
    return std::nullopt;
  };
  uint8_t buf[4096];
  for (;;) {
    if (auto f = takeReply()) return std::move(*f);
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      throw Error(fmt::format("{}: no reply to {} within {} ms", name_, opName(op),
                              (timeout_ + extra).count()));
    const size_t n = transport_->readSome(buf, left);
    for (size_t off = 0; off < n;) {
      off += codec_.feed(std::span<const uint8_t>(buf + off, n - off));
      // A full decoder holds a complete frame; bytes after our reply would be stray.
      if (off < n)
        if (auto f = takeReply()) return std::move(*f);
    }
  }
}

void LinkDevice::reset() {
  transact(Opcode::Reset, 0, 0, {});
}

void LinkDevice::writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) {
  for (size_t off = 0; off < data.size(); off += maxPayload_) {
    const size_t n = std::min(maxPayload_, data.size() - off);
    const auto chunk = data.subspan(off, n);
    transact(Opcode::MemWrite, tile, static_cast<uint32_t>(addr + off),
             std::vector<uint8_t>(chunk.begin(), chunk.end()));
  }
}

void LinkDevice::readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) {
  for (size_t off = 0; off < data.size(); off += maxPayload_) {
    const size_t n = std::min(maxPayload_, data.size() - off);
    const Frame f = transact(Opcode::MemRead, tile, static_cast<uint32_t>(addr + off),
                             PayloadWriter().u32(static_cast<uint32_t>(n)).data());
    if (f.payload.size() != n) throw Error(name_ + ": MEM_READ reply of the wrong length");
    std::copy(f.payload.begin(), f.payload.end(), data.begin() + static_cast<std::ptrdiff_t>(off));
  }
}

RunResult LinkDevice::run(uint64_t maxCycles) {
  transact(Opcode::Run, 0, 0, PayloadWriter().u64(maxCycles).data());
  for (;;) {
    const Frame f = transact(Opcode::Wait, 0, 0, PayloadWriter().u32(kWaitSliceMs).data(),
                             std::chrono::milliseconds(kWaitSliceMs));
    if (f.status == static_cast<uint16_t>(Status::Ok)) return decodeRunResult(f.payload);
  }
}

std::string LinkDevice::console(unsigned tile) const {
  std::string text;
  for (;;) {
    const Frame f = transact(Opcode::Console, tile, static_cast<uint32_t>(text.size()), {});
    text.append(f.payload.begin(), f.payload.end());
    if (f.payload.size() < maxPayload_) return text;
  }
}

TileStats LinkDevice::stats(unsigned tile) const {
  return decodeStats(transact(Opcode::Stats, tile, 0, {}).payload);
}

void LinkDevice::setRetireSink(std::function<void(const RetireRecord&)> sink) {
  if (sink)
    throw Error(name_ +
                ": retirement traces are not carried over the link; use an "
                "in-process device (model, rtl) for retire sinks");
}

uint32_t LinkDevice::readControl(uint32_t offset) {
  return PayloadReader(transact(Opcode::CtrlRead, 0, offset, {}).payload).u32();
}

void LinkDevice::writeControl(uint32_t offset, uint32_t value) {
  transact(Opcode::CtrlWrite, 0, offset, PayloadWriter().u32(value).data());
}

}  // namespace tessera::link
