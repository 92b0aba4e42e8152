// The checkpoint file format (docs/checkpoint.md, "File format"): the in-memory image of a saved
// chip and its encoding, with every check a file gets before a device is touched. Device access
// (saving and restoring through the control registers) is checkpoint.cpp's.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "tessera/checkpoint.hpp"
#include "tessera/chip_params.h"

namespace tessera::checkpoint {

/// Registers per context in the file: x0..x31, then f0..f31.
inline constexpr unsigned kRegs = 64;
/// Matrix-unit words of a tile (weights W[b][k][j] at 16b + 4k + j) and of a context
/// (accumulators acc[r][j] at 4r + j; version 2 held rows 0..3, all a chip had then).
inline constexpr unsigned kUnitWeights = TESS_AMP_BANKS * TESS_AMP_ROWS * TESS_AMP_COLS;
inline constexpr unsigned kUnitAccs = TESS_AMP_ACC_ROWS * TESS_AMP_COLS;
inline constexpr unsigned kUnitAccsVersion2 = 4 * TESS_AMP_COLS;

/// One context of an enabled tile.
struct ContextState {
  uint32_t pc = 0;
  uint32_t fcsr = 0;
  uint64_t instret = 0;
  std::array<uint32_t, kRegs> regs{};
  /// Matrix-unit state (CheckpointInfo::matrixUnit): accumulators and generator state.
  std::array<uint32_t, kUnitAccs> accs{};
  uint32_t srState = TESS_AMP_SR_SEED0;
  /// Row addressing (version 3; a version-2 file leaves the reset values).
  uint32_t strideS = 0;
  uint32_t strideC = 0;
  uint32_t rowLimit = TESS_AMP_ACC_ROWS;
};

/// A context's matrix-unit words after its accumulators, in REG_SEL order from REG_SEL_AMP_SR:
/// the generator, the two row strides and the row limit.
inline constexpr unsigned kUnitScalars = 4;
static_assert(TESS_REG_SEL_AMP_END - TESS_REG_SEL_AMP_SR == kUnitScalars);
template <class State>  // ContextState or const ContextState
std::array<decltype(&std::declval<State&>().srState), kUnitScalars> unitScalars(State& cs) {
  return {&cs.srState, &cs.strideS, &cs.strideC, &cs.rowLimit};
}

/// One tile: its registers and counters (if enabled) and its memory.
struct TileState {
  bool enabled = true;
  uint32_t runArg = 0;
  uint32_t xchgProg = 0;
  uint64_t idle = 0;
  uint64_t syncWait = 0;
  uint64_t exch = 0;
  uint64_t instr = 0;
  /// Matrix-unit weights (CheckpointInfo::matrixUnit).
  std::array<uint32_t, kUnitWeights> weights{};
  std::vector<ContextState> contexts;
  /// Memory as runs of (byte offset, bytes); everything else is zero.
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> runs;
};

/// A whole checkpoint.
struct Image {
  CheckpointInfo info;
  std::vector<TileState> tiles;
};

/// The runs of a tile's memory the file holds: its nonzero words, with zero gaps shorter than
/// the merge gap kept inside a run.
std::vector<std::pair<uint32_t, std::vector<uint8_t>>> memoryRuns(std::span<const uint8_t> mem);

/// The format version encode() writes; decode() reads it and every older one.
inline constexpr uint32_t kVersion = 3;

/// The file bytes of img, in format `version` (2 or 3; 2, for tests of the older layout, holds
/// accumulator rows 0..3 and no row addressing).
std::vector<uint8_t> encode(const Image& img, uint32_t version = kVersion);

/// Parse and check a file (magic, version, every section's CRC, length and order, the
/// configuration's bounds); a tessera::Error names the section at fault.
Image decode(std::span<const uint8_t> bytes);

}  // namespace tessera::checkpoint
