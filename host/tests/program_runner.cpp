// Program loading for the harness: ElfImage from the loader, then Device memory writes.
#include "program_runner.hpp"

#include "program_loader.hpp"

namespace tessera::test {
namespace {

// sw/tests/traps/trap_test.h: at symbol tess_expect, "TESSEXPT" then cause, pc, value, context;
// sw/tests/chip/chip_expect.h: "TESSCHIP" then the same and the tile.
constexpr uint32_t kMagic0 = 0x53534554, kMagicTrap = 0x54505845, kMagicChip = 0x50494843;

}  // namespace

std::optional<TrapExpectation> findExpectation(const ElfImage& image) {
  const std::optional<uint32_t> at = image.symbol("tess_expect");
  if (!at) return std::nullopt;
  auto word = [&](uint32_t i) {
    const std::optional<uint32_t> v = image.word(*at + 4 * i);
    if (!v) throw Error("tess_expect lies outside the loaded image");
    return *v;
  };
  if (word(0) != kMagic0 || (word(1) != kMagicTrap && word(1) != kMagicChip)) {
    throw Error("tess_expect has no TESSEXPT or TESSCHIP marker");
  }
  TrapExpectation e{word(2), word(3), word(4), word(5), 0};
  if (word(1) == kMagicChip) e.tile = word(6);
  return e;
}

ProgramRun runProgram(Device& dev, const std::string& elfPath, uint64_t maxCycles) {
  const ElfImage image = loadProgram(dev, elfPath);
  // A bare single-tile program runs on tile 0 alone (docs/chip.md: disabled tiles count as halted).
  for (unsigned t = 1; t < dev.info().tiles; ++t) dev.setTileEnabled(t, false);
  ProgramRun run;
  run.result = dev.run(maxCycles);
  run.expect = findExpectation(image);
  return run;
}

}  // namespace tessera::test
