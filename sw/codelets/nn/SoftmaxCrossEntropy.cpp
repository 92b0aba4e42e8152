// Softmax cross-entropy of rows of logits with integer labels, and its gradient:
//   loss[r] = log(sum_j e^(x[r][j] - max_r)) - (x[r][label_r] - max_r)
//   grad[r][j] = (e^(x[r][j] - max_r) / sum_j e^(...) - [j == label_r]) * scale
// (scale = 1 / global batch for a mean loss). Sums run left to right; expf and logf are
// tessera/mathf.h, so a host reference reproduces every bit. A label outside [0, classes) gives a
// NaN loss for its row (the host sees it) instead of reading outside the row. The steps are
// softmax_steps.hpp's, which the split form (SoftmaxExp, SoftmaxCrossEntropyGrad and
// SoftmaxCrossEntropyLoss) shares.
#include "softmax_steps.hpp"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SoftmaxCrossEntropy, (Input, float, logits), (Input, int32_t, labels),
               (Output, float, grad), (Output, float, loss), (Param, uint32_t, classes),
               (Param, float, scale)) {
  using namespace tessera_softmax;
  const uint32_t c = classes;
  for (uint32_t r = 0; r < labels.size(); ++r) {
    const float* x = logits.data() + r * c;
    float* g = grad.data() + r * c;
    const float mx = rowMax(x, c);
    exps(x, mx, g, c);
    const float sum = sumOf(g, c);
    const int32_t label = labels[r];
    gradient(g, 1.0f / sum, g, c, 0, label, scale);
    loss[r] = tessera_softmax::loss(x, mx, sum, label, c);
  }
}
