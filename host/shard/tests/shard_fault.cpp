// shard_fault MODE RANK: a sharded run in which one rank fails, to show that the job ends with a
// message naming the rank instead of hanging (docs/scale-out.md, "When a rank fails").
//   kill  - rank RANK kills itself with SIGKILL while the others wait for it at the first sync
//   error - rank RANK gets a device error the others do not (its host program diverges); it ends
//           the job through tessera::shard::abortJob, as tessera-run does
// Prints "finished" and exits 0 only if no rank failed (which the tests treat as a failure).
#include <fmt/format.h>

#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include "program_loader.hpp"
#include "tessera/device.hpp"
#include "tessera/shard.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    fmt::print(stderr, "usage: shard_fault kill|error RANK prog.elf\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int victim = std::atoi(argv[2]);
  try {
    tessera::DeviceOptions o;
    o.tiles = 4;
    o.shard = true;
    auto dev = tessera::openDevice("model", o);
    tessera::loadProgramOnAllTiles(*dev, argv[3]);
    if (tessera::shard::rank() == victim) {
      if (mode == "kill") std::raise(SIGKILL);
      std::vector<uint8_t> word(4);
      dev->readMemory(0, 0xfffffff0u, word);  // out of range: this rank alone throws
    }
    const tessera::RunResult r = dev->run(10'000'000);
    fmt::print("finished after {} cycles\n", r.cycles);
    return 0;
  } catch (const std::exception& e) {
    tessera::shard::abortJob("shard_fault", e.what(), 3);
  }
}
