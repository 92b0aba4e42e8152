// Program loading for the harness: ElfImage from the loader, then Device memory writes.
#include "program_runner.hpp"


#include "program_loader.hpp"

namespace tessera::test {
namespace {

// sw/tests/traps/trap_test.h: at symbol tess_expect, "TESSEXPT" then cause, pc, value, context.
constexpr uint32_t kMagic0 = 0x53534554, kMagic1 = 0x54505845;

std::optional<TrapExpectation> findExpectation(const ElfImage& image) {
  const std::optional<uint32_t> at = image.symbol("tess_expect");
  if (!at) return std::nullopt;
  uint32_t w[6];
  for (uint32_t i = 0; i < 6; ++i) {
    const std::optional<uint32_t> v = image.word(*at + 4 * i);
    if (!v) throw Error("tess_expect lies outside the loaded image");
    w[i] = *v;
  }
  if (w[0] != kMagic0 || w[1] != kMagic1) throw Error("tess_expect has no TESSEXPT marker");
  return TrapExpectation{w[2], w[3], w[4], w[5]};
}

}  // namespace

ProgramRun runProgram(Device& dev, const std::string& elfPath, uint64_t maxCycles) {
  const ElfImage image = loadProgram(dev, elfPath);
  ProgramRun run;
  run.result = dev.run(maxCycles);
  run.expect = findExpectation(image);
  return run;
}

}  // namespace tessera::test
