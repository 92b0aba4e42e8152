// data = data * s[0], in place, with s a device scalar (gradients divided by a dynamic loss scale:
// s = 1 / scale, a power of two, so exact unless the product is subnormal).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ScaleInPlaceByScalar, (InOut, float, data), (Input, float, s)) {
  const float k = s[0];
  for (uint32_t i = 0; i < data.size(); ++i) data[i] = data[i] * k;
}
