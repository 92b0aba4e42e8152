#include "chip_fabric.hpp"

namespace tessera::model {

TileRange blockOfRank(unsigned rank, unsigned ranks, unsigned tiles) {
  const uint64_t r = rank, n = ranks;
  return {static_cast<unsigned>(r * tiles / n), static_cast<unsigned>((r + 1) * tiles / n)};
}

unsigned ownerRank(unsigned tile, unsigned ranks, unsigned tiles) {
  const uint64_t n = ranks;
  uint64_t r = uint64_t{tile} * n / tiles;
  while (r + 1 < n && (r + 1) * tiles / n <= tile) ++r;
  while (r > 0 && r * tiles / n > tile) --r;
  return static_cast<unsigned>(r);
}

}  // namespace tessera::model
