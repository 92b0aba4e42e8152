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

/// forward[l]: x_l W_l; backward[l]: dz_l W_l^T (the first layer's input gradient is not
/// computed).
inline CpuMlp::KSplits deviceKSplits(const Device& dev, const MlpConfig& c) {
  const std::vector<size_t> sizes = layerSizes(c);
  Graph g(Target::of(dev.info()));
  CpuMlp::KSplits ks;
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    ks.forward.push_back(ops::planMatMul(g, c.batch, sizes[l], sizes[l + 1]).k);
    ks.backward.push_back(l == 0 ? 1 : ops::planMatMul(g, c.batch, sizes[l + 1], sizes[l]).k);
  }
  return ks;
}

/// The float16 products' plans (ops::planMatMulHalf): forward, backward and weight gradient.
inline CpuMlp::HalfSplits deviceHalfSplits(const Device& dev, const MlpConfig& c) {
  const std::vector<size_t> sizes = layerSizes(c);
  Graph g(Target::of(dev.info()));
  CpuMlp::HalfSplits hs;
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    hs.forward.push_back(ops::planMatMulHalf(g, c.batch, sizes[l], sizes[l + 1]).k);
    hs.backward.push_back(l == 0 ? 1 : ops::planMatMulHalf(g, c.batch, sizes[l + 1], sizes[l]).k);
    hs.weight.push_back(ops::planMatMulHalf(g, sizes[l], c.batch, sizes[l + 1]).k);
  }
  return hs;
}

}  // namespace tessera::bench
