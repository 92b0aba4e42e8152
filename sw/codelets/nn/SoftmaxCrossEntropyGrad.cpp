// SoftmaxCrossEntropy's gradient for a slice [begin, begin + grad.size()) of one row from the
// row's exponentials e (whole; SoftmaxExp's scratch row): the split form's second step beside
// SoftmaxCrossEntropyLoss (softmax_steps.hpp; SoftmaxCrossEntropy.cpp says what it is).
#include "softmax_steps.hpp"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SoftmaxCrossEntropyGrad, (Input, float, e), (Input, int32_t, label),
               (Output, float, grad), (Param, uint32_t, begin), (Param, float, scale)) {
  using namespace tessera_softmax;
  const uint32_t b = begin;
  gradient(e.data() + b, 1.0f / sumOf(e.data(), e.size()), grad.data(), grad.size(), b, label[0],
           scale);
}
