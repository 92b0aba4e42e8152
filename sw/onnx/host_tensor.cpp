// Folding of constant subgraphs on the host (host_tensor.hpp). Float results are rounded to
// float32 after every operation, as the tiles and PyTorch compute them.
#include "host_tensor.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "tessera/error.hpp"

namespace tessera::onnx {

namespace {

// Elements of a folded constant at most: shape arithmetic is small, and an exporter's
// ConstantOfShape or Range past this is not shape arithmetic.
constexpr uint64_t kMaxFoldElements = uint64_t{1} << 24;

uint64_t countOf(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error(fmt::format("negative dimension in [{}]", fmt::join(shape, ",")));
    if (d != 0 && n > kMaxFoldElements / static_cast<uint64_t>(d))
      throw Error(
          fmt::format("a constant of shape [{}] is too large to fold (more than {} "
                      "elements)",
                      fmt::join(shape, ","), kMaxFoldElements));
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

HostTensor make(bool isFloat, std::vector<int64_t> shape) {
  HostTensor t;
  t.isFloat = isFloat;
  t.shape = std::move(shape);
  const uint64_t n = countOf(t.shape);
  if (isFloat)
    t.f.resize(n);
  else
    t.i.resize(n);
  return t;
}

std::vector<int64_t> stridesOf(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// Flat index into a tensor of shape `in` (broadcast to `out`) of output element k.
size_t broadcastIndex(size_t k, const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
  size_t idx = 0, stride = 1;
  size_t rem = k;
  for (size_t d = out.size(); d-- > 0;) {
    const size_t coord = rem % static_cast<size_t>(out[d]);
    rem /= static_cast<size_t>(out[d]);
    const size_t id = d + in.size();
    if (id < out.size()) continue;  // in has fewer dimensions: broadcast
    const size_t inD = id - out.size();
    const size_t dim = static_cast<size_t>(in[inD]);
    if (dim != 1) idx += coord * stride;
    stride *= dim;
  }
  return idx;
}

int64_t normAxis(int64_t axis, size_t rank, const char* what) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    throw Error(fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  return axis < 0 ? axis + r : axis;
}

float asFloat(double v) {
  return static_cast<float>(v);
}

const ::onnx::AttributeProto* attr(const ::onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t intAttr(const ::onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  const auto* a = attr(n, name);
  return a ? a->i() : fallback;
}

HostTensor binary(const HostTensor& a, const HostTensor& b, const std::string& op) {
  const bool isFloat = a.isFloat || b.isFloat;
  if (a.isFloat != b.isFloat) throw Error(fmt::format("{} of a float and an integer tensor", op));
  const bool compare = op == "Equal";
  HostTensor r = make(isFloat && !compare, broadcastShapes(a.shape, b.shape));
  const size_t n = static_cast<size_t>(countOf(r.shape));
  for (size_t k = 0; k < n; ++k) {
    const size_t ia = broadcastIndex(k, r.shape, a.shape), ib = broadcastIndex(k, r.shape, b.shape);
    if (compare) {
      r.i[k] = isFloat ? (a.f[ia] == b.f[ib]) : (a.i[ia] == b.i[ib]);
    } else if (isFloat) {
      const float x = asFloat(a.f[ia]), y = asFloat(b.f[ib]);
      float v = 0;
      if (op == "Add")
        v = x + y;
      else if (op == "Sub")
        v = x - y;
      else if (op == "Mul")
        v = x * y;
      else if (op == "Div")
        v = x / y;
      else if (op == "Pow")
        v = std::pow(x, y);
      r.f[k] = v;
    } else {
      const int64_t x = a.i[ia], y = b.i[ib];
      int64_t v = 0;
      bool overflow = false;
      if (op == "Add")
        overflow = __builtin_add_overflow(x, y, &v);
      else if (op == "Sub")
        overflow = __builtin_sub_overflow(x, y, &v);
      else if (op == "Mul")
        overflow = __builtin_mul_overflow(x, y, &v);
      else if (op == "Div") {
        if (y == 0) throw Error("integer division by zero");
        overflow = x == INT64_MIN && y == -1;
        if (!overflow) v = x / y;
      } else if (op == "Pow") {
        const double p = std::pow(static_cast<double>(x), static_cast<double>(y));
        overflow = !(std::fabs(p) < 9.2e18);
        if (!overflow) v = static_cast<int64_t>(p);
      }
      if (overflow) throw Error(fmt::format("integer {} of {} and {} overflows int64", op, x, y));
      r.i[k] = v;
    }
  }
  return r;
}

HostTensor reshaped(const HostTensor& x, std::vector<int64_t> shape) {
  HostTensor r = x;
  r.shape = std::move(shape);
  if (countOf(r.shape) != r.size())
    throw Error(fmt::format("cannot reshape {} to [{}]", x.describe(), fmt::join(r.shape, ",")));
  return r;
}

// ONNX Reshape's target: 0 copies the input's dimension (unless allowzero), one -1 is inferred.
std::vector<int64_t> reshapeTarget(const std::vector<int64_t>& in, std::vector<int64_t> shape,
                                   bool allowzero) {
  int infer = -1;
  uint64_t known = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0 && !allowzero) {
      if (d >= in.size()) throw Error("Reshape: a 0 past the input's rank");
      shape[d] = in[d];
    }
    if (shape[d] == -1) {
      if (infer >= 0) throw Error("Reshape: more than one -1");
      infer = static_cast<int>(d);
    } else if (shape[d] < 0) {
      throw Error(fmt::format("Reshape: dimension {}", shape[d]));
    } else {
      known *= static_cast<uint64_t>(shape[d]);
    }
  }
  uint64_t total = 1;
  for (int64_t d : in) total *= static_cast<uint64_t>(d);
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      throw Error(fmt::format("Reshape: [{}] does not divide [{}]", fmt::join(shape, ","),
                              fmt::join(in, ",")));
    shape[static_cast<size_t>(infer)] = static_cast<int64_t>(total / known);
  }
  return shape;
}

HostTensor gather(const HostTensor& data, const HostTensor& idx, int64_t axisAttr) {
  if (idx.isFloat) throw Error("Gather: float indices");
  const size_t axis = static_cast<size_t>(normAxis(axisAttr, data.shape.size(), "Gather axis"));
  std::vector<int64_t> shape(data.shape.begin(), data.shape.begin() + static_cast<long>(axis));
  shape.insert(shape.end(), idx.shape.begin(), idx.shape.end());
  shape.insert(shape.end(), data.shape.begin() + static_cast<long>(axis) + 1, data.shape.end());
  HostTensor r = make(data.isFloat, shape);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= data.shape[d];
  for (size_t d = axis + 1; d < data.shape.size(); ++d) inner *= data.shape[d];
  const int64_t dim = data.shape[axis];
  size_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j : idx.i) {
      if (j < -dim || j >= dim) throw Error(fmt::format("Gather: index {} out of [0, {})", j, dim));
      if (j < 0) j += dim;
      for (int64_t in = 0; in < inner; ++in, ++k) {
        const size_t src = static_cast<size_t>((o * dim + j) * inner + in);
        if (data.isFloat)
          r.f[k] = data.f[src];
        else
          r.i[k] = data.i[src];
      }
    }
  }
  return r;
}

