// Fixed layouts, so a reply of the wrong size is a protocol error, never a silent misread.
#include "messages.hpp"

#include <fmt/format.h>

#include "little_endian.hpp"
#include "tessera/error.hpp"

namespace tessera::link {

PayloadWriter& PayloadWriter::u32(uint32_t v) {
  appendLe32(out_, v);
  return *this;
}

PayloadWriter& PayloadWriter::u64(uint64_t v) {
  appendLe64(out_, v);
  return *this;
}

PayloadWriter& PayloadWriter::bytes(std::span<const uint8_t> b) {
  out_.insert(out_.end(), b.begin(), b.end());
  return *this;
}

uint32_t PayloadReader::u32() {
  if (pos_ + 4 > p_.size()) throw Error("link: reply payload too short");
  const uint32_t v = loadLe32(p_.data() + pos_);
  pos_ += 4;
  return v;
}

uint64_t PayloadReader::u64() {
  const uint64_t lo = u32();
  return lo | (static_cast<uint64_t>(u32()) << 32);
}

std::vector<uint8_t> encodeInfo(const ChipInfo& info) {
  PayloadWriter w;
  w.u32(uint32_t{kProtocolVersion}).u32(info.tiles).u32(info.tileMemBytes).u32(info.contexts);
  w.u32(static_cast<uint32_t>(kMaxPayload)).u32(info.counterBits);
  w.u32((info.hasFpu ? kInfoExtFpu : 0u) | (info.hasMulDiv ? kInfoExtMulDiv : 0u) |
        (info.hasExchange ? kInfoExtExchange : 0u) |
        (info.hasCheckpoint ? kInfoExtCheckpoint : 0u) |
        (info.hasMatrixUnit ? kInfoExtMatrix : 0u));
  w.bytes(std::span(reinterpret_cast<const uint8_t*>(info.backend.data()), info.backend.size()));
  return std::move(w.data());
}

ChipInfo decodeInfo(std::span<const uint8_t> payload) {
  PayloadReader r(payload);
  ChipInfo info;
  r.u32();  // protocol version, also in every header
  info.tiles = r.u32();
  info.tileMemBytes = r.u32();
  info.contexts = r.u32();
  info.maxPayload = r.u32();  // checked by LinkDevice
  info.counterBits = r.u32();
  if (info.counterBits != 32 && info.counterBits != 64)
    throw Error(
        fmt::format("link: INFO reports tile counters of {} bits (32 or 64)", info.counterBits));
  const uint32_t extensions = r.u32();
  info.hasFpu = (extensions & kInfoExtFpu) != 0;
  info.hasMulDiv = (extensions & kInfoExtMulDiv) != 0;
  info.hasExchange = (extensions & kInfoExtExchange) != 0;
  info.hasCheckpoint = (extensions & kInfoExtCheckpoint) != 0;
  info.hasMatrixUnit = (extensions & kInfoExtMatrix) != 0;
  const auto rest = r.rest();
  info.backend.assign(rest.begin(), rest.end());
  return info;
}

std::vector<uint8_t> encodeRunResult(const RunResult& r) {
  PayloadWriter w;
  w.u32(static_cast<uint32_t>(r.reason)).u64(r.cycles).u32(r.exitCode);
  w.u32(r.trap.tile).u32(r.trap.context).u32(r.trap.pc).u32(r.trap.cause).u32(r.trap.value);
  w.u32(r.hostSyncId);
  return std::move(w.data());
}

RunResult decodeRunResult(std::span<const uint8_t> payload) {
  PayloadReader r(payload);
  RunResult out;
  const uint32_t reason = r.u32();
  if (reason > static_cast<uint32_t>(StopReason::SyncBreak)) throw Error("link: bad stop reason");
  out.reason = static_cast<StopReason>(reason);
  out.cycles = r.u64();
  out.exitCode = r.u32();
  out.trap.tile = r.u32();
  out.trap.context = r.u32();
  out.trap.pc = r.u32();
  out.trap.cause = r.u32();
  out.trap.value = r.u32();
  out.hostSyncId = r.u32();
  return out;
}

std::vector<uint8_t> encodeStats(const TileStats& s) {
  PayloadWriter w;
  w.u64(s.cycles).u64(s.instructions);
  for (uint64_t c : s.contextInstructions) w.u64(c);
  w.u64(s.idleSlots).u64(s.syncWaitCycles).u64(s.exchangeCycles);
  w.u32(s.halted ? 1 : 0).u32(s.exitCode);
  return std::move(w.data());
}

TileStats decodeStats(std::span<const uint8_t> payload) {
  PayloadReader r(payload);
  TileStats s;
  s.cycles = r.u64();
  s.instructions = r.u64();
  for (uint64_t& c : s.contextInstructions) c = r.u64();
  s.idleSlots = r.u64();
  s.syncWaitCycles = r.u64();
  s.exchangeCycles = r.u64();
  s.halted = r.u32() != 0;
  s.exitCode = r.u32();
  return s;
}

}  // namespace tessera::link
