// data = data * scale, in place (the float16 MLP's gradients divided by the loss scale,
// ops::scaleInPlace).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ScaleInPlace, (InOut, float, data), (Param, float, scale)) {
  const float s = scale;
  for (uint32_t i = 0; i < data.size(); ++i) data[i] = data[i] * s;
}
