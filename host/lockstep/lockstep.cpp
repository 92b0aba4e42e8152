#include "lockstep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <mutex>

#include "program_loader.hpp"

namespace tessera {
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

template <typename T>
void compareField(std::vector<std::string>& out, const std::string& what, const T& a, const T& b,
                  const LockstepReport& r) {
  if (a == b) return;
  out.push_back(fmt::format("{}: {} {} vs {} {}", what, r.a.device, a, r.b.device, b));
}

// The first word where two tiles' memories differ, if any.
std::optional<std::string> compareMemory(Device& a, Device& b) {
  const ChipInfo info = a.info();
  if (b.info().tileMemBytes != info.tileMemBytes || b.info().tiles != info.tiles) {
    return fmt::format("chip shapes differ: {} x {} bytes vs {} x {} bytes", info.tiles,
                       info.tileMemBytes, b.info().tiles, b.info().tileMemBytes);
  }
  std::vector<uint8_t> ma(info.tileMemBytes), mb(info.tileMemBytes);
  for (unsigned t = 0; t < info.tiles; ++t) {
    a.readMemory(t, 0, ma);
    b.readMemory(t, 0, mb);
    if (ma == mb) continue;
    const auto diff = std::mismatch(ma.begin(), ma.end(), mb.begin());
    const uint32_t addr = static_cast<uint32_t>(diff.first - ma.begin()) & ~3u;
    auto word = [&](const std::vector<uint8_t>& m) {
      return uint32_t{m[addr]} | uint32_t{m[addr + 1]} << 8 | uint32_t{m[addr + 2]} << 16 |
             uint32_t{m[addr + 3]} << 24;
    };
    return fmt::format("tile {} memory differs first at 0x{:08x}: 0x{:08x} vs 0x{:08x}", t, addr,
                       word(ma), word(mb));
  }
  return std::nullopt;
}

void compareStats(std::vector<std::string>& m, const std::string& where, unsigned tile,
                  const TileStats& a, const TileStats& b, bool exact, const LockstepReport& r) {
  const std::string p = fmt::format("{}tile {} ", where, tile);
  compareField(m, p + "idle slots", a.idleSlots, b.idleSlots, r);
  compareField(m, p + "sync-wait cycles", a.syncWaitCycles, b.syncWaitCycles, r);
  compareField(m, p + "exchange cycles", a.exchangeCycles, b.exchangeCycles, r);
  compareField(m, p + "halted", a.halted, b.halted, r);
  if (exact) {
    compareField(m, p + "instructions", a.instructions, b.instructions, r);
    compareField(m, p + "exit code", a.exitCode, b.exitCode, r);
  }
}

LockstepReport runBoth(const ProgramLoader& load, const std::string& a, const std::string& b,
                       const LockstepOptions& o, unsigned tiles) {
  LockstepReport r;
  r.a.device = a;
  r.b.device = b;
  DeviceOptions dopt;
  dopt.tiles = tiles;
  dopt.threads = o.threadsA;
  auto da = openDevice(a, dopt);
  dopt.threads = o.threadsB;
  auto db = openDevice(b, dopt);
  load(*da);
  load(*db);
  da->setSyncBreak(o.syncBreak);
  db->setSyncBreak(o.syncBreak);
  // A model on several host threads calls the sink from each of them.
  std::mutex recordsMutex;
  da->setRetireSink([&](const RetireRecord& rec) {
    std::lock_guard lock(recordsMutex);
    r.a.records.push_back(rec);
  });
  db->setRetireSink([&](const RetireRecord& rec) {
    std::lock_guard lock(recordsMutex);
    r.b.records.push_back(rec);
  });
  auto& m = r.endMismatches;
  const unsigned n = da->info().tiles;
  for (;;) {
    r.a.result = da->run(o.maxCycles - r.a.result.cycles);
    r.b.result = db->run(o.maxCycles - r.b.result.cycles);
    const bool atSync = r.a.result.reason == StopReason::SyncBreak ||
                        r.a.result.reason == StopReason::HostSync;
    const std::string where =
        atSync ? fmt::format("at sync stop {} (cycle {}): ", r.a.stops + 1, r.a.result.cycles)
               : std::string();
    compareField(m, where + "stop reason", std::string(reasonName(r.a.result.reason)),
                 std::string(reasonName(r.b.result.reason)), r);
    compareField(m, where + "cycles", r.a.result.cycles, r.b.result.cycles, r);
    if (!m.empty() || !atSync) break;
    r.a.stops++;
    r.b.stops++;
    compareField(m, where + "sync id", r.a.result.hostSyncId, r.b.result.hostSyncId, r);
    compareField(m, where + "STATUS", da->readControl(TESS_CR_STATUS),
                 db->readControl(TESS_CR_STATUS), r);
    if (n == db->info().tiles) {
      for (unsigned t = 0; t < n; ++t) {
        compareStats(m, where, t, da->stats(t), db->stats(t), true, r);
      }
    }
    if (auto diff = compareMemory(*da, *db)) m.push_back(where + *diff);
    if (!m.empty()) break;
    if (r.a.result.reason == StopReason::HostSync && o.onHostSync) {
      o.onHostSync(*da, r.a.result.hostSyncId);
      o.onHostSync(*db, r.b.result.hostSyncId);
    }
  }
  da->setRetireSink({});
  db->setRetireSink({});
  for (unsigned t = 0; t < n; ++t) {
    r.a.tileStats.push_back(da->stats(t));
    r.a.consoles.push_back(da->console(t));
  }
  for (unsigned t = 0; t < db->info().tiles; ++t) {
    r.b.tileStats.push_back(db->stats(t));
    r.b.consoles.push_back(db->console(t));
  }
  r.a.stats = r.a.tileStats[0];
  r.a.console = r.a.consoles[0];
  r.b.stats = r.b.tileStats[0];
  r.b.console = r.b.consoles[0];
  if (!m.empty()) return r;  // stopped at a sync mismatch: the end state is not comparable

  // Per tile: a run cut by the cycle limit may leave the RTL's last retirements unreported
  // (docs/tile.md, "Stopping at a cycle limit"): compare only what both sides retired.
  const bool cut = r.a.result.reason == StopReason::MaxCycles ||
                   r.b.result.reason == StopReason::MaxCycles;
  for (unsigned t = 0; t < n && !r.divergence; ++t) {
    std::vector<RetireRecord> ra, rb;
    std::copy_if(r.a.records.begin(), r.a.records.end(), std::back_inserter(ra),
                 [t](const RetireRecord& rec) { return rec.tile == t; });
    std::copy_if(r.b.records.begin(), r.b.records.end(), std::back_inserter(rb),
                 [t](const RetireRecord& rec) { return rec.tile == t; });
    if (cut) {
      const size_t k = std::min(ra.size(), rb.size());
      ra.resize(k);
      rb.resize(k);
    }
    r.divergence = compareRetireStreams(ra, rb, a, b);
    if (r.divergence && n > 1) {
      r.divergence->report = fmt::format("tile {}: {}", t, r.divergence->report);
    }
  }
  if (r.a.result.reason == StopReason::Halted) {
    compareField(m, "exit code", r.a.result.exitCode, r.b.result.exitCode, r);
  }
  if (r.a.result.reason == StopReason::Trap) {
    compareField(m, "trap", describeTrap(r.a.result.trap), describeTrap(r.b.result.trap), r);
  }
  if (r.b.tileStats.size() == n) {
    for (unsigned t = 0; t < n; ++t) {
      compareStats(m, "", t, r.a.tileStats[t], r.b.tileStats[t],
                   r.a.result.reason != StopReason::MaxCycles, r);
      compareField(m, fmt::format("tile {} console", t), fmt::format("\"{}\"", r.a.consoles[t]),
                   fmt::format("\"{}\"", r.b.consoles[t]), r);
    }
  }
  if (r.a.result.reason != StopReason::MaxCycles) {
    if (auto diff = compareMemory(*da, *db)) m.push_back("at the end: " + *diff);
  }
  return r;
}

}  // namespace