HostTensor slice(const std::vector<HostTensor>& in) {
  const HostTensor& x = in[0];
  const size_t rank = x.shape.size();
  const std::vector<int64_t> starts = in[1].ints("Slice starts"), ends = in[2].ints("Slice ends");
  std::vector<int64_t> axes, steps;
  if (in.size() > 3 && in[3].size())
    axes = in[3].ints("Slice axes");
  else
    for (size_t a = 0; a < starts.size(); ++a) axes.push_back(static_cast<int64_t>(a));
  if (in.size() > 4 && in[4].size())
    steps = in[4].ints("Slice steps");
  else
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw Error("Slice: starts, ends, axes and steps differ in length");
  std::vector<int64_t> b(rank, 0), st(rank, 1), shape = x.shape;
  for (size_t k = 0; k < starts.size(); ++k) {
    const size_t a = static_cast<size_t>(normAxis(axes[k], rank, "Slice axis"));
    const int64_t dim = x.shape[a], step = steps[k];
    if (step == 0) throw Error("Slice: step 0");
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      shape[a] = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      shape[a] = s > e ? (s - e - step - 1) / -step : 0;
    }
    b[a] = s;
    st[a] = step;
  }
  HostTensor r = make(x.isFloat, shape);
  const std::vector<int64_t> inStride = stridesOf(x.shape);
  const size_t n = r.size();
  for (size_t k = 0; k < n; ++k) {
    size_t rem = k, src = 0;
    for (size_t d = rank; d-- > 0;) {
      const int64_t c = static_cast<int64_t>(rem % static_cast<size_t>(shape[d]));
      rem /= static_cast<size_t>(shape[d]);
      src += static_cast<size_t>((b[d] + c * st[d]) * inStride[d]);
    }
    if (x.isFloat)
      r.f[k] = x.f[src];
    else
      r.i[k] = x.i[src];
  }
  return r;
}

