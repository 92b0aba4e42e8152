// A device program run to its end with every host sync released at once (as tessera-run does),
// and the comparison of two such runs: shared by the tests that check a device reached through a
// link (tcp://, a pty, the board simulation) against the same backend in process.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "program_loader.hpp"
#include "tessera/device.hpp"

namespace tessera::link {

/// Every stop of a run, and each tile's console and counters at its end.
struct ProgramOutcome {
  std::vector<RunResult> stops;
  std::vector<std::string> consoles;
  std::vector<TileStats> stats;
};

/// Load the ELF at path on tile 0 (other tiles disabled) or on every tile, and run it until it
/// halts, traps or reaches maxCycles, releasing host syncs (at most 100 of them).
inline ProgramOutcome runProgramToEnd(Device& dev, const std::string& path, bool allTiles,
                                      uint64_t maxCycles) {
  dev.reset();
  if (allTiles) {
    loadProgramOnAllTiles(dev, path);
  } else {
    loadProgram(dev, path, 0);
    for (unsigned t = 1; t < dev.info().tiles; ++t) dev.setTileEnabled(t, false);
  }
  ProgramOutcome out;
  for (;;) {
    out.stops.push_back(dev.run(maxCycles));
    if (out.stops.back().reason != StopReason::HostSync || out.stops.size() > 100) break;
  }
  for (unsigned t = 0; t < dev.info().tiles; ++t) {
    out.consoles.push_back(dev.console(t));
    out.stats.push_back(dev.stats(t));
  }
  return out;
}

/// Every stop (reason, cycles, exit code, sync id, trap), console and counter equal.
inline void expectSameOutcome(const ProgramOutcome& a, const ProgramOutcome& b) {
  ASSERT_EQ(a.stops.size(), b.stops.size());
  for (size_t i = 0; i < b.stops.size(); ++i) {
    EXPECT_EQ(a.stops[i].reason, b.stops[i].reason) << "stop " << i;
    EXPECT_EQ(a.stops[i].cycles, b.stops[i].cycles) << "stop " << i;
    EXPECT_EQ(a.stops[i].exitCode, b.stops[i].exitCode) << "stop " << i;
    EXPECT_EQ(a.stops[i].hostSyncId, b.stops[i].hostSyncId) << "stop " << i;
    EXPECT_EQ(a.stops[i].trap.cause, b.stops[i].trap.cause) << "stop " << i;
    EXPECT_EQ(a.stops[i].trap.pc, b.stops[i].trap.pc) << "stop " << i;
  }
  ASSERT_EQ(a.consoles.size(), b.consoles.size());
  for (size_t t = 0; t < b.consoles.size(); ++t) {
    EXPECT_EQ(a.consoles[t], b.consoles[t]) << "tile " << t;
    const TileStats& x = a.stats[t];
    const TileStats& y = b.stats[t];
    EXPECT_EQ(x.cycles, y.cycles) << "tile " << t;
    EXPECT_EQ(x.instructions, y.instructions) << "tile " << t;
    for (unsigned c = 0; c < 6; ++c) {
      EXPECT_EQ(x.contextInstructions[c], y.contextInstructions[c])
          << "tile " << t << " context " << c;
    }
    EXPECT_EQ(x.idleSlots, y.idleSlots) << "tile " << t;
    EXPECT_EQ(x.syncWaitCycles, y.syncWaitCycles) << "tile " << t;
    EXPECT_EQ(x.exchangeCycles, y.exchangeCycles) << "tile " << t;
    EXPECT_EQ(x.halted, y.halted) << "tile " << t;
    EXPECT_EQ(x.exitCode, y.exitCode) << "tile " << t;
  }
}

}  // namespace tessera::link
