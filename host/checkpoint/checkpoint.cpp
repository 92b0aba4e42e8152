// Checkpoints over the Device interface (docs/checkpoint.md). Saving reads the chip's state
// registers (CTX_SEL/REG_SEL/C_*, T_*, CYCLE) and memory; restoring resets the device, parks every
// enabled tile at a sync with the saved descriptor (a four-instruction program at address 0), and
// then writes memory and state, which the chip accepts only while it stands at a sync. The file
// format is checkpoint_format.cpp's.
#include "tessera/checkpoint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "checkpoint_format.hpp"
#include "file_io.hpp"
#include "little_endian.hpp"
#include "rv_encode.hpp"
#include "tessera/chip_params.h"

namespace tessera {
namespace {

using checkpoint::ContextState;
using checkpoint::Image;
using checkpoint::kRegs;
using checkpoint::kUnitAccs;
using checkpoint::kUnitScalars;
using checkpoint::kUnitWeights;
using checkpoint::TileState;

constexpr uint64_t kMaxFileBytes = uint64_t{4} << 30;  // mk2 memory is 918 MB uncompressed
constexpr uint32_t kStateSync = TESS_ST_HOST_SYNC;
constexpr uint64_t kParkCycles = 1000;              // the parking program stops at cycle 25
constexpr uint32_t kRestorePieceBytes = 64 * 1024;  // host buffer per memory write

// C_STATE bits (docs/checkpoint.md).
constexpr uint32_t kCtxRunning = 1, kCtxWait = 2, kCtxSync = 4, kCtxLongOp = 8;

uint64_t read64(Device& dev, uint32_t lo, uint32_t hi) {
  const uint64_t l = dev.readControl(lo);
  return l | uint64_t{dev.readControl(hi)} << 32;
}

void write64(Device& dev, uint32_t lo, uint32_t hi, uint64_t v) {
  dev.writeControl(lo, static_cast<uint32_t>(v));
  dev.writeControl(hi, static_cast<uint32_t>(v >> 32));
}

// What is wrong with context c's C_STATE s at a sync stop.
std::string describeContextState(unsigned c, uint32_t s) {
  std::vector<std::string> parts;
  if (s & kCtxLongOp) parts.emplace_back("a long op in flight");
  if (s & kCtxWait) parts.emplace_back("blocked in WAIT");
  if (c != 0 && (s & kCtxRunning)) parts.emplace_back("a worker running");
  if (c == 0 && !(s & kCtxSync)) parts.emplace_back("the supervisor not at its SYNC");
  if (c != 0 && (s & kCtxSync)) parts.emplace_back("a worker marked at a sync");
  return fmt::format("{}", fmt::join(parts, ", "));
}

TileState saveTile(Device& dev, unsigned t, const ChipInfo& chip, bool unit) {
  TileState ts;
  dev.writeControl(TESS_CR_TILE_SEL, t);
  ts.enabled = dev.readControl(TESS_CR_T_ENABLE) != 0;
  if (ts.enabled) {
    if ((dev.readControl(TESS_CR_T_STATE) & 2u) == 0) {
      throw Error(
          fmt::format("checkpoint: tile {} has not arrived at the sync the chip stopped at", t));
    }
    ts.runArg = dev.readControl(TESS_CR_T_RUN_ARG);
    ts.xchgProg = dev.readControl(TESS_CR_T_XCHG_PROG);
    ts.idle = read64(dev, TESS_CR_T_IDLE_LO, TESS_CR_T_IDLE_HI);
    ts.syncWait = read64(dev, TESS_CR_T_SYNCWAIT_LO, TESS_CR_T_SYNCWAIT_HI);
    ts.exch = read64(dev, TESS_CR_T_EXCH_LO, TESS_CR_T_EXCH_HI);
    ts.instr = read64(dev, TESS_CR_T_INSTR_LO, TESS_CR_T_INSTR_HI);
    if (unit) {
      // The tile's weights: any CTX_SEL reaches them.
      dev.writeControl(TESS_CR_CTX_SEL, 0);
      for (unsigned i = 0; i < kUnitWeights; ++i) {
        dev.writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_W + i);
        ts.weights[i] = dev.readControl(TESS_CR_C_REG);
      }
    }
    ts.contexts.resize(chip.contexts);
    for (unsigned c = 0; c < chip.contexts; ++c) {
      dev.writeControl(TESS_CR_CTX_SEL, c);
      // At a sync stop the supervisor stands at its SYNC and every worker is idle; anything else
      // (docs/checkpoint.md) is state the format does not hold.
      const uint32_t state = dev.readControl(TESS_CR_C_STATE);
      const uint32_t expected = c == 0 ? (kCtxRunning | kCtxSync) : 0u;
      if (state != expected) {
        throw Error(fmt::format(
            "checkpoint: tile {} context {} is not in a state a checkpoint can hold at a sync "
            "(C_STATE 0x{:x}: {}); nothing was saved",
            t, c, state, describeContextState(c, state)));
      }
      ContextState& cs = ts.contexts[c];
      cs.pc = dev.readControl(TESS_CR_C_PC);
      cs.fcsr = dev.readControl(TESS_CR_C_FCSR);
      cs.instret = read64(dev, TESS_CR_C_INSTRET_LO, TESS_CR_C_INSTRET_HI);
      for (unsigned r = 0; r < kRegs; ++r) {
        dev.writeControl(TESS_CR_REG_SEL, r);
        cs.regs[r] = dev.readControl(TESS_CR_C_REG);
      }
      if (unit) {
        for (unsigned i = 0; i < kUnitAccs; ++i) {
          dev.writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_ACC + i);
          cs.accs[i] = dev.readControl(TESS_CR_C_REG);
        }
        const auto words = unitScalars(cs);
        for (unsigned i = 0; i < kUnitScalars; ++i) {
          dev.writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_SR + i);
          *words[i] = dev.readControl(TESS_CR_C_REG);
        }
      }
    }
    dev.writeControl(TESS_CR_CTX_SEL, 0);
    dev.writeControl(TESS_CR_REG_SEL, 0);
  }
  std::vector<uint8_t> mem(chip.tileMemBytes);
  dev.readMemory(t, 0, mem);
  ts.runs = checkpoint::memoryRuns(mem);
  return ts;
}

