// out = value / in: a constant known when the graph is built divided by each element (Div with a
// scalar first operand).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ScalarDiv, (Input, float, in), (Output, float, out), (Param, float, value)) {
  const float c = value;
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = c / in[i];
}