HostTensor concatAll(const std::vector<HostTensor>& in, int64_t axisAttr) {
  const size_t rank = in[0].shape.size();
  const size_t axis = static_cast<size_t>(normAxis(axisAttr, rank, "Concat axis"));
  std::vector<int64_t> shape = in[0].shape;
  shape[axis] = 0;
  for (const HostTensor& t : in) {
    if (t.shape.size() != rank || t.isFloat != in[0].isFloat)
      throw Error("Concat: inputs of different ranks or types");
    for (size_t d = 0; d < rank; ++d) {
      if (d != axis && t.shape[d] != in[0].shape[d]) throw Error("Concat: shapes differ");
    }
    shape[axis] += t.shape[axis];
  }
  HostTensor r = make(in[0].isFloat, shape);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < rank; ++d) inner *= shape[d];
  size_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostTensor& t : in) {
      const int64_t chunk = t.shape[axis] * inner;
      for (int64_t j = 0; j < chunk; ++j, ++k) {
        const size_t src = static_cast<size_t>(o * chunk + j);
        if (r.isFloat)
          r.f[k] = t.f[src];
        else
          r.i[k] = t.i[src];
      }
    }
  }
  return r;
}

HostTensor transposed(const HostTensor& x, std::vector<int64_t> perm) {
  const size_t rank = x.shape.size();
  if (perm.empty())
    for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  if (perm.size() != rank) throw Error("Transpose: perm of another rank");
  std::vector<int64_t> shape(rank);
  for (size_t d = 0; d < rank; ++d)
    shape[d] = x.shape[static_cast<size_t>(normAxis(perm[d], rank, "perm"))];
  HostTensor r = make(x.isFloat, shape);
  const std::vector<int64_t> inStride = stridesOf(x.shape);
  for (size_t k = 0; k < r.size(); ++k) {
    size_t rem = k, src = 0;
    for (size_t d = rank; d-- > 0;) {
      const size_t c = rem % static_cast<size_t>(shape[d]);
      rem /= static_cast<size_t>(shape[d]);
      src += c * static_cast<size_t>(inStride[static_cast<size_t>(perm[d])]);
    }
    if (x.isFloat)
      r.f[k] = x.f[src];
    else
      r.i[k] = x.i[src];
  }
  return r;
}

}  // namespace

std::vector<int64_t> HostTensor::ints(const std::string& what) const {
  if (isFloat) throw Error(fmt::format("{} must be integers, not {}", what, describe()));
  return i;
}

