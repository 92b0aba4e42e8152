// Running statistics of batch normalisation, PyTorch's update (momentum weighs the new batch):
//   runningMean = momentum * mean + (1 - momentum) * runningMean
//   runningVar  = momentum * (var * unbias) + (1 - momentum) * runningVar
// where unbias = n / (n - 1) turns the biased batch variance into the unbiased one.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(BatchNormRunning, (InOut, float, runningMean), (InOut, float, runningVar),
               (Input, float, mean), (Input, float, var), (Param, float, momentum),
               (Param, float, unbias)) {
  const float mo = momentum, keep = 1.0f - mo, ub = unbias;
  for (uint32_t c = 0; c < runningMean.size(); ++c) {
    runningMean[c] = mo * mean[c] + keep * runningMean[c];
    runningVar[c] = mo * (var[c] * ub) + keep * runningVar[c];
  }
}
