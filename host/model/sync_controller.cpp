#include "sync_controller.hpp"

#include <algorithm>

#include "tessera/chip_params.h"

namespace tessera::model {
namespace {

SyncDecision stop(uint64_t cycle, StopReason reason) {
  SyncDecision d;
  d.kind = SyncDecision::Kind::Stop;
  d.cycle = cycle;
  d.reason = reason;
  return d;
}

SyncDecision fail(uint64_t cycle, const TrapInfo& error) {
  SyncDecision d;
  d.kind = SyncDecision::Kind::Fail;
  d.cycle = cycle;
  d.reason = StopReason::Trap;
  d.error = error;
  return d;
}

}  // namespace

SyncDecision decideSync(std::span<const BlockSummary> blocks, uint64_t now, uint64_t limit,
                        bool syncBreak) {
  uint64_t active = 0, lastArrival = 0, haltEnd = 0;
  uint32_t firstArrived = kNoTile, firstHalted = kNoTile, desc = 0, firstPc = 0;
  bool exchange = false;
  for (const BlockSummary& s : blocks) {
    active += s.active;
    lastArrival = std::max(lastArrival, s.lastArrival);
    haltEnd = std::max(haltEnd, s.haltEnd);
    if (firstArrived == kNoTile && s.firstArrived != kNoTile) {
      firstArrived = s.firstArrived;
      desc = s.firstDesc;
      firstPc = s.firstPc;
    }
    firstHalted = std::min(firstHalted, s.firstHalted);
    exchange = exchange || s.exchange != 0;
  }
  if (active != 0) {
    if (now >= limit) return stop(limit, StopReason::MaxCycles);
    return SyncDecision{};
  }
  // Every enabled tile has arrived at a sync or halted.
  if (firstArrived == kNoTile) return stop(haltEnd, StopReason::Halted);
  if (firstHalted != kNoTile) {
    // Detected when every tile has arrived or halted: max of a_t and h_t + 1.
    const uint64_t e = std::max(lastArrival, haltEnd);
    if (e >= limit) return stop(limit, StopReason::MaxCycles);
    return fail(e, TrapInfo{firstArrived, 0, firstPc, TESS_CAUSE_SYNC_HALTED, firstHalted});
  }
  if (lastArrival >= limit) return stop(limit, StopReason::MaxCycles);
  // The lowest arrived tile whose descriptor differs from the lowest arrived tile's.
  for (const BlockSummary& s : blocks) {
    if (s.firstArrived == kNoTile) continue;
    if (s.firstDesc != desc) {
      return fail(lastArrival,
                  TrapInfo{s.firstArrived, 0, s.firstPc, TESS_CAUSE_SYNC_MISMATCH, s.firstDesc});
    }
    if (s.mismatch != kNoTile) {
      return fail(lastArrival,
                  TrapInfo{s.mismatch, 0, s.mismatchPc, TESS_CAUSE_SYNC_MISMATCH, s.mismatchDesc});
    }
  }
  const uint64_t releaseCycle = lastArrival + TESS_SYNC_LATENCY;
  if (releaseCycle > limit) return stop(limit, StopReason::MaxCycles);
  SyncDecision d;
  d.cycle = releaseCycle;
  d.desc = desc;
  d.exchange = exchange;
  const bool host = (desc & TESS_SYNC_HOST_BIT) != 0;
  if (host || syncBreak) {
    d.kind = SyncDecision::Kind::Pending;
    d.reason = host ? StopReason::HostSync : StopReason::SyncBreak;
  } else {
    d.kind = SyncDecision::Kind::Release;
  }
  return d;
}

}  // namespace tessera::model