std::string HostTensor::describe() const {
  return fmt::format("[{}] {}", fmt::join(shape, ","), isFloat ? "float32" : "int64");
}

HostTensor fromProto(const ::onnx::TensorProto& t) {
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  const bool isFloat = t.data_type() == ::onnx::TensorProto::FLOAT;
  HostTensor r = make(isFloat, shape);
  const size_t n = r.size();
  if (t.has_raw_data()) {
    const char* p = t.raw_data().data();
    for (size_t k = 0; k < n; ++k) {
      switch (t.data_type()) {
        case ::onnx::TensorProto::FLOAT: {
          float v;
          std::memcpy(&v, p + 4 * k, 4);
          r.f[k] = v;
          break;
        }
        case ::onnx::TensorProto::INT64: {
          int64_t v;
          std::memcpy(&v, p + 8 * k, 8);
          r.i[k] = v;
          break;
        }
        case ::onnx::TensorProto::INT32: {
          int32_t v;
          std::memcpy(&v, p + 4 * k, 4);
          r.i[k] = v;
          break;
        }
        case ::onnx::TensorProto::INT8:
          r.i[k] = static_cast<int8_t>(p[k]);
          break;
        default:  // bool, uint8
          r.i[k] = static_cast<uint8_t>(p[k]);
      }
    }
  } else if (isFloat) {
    for (size_t k = 0; k < n; ++k) r.f[k] = t.float_data(static_cast<int>(k));
  } else if (t.data_type() == ::onnx::TensorProto::INT64) {
    for (size_t k = 0; k < n; ++k) r.i[k] = t.int64_data(static_cast<int>(k));
  } else {
    for (size_t k = 0; k < n; ++k) r.i[k] = t.int32_data(static_cast<int>(k));
  }
  return r;
}

std::vector<int64_t> broadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> r(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t x = d + a.size() >= rank ? a[d + a.size() - rank] : 1;
    const int64_t y = d + b.size() >= rank ? b[d + b.size() - rank] : 1;
    if (x != y && x != 1 && y != 1)
      throw Error(fmt::format("shapes [{}] and [{}] do not broadcast", fmt::join(a, ","),
                              fmt::join(b, ",")));
    r[d] = x == 1 ? y : x;
  }
  return r;
}

