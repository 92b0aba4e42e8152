// out = value - in: a constant known when the graph is built minus each element (Sub with a
// scalar first operand).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ScalarSub, (Input, float, in), (Output, float, out), (Param, float, value)) {
  const float c = value;
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = c - in[i];
}
