#include "tessera/tensor.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "tessera/error.hpp"

namespace tessera {

const char* elemTypeName(ElemType type) {
  switch (type) {
    case ElemType::Float32:
      return "float32";
    case ElemType::Int32:
      return "int32";
    case ElemType::Float16:
      return "float16";
  }
  return "?";
}

unsigned elemTypeBytes(ElemType type) {
  return type == ElemType::Float16 ? 2 : 4;
}

namespace {

size_t product(const std::vector<size_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), size_t{1}, std::multiplies<>());
}

std::string viewName(const std::string& name) {
  return name.ends_with(" (view)") ? name : name + " (view)";
}

// Views are built from runs, never element by element, so that a slice or a concatenation costs
// what it picks (plus a binary search), not the size of the tensor it is taken from: a mapping
// loop that slices a large tensor region by region stays linear (issue 29, item 3).

// r appended to out, merged with the last run when it continues it.
void appendRun(std::vector<ElementRun>& out, const ElementRun& r) {
  if (r.begin == r.end) return;
  if (!out.empty() && out.back().var == r.var && out.back().end == r.begin) {
    out.back().end = r.end;
  } else {
    out.push_back(r);
  }
}

// The flat element index at which each run starts (prefix sums of the run lengths).
std::vector<size_t> runOffsets(const std::vector<ElementRun>& runs) {
  std::vector<size_t> starts(runs.size());
  size_t at = 0;
  for (size_t k = 0; k < runs.size(); ++k) {
    starts[k] = at;
    at += runs[k].end - runs[k].begin;
  }
  return starts;
}

// The runs of flat elements [begin, end) of a run list, appended to out.
void appendRange(const std::vector<ElementRun>& runs, const std::vector<size_t>& starts,
                 size_t begin, size_t end, std::vector<ElementRun>& out) {
  if (begin >= end) return;
  size_t k =
      static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), begin) - starts.begin()) -
      1;
  while (begin < end) {
    const ElementRun& r = runs[k];
    const size_t offset = begin - starts[k];
    const size_t len = std::min(end - begin, size_t{r.end - r.begin} - offset);
    appendRun(out, {r.var, static_cast<uint32_t>(r.begin + offset),
                    static_cast<uint32_t>(r.begin + offset + len)});
    begin += len;
    ++k;
  }
}

}  // namespace

size_t Tensor::dim(size_t d) const {
  if (d >= shape_.size()) {
    throw Error(fmt::format("tensor \"{}\": dimension {} of a rank-{} tensor", name_, d, rank()));
  }
  return shape_[d];
}

size_t Tensor::numElements() const {
  return product(shape_);
}

std::string Tensor::shapeString() const {
  return fmt::format("[{}]", fmt::join(shape_, ","));
}

std::vector<std::pair<uint32_t, uint32_t>> Tensor::elements() const {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  out.reserve(numElements());
  for (const ElementRun& r : runs_) {
    for (uint32_t i = r.begin; i < r.end; ++i) out.emplace_back(r.var, i);
  }
  return out;
}

Tensor Tensor::fromElements(uint64_t graphId, ElemType type, std::vector<size_t> shape,
                            const std::vector<std::pair<uint32_t, uint32_t>>& elements,
                            std::string name) {
  if (product(shape) != elements.size()) {
    throw Error(fmt::format("tensor \"{}\": shape [{}] needs {} elements, got {}", name,
                            fmt::join(shape, ","), product(shape), elements.size()));
  }
  Tensor t;
  t.graphId_ = graphId;
  t.type_ = type;
  t.shape_ = std::move(shape);
  t.name_ = std::move(name);
  for (const auto& [var, idx] : elements) {
    if (!t.runs_.empty() && t.runs_.back().var == var && t.runs_.back().end == idx) {
      ++t.runs_.back().end;
    } else {
      t.runs_.push_back({var, idx, idx + 1});
    }
  }
  return t;
}

const std::vector<size_t>& Tensor::runStarts() const {
  if (!runStarts_) runStarts_ = std::make_shared<const std::vector<size_t>>(runOffsets(runs_));
  return *runStarts_;
}

Tensor Tensor::fromRuns(uint64_t graphId, ElemType type, std::vector<size_t> shape,
                        const std::vector<ElementRun>& runs, std::string name) {
  size_t count = 0;
  for (const ElementRun& r : runs) count += r.end - r.begin;
  if (product(shape) != count) {
    throw Error(fmt::format("tensor \"{}\": shape [{}] needs {} elements, got {}", name,
                            fmt::join(shape, ","), product(shape), count));
  }
  Tensor t;
  t.graphId_ = graphId;
  t.type_ = type;
  t.shape_ = std::move(shape);
  t.name_ = std::move(name);
  for (const ElementRun& r : runs) appendRun(t.runs_, r);
  return t;
}

Tensor Tensor::ofVariable(uint64_t graphId, ElemType type, std::vector<size_t> shape, uint32_t var,
                          std::string name) {
  Tensor t;
  t.graphId_ = graphId;
  t.type_ = type;
  t.shape_ = std::move(shape);
  t.name_ = std::move(name);
  const size_t n = t.numElements();
  if (n > 0) t.runs_.push_back({var, 0, static_cast<uint32_t>(n)});
  return t;
}