// Parking program (docs/checkpoint.md): li t0, desc; lui t1, 0x80000; sw t0, 0x44(t1), as the
// bytes written at address 0.
std::array<uint8_t, 16> parkingProgram(uint32_t desc) {
  const auto [luiT0, addiT0] = rv::li(rv::t0, desc);
  const uint32_t code[] = {luiT0, addiT0, rv::lui(rv::t1, TESS_MMIO_BASE >> 12),
                           rv::sw(rv::t0, rv::t1, TESS_MMIO_SYNC - TESS_MMIO_BASE)};
  std::array<uint8_t, 16> bytes;
  for (unsigned k = 0; k < 4; ++k) storeLe32(bytes.data() + 4 * k, code[k]);
  return bytes;
}

}  // namespace

bool hasCheckpointSupport(Device& dev) {
  return dev.info().hasCheckpoint;
}

namespace {

void requireCheckpointSupport(Device& dev) {
  if (!hasCheckpointSupport(dev)) {
    throw Error(
        fmt::format("checkpoint: device \"{}\" has no checkpoint support (it refuses the "
                    "checkpoint register REG_SEL, 0x{:03x}: a chip built with "
                    "HAS_CHECKPOINT = 0, like the iCE40 board's)",
                    dev.info().backend, TESS_CR_REG_SEL));
  }
}

}  // namespace

std::vector<uint8_t> saveCheckpoint(Device& dev, std::span<const uint8_t> appData) {
  requireCheckpointSupport(dev);
  const uint32_t status = dev.readControl(TESS_CR_STATUS);
  if ((status & 0xfu) != kStateSync) {
    throw Error(
        fmt::format("checkpoint: the chip is not stopped at a sync (STATUS state {}); a "
                    "checkpoint is taken at a host sync or a SYNC_BREAK stop",
                    status & 0xfu));
  }
  const ChipInfo chip = dev.info();
  Image img;
  img.info.tiles = dev.readControl(TESS_CR_TILES);
  img.info.tileMemBytes = dev.readControl(TESS_CR_MEM_BYTES);
  img.info.contexts = dev.readControl(TESS_CR_CONTEXTS);
  img.info.paramHash = checkpointParamHash();
  img.info.version = checkpoint::kVersion;
  img.info.matrixUnit = chip.hasMatrixUnit;
  img.info.cycle = read64(dev, TESS_CR_CYCLE_LO, TESS_CR_CYCLE_HI);
  img.info.syncDescriptor = ((status & 0x10u) ? TESS_SYNC_HOST_BIT : 0u) | status >> 16;
  img.info.syncBreak = dev.readControl(TESS_CR_SYNC_BREAK) != 0;
  img.info.appData.assign(appData.begin(), appData.end());
  const ChipInfo regs{{img.info.tiles, img.info.tileMemBytes, img.info.contexts}, chip.backend};
  const uint32_t tileSel = dev.readControl(TESS_CR_TILE_SEL);
  for (unsigned t = 0; t < img.info.tiles; ++t) {
    img.tiles.push_back(saveTile(dev, t, regs, img.info.matrixUnit));
    img.info.consoles.push_back(dev.console(t));
  }
  dev.writeControl(TESS_CR_TILE_SEL, tileSel);
  return checkpoint::encode(img);
}

