// out[r][j] = in[r][j] + bias[j] for rows r of in (in.size() = rows * bias.size()).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(AddBias, (Input, float, in), (Input, float, bias), (Output, float, out)) {
  const uint32_t n = bias.size();
  for (uint32_t i = 0, j = 0; i < out.size(); ++i) {
    out[i] = in[i] + bias[j];
    if (++j == n) j = 0;
  }
}
