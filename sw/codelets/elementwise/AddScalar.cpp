// out = in + value: an addition (or, with -value, a subtraction: x - c is x + (-c) in IEEE
// arithmetic) of a constant known when the graph is built, the same bits as Add with that value in
// every element, without gathering a repeated operand.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(AddScalar, (Input, float, in), (Output, float, out), (Param, float, value)) {
  const float c = value;
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = in[i] + c;
}
