// The first step of SoftmaxCrossEntropy's split form, for a tile with at most half as many rows
// as contexts: e = e^(x[begin ..] - max x) for a slice of one row x (whole), into a scratch row,
// so that a row's exponentials, the costly part, spread over several contexts.
// SoftmaxCrossEntropyGrad and SoftmaxCrossEntropyLoss then finish the row from the scratch row;
// together they give SoftmaxCrossEntropy's bits (softmax_steps.hpp).
#include "softmax_steps.hpp"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SoftmaxExp, (Input, float, x), (Output, float, e), (Param, uint32_t, begin)) {
  using namespace tessera_softmax;
  exps(x.data() + static_cast<uint32_t>(begin), rowMax(x.data(), x.size()), e.data(), e.size());
}
