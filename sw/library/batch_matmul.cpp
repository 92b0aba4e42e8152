// Batched matmul and its gradients (docs/library.md, "batchMatMul"): one matmul per batch, each
// on all the tiles by its own plan, so each batch has matmul's order of operations.
#include <fmt/format.h>

#include "rows.hpp"
#include "tessera/error.hpp"
#include "tessera/nn.hpp"

namespace tessera::ops {

namespace {

void check3(const Tensor& t, const char* what, const std::string& name) {
  requireFloat(t, what, name);
  if (t.rank() != 3) {
    throw Error(fmt::format("{}: {} \"{}\" must be [batch, rows, cols], is {}", name, what,
                            t.debugName(), t.shapeString()));
  }
}

// Batch by batch: matmul(a[i], b[i], options), stacked along a new first dimension.
Tensor perBatch(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog,
                const std::string& name, const MatMulOptions& options) {
  check3(a, "a", name);
  check3(b, "b", name);
  if (a.dim(0) != b.dim(0) || a.dim(0) == 0) {
    throw Error(fmt::format("{}: batch sizes of \"{}\" {} and \"{}\" {} differ or are zero", name,
                            a.debugName(), a.shapeString(), b.debugName(), b.shapeString()));
  }
  std::vector<Tensor> parts;
  for (size_t i = 0; i < a.dim(0); ++i) {
    parts.push_back(
        matmul(graph, a[i], b[i], prog, fmt::format("{}/{}", name, i), options).expand(0));
  }
  return concat(parts, 0);
}

}  // namespace

Tensor batchMatMul(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog,
                   const std::string& name, const MatMulOptions& options) {
  return perBatch(graph, a, b, prog, name, options);
}

// C = op(A) op(B), so d op(A) = dC op(B)^T and d op(B) = op(A)^T dC; a transposed operand's
// gradient is the transpose of that, which matmul's flags give without a copy.
Tensor batchMatMulBackwardA(Graph& graph, const Tensor& grad, const Tensor& b, Sequence& prog,
                            const std::string& name, const MatMulOptions& options) {
  if (options.transposeA) return perBatch(graph, b, grad, prog, name, {options.transposeB, true});
  return perBatch(graph, grad, b, prog, name, {false, !options.transposeB});
}

Tensor batchMatMulBackwardB(Graph& graph, const Tensor& grad, const Tensor& a, Sequence& prog,
                            const std::string& name, const MatMulOptions& options) {
  if (options.transposeB) return perBatch(graph, grad, a, prog, name, {true, options.transposeA});
  return perBatch(graph, a, grad, prog, name, {!options.transposeA, false});
}

}  // namespace tessera::ops
