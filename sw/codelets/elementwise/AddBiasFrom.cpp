// out[i] = in[i] + bias[(start + i) % bias.size()]: AddBias over a tile's column block of x
// (runs of bias.size() elements over the same columns of successive rows, in the tile's order),
// starting `start` elements into a run.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(AddBiasFrom, (Input, float, in), (Input, float, bias), (Output, float, out),
               (Param, uint32_t, start)) {
  const uint32_t n = bias.size();
  for (uint32_t i = 0, j = start; i < out.size(); ++i) {
    out[i] = in[i] + bias[j];
    if (++j == n) j = 0;
  }
}
