// Program loading for the harness: ElfImage from the loader, then Device memory writes.
#include "program_runner.hpp"

#include <cstring>

#include "elf_image.hpp"

namespace tessera::test {
namespace {

// sw/tests/traps/trap_test.h: "TESSEXPT" then cause, pc, value, context (little-endian words).
constexpr uint8_t kMagic[8] = {'T', 'E', 'S', 'S', 'E', 'X', 'P', 'T'};

uint32_t word(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

/// Find the trap expectation block in the image (word-aligned, as the linker places it).
std::optional<TrapExpectation> findExpectation(const ElfImage& image) {
  for (const ElfSegment& seg : image.segments()) {
    const std::vector<uint8_t>& b = seg.bytes;
    for (size_t off = (4 - seg.addr % 4) % 4; off + 24 <= b.size(); off += 4) {
      if (std::memcmp(b.data() + off, kMagic, sizeof kMagic) == 0) {
        const uint8_t* p = b.data() + off + 8;
        return TrapExpectation{word(p), word(p + 4), word(p + 8), word(p + 12)};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

ProgramRun runProgram(Device& dev, const std::string& elfPath, uint64_t maxCycles) {
  const ElfImage image = ElfImage::fromFile(elfPath, dev.info().tileMemBytes);
  for (const ElfSegment& seg : image.segments()) dev.writeMemory(0, seg.addr, seg.bytes);
  dev.reset();
  ProgramRun run;
  run.result = dev.run(maxCycles);
  run.expect = findExpectation(image);
  return run;
}

}  // namespace tessera::test
