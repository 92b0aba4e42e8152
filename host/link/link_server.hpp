// LinkServer: executes decoded link requests on a tessera::Device, independent of the transport.
// Advance rule (docs/link-protocol.md, "When the device runs"): the device runs only between a RUN
// request and the end of that run, in slices of about kSliceTarget wall time, and the transport
// calls step() whenever no request is waiting, so a host that polls with WAIT never starves it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "frame.hpp"
#include "frame_codec.hpp"
#include "tessera/device.hpp"

namespace tessera::link {

/// Request executor for one device; one client at a time.
class LinkServer {
 public:
  using Clock = std::chrono::steady_clock;
  /// Wall time one run slice aims at (the slice's cycle count adapts to the device's speed).
  static constexpr std::chrono::milliseconds kSliceTarget{10};
  /// Longest WAIT a request may ask for.
  static constexpr uint32_t kMaxWaitMs = 60000;

  /// Serve dev (kept by reference).
  explicit LinkServer(Device& dev);
  /// Reply to a decoded or rejected frame; nothing when it is a WAIT that must wait (see
  /// pollWait) or a rejected frame whose header is not to be trusted enough to answer.
  std::optional<Frame> handle(const DecodeEvent& ev, Clock::time_point now = Clock::now());
  /// What INFO reports (the device's ChipInfo as the server saw it).
  const ChipInfo& info() const { return info_; }
  /// True while a run is in progress (step() has work).
  bool running() const { return running_; }
  /// True while a WAIT waits for its reply (the client is owed an answer, so it is not idle).
  bool waitPending() const { return wait_.has_value(); }
  /// Advance the run by one slice.
  void step();
  /// The reply to a pending WAIT, once its run ended or its deadline passed.
  std::optional<Frame> pollWait(Clock::time_point now = Clock::now());
  /// The client went away: forget its pending WAIT and abandon its run (the device keeps its
  /// state).
  void clientGone();

 private:
  Frame execute(const Frame& req, Clock::time_point now, bool& deferred);
  Frame finishWait();

  Device& dev_;
  ChipInfo info_;
  bool running_ = false;
  uint64_t remaining_ = 0;     // cycles the current run may still use
  uint64_t now_ = 0;           // the chip's cycle counter after the last slice
  RunResult result_;           // the last slice's result once the run ended
  std::string runError_;       // why the device failed during the run, if it did
  bool haveResult_ = false;    // a finished run's result not yet collected by WAIT
  uint64_t slice_ = 1000;      // cycles per slice, adapted to kSliceTarget
  std::optional<Frame> wait_;  // the pending WAIT request
  Clock::time_point waitDeadline_;
};

}  // namespace tessera::link
