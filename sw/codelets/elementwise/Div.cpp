// out = a / b, element by element (IEEE division, FDIV.S).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Div, (Input, float, a), (Input, float, b), (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = a[i] / b[i];
}
