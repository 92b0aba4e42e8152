// Tensors of a graph (docs/compiler.md): a shape, an element type and, for each element in
// row-major order, the variable element it refers to. Slices, reshapes, transposes and broadcasts
// are views: they make new Tensors over the same variable elements and copy no data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessera {

/// Element types of tensors and vertex fields: Float32 and Int32 take 4 bytes, Float16 (IEEE
/// binary16, held as its bit pattern: a codelet field of uint16_t, the host's bytes) takes 2, two
/// to a 32-bit word (docs/compiler.md, "Float16 tensors").
enum class ElemType : uint8_t { Float32, Int32, Float16 };

/// "float32", "int32" or "float16".
const char* elemTypeName(ElemType type);
/// Bytes of one element: 4, or 2 for Float16.
unsigned elemTypeBytes(ElemType type);

/// Elements [begin, end) of variable var, in order.
struct ElementRun {
  uint32_t var = 0;
  uint32_t begin = 0;
  uint32_t end = 0;
  bool operator==(const ElementRun&) const = default;
};

/// A view of variable elements with a shape (see the file comment).
class Tensor {
 public:
  Tensor() = default;

  /// True for a tensor made by a Graph (a default-constructed Tensor is invalid).
  bool valid() const { return graphId_ != 0; }
  /// Element type.
  ElemType elementType() const { return type_; }
  /// Dimensions, outermost first.
  const std::vector<size_t>& shape() const { return shape_; }
  /// Number of dimensions.
  size_t rank() const { return shape_.size(); }
  /// Size of dimension d.
  size_t dim(size_t d) const;
  /// Number of elements (the product of the shape; 1 for a scalar).
  size_t numElements() const;
  /// Shape as text, "[32,784]".
  std::string shapeString() const;
  /// Debug name of the tensor's first variable, with a "(view)" marker for views.
  const std::string& debugName() const { return name_; }

  /// Elements [begin, end) of dimension d.
  Tensor slice(size_t begin, size_t end, size_t d = 0) const;
  /// Index i of dimension 0 (the rank drops by one).
  Tensor operator[](size_t i) const;
  /// The same elements with another shape of equal element count.
  Tensor reshape(std::vector<size_t> shape) const;
  /// The elements as one dimension.
  Tensor flatten() const;
  /// Dimensions permuted: result dimension i is dimension perm[i].
  Tensor dimShuffle(const std::vector<size_t>& perm) const;
  /// A 2-D tensor transposed.
  Tensor transpose() const;
  /// The tensor repeated n times along dimension d (d may equal rank(): a new innermost axis is
  /// not created; use expand first).
  Tensor broadcast(size_t n, size_t d) const;
  /// A new dimension of size 1 inserted at position d.
  Tensor expand(size_t d) const;

  /// The variable elements, in row-major order of this view, as runs.
  const std::vector<ElementRun>& runs() const { return runs_; }
  /// The variable element of each element (var, index), in row-major order.
  std::vector<std::pair<uint32_t, uint32_t>> elements() const;
  /// Identity of the graph that made this tensor.
  uint64_t graphId() const { return graphId_; }

  /// Build a tensor from elements (used by Graph and by views). Throws on a size mismatch.
  static Tensor fromElements(uint64_t graphId, ElemType type, std::vector<size_t> shape,
                             const std::vector<std::pair<uint32_t, uint32_t>>& elements,
                             std::string name);
  /// Build a tensor from runs of variable elements (adjacent runs of one variable are merged, as
  /// fromElements does). Throws on a size mismatch.
  static Tensor fromRuns(uint64_t graphId, ElemType type, std::vector<size_t> shape,
                         const std::vector<ElementRun>& runs, std::string name);
  /// Build a tensor over one whole variable.
  static Tensor ofVariable(uint64_t graphId, ElemType type, std::vector<size_t> shape, uint32_t var,
                           std::string name);

 private:
  /// The flat index at which each run starts, computed on first use and shared by copies (a
  /// view sliced chunk by chunk finds each chunk by binary search).
  const std::vector<size_t>& runStarts() const;

  uint64_t graphId_ = 0;
  ElemType type_ = ElemType::Float32;
  std::vector<size_t> shape_;
  std::vector<ElementRun> runs_;
  std::string name_;
  mutable std::shared_ptr<const std::vector<size_t>> runStarts_;
};

/// Tensors joined along dimension d (all other dimensions equal, same graph and type).
Tensor concat(const std::vector<Tensor>& tensors, size_t d);

}  // namespace tessera
