// Model speed on a simple loop: one context, then all six, reported as instructions per second.
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "rv_encode.hpp"
#include "tile_model.hpp"

namespace {

using namespace rv;
using tessera::model::TileConfig;
using tessera::model::TileModel;

void place(TileModel& tile, uint32_t addr, const std::vector<uint32_t>& words) {
  std::vector<uint8_t> bytes(words.size() * 4);
  std::memcpy(bytes.data(), words.data(), bytes.size());
  tile.writeMemory(addr, bytes);
}

void measure(const char* name, TileModel& tile) {
  const auto start = std::chrono::steady_clock::now();
  tile.run(~uint64_t{0});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto st = tile.stats();
  fmt::print(
      "{}: {} instructions, {} cycles in {:.3f} s: {:.1f} M instructions/s, {:.1f} M cycles/s\n",
      name, st.instructions, st.cycles, s, st.instructions / s / 1e6, st.cycles / s / 1e6);
}

}  // namespace

int main() {
  // Loop of 4 instructions (add, xor, addi, bne) run 25 M times on the supervisor.
  const std::vector<uint32_t> loop{add(a1, a1, a0), xori(a2, a1, 5), addi(a0, a0, -1),
                                   bne(a0, zero, -12)};
  {
    TileModel tile(TileConfig{});
    std::vector<uint32_t> prog{lui(a0, 0x1800)};  // 25165824 iterations
    prog.insert(prog.end(), loop.begin(), loop.end());
    prog.push_back(lui(t0, 0x80000));
    prog.push_back(sw(zero, t0, 0));
    place(tile, 0, prog);
    measure("1 context ", tile);
  }
  {
    // Supervisor starts 5 workers on the same loop (5 M iterations each) and loops itself.
    TileModel tile(TileConfig{});
    std::vector<uint32_t> sup{lui(t0, 0x80000), addi(t1, zero, 0x100)};
    for (uint32_t w = 0; w < 5; ++w) sup.push_back(sw(t1, t0, static_cast<int32_t>(0x20 + 4 * w)));
    sup.push_back(lui(a0, 0x500));  // 5242880 iterations
    sup.insert(sup.end(), loop.begin(), loop.end());
    sup.push_back(sw(zero, t0, 8));
    sup.push_back(sw(zero, t0, 0));
    place(tile, 0, sup);
    std::vector<uint32_t> worker{lui(a0, 0x500)};
    worker.insert(worker.end(), loop.begin(), loop.end());
    worker.push_back(lui(t0, 0x80000));
    worker.push_back(sw(zero, t0, 0xc));
    place(tile, 0x100, worker);
    measure("6 contexts", tile);
  }
  return 0;
}
