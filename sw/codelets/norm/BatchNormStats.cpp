// Batch normalisation in training: the statistics of channels kept for the backward pass and
// the running update, from their parts' sums and squares ([channels, parts] row-major), by the
// same arithmetic as BatchNormNormalise: mean, biased variance, invStd = 1 / sqrt(var + eps).
#include "batch_stats.h"
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(BatchNormStats, (Input, float, sums), (Input, float, squares), (Output, float, mean),
               (Output, float, var), (Output, float, invStd), (Param, uint32_t, length),
               (Param, uint32_t, parts), (Param, float, eps)) {
  const float fn = static_cast<float>(length);
  const uint32_t p = parts;
  for (uint32_t c = 0; c < mean.size(); ++c) {
    const float m = tessera_bn_total(sums.data() + c * p, p, 1) / fn;
    const float v = tessera_bn_total(squares.data() + c * p, p, 1) / fn;
    mean[c] = m;
    var[c] = v;
    invStd[c] = 1.0f / tessera_sqrtf(v + eps);
  }
}
