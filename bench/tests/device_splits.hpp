// The k splits of the matmul plans a trainer compiled an MLP's layers with, which the CPU
// reference (bench/train/cpu_mlp.cpp) follows to sum in the device's order (mlp_trainer_test.cpp,
// replica_trainer_test.cpp). The target is the one the trainer compiled for
// (MlpTrainer::report().target): the device's, or the same without the matrix unit where the
// unit's layouts did not fit, whose plans may split k otherwise (docs/decisions.md, "The unit's
// own k split").
#pragma once

#include <vector>

#include "cpu_mlp.hpp"
#include "mlp_model.hpp"
#include "tessera/half.hpp"
#include "tessera/ops.hpp"

namespace tessera::bench {

/// The k parts plan(graph, m, k, n).k of each layer's forward product x_l W_l and backward
/// product dz_l W_l^T (1 for the first layer: its input gradient is not computed).
template <typename Plan>
void layerKParts(const Target& target, const MlpConfig& c, Plan plan, std::vector<size_t>& forward,
                 std::vector<size_t>& backward) {
  const std::vector<size_t> sizes = layerSizes(c);
  Graph g(target);
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    forward.push_back(plan(g, c.batch, sizes[l], sizes[l + 1]).k);
    backward.push_back(l == 0 ? 1 : plan(g, c.batch, sizes[l + 1], sizes[l]).k);
  }
}

/// The fp32 products' plans (ops::planMatMul).
inline CpuMlp::KSplits compiledKSplits(const Target& target, const MlpConfig& c) {
  CpuMlp::KSplits ks;
  layerKParts(target, c, ops::planMatMul, ks.forward, ks.backward);
  return ks;
}

/// The float16 products' plans (ops::planMatMulHalf): forward, backward and weight gradient.
inline CpuMlp::HalfSplits compiledHalfSplits(const Target& target, const MlpConfig& c) {
  CpuMlp::HalfSplits hs;
  layerKParts(target, c, ops::planMatMulHalf, hs.forward, hs.backward);
  const std::vector<size_t> sizes = layerSizes(c);
  Graph g(target);
  for (size_t l = 0; l + 1 < sizes.size(); ++l)
    hs.weight.push_back(ops::planMatMulHalf(g, sizes[l], c.batch, sizes[l + 1]).k);
  return hs;
}

}  // namespace tessera::bench