void saveCheckpoint(Device& dev, const std::string& path, std::span<const uint8_t> appData) {
  writeFileChecked(path, saveCheckpoint(dev, appData));
}

CheckpointInfo restoreCheckpoint(Device& dev, std::span<const uint8_t> bytes) {
  Image img = checkpoint::decode(bytes);
  const CheckpointInfo& info = img.info;
  // Everything is checked before the device is touched.
  requireCheckpointSupport(dev);
  const uint32_t tiles = dev.readControl(TESS_CR_TILES);
  const uint32_t memBytes = dev.readControl(TESS_CR_MEM_BYTES);
  const uint32_t contexts = dev.readControl(TESS_CR_CONTEXTS);
  if (tiles != info.tiles || memBytes != info.tileMemBytes || contexts != info.contexts) {
    throw Error(
        fmt::format("checkpoint: saved on a chip of {} tiles x {} bytes ({} contexts); "
                    "this device has {} tiles x {} bytes ({} contexts)",
                    info.tiles, info.tileMemBytes, info.contexts, tiles, memBytes, contexts));
  }
  // Matrix-unit state restores only into tiles that have the unit; a file without it (version 1,
  // or a chip without the unit) leaves the unit at its reset state.
  const bool deviceUnit = dev.info().hasMatrixUnit;
  if (info.matrixUnit && !deviceUnit) {
    throw Error(
        "checkpoint: saved on a chip whose tiles have the matrix unit (its state is in the file); "
        "this device's tiles have none");
  }
  if (info.paramHash != checkpointParamHash()) {
    throw Error(
        fmt::format("checkpoint: saved with other chip parameters (hash 0x{:016x}, this "
                    "build 0x{:016x})",
                    info.paramHash, checkpointParamHash()));
  }
  if (std::none_of(img.tiles.begin(), img.tiles.end(),
                   [](const TileState& t) { return t.enabled; })) {
    throw Error("checkpoint: no tile is enabled (a sync stop needs at least one)");
  }

  // Park every enabled tile at a sync with the saved descriptor.
  dev.reset();
  const std::array<uint8_t, 16> parkBytes = parkingProgram(info.syncDescriptor);
  for (unsigned t = 0; t < tiles; ++t) {
    dev.setTileEnabled(t, img.tiles[t].enabled);
    if (img.tiles[t].enabled) dev.writeMemory(t, 0, parkBytes);
  }
  dev.setSyncBreak(true);
  const RunResult parked = dev.run(kParkCycles);
  const StopReason want =
      (info.syncDescriptor & TESS_SYNC_HOST_BIT) ? StopReason::HostSync : StopReason::SyncBreak;
  if (parked.reason != want || parked.hostSyncId != (info.syncDescriptor & 0xffffu)) {
    throw Error(
        fmt::format("checkpoint: restoring: the device did not stop at the parking sync "
                    "(stopped at cycle {}, reason {})",
                    parked.cycles, static_cast<int>(parked.reason)));
  }
  if (info.cycle % TESS_ROUND_CYCLES != parked.cycles % TESS_ROUND_CYCLES) {
    // Every sync stop is at R = c + 3 + SYNC_LATENCY with c a supervisor slot (docs/checkpoint.md).
    throw Error(fmt::format("checkpoint: saved cycle {} is not in the slot phase of a sync stop",
                            info.cycle));
  }

  // Memory (the parking program is overwritten), then the state. Written in bounded pieces, the
  // runs over zeros, so that the host holds at most one piece whatever size the file declares
  // (the model gives back the pages of zeros; docs/limits.md).
  std::vector<uint8_t> piece(std::min<uint32_t>(memBytes, kRestorePieceBytes));
  for (unsigned t = 0; t < tiles; ++t) {
    const auto& runs = img.tiles[t].runs;  // sorted by offset, disjoint (decode checks)
    size_t next = 0;                       // first run that may reach the piece
    for (uint32_t at = 0; at < memBytes; at += static_cast<uint32_t>(piece.size())) {
      const uint32_t len = std::min<uint32_t>(static_cast<uint32_t>(piece.size()), memBytes - at);
      std::fill(piece.begin(), piece.begin() + len, 0);
      while (next < runs.size() && runs[next].first + runs[next].second.size() <= at) ++next;
      for (size_t r = next; r < runs.size() && runs[r].first < at + len; ++r) {
        const uint64_t lo = std::max<uint64_t>(at, runs[r].first);
        const uint64_t hi = std::min<uint64_t>(at + len, runs[r].first + runs[r].second.size());
        std::copy(runs[r].second.begin() + (lo - runs[r].first),
                  runs[r].second.begin() + (hi - runs[r].first), piece.begin() + (lo - at));
      }
      dev.writeMemory(t, at, std::span<const uint8_t>(piece.data(), len));
    }
  }
  write64(dev, TESS_CR_CYCLE_LO, TESS_CR_CYCLE_HI, info.cycle);
  for (unsigned t = 0; t < tiles; ++t) {
    const TileState& ts = img.tiles[t];
    if (!ts.enabled) continue;
    dev.writeControl(TESS_CR_TILE_SEL, t);
    dev.writeControl(TESS_CR_T_RUN_ARG, ts.runArg);
    dev.writeControl(TESS_CR_T_XCHG_PROG, ts.xchgProg);
    write64(dev, TESS_CR_T_IDLE_LO, TESS_CR_T_IDLE_HI, ts.idle);
    write64(dev, TESS_CR_T_SYNCWAIT_LO, TESS_CR_T_SYNCWAIT_HI, ts.syncWait);
    write64(dev, TESS_CR_T_EXCH_LO, TESS_CR_T_EXCH_HI, ts.exch);
    for (unsigned c = 0; c < contexts; ++c) {
      const ContextState& cs = ts.contexts[c];
      dev.writeControl(TESS_CR_CTX_SEL, c);
      dev.writeControl(TESS_CR_C_PC, cs.pc);
      dev.writeControl(TESS_CR_C_FCSR, cs.fcsr);
      write64(dev, TESS_CR_C_INSTRET_LO, TESS_CR_C_INSTRET_HI, cs.instret);
      for (unsigned r = 1; r < kRegs; ++r) {
        dev.writeControl(TESS_CR_REG_SEL, r);
        dev.writeControl(TESS_CR_C_REG, cs.regs[r]);
      }
      if (info.matrixUnit) {
        for (unsigned i = 0; i < kUnitAccs; ++i) {
          dev.writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_ACC + i);
          dev.writeControl(TESS_CR_C_REG, cs.accs[i]);
        }
        const auto words = unitScalars(cs);
        for (unsigned i = 0; i < kUnitScalars; ++i) {
          dev.writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_SR + i);
          dev.writeControl(TESS_CR_C_REG, *words[i]);
        }
      }
    }
    if (info.matrixUnit) {
      for (unsigned i = 0; i < kUnitWeights; ++i) {
        dev.writeControl(TESS_CR_REG_SEL, TESS_REG_SEL_AMP_W + i);
        dev.writeControl(TESS_CR_C_REG, ts.weights[i]);
      }
    }
    const uint64_t instr = read64(dev, TESS_CR_T_INSTR_LO, TESS_CR_T_INSTR_HI);
    if (instr != ts.instr) {
      throw Error(
          fmt::format("checkpoint: tile {}: {} instructions after the restore, saved {} "
                      "(the per-context counts do not add up)",
                      t, instr, ts.instr));
    }
  }
  dev.writeControl(TESS_CR_CTX_SEL, 0);
  dev.writeControl(TESS_CR_REG_SEL, 0);
  dev.writeControl(TESS_CR_TILE_SEL, 0);
  dev.setSyncBreak(info.syncBreak);
  return img.info;
}

CheckpointInfo restoreCheckpoint(Device& dev, const std::string& path) {
  const std::vector<uint8_t> bytes = readRegularFile(path, kMaxFileBytes, "checkpoint");
  try {
    return restoreCheckpoint(dev, bytes);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace tessera
