// out = max(in, 0); a NaN input gives NaN's comparison result (0), as the reference does.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Relu, (Input, float, in), (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}
