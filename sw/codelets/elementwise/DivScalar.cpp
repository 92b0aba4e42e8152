// out = in / divisor: a division by a constant known when the graph is built (a mean's count,
// a constant scalar divisor), the same bits as Div with that divisor in every element.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(DivScalar, (Input, float, in), (Output, float, out), (Param, float, divisor)) {
  const float d = divisor;
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = in[i] / d;
}
