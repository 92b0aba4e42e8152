// libFuzzer target for the ELF loader (docs/limits.md, "Fuzzing"): ElfImage::fromBytes must
// accept or throw tessera::Error, never crash; an accepted image lies inside tile memory and
// starts at 0.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "tessera/elf_image.hpp"
#include "tessera/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr uint32_t kMem = 65536;
  try {
    const tessera::ElfImage img = tessera::ElfImage::fromBytes({data, size}, "fuzz.elf", kMem);
    if (img.entry() != 0) std::abort();
    for (const tessera::ElfSegment& s : img.segments())
      if (uint64_t{s.addr} + s.bytes.size() > kMem) std::abort();
  } catch (const tessera::Error&) {
  }
  return 0;
}