Tensor Tensor::slice(size_t begin, size_t end, size_t d) const {
  if (d >= rank() || begin > end || end > shape_[d]) {
    throw Error(fmt::format("tensor \"{}\" {}: slice [{}, {}) of dimension {} is out of range",
                            name_, shapeString(), begin, end, d));
  }
  const size_t inner = product(std::vector<size_t>(shape_.begin() + d + 1, shape_.end()));
  const size_t outer = product(std::vector<size_t>(shape_.begin(), shape_.begin() + d));
  std::vector<ElementRun> picked;
  for (size_t o = 0; o < outer; ++o) {
    appendRange(runs_, runStarts(), (o * shape_[d] + begin) * inner, (o * shape_[d] + end) * inner,
                picked);
  }
  std::vector<size_t> shape = shape_;
  shape[d] = end - begin;
  return fromRuns(graphId_, type_, shape, picked, viewName(name_));
}

Tensor Tensor::operator[](size_t i) const {
  Tensor row = slice(i, i + 1, 0);
  std::vector<size_t> shape(shape_.begin() + 1, shape_.end());
  return row.reshape(shape);
}

Tensor Tensor::reshape(std::vector<size_t> shape) const {
  if (product(shape) != numElements()) {
    throw Error(fmt::format("tensor \"{}\": cannot reshape {} to [{}]", name_, shapeString(),
                            fmt::join(shape, ",")));
  }
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::flatten() const {
  return reshape({numElements()});
}

Tensor Tensor::dimShuffle(const std::vector<size_t>& perm) const {
  if (perm.size() != rank()) {
    throw Error(fmt::format("tensor \"{}\" {}: permutation of {} dimensions", name_, shapeString(),
                            perm.size()));
  }
  std::vector<bool> seen(rank(), false);
  for (size_t p : perm) {
    if (p >= rank() || seen[p]) {
      throw Error(
          fmt::format("tensor \"{}\": [{}] is not a permutation", name_, fmt::join(perm, ",")));
    }
    seen[p] = true;
  }
  std::vector<size_t> stride(rank(), 1);
  for (size_t d = rank(); d-- > 1;) stride[d - 1] = stride[d] * shape_[d];
  std::vector<size_t> shape(rank());
  for (size_t i = 0; i < rank(); ++i) shape[i] = shape_[perm[i]];
  const auto all = elements();
  std::vector<std::pair<uint32_t, uint32_t>> out;
  out.reserve(all.size());
  std::vector<size_t> idx(rank(), 0);
  for (size_t n = 0; n < all.size(); ++n) {
    size_t src = 0;
    for (size_t i = 0; i < rank(); ++i) src += idx[i] * stride[perm[i]];
    out.push_back(all[src]);
    for (size_t i = rank(); i-- > 0;) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
  return fromElements(graphId_, type_, shape, out, viewName(name_));
}

Tensor Tensor::transpose() const {
  if (rank() != 2) {
    throw Error(
        fmt::format("tensor \"{}\" {}: transpose needs 2 dimensions", name_, shapeString()));
  }
  return dimShuffle({1, 0});
}

Tensor Tensor::broadcast(size_t n, size_t d) const {
  if (d >= rank()) {
    throw Error(
        fmt::format("tensor \"{}\" {}: broadcast along dimension {}", name_, shapeString(), d));
  }
  // concat of n copies along d, without n copies of the tensor.
  const size_t outer = product(std::vector<size_t>(shape_.begin(), shape_.begin() + d));
  const size_t chunk = numElements() / std::max<size_t>(outer, 1);
  std::vector<ElementRun> out;
  for (size_t o = 0; o < outer; ++o) {
    for (size_t k = 0; k < n; ++k) appendRange(runs_, runStarts(), o * chunk, (o + 1) * chunk, out);
  }
  std::vector<size_t> shape = shape_;
  shape[d] *= n;
  return fromRuns(graphId_, type_, shape, out, viewName(name_));
}

Tensor Tensor::expand(size_t d) const {
  if (d > rank()) {
    throw Error(fmt::format("tensor \"{}\" {}: expand at dimension {}", name_, shapeString(), d));
  }
  std::vector<size_t> shape = shape_;
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(d), 1);
  return reshape(shape);
}

Tensor concat(const std::vector<Tensor>& tensors, size_t d) {
  if (tensors.empty()) throw Error("concat of no tensors");
  const Tensor& first = tensors.front();
  if (d >= first.rank()) {
    throw Error(fmt::format("concat along dimension {} of rank-{} tensors", d, first.rank()));
  }
  std::vector<size_t> shape = first.shape();
  shape[d] = 0;
  for (const Tensor& t : tensors) {
    if (t.graphId() != first.graphId() || t.elementType() != first.elementType() ||
        t.rank() != first.rank()) {
      throw Error(fmt::format("concat: tensor \"{}\" does not match \"{}\"", t.debugName(),
                              first.debugName()));
    }
    for (size_t i = 0; i < t.rank(); ++i) {
      if (i != d && t.shape()[i] != first.shape()[i]) {
        throw Error(fmt::format("concat: tensor \"{}\" {} does not match {} outside dimension {}",
                                t.debugName(), t.shapeString(), first.shapeString(), d));
      }
    }
    shape[d] += t.shape()[d];
  }
  const size_t outer = product(std::vector<size_t>(shape.begin(), shape.begin() + d));
  std::vector<ElementRun> out;
  std::vector<std::vector<size_t>> starts;
  for (const Tensor& t : tensors) starts.push_back(runOffsets(t.runs()));
  for (size_t o = 0; o < outer; ++o) {
    for (size_t k = 0; k < tensors.size(); ++k) {
      const size_t chunk = tensors[k].numElements() / std::max<size_t>(outer, 1);
      appendRange(tensors[k].runs(), starts[k], o * chunk, (o + 1) * chunk, out);
    }
  }
  return Tensor::fromRuns(
      first.graphId(), first.elementType(), shape, out,
      first.debugName().ends_with(" (view)") ? first.debugName() : first.debugName() + " (view)");
}

}  // namespace tessera
