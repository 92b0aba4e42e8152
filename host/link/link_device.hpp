// LinkDevice: the whole tessera::Device interface over the link protocol on any Transport.
// tcp:// and serial: device strings open one through makeTcpDevice / makeSerialDevice.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "frame.hpp"
#include "frame_codec.hpp"
#include "tessera/device.hpp"
#include "transport.hpp"

namespace tessera::link {

/// A remote device behind a tessera-server; every wait is bounded by the timeout.
class LinkDevice : public Device {
 public:
  /// Talk over transport; name ("tcp://127.0.0.1:5555") prefixes errors; timeout bounds each
  /// reply; a non-empty token is presented (AUTH) before anything else.
  LinkDevice(std::unique_ptr<Transport> transport, std::string name,
             std::chrono::milliseconds timeout, const std::string& token = {});
  ChipInfo info() const override { return info_; }
  void reset() override;
  void writeMemory(unsigned tile, uint32_t addr, std::span<const uint8_t> data) override;
  void readMemory(unsigned tile, uint32_t addr, std::span<uint8_t> data) override;
  RunResult run(uint64_t maxCycles) override;
  std::string console(unsigned tile) const override;
  TileStats stats(unsigned tile) const override;
  /// Refused for a non-empty sink: retirement records are not carried over the link.
  void setRetireSink(std::function<void(const RetireRecord&)> sink) override;
  uint32_t readControl(uint32_t offset) override;
  void writeControl(uint32_t offset, uint32_t value) override;

  /// Largest payload the device takes or sends in one frame (its INFO reply); transfers are split
  /// to fit (a board's UART bridge buffers far less than the protocol's 64 KiB).
  size_t maxPayload() const { return maxPayload_; }

  /// How long one WAIT asks the server to hold its reply while a run continues.
  static constexpr uint32_t kWaitSliceMs = 250;

 private:
  Frame transact(Opcode op, uint32_t tile, uint32_t addr, std::vector<uint8_t> payload,
                 std::chrono::milliseconds extra = {}) const;

  std::unique_ptr<Transport> transport_;
  std::string name_;
  std::chrono::milliseconds timeout_;
  mutable FrameCodec codec_;
  mutable uint32_t seq_;
  ChipInfo info_;
  size_t maxPayload_ = kMaxPayload;
};

/// Open "tcp://HOST:PORT[?timeout_ms=N][&token_file=PATH]" (token also from $TESSERA_TOKEN).
std::unique_ptr<Device> makeTcpDevice(const std::string& spec);
/// Open "serial:PATH[?baud=N][&timeout_ms=N]".
std::unique_ptr<Device> makeSerialDevice(const std::string& spec);

}  // namespace tessera::link
