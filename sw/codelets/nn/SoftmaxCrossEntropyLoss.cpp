// SoftmaxCrossEntropy's loss of one row x from its exponentials e (SoftmaxExp's scratch row):
// the split form's second step beside SoftmaxCrossEntropyGrad (softmax_steps.hpp;
// SoftmaxCrossEntropy.cpp says what it is).
#include "softmax_steps.hpp"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SoftmaxCrossEntropyLoss, (Input, float, x), (Input, float, e),
               (Input, int32_t, label), (Output, float, loss)) {
  using namespace tessera_softmax;
  const uint32_t c = x.size();
  loss[0] = tessera_softmax::loss(x.data(), rowMax(x.data(), c), sumOf(e.data(), c), label[0], c);
}
