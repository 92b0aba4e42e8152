// The k splits of a device's matmul plans for an MLP's layers, which the CPU reference
// (bench/train/cpu_mlp.cpp) follows to sum in the device's order (mlp_trainer_test.cpp,
// replica_trainer_test.cpp).
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
void layerKParts(const Device& dev, const MlpConfig& c, Plan plan, std::vector<size_t>& forward,
                 std::vector<size_t>& backward) {
  const std::vector<size_t> sizes = layerSizes(c);
  Graph g(Target::of(dev.info()));
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    forward.push_back(plan(g, c.batch, sizes[l], sizes[l + 1]).k);
    backward.push_back(l == 0 ? 1 : plan(g, c.batch, sizes[l + 1], sizes[l]).k);
  }
}

/// The fp32 products' plans (ops::planMatMul).
inline CpuMlp::KSplits deviceKSplits(const Device& dev, const MlpConfig& c) {
  CpuMlp::KSplits ks;
  layerKParts(dev, c, ops::planMatMul, ks.forward, ks.backward);
  return ks;
}

/// The float16 products' plans (ops::planMatMulHalf): forward, backward and weight gradient.
inline CpuMlp::HalfSplits deviceHalfSplits(const Device& dev, const MlpConfig& c) {
  CpuMlp::HalfSplits hs;
  layerKParts(dev, c, ops::planMatMulHalf, hs.forward, hs.backward);
  const std::vector<size_t> sizes = layerSizes(c);
  Graph g(Target::of(dev.info()));
  for (size_t l = 0; l + 1 < sizes.size(); ++l)
    hs.weight.push_back(ops::planMatMulHalf(g, sizes[l], c.batch, sizes[l + 1]).k);
  return hs;
}

}  // namespace tessera::bench