std::string LockstepReport::describe() const {
  std::string out;
  if (agree()) {
    return fmt::format("{} and {} agree: {} retirements, {} cycles, {} sync stops compared, {}{}",
                       a.device, b.device, a.records.size(), a.result.cycles, a.stops,
                       reasonName(a.result.reason),
                       a.result.reason == StopReason::Trap ? ": " + describeTrap(a.result.trap)
                                                           : "");
  }
  if (divergence) out += divergence->report;
  for (const std::string& m : endMismatches) out += "state differs: " + m + "\n";
  return out;
}

LockstepReport runLockstep(const std::string& path, const std::string& a, const std::string& b,
                           uint64_t maxCycles) {
  LockstepOptions o;
  o.maxCycles = maxCycles;
  return runLockstep(path, a, b, o);
}

LockstepReport runLockstep(const std::string& path, const std::string& a, const std::string& b,
                           const LockstepOptions& options) {
  const ProgramLoader load = [&](Device& d) {
    if (options.allTiles) {
      loadProgramOnAllTiles(d, path);
    } else {
      loadProgram(d, path, 0);
      for (unsigned t = 1; t < d.info().tiles; ++t) d.setTileEnabled(t, false);
    }
  };
  return runBoth(load, a, b, options, options.tiles);
}

LockstepReport runLockstep(const ProgramLoader& load, const std::string& a, const std::string& b,
                           const LockstepOptions& options) {
  return runBoth(load, a, b, options, options.tiles);
}

}  // namespace tessera
