// The operation library (docs/library.md): builders in the poplibs shape — the graph first, then
// the program to append to, then a debug name. Each maps its result over tiles, adds compute sets
// of codelets from sw/codelets and appends the steps to prog; the compiler adds the exchanges.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tessera/graph.hpp"
#include "tessera/program.hpp"

namespace tessera::ops {

/// Map t's elements over tiles in contiguous chunks that are multiples of grain elements (the
/// last may be shorter), as evenly as the grain allows, starting at tile 0.
void mapLinearly(Graph& graph, const Tensor& t, size_t grain = 1);
/// A new variable mapped with mapLinearly.
Tensor createLinear(Graph& graph, ElemType type, std::vector<size_t> shape, const std::string& name,
                    size_t grain = 1);

/// a + b (same shape), mapped like a.
Tensor add(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog, const std::string& name);
/// a - b.
Tensor sub(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog, const std::string& name);
/// a * b, element by element.
Tensor mul(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog, const std::string& name);
/// a * scale.
Tensor scale(Graph& graph, const Tensor& a, float scale, Sequence& prog, const std::string& name);
/// max(a, 0).
Tensor relu(Graph& graph, const Tensor& a, Sequence& prog, const std::string& name);
/// grad where act > 0, else 0 (the gradient of relu at its output act).
Tensor reluGrad(Graph& graph, const Tensor& grad, const Tensor& act, Sequence& prog,
                const std::string& name);
/// a clamped to [lo, hi] element by element (ONNX Clip; NaN stays NaN; -inf/+inf: no bound).
Tensor clip(Graph& graph, const Tensor& a, float lo, float hi, Sequence& prog,
            const std::string& name);
/// grad where lo < in < hi, else 0 (Clip's gradient at its input, PyTorch's hardtanh backward).
Tensor clipGrad(Graph& graph, const Tensor& grad, const Tensor& in, float lo, float hi,
                Sequence& prog, const std::string& name);
/// x + bias along the last dimension of x (x is [rows, n], bias is [n]); mapped like x.
Tensor addBias(Graph& graph, const Tensor& x, const Tensor& bias, Sequence& prog,
               const std::string& name);
/// max(x + bias, 0) (addBias, then relu, with the same bits): one pass where every tile holding
/// x holds a column block of it and the graph lets ops span a tile's runs (Graph::setSpanRuns,
/// AddBiasReluFrom); otherwise addBias then relu.
Tensor addBiasRelu(Graph& graph, const Tensor& x, const Tensor& bias, Sequence& prog,
                   const std::string& name);
/// Every element of t (float32) set to value, in place.
void fill(Graph& graph, const Tensor& t, float value, Sequence& prog, const std::string& name);
/// t = t * scale, in place (one rounding per element).
void scaleInPlace(Graph& graph, const Tensor& t, float scale, Sequence& prog,
                  const std::string& name);
/// data += scale * delta, in place, fused (one rounding per element).
void scaledAddTo(Graph& graph, const Tensor& data, const Tensor& delta, float scale, Sequence& prog,
                 const std::string& name);

/// Sum of a 2-D tensor along dimension axis: axis 0 gives [n] (column sums, rows added in
/// order), axis 1 gives [m] (row sums, left to right).
Tensor reduceSum(Graph& graph, const Tensor& x, size_t axis, Sequence& prog,
                 const std::string& name);
/// Maximum of a 2-D tensor along axis 0.
Tensor reduceMax(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name);

/// Loss and gradient of softmaxCrossEntropy.
struct SoftmaxCrossEntropyResult {
  Tensor loss;  ///< [rows]: the cross-entropy of each row
  Tensor grad;  ///< [rows, classes]: d(scale * sum of losses) / d(logits), mapped like logits
};
/// Softmax cross-entropy of logits [rows, classes] against int32 labels [rows]; the gradient is
/// scaled by gradScale (1 / global batch size for the gradient of the mean loss).
SoftmaxCrossEntropyResult softmaxCrossEntropy(Graph& graph, const Tensor& logits,
                                              const Tensor& labels, float gradScale, Sequence& prog,
                                              const std::string& name);
/// Index of the largest element of each row of logits [rows, classes] (the first one on ties).
Tensor argMax(Graph& graph, const Tensor& logits, Sequence& prog, const std::string& name);
/// Number of rows whose argmax equals the label, as a float32 scalar [1].
Tensor correctCount(Graph& graph, const Tensor& logits, const Tensor& labels, Sequence& prog,
                    const std::string& name);
/// SGD with momentum in place: v = momentum v + grad; w -= lr v. Returns the velocity v, a new
/// variable mapped like w and starting at zero.
Tensor sgdMomentum(Graph& graph, const Tensor& w, const Tensor& grad, float lr, float momentum,
                   Sequence& prog, const std::string& name);

/// A new variable of t's type and shape mapped exactly like t; where t holds one whole variable in
/// another order (a weight createMatMulRhs stores in the matrix unit's layout), a view of the same
/// order over a new variable stored like t's (so element-by-element ops run in storage order).
Tensor cloneMapped(Graph& graph, const Tensor& t, ElemType type, const std::string& name);

/// How matmul treats its operands.
struct MatMulOptions {
  bool transposeA = false;  ///< a is stored [k, m]: the product uses a's transpose
  bool transposeB = false;  ///< b is stored [n, k]
  /// matmul: keep each op(a) block that a tile gathers for the matrix unit as a variable on that
  /// tile and record it (Graph::addTileCopy), for a later product over the same a to read
  /// instead of gathering it again (docs/library.md, "Copies of a on the tiles").
  bool keepACopies = false;
  /// matmulAccumulate / matmulInto with transposeA: read a's blocks from the copies recorded on
  /// the tiles. Only where nothing wrote a since the product that kept them (the autodiff layer
  /// sets it for a weight's gradient from the forward's input): the copies are not refreshed.
  bool useACopies = false;
};

/// op(a) [m, k] times op(b) [k, n] = [m, n] (float32), partitioned over the tiles along m, n and
/// k; partial sums of a k-split are added by a reduction on the tiles that own the result. Every
/// result element is a sum over k in increasing order within each k-part (fused multiply-adds),
/// then of the parts in order.
/// With float16 a and b (tessera/half.hpp) the result is float32 accumulated on the
/// matrix unit (AMP.H), k parts multiples of 8.
Tensor matmul(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog,
              const std::string& name, const MatMulOptions& options = {});

/// A new [m, k] variable mapped where matmul(graph, it, b [k, n]) reads it: each block on one of
/// the tiles that use it (the others receive it by multicast). type: Float32 or Float16 (the fp16
/// product's plan, tessera/half.hpp).
Tensor createMatMulLhs(Graph& graph, size_t m, size_t k, size_t n, const std::string& name,
                       ElemType type = ElemType::Float32);
/// A new [k, n] variable mapped where matmul(graph, a [m, k], it) reads it (type as above).
Tensor createMatMulRhs(Graph& graph, size_t m, size_t k, size_t n, const std::string& name,
                       ElemType type = ElemType::Float32);

/// c += op(a) op(b), in place, where c is laid out in one rectangular block per tile (as
/// createMatMulRhs and matmul results are): each tile computes its own block with its five workers
/// and the supervisor, gathering the rows of op(a) and columns of op(b) it needs. Each element is
/// c followed by fused multiply-adds over k in increasing order (no k split). With a scaled b
/// (say -lr times a gradient) this is an SGD step that never stores the weight gradient.
void matmulAccumulate(Graph& graph, const Tensor& c, const Tensor& a, const Tensor& b,
                      Sequence& prog, const std::string& name, const MatMulOptions& options = {});

/// c = op(a) op(b) into c's blocks, as matmulAccumulate computes them but from +0 (the same bits
/// as filling c with zeros and accumulating, without the fill): a gradient stored like its weights.
void matmulInto(Graph& graph, const Tensor& c, const Tensor& a, const Tensor& b, Sequence& prog,
                const std::string& name, const MatMulOptions& options = {});

/// The split matmul would choose for these sizes on this graph's tiles: parts along m, n and k.
struct MatMulPlan {
  size_t m = 1, n = 1, k = 1;
  size_t grain = 1;   ///< column blocks (along n) are multiples of this where n allows: 4 on a
                      ///< target with the matrix unit (MatMulAmp's shape), else 1; k parts are
                      ///< ceil(k / parts) long on every target (their sums fix the result's bits)
  size_t kGrain = 1;  ///< k parts are multiples of this: 8 for a float16 product (AMP.H's block)
};
/// True if matmul and matmulAccumulate give a tile's block of op(a) [m, k] op(b) [k, n] to the
/// matrix unit (codelet MatMulAmp) on this target: it has the unit (Target::hasMatrixUnit), the
/// FPU, M and six contexts, and n and k are multiples of 4 with k >= 8. Otherwise the scalar
/// MatMulBlocked computes it, with the same bits.
bool matMulUsesUnit(const Target& target, size_t m, size_t k, size_t n);
/// The plan of matmul(graph, a [m,k], b [k,n]): the least estimated cycles among the splits whose
/// estimated memory fits a tile (or the least cycles when none does).
MatMulPlan planMatMul(const Graph& graph, size_t m, size_t k, size_t n);

// ---- Broadcasting and math (docs/library.md, "Broadcasting and math").

/// The shape of a op b under NumPy's multidirectional broadcasting (ONNX's); throws naming name
/// and both shapes when they do not broadcast.
std::vector<size_t> broadcastShape(const std::vector<size_t>& a, const std::vector<size_t>& b,
                                   const std::string& name);
/// t viewed in shape by NumPy broadcasting (leading dimensions added, dimensions of 1 repeated):
/// a view, no copy.
Tensor broadcastTo(const Tensor& t, const std::vector<size_t>& shape);
/// The value of a float32 one-element constant (Graph::addConstant), or nothing.
std::optional<float> constantScalar(const Graph& graph, const Tensor& t);
/// The binary ops of binary().
enum class BinaryOp { Add, Sub, Mul, Div, Pow };
/// a op b element by element with NumPy broadcasting: out[i] = a[ia] op b[ib], one rounding (Pow:
/// tessera_powf). Same shapes give add/sub/mul's vertices; a constant scalar factor or divisor
/// goes into the vertices (scale, divScalar: the same bits). The result is mapped like the first
/// operand with as many elements, else linearly.
Tensor binary(Graph& graph, BinaryOp op, const Tensor& a, const Tensor& b, Sequence& prog,
              const std::string& name);
/// a / b (same shape).
Tensor div(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog, const std::string& name);
/// a / divisor, mapped like a.
Tensor divScalar(Graph& graph, const Tensor& a, float divisor, Sequence& prog,
                 const std::string& name);
/// Sum of x over the dimensions axes (the result has x's other dimensions, rank 0 when none
/// remain). Each result element sums its inputs in row-major order of the reduced indices,
/// starting from the first (reduceSum's orders: the 2-D cases are reduceSum itself). When every
/// reduced dimension has size 1 the result is a view of x.
Tensor reduceSumAxes(Graph& graph, const Tensor& x, const std::vector<size_t>& axes, Sequence& prog,
                     const std::string& name);
/// g (of a broadcast result's shape) summed down to shape, the operand's shape before
/// broadcasting (the backward of broadcasting): reduceSumAxes over the added and repeated
/// dimensions; g itself when the shapes are equal.
Tensor reduceToShape(Graph& graph, const Tensor& g, const std::vector<size_t>& shape,
                     Sequence& prog, const std::string& name);
/// sqrt(x), correctly rounded.
Tensor sqrt(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name);
/// grad / (2 y): the gradient of y = sqrt(x).
Tensor sqrtBackward(Graph& graph, const Tensor& grad, const Tensor& y, Sequence& prog,
                    const std::string& name);
/// e^x (tessera_expf).
Tensor exp(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name);
/// ln x (tessera_logf).
Tensor log(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name);
/// 1 / x.
Tensor reciprocal(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name);
/// -(grad (y y)): the gradient of y = 1 / x.
Tensor reciprocalBackward(Graph& graph, const Tensor& grad, const Tensor& y, Sequence& prog,
                          const std::string& name);
/// erf(x) (tessera_erff).
Tensor erf(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name);
/// (2/sqrt(pi) e^-(x x)) grad: the gradient of erf.
Tensor erfBackward(Graph& graph, const Tensor& grad, const Tensor& x, Sequence& prog,
                   const std::string& name);
/// -(grad (y / b)): the gradient of y = a / b with respect to b (all of y's shape).
Tensor divBackwardB(Graph& graph, const Tensor& grad, const Tensor& y, const Tensor& b,
                    Sequence& prog, const std::string& name);
/// grad (b a^(b-1)), 0 where b = 0: the gradient of a^b with respect to a (all of one shape).
Tensor powBackwardA(Graph& graph, const Tensor& grad, const Tensor& a, const Tensor& b,
                    Sequence& prog, const std::string& name);
/// grad (y ln a), 0 where a = 0 and b >= 0: the gradient of y = a^b with respect to b.
Tensor powBackwardB(Graph& graph, const Tensor& grad, const Tensor& a, const Tensor& b,
                    const Tensor& y, Sequence& prog, const std::string& name);

}  // namespace tessera::ops
