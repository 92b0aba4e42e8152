// libFuzzer target for the *.tess reader (docs/limits.md, "Fuzzing"): Executable::parse must
// accept or throw tessera::Error, never crash; what it accepts must survive serialize() and parse
// to the identical executable.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "executable.hpp"
#include "tessera/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const tessera::Executable exe = tessera::Executable::parse({data, size}, "fuzz.tess");
    const auto again = tessera::Executable::parse(exe.serialize(), "again.tess");
    if (!(again == exe)) std::abort();
  } catch (const tessera::Error&) {
  }
  return 0;
}
