// out[i] = max(in[i] + bias[(start + i) % bias.size()], 0): AddBiasFrom, then Relu's comparison
// on the rounded sum (the same bits as the two codelets one after the other).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(AddBiasReluFrom, (Input, float, in), (Input, float, bias), (Output, float, out),
               (Param, uint32_t, start)) {
  const uint32_t n = bias.size();
  for (uint32_t i = 0, j = start; i < out.size(); ++i) {
    const float v = in[i] + bias[j];
    out[i] = v > 0.0f ? v : 0.0f;
    if (++j == n) j = 0;
  }
}
