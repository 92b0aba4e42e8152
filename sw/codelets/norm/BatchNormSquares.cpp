// Batch normalisation in training, step 2 of 3: the channel's mean from the parts' sums
// (tessera_bn_total / length), then the sum of squared deviations of this part, left to right.
#include "batch_stats.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(BatchNormSquares, (Input, float, in), (Input, float, sums), (Output, float, squares),
               (Param, uint32_t, length)) {
  const float m = tessera_bn_total(sums.data(), sums.size(), 1) / static_cast<float>(length);
  float v = 0.0f;
  for (uint32_t i = 0; i < in.size(); ++i) v += (in[i] - m) * (in[i] - m);
  squares[0] = v;
}
