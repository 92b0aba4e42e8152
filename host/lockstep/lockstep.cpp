#include "lockstep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <mutex>

#include "little_endian.hpp"
#include "program_loader.hpp"
#include "tessera/executable.hpp"

namespace tessera {
namespace {

const char* reasonName(StopReason r) {
  switch (r) {
    case StopReason::Halted:
      return "halted";
    case StopReason::Trap:
      return "trap";
    case StopReason::MaxCycles:
      return "cycle limit";
    case StopReason::HostSync:
      return "host sync";
    case StopReason::SyncBreak:
      return "sync break";
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
    auto word = [&](const std::vector<uint8_t>& m) { return loadLe32(m.data() + addr); };
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
  r.retirementsCompared = o.compareRetirements;
  DeviceOptions dopt;
  dopt.tiles = tiles;
  dopt.tileMemBytes = o.tileMemBytes;
  // With no size given, the model takes the other chip's: a verilated chip's (or a server's) is
  // fixed, and the rtl device's two chips have different sizes (rtl/params.json).
  const bool bFirst = dopt.tileMemBytes == 0 && a == "model";
  std::unique_ptr<Device> da, db;
  auto openNext = [&](const std::string& spec, unsigned threads, ModelEngine engine) {
    dopt.threads = threads;
    dopt.modelEngine = engine;
    auto d = openDevice(spec, dopt);
    if (dopt.tileMemBytes == 0) dopt.tileMemBytes = d->info().tileMemBytes;
    return d;
  };
  if (bFirst) db = openNext(b, o.threadsB, o.engineB);
  da = openNext(a, o.threadsA, o.engineA);
  if (!bFirst) db = openNext(b, o.threadsB, o.engineB);
  load(*da);
  load(*db);
  da->setSyncBreak(o.syncBreak);
  db->setSyncBreak(o.syncBreak);
  // A model on several host threads calls the sink from each of them. Records wait here until the
  // next sync stop (or the end), are compared per tile and dropped.
  std::mutex recordsMutex;
  // Held per tile as they arrive, so a comparison reads each tile's records once.
  const unsigned n = da->info().tiles;
  std::vector<std::vector<RetireRecord>> recA(n), recB(n);
  if (o.compareRetirements) {
    da->setRetireSink([&](const RetireRecord& rec) {
      std::lock_guard lock(recordsMutex);
      recA.at(rec.tile).push_back(rec);
    });
    db->setRetireSink([&](const RetireRecord& rec) {
      std::lock_guard lock(recordsMutex);
      recB.at(rec.tile).push_back(rec);
    });
  }
  auto& m = r.endMismatches;
  // Compare the records held so far; a run cut by the cycle limit may leave the RTL's last
  // retirements unreported (docs/tile.md, "Stopping at a cycle limit"): then compare only what
  // both sides retired. With keepRest (a pause between chunks) the records one side has beyond
  // the other's are kept, in order, for the next comparison; otherwise everything is dropped.
  auto compareRecords = [&](bool cut, bool keepRest = false) {
    for (unsigned t = 0; t < n; ++t) {
      std::vector<RetireRecord>& ra = recA[t];
      std::vector<RetireRecord>& rb = recB[t];
      const size_t k = cut ? std::min(ra.size(), rb.size()) : std::max(ra.size(), rb.size());
      if (!r.divergence) {
        r.divergence = compareRetireStreams(
            std::span<const RetireRecord>(ra.data(), cut ? k : ra.size()),
            std::span<const RetireRecord>(rb.data(), cut ? k : rb.size()), a, b);
        if (r.divergence && n > 1)
          r.divergence->report = fmt::format("tile {}: {}", t, r.divergence->report);
        r.a.retired += cut ? k : ra.size();
        r.b.retired += cut ? k : rb.size();
      }
      const auto keep = [&](std::vector<RetireRecord>& v) {
        if (keepRest && cut) {
          v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(k, v.size())));
        } else {
          v.clear();
        }
      };
      keep(ra);
      keep(rb);
    }
  };
  // Without syncs a program would hold every record until the end: pause both devices every
  // chunk cycles (a cycle-limit stop continues exactly) and compare what both have retired.
  const uint64_t chunk = !o.compareRetirements ? ~uint64_t{0}
                         : o.chunkCycles
                             ? o.chunkCycles
                             : std::max<uint64_t>(1, (uint64_t{1} << 18) / std::max(1u, n));
  auto runChunk = [&](Device& d, const RunResult& last) {
    const uint64_t left = o.maxCycles - last.cycles;
    return d.run(std::min(left, chunk));
  };
  // A pause made here is not a stop of the run. Both sides stop where the run stops whatever the
  // limit (the RTL looks past a limit for a stop it finds late, docs/tile.md, "Stopping at a
  // cycle limit"), so one side pausing where the other stopped is a difference like any other.
  auto paused = [&](const RunResult& x) {
    return x.reason == StopReason::MaxCycles && x.cycles < o.maxCycles;
  };
  for (;;) {
    r.a.result = runChunk(*da, r.a.result);
    r.b.result = runChunk(*db, r.b.result);
    if (paused(r.a.result) && paused(r.b.result) && r.a.result.cycles == r.b.result.cycles) {
      compareRecords(true, true);  // a pause between chunks, not the end
      if (r.divergence) break;
      continue;
    }
    const bool atSync =
        r.a.result.reason == StopReason::SyncBreak || r.a.result.reason == StopReason::HostSync;
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
    compareRecords(false);
    if (!m.empty() || r.divergence) break;
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
  if (!m.empty() || r.divergence)
    return r;  // stopped at a sync mismatch: the end is not comparable
  compareRecords(r.a.result.reason == StopReason::MaxCycles ||
                 r.b.result.reason == StopReason::MaxCycles);
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
    return fmt::format(
        "{} and {} agree: {}, {} cycles, {} sync stops compared, {}{}", a.device, b.device,
        retirementsCompared ? fmt::format("{} retirements", a.retired) : "retirements not compared",
        a.result.cycles, a.stops, reasonName(a.result.reason),
        a.result.reason == StopReason::Trap ? ": " + describeTrap(a.result.trap) : "");
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

LockstepReport runLockstep(const Executable& exe,
                           const std::map<std::string, std::vector<uint8_t>>& inputs,
                           const std::string& a, const std::string& b, LockstepOptions options) {
  for (const auto& [name, bytes] : inputs) {
    const int s = exe.findStream(name);
    if (s < 0 || exe.streams[s].direction != StreamDirection::HostToDevice) {
      throw Error(
          fmt::format("lockstep: the executable has no host-to-device stream \"{}\"", name));
    }
  }
  if (options.tiles == 0) options.tiles = exe.target.tiles;
  if (options.tileMemBytes == 0) options.tileMemBytes = exe.target.tileMemBytes;
  // Each device's stream positions; device-to-host bytes are compared at every host sync.
  std::map<const Device*, std::map<uint32_t, uint64_t>> offsets;
  std::map<const Device*, std::vector<uint8_t>> lastOut;
  options.onHostSync = [&](Device& d, uint32_t id) {
    const ExeHostSync* hs = exe.findHostSync(id);
    if (!hs) return;
    std::vector<uint8_t>& out = lastOut[&d];
    out.clear();
    for (const ExeStreamCopy& c : hs->copies) {
      const ExeStream& st = exe.streams[c.stream];
      uint64_t& off = offsets[&d][c.stream];
      std::vector<uint8_t> bytes(c.region.bytes);
      if (st.direction == StreamDirection::HostToDevice) {
        auto it = inputs.find(st.name);
        if (it == inputs.end())
          throw Error(fmt::format("lockstep: stream \"{}\" has no input data", st.name));
        const std::vector<uint8_t>& src = it->second;
        if (off + bytes.size() > src.size()) {
          throw Error(fmt::format("lockstep: stream \"{}\" needs bytes {}..{}, its input has {}",
                                  st.name, off, off + bytes.size(), src.size()));
        }
        std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(off), bytes.size(), bytes.begin());
        d.writeMemory(c.region.tile, c.region.addr, bytes);
      } else {
        d.readMemory(c.region.tile, c.region.addr, bytes);
        out.insert(out.end(), bytes.begin(), bytes.end());
      }
      off += bytes.size();
    }
  };
  const ProgramLoader load = [&](Device& d) { exe.load(d); };
  return runBoth(load, a, b, options, options.tiles);
}

}  // namespace tessera
