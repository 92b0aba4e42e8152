// Load a device program with the ELF loader and run it (the only place the harness touches the
// loader, so its API is used in one spot).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tessera/device.hpp"
#include "tessera/elf_image.hpp"

namespace tessera::test {

/// What a trap or chip error program declares it will do: the words at its tess_expect symbol
/// (sw/tests/traps/trap_test.h; sw/tests/chip/chip_expect.h adds the tile).
struct TrapExpectation {
  uint32_t cause = 0;
  uint32_t pc = 0;
  uint32_t value = 0;
  uint32_t context = 0;
  uint32_t tile = 0;
};

/// Outcome of runProgram.
struct ProgramRun {
  RunResult result;
  std::optional<TrapExpectation> expect;  ///< set when the ELF defines tess_expect
};

/// The expectation block at tess_expect, if the ELF has one; throws Error if it is malformed.
std::optional<TrapExpectation> findExpectation(const ElfImage& image);

/// Load elfPath into tile 0 of dev, reset, disable the other tiles, run up to maxCycles; read
/// tess_expect if present.
ProgramRun runProgram(Device& dev, const std::string& elfPath, uint64_t maxCycles);

}  // namespace tessera::test
