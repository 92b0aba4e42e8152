#include "all_reduce_model.hpp"

namespace tessera::bench {

double AllReduceModel::bytesSentPerChip(uint64_t bytes, unsigned replicas) const {
  if (replicas <= 1) return 0.0;
  const double r = replicas;
  return 2.0 * (r - 1.0) / r * static_cast<double>(bytes);
}

double AllReduceModel::seconds(uint64_t bytes, unsigned replicas) const {
  if (replicas <= 1) return 0.0;
  return bytesSentPerChip(bytes, replicas) / bytesPerSecond +
         2.0 * (replicas - 1.0) * stepLatencySeconds;
}

}  // namespace tessera::bench
