// Softmax cross-entropy of rows of logits with integer labels, and its gradient:
//   loss[r] = log(sum_j e^(x[r][j] - max_r)) - (x[r][label_r] - max_r)
//   grad[r][j] = (e^(x[r][j] - max_r) / sum_j e^(...) - [j == label_r]) * scale
// (scale = 1 / global batch for a mean loss). Sums run left to right; expf and logf are
// tessera/mathf.h, so a host reference reproduces every bit. A label outside [0, classes) gives a
// NaN loss for its row (the host sees it) instead of reading outside the row.
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SoftmaxCrossEntropy, (Input, float, logits), (Input, int32_t, labels),
               (Output, float, grad), (Output, float, loss), (Param, uint32_t, classes),
               (Param, float, scale)) {
  const uint32_t c = classes;
  const float sc = scale;
  for (uint32_t r = 0; r < labels.size(); ++r) {
    const float* x = logits.data() + r * c;
    float* g = grad.data() + r * c;
    float mx = x[0];
    for (uint32_t j = 1; j < c; ++j) mx = x[j] > mx ? x[j] : mx;
    float sum = 0.0f;
    for (uint32_t j = 0; j < c; ++j) {
      g[j] = tessera_expf(x[j] - mx);
      sum += g[j];
    }
    const int32_t label = labels[r];
    const bool valid = label >= 0 && static_cast<uint32_t>(label) < c;
    const float inv = 1.0f / sum;
    for (uint32_t j = 0; j < c; ++j)
      g[j] = (g[j] * inv - (static_cast<int32_t>(j) == label ? 1.0f : 0.0f)) * sc;
    loss[r] = valid ? tessera_logf(sum) - (x[label] - mx) : tessera_bits_to_float_(0x7fc00000u);
  }
}
