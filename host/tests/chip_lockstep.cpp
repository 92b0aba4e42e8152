// Stop-by-stop comparison of two backends running one chip program.
#include "chip_lockstep.hpp"

#include <fmt/format.h>

#include "program_runner.hpp"
#include "retire_compare.hpp"
#include "tessera/chip_params.h"

namespace tessera::test {
namespace {

const char* reasonName(StopReason r) {
  switch (r) {
    case StopReason::Halted: return "halted";
    case StopReason::Trap: return "trap";
    case StopReason::MaxCycles: return "cycle limit";
    case StopReason::HostSync: return "host sync";
    case StopReason::SyncBreak: return "sync break";
  }
  return "?";
}

bool atSync(StopReason r) { return r == StopReason::HostSync || r == StopReason::SyncBreak; }

}  // namespace

std::optional<std::string> ChipLockstep::compareStop(const RunResult& ra, const RunResult& rb) {
  const std::string& na = a_.spec();
  const std::string& nb = b_.spec();
  auto differ = [&](const std::string& what, auto va, auto vb) -> std::optional<std::string> {
    if (va == vb) return std::nullopt;
    return fmt::format("{}: {} {} vs {} {}", what, na, va, nb, vb);
  };
  if (ra.reason != rb.reason) {
    return fmt::format("stop reason: {} {} vs {} {}", na, reasonName(ra.reason), nb, reasonName(rb.reason));
  }
  if (auto d = differ("cycles", ra.cycles, rb.cycles)) return d;
  if (auto d = differ("cycle counter", a_.cycleCounter(), b_.cycleCounter())) return d;
  if (atSync(ra.reason)) {
    if (auto d = differ("sync id", ra.hostSyncId, rb.hostSyncId)) return d;
  }
  if (auto d = differ("STATUS", a_.device().readControl(TESS_CR_STATUS), b_.device().readControl(TESS_CR_STATUS))) {
    return d;
  }
  if (ra.reason == StopReason::Trap) {
    if (auto d = differ("error", describeTrap(ra.trap), describeTrap(rb.trap))) return d;
  }
  // At a cycle limit the RTL may not have written back its last instructions (docs/tile.md).
  const bool exact = ra.reason != StopReason::MaxCycles;
  for (unsigned t = 0; t < a_.tiles(); ++t) {
    if (retirements_) {
      std::vector<RetireRecord> xa = a_.takeRecords(t), xb = b_.takeRecords(t);
      if (!exact) {
        const size_t n = std::min(xa.size(), xb.size());
        xa.resize(n);
        xb.resize(n);
      }
      if (auto d = compareRetireStreams(xa, xb, na, nb)) {
        return fmt::format("tile {}: retired instructions differ\n{}", t, d->report);
      }
    }
    const TileStats sa = a_.device().stats(t), sb = b_.device().stats(t);
    const std::string tile = fmt::format("tile {} ", t);
    if (auto d = differ(tile + "idle slots", sa.idleSlots, sb.idleSlots)) return d;
    if (auto d = differ(tile + "sync-wait cycles", sa.syncWaitCycles, sb.syncWaitCycles)) return d;
    if (auto d = differ(tile + "exchange cycles", sa.exchangeCycles, sb.exchangeCycles)) return d;
    if (auto d = differ(tile + "halted", sa.halted, sb.halted)) return d;
    if (exact) {
      if (auto d = differ(tile + "instructions", sa.instructions, sb.instructions)) return d;
      if (auto d = differ(tile + "exit code", sa.exitCode, sb.exitCode)) return d;
    }
    const std::vector<uint8_t> ma = a_.memory(t), mb = b_.memory(t);
    for (size_t i = 0; i + 4 <= ma.size(); i += 4) {
      if (std::equal(ma.begin() + i, ma.begin() + i + 4, mb.begin() + i)) continue;
      auto word = [i](const std::vector<uint8_t>& m) {
        return uint32_t(m[i]) | uint32_t(m[i + 1]) << 8 | uint32_t(m[i + 2]) << 16 | uint32_t(m[i + 3]) << 24;
      };
      return fmt::format("tile {} memory at 0x{:08x}: {} 0x{:08x} vs {} 0x{:08x}", t, i, na, word(ma), nb,
                         word(mb));
    }
    if (ra.reason == StopReason::Halted || ra.reason == StopReason::Trap) {
      if (auto d = differ(tile + "console", fmt::format("\"{}\"", a_.device().console(t)),
                          fmt::format("\"{}\"", b_.device().console(t)))) {
        return d;
      }
    }
  }
  return std::nullopt;
}

ChipLockstepReport ChipLockstep::run(const std::string& path, uint64_t maxCycles) {
  ChipLockstepReport report;
  const ElfImage imageA = a_.load(path, maxCycles);
  const ElfImage imageB = b_.load(path, maxCycles);
  for (ChipSession* s : {&a_, &b_}) {
    s->device().setSyncBreak(true);
    if (retirements_) s->recordRetirements();
  }
  for (;;) {
    report.a = a_.step();
    report.b = b_.step();
    ++report.stops;
    if (auto d = compareStop(report.a, report.b)) {
      report.divergence = fmt::format("at stop {} ({} {} of {}, cycle {}): {}", report.stops,
                                      reasonName(report.a.reason), report.a.hostSyncId, a_.spec(),
                                      report.a.cycles, *d);
      break;
    }
    if (!atSync(report.a.reason)) break;
    if (report.a.reason == StopReason::HostSync && onHostSync_) {
      onHostSync_(a_.device(), imageA, report.a.hostSyncId, report.hostFailures);
      onHostSync_(b_.device(), imageB, report.b.hostSyncId, report.hostFailures);
    }
  }
  for (ChipSession* s : {&a_, &b_}) s->device().setRetireSink({});
  return report;
}

}  // namespace tessera::test
