// float16 tensors in the library (docs/library.md, "fp16 tensors, casts and matmul"): casts between
// float32 and float16 on the matrix unit's conversions, and the product of float16 operands with
// float32 accumulation on the unit (AMP.H). A float16 tensor is used in whole words: its elements
// pair up (2i, 2i + 1) in one 32-bit word wherever the compiler moves it (docs/compiler.md,
// "Float16 tensors"). Everything here needs a target with the matrix unit (Target::hasMatrixUnit);
// on one without it the builders throw, naming the op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/graph.hpp"
#include "tessera/ops.hpp"
#include "tessera/program.hpp"

namespace tessera::ops {

/// t converted to type, element by element, mapped like t: float32 -> float16 rounds to nearest,
/// ties to even (AMP.CVTHS: overflow to ±inf, binary16 subnormals kept, NaN canonical 0x7e00);
/// float16 -> float32 is exact (AMP.CVTSH). The same type gives t itself.
Tensor cast(Graph& graph, const Tensor& t, ElemType type, Sequence& prog, const std::string& name);

/// float32 t to float16 with stochastic rounding (AMP.CVTHS.SR). Each vertex seeds its context's
/// generator (AMP.SEED) with a value drawn from seed and the vertex's index, so the same graph and
/// seed give the same bits on every backend; another seed gives other roundings.
Tensor castStochastic(Graph& graph, const Tensor& t, uint32_t seed, Sequence& prog,
                      const std::string& name);

/// The seed castStochastic gives its vertex number v (in the order it adds them) for seed: a
/// host reference replays a cast with it (never 0, which AMP.SEED would replace).
uint32_t castStochasticSeed(uint32_t seed, uint32_t v);

/// t [m, n] float16 transposed into a new [n, m] float16 tensor, every half moved as it is: the
/// result in pairs of whole rows per tile (mapLinearly, grain 2m), each tile gathering its
/// columns of t and transposing them with TransposeHalf vertices. m and n must be even (float16
/// moves in pairs). The transposes of a float16 product's backward (autodiff's MatMul) use it.
Tensor transposeHalf(Graph& graph, const Tensor& t, Sequence& prog, const std::string& name);

/// op(a) [m, k] times op(b) [k, n], float16, = [m, n] float32: matmul's plan with k parts
/// multiples of 8, each tile's block on the unit (MatMulAmpH) where matMulHalfUsesUnit holds and
/// by MatMulHalf otherwise, with the same bits: every element is the chain fma(w(a), w(b), s) over
/// each k part in increasing order from +0 (w the exact widening), then the parts summed in order.
/// k and n must be even (float16 rows are moved in pairs). A transposed operand (options) is
/// transposed by transposeHalf first: the plain product of the transposes, bit for bit.
Tensor matmulHalf(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog,
                  const std::string& name, const MatMulOptions& options = {});

/// A new float32 [m, n] variable mapped as matmulHalf(graph, a [m, k], b [k, n]) maps its result.
/// A float32 master weight W [m, n] whose gradient is the float16 product x^T g (k the batch) is
/// laid out so: the gradient then lies where W does, and the update is local to each tile.
Tensor createMatMulHalfResult(Graph& graph, size_t m, size_t k, size_t n, const std::string& name);

/// True if a tile's float16 block [m, k] x [k, n] goes to MatMulAmpH: the target has the unit (as
/// matMulUsesUnit), n is a multiple of 4 and k a multiple of 8 with k >= 16.
bool matMulHalfUsesUnit(const Target& target, size_t m, size_t k, size_t n);

/// The plan of a float16 product: planMatMul's search with AMP.H's rate, 2-byte operands and k
/// parts multiples of 8 (MatMulPlan::kGrain).
MatMulPlan planMatMulHalf(const Graph& graph, size_t m, size_t k, size_t n);

}  // namespace tessera::ops
