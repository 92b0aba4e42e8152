#include "lockstep.hpp"

#include <fmt/format.h>

#include "program_loader.hpp"

namespace tessera {
namespace {

LockstepSide runSide(const std::string& path, const std::string& spec, uint64_t maxCycles) {
  LockstepSide side;
  side.device = spec;
  auto dev = openDevice(spec);
  loadProgram(*dev, path);
  dev->setRetireSink([&side](const RetireRecord& r) { side.records.push_back(r); });
  side.result = dev->run(maxCycles);
  dev->setRetireSink({});
  side.stats = dev->stats(0);
  side.console = dev->console(0);
  return side;
}

const char* reasonName(StopReason r) {
  switch (r) {
    case StopReason::Halted: return "halted";
    case StopReason::Trap: return "trap";
    case StopReason::MaxCycles: return "cycle limit";
  }
  return "?";
}

template <typename T>
void compareField(std::vector<std::string>& out, const char* what, const T& a, const T& b,
                  const LockstepReport& r) {
  if (a == b) return;
  out.push_back(fmt::format("{}: {} {} vs {} {}", what, r.a.device, a, r.b.device, b));
}

}  // namespace

std::string LockstepReport::describe() const {
  std::string out;
  if (agree()) {
    return fmt::format("{} and {} agree: {} retirements, {} cycles, {}{}", a.device, b.device,
                       a.records.size(), a.result.cycles, reasonName(a.result.reason),
                       a.result.reason == StopReason::Trap ? ": " + describeTrap(a.result.trap)
                                                           : "");
  }
  if (divergence) out += divergence->report;
  for (const std::string& m : endMismatches) out += "end state differs: " + m + "\n";
  return out;
}

LockstepReport runLockstep(const std::string& path, const std::string& a, const std::string& b,
                           uint64_t maxCycles) {
  LockstepReport r;
  r.a = runSide(path, a, maxCycles);
  r.b = runSide(path, b, maxCycles);
  // A run cut by the cycle limit may leave the RTL's last retirements unreported (docs/tile.md,
  // "Stopping at a cycle limit"): compare only what both sides retired before the earlier end.
  std::vector<RetireRecord> ra = r.a.records, rb = r.b.records;
  if (r.a.result.reason == StopReason::MaxCycles || r.b.result.reason == StopReason::MaxCycles) {
    const size_t n = std::min(ra.size(), rb.size());
    ra.resize(n);
    rb.resize(n);
  }
  r.divergence = compareRetireStreams(ra, rb, a, b);
  auto& m = r.endMismatches;
  compareField(m, "stop reason", std::string(reasonName(r.a.result.reason)),
               std::string(reasonName(r.b.result.reason)), r);
  compareField(m, "cycles", r.a.result.cycles, r.b.result.cycles, r);
  compareField(m, "idle slots", r.a.stats.idleSlots, r.b.stats.idleSlots, r);
  if (r.a.result.reason == StopReason::Halted) {
    compareField(m, "exit code", r.a.result.exitCode, r.b.result.exitCode, r);
  }
  if (r.a.result.reason == StopReason::Trap) {
    compareField(m, "trap", describeTrap(r.a.result.trap), describeTrap(r.b.result.trap), r);
  }
  if (r.a.result.reason != StopReason::MaxCycles) {
    compareField(m, "instructions", r.a.stats.instructions, r.b.stats.instructions, r);
  }
  compareField(m, "console", fmt::format("\"{}\"", r.a.console), fmt::format("\"{}\"", r.b.console),
               r);
  return r;
}

}  // namespace tessera