std::vector<HostTensor> fold(const ::onnx::NodeProto& node, const std::vector<HostTensor>& in) {
  const std::string& op = node.op_type();
  auto need = [&](size_t n) {
    if (in.size() < n) throw Error(fmt::format("{} needs {} inputs, has {}", op, n, in.size()));
  };
  if (op == "Constant") {
    for (const auto& a : node.attribute()) {
      if (a.name() == "value") return {fromProto(a.t())};
      if (a.name() == "value_float") {
        HostTensor t = make(true, {});
        t.f[0] = a.f();
        return {t};
      }
      if (a.name() == "value_floats") {
        HostTensor t = make(true, {a.floats_size()});
        for (int k = 0; k < a.floats_size(); ++k) t.f[static_cast<size_t>(k)] = a.floats(k);
        return {t};
      }
      if (a.name() == "value_int") {
        HostTensor t = make(false, {});
        t.i[0] = a.i();
        return {t};
      }
      if (a.name() == "value_ints") {
        HostTensor t = make(false, {a.ints_size()});
        for (int k = 0; k < a.ints_size(); ++k) t.i[static_cast<size_t>(k)] = a.ints(k);
        return {t};
      }
    }
    throw Error(
        "Constant without a supported value attribute (value, value_float(s), value_int(s))");
  }
  if (op == "Identity") {
    need(1);
    return {in[0]};
  }
  if (op == "Shape") {
    need(1);
    const int64_t rank = static_cast<int64_t>(in[0].shape.size());
    int64_t s = intAttr(node, "start", 0), e = intAttr(node, "end", rank);
    if (s < 0) s += rank;
    if (e < 0) e += rank;
    s = std::clamp<int64_t>(s, 0, rank);
    e = std::clamp<int64_t>(e, 0, rank);
    HostTensor t = make(false, {std::max<int64_t>(e - s, 0)});
    for (int64_t d = s; d < e; ++d)
      t.i[static_cast<size_t>(d - s)] = in[0].shape[static_cast<size_t>(d)];
    return {t};
  }
  if (op == "Gather") {
    need(2);
    return {gather(in[0], in[1], intAttr(node, "axis", 0))};
  }
  if (op == "Slice") {
    need(3);
    return {slice(in)};
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    need(1);
    std::vector<int64_t> axes;
    if (in.size() > 1) axes = in[1].ints(op + " axes");
    std::vector<int64_t> shape = in[0].shape;
    if (op == "Unsqueeze") {
      const size_t rank = shape.size() + axes.size();
      for (int64_t& a : axes) a = normAxis(a, rank, "Unsqueeze axis");
      std::sort(axes.begin(), axes.end());
      for (int64_t a : axes) shape.insert(shape.begin() + a, 1);
    } else {
      std::vector<bool> drop(shape.size(), false);
      if (axes.empty()) {
        for (size_t d = 0; d < shape.size(); ++d) drop[d] = shape[d] == 1;
      }
      for (int64_t a : axes) {
        const size_t d = static_cast<size_t>(normAxis(a, shape.size(), "Squeeze axis"));
        if (shape[d] != 1)
          throw Error(fmt::format("Squeeze of dimension {} of size {}", d, shape[d]));
        drop[d] = true;
      }
      std::vector<int64_t> kept;
      for (size_t d = 0; d < shape.size(); ++d) {
        if (!drop[d]) kept.push_back(shape[d]);
      }
      shape = kept;
    }
    return {reshaped(in[0], shape)};
  }
  if (op == "Concat") {
    need(1);
    return {concatAll(in, intAttr(node, "axis", 0))};
  }
  if (op == "Cast") {
    need(1);
    const int64_t to = intAttr(node, "to", 0);
    const bool toFloat = to == ::onnx::TensorProto::FLOAT || to == ::onnx::TensorProto::DOUBLE;
    const bool toInt = to == ::onnx::TensorProto::INT64 || to == ::onnx::TensorProto::INT32 ||
                       to == ::onnx::TensorProto::BOOL;
    if (!toFloat && !toInt)
      throw Error(fmt::format("Cast to element type {} is not supported", to));
    HostTensor r = make(toFloat, in[0].shape);
    for (size_t k = 0; k < r.size(); ++k) {
      if (toFloat)
        r.f[k] = asFloat(in[0].at(k));
      else if (to == ::onnx::TensorProto::BOOL)
        r.i[k] = in[0].at(k) != 0;
      else if (in[0].isFloat && !(std::fabs(in[0].f[k]) < 9.2e18))
        throw Error(fmt::format("Cast of {} to an integer", in[0].f[k]));
      else
        r.i[k] = in[0].intAt(k);
    }
    return {r};
  }
  if (op == "Reshape") {
    need(2);
    return {reshaped(in[0], reshapeTarget(in[0].shape, in[1].ints("Reshape shape"),
                                          intAttr(node, "allowzero", 0) != 0))};
  }
  if (op == "Flatten") {
    need(1);
    const size_t rank = in[0].shape.size();
    const int64_t axis = intAttr(node, "axis", 1);
    const size_t a = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
    if (a > rank) throw Error("Flatten axis out of range");
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < rank; ++d) (d < a ? outer : inner) *= in[0].shape[d];
    return {reshaped(in[0], {outer, inner})};
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" || op == "Equal") {
    need(2);
    if (op == "Pow" && in[0].isFloat && !in[1].isFloat) {
      HostTensor e = in[1];
      e.isFloat = true;
      e.f.assign(e.i.begin(), e.i.end());
      e.i.clear();
      return {binary(in[0], e, op)};
    }
    return {binary(in[0], in[1], op)};
  }
  if (op == "Neg" || op == "Sqrt" || op == "Reciprocal") {
    need(1);
    HostTensor r = in[0];
    if (op != "Neg" && !r.isFloat) throw Error(op + " of an integer tensor");
    for (size_t k = 0; k < r.size(); ++k) {
      if (!r.isFloat) {
        if (r.i[k] == INT64_MIN) throw Error("Neg of the smallest int64 overflows");
        r.i[k] = -r.i[k];
      } else if (op == "Neg")
        r.f[k] = -r.f[k];
      else if (op == "Sqrt")
        r.f[k] = std::sqrt(asFloat(r.f[k]));
      else
        r.f[k] = 1.0f / asFloat(r.f[k]);
    }
    return {r};
  }
  if (op == "Transpose") {
    need(1);
    std::vector<int64_t> perm;
    if (const auto* a = attr(node, "perm")) perm.assign(a->ints().begin(), a->ints().end());
    return {transposed(in[0], perm)};
  }
  if (op == "Where") {
    need(3);
    if (in[1].isFloat != in[2].isFloat) throw Error("Where of a float and an integer tensor");
    HostTensor r = make(in[1].isFloat,
                        broadcastShapes(in[0].shape, broadcastShapes(in[1].shape, in[2].shape)));
    for (size_t k = 0; k < r.size(); ++k) {
      const bool c = in[0].at(broadcastIndex(k, r.shape, in[0].shape)) != 0;
      const HostTensor& s = c ? in[1] : in[2];
      const size_t j = broadcastIndex(k, r.shape, s.shape);
      if (r.isFloat)
        r.f[k] = s.f[j];
      else
        r.i[k] = s.i[j];
    }
    return {r};
  }
  if (op == "ConstantOfShape") {
    need(1);
    HostTensor value = make(true, {1});
    if (const auto* a = attr(node, "value")) value = fromProto(a->t());
    if (value.size() != 1) throw Error("ConstantOfShape's value must hold one element");
    HostTensor r = make(value.isFloat, in[0].ints("ConstantOfShape shape"));
    for (size_t k = 0; k < r.size(); ++k) {
      if (r.isFloat)
        r.f[k] = value.f[0];
      else
        r.i[k] = value.i[0];
    }
    return {r};
  }
  if (op == "Range") {
    need(3);
    if (in[0].size() != 1 || in[1].size() != 1 || in[2].size() != 1)
      throw Error("Range's start, limit and delta must be scalars");
    const double start = in[0].at(0), limit = in[1].at(0), delta = in[2].at(0);
    if (delta == 0) throw Error("Range with delta 0");
    const double count = std::max(std::ceil((limit - start) / delta), 0.0);
    if (count > static_cast<double>(kMaxFoldElements)) throw Error("Range too long to fold");
    HostTensor r = make(in[0].isFloat, {static_cast<int64_t>(count)});
    for (size_t k = 0; k < r.size(); ++k) {
      if (r.isFloat)
        r.f[k] = asFloat(start + static_cast<double>(k) * delta);
      else {
        int64_t step = 0, v = 0;
        if (__builtin_mul_overflow(static_cast<int64_t>(k), in[2].i[0], &step) ||
            __builtin_add_overflow(in[0].i[0], step, &v))
          throw Error("Range overflows int64");
        r.i[k] = v;
      }
    }
    return {r};
  }
  if (op == "Expand") {
    need(2);
    HostTensor r = make(in[0].isFloat, broadcastShapes(in[0].shape, in[1].ints("Expand shape")));
    for (size_t k = 0; k < r.size(); ++k) {
      const size_t j = broadcastIndex(k, r.shape, in[0].shape);
      if (r.isFloat)
        r.f[k] = in[0].f[j];
      else
        r.i[k] = in[0].i[j];
    }
    return {r};
  }
  throw Error(fmt::format("{} cannot be folded on the host", op));
}

}  // namespace tessera::onnx
