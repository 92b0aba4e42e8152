// .npy reading and writing (tessera/npy.hpp). The header is a Python dict literal; only the
// three keys NumPy writes are accepted, in any order, with float32, int64 or int32 little-endian
// data in C order.
#include "tessera/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <limits>
#include <string_view>

#include "file_io.hpp"
#include "tessera/error.hpp"

namespace tessera::onnx {

size_t NpyArray::size() const {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  return n;
}

namespace {

constexpr char kMagic[] = "\x93NUMPY";

// The text after key in the header dict ("'descr': '<f4'" -> "'<f4'"), up to the next top-level
// comma or closing brace.
std::string_view dictValue(std::string_view header, std::string_view key, const std::string& path) {
  const std::string quoted = fmt::format("'{}'", key);
  const size_t k = header.find(quoted);
  if (k == std::string_view::npos)
    throw Error(fmt::format("{}: the .npy header has no '{}' key", path, key));
  size_t p = header.find(':', k + quoted.size());
  if (p == std::string_view::npos) throw Error(fmt::format("{}: malformed .npy header", path));
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  size_t e = p;
  int depth = 0;
  for (; e < header.size(); ++e) {
    const char c = header[e];
    if (c == '(') ++depth;
    if (c == ')' && --depth < 0) break;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  if (depth != 0 || e >= header.size()) throw Error(fmt::format("{}: malformed .npy header", path));
  return header.substr(p, e - p);
}

std::vector<size_t> parseShape(std::string_view text, const std::string& path) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    throw Error(fmt::format("{}: malformed .npy shape {}", path, text));
  std::vector<size_t> shape;
  size_t i = 1;
  while (i + 1 < text.size()) {
    while (i + 1 < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i + 1 >= text.size()) break;
    uint64_t v = 0;
    size_t digits = 0;
    while (i + 1 < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (v > (std::numeric_limits<uint32_t>::max)())
        throw Error(fmt::format("{}: .npy dimension too large in {}", path, text));
      v = v * 10 + static_cast<uint64_t>(text[i] - '0');
      ++i, ++digits;
    }
    if (digits == 0) throw Error(fmt::format("{}: malformed .npy shape {}", path, text));
    shape.push_back(static_cast<size_t>(v));
    if (shape.size() > 16)
      throw Error(fmt::format("{}: .npy array of more than 16 dimensions", path));
  }
  return shape;
}

}  // namespace

NpyArray readNpy(const std::string& path) {
  const std::vector<uint8_t> bytes = readRegularFile(path, kMaxNpyBytes, ".npy array");
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    throw Error(fmt::format("{}: not a .npy file (no \\x93NUMPY magic)", path));
  const uint8_t major = bytes[6];
  size_t headerLen = 0, start = 0;
  if (major == 1) {
    headerLen = bytes[8] | (size_t{bytes[9]} << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error(fmt::format("{}: truncated .npy header", path));
    headerLen =
        bytes[8] | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) | (size_t{bytes[11]} << 24);
    start = 12;
  } else {
    throw Error(fmt::format("{}: .npy format version {} is not supported (1-3)", path, major));
  }
  if (headerLen > bytes.size() - start) throw Error(fmt::format("{}: truncated .npy header", path));
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + start), headerLen);
  const std::string_view descr = dictValue(header, "descr", path);
  NpyArray a;
  size_t width = 4;
  if (descr == "'<i8'" || descr == "'int64'") {
    a.integer = true, width = 8;
  } else if (descr == "'<i4'" || descr == "'int32'") {
    a.integer = true;
  } else if (descr != "'<f4'" && descr != "'float32'") {
    throw Error(
        fmt::format("{}: the array's dtype is {}, tessera reads float32 ('<f4'), int64 ('<i8') and "
                    "int32 ('<i4'): numpy's x.astype(np.float32)",
                    path, descr));
  }
  if (dictValue(header, "fortran_order", path) != "False")
    throw Error(fmt::format("{}: the array is in Fortran order; tessera reads C order", path));
  a.shape = parseShape(dictValue(header, "shape", path), path);
  uint64_t n = 1;
  for (size_t d : a.shape) {
    n *= d;
    if (n > kMaxNpyBytes / width) throw Error(fmt::format("{}: the array is too large", path));
  }
  const size_t dataStart = start + headerLen;
  if (bytes.size() - dataStart != n * width) {
    throw Error(fmt::format("{}: shape ({}) needs {} bytes of data, the file has {}", path,
                            fmt::join(a.shape, ", "), n * width, bytes.size() - dataStart));
  }
  const uint8_t* src = bytes.data() + dataStart;
  if (!a.integer) {
    a.data.resize(n);
    std::memcpy(a.data.data(), src, n * 4);
  } else if (width == 8) {
    a.ints.resize(n);
    std::memcpy(a.ints.data(), src, n * 8);
  } else {
    std::vector<int32_t> narrow(n);
    std::memcpy(narrow.data(), src, n * 4);
    a.ints.assign(narrow.begin(), narrow.end());
  }
  return a;
}

void writeNpy(const std::string& path, const NpyArray& a) {
  if (a.integer)
    throw Error(fmt::format("{}: writing integer arrays is not supported (float32 only)", path));
  if (a.data.size() != a.size()) {
    throw Error(
        fmt::format("{}: {} values for shape ({})", path, a.data.size(), fmt::join(a.shape, ", ")));
  }
  const std::string shape = a.shape.size() == 1 ? fmt::format("({},)", a.shape[0])
                                                : fmt::format("({})", fmt::join(a.shape, ", "));
  std::string header =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", shape);
  // Pad with spaces so that the data starts on a 64-byte boundary; the header ends with '\n'.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::vector<uint8_t> out(10 + header.size() + a.data.size() * 4);
  std::memcpy(out.data(), kMagic, 6);
  out[6] = 1;
  out[7] = 0;
  out[8] = static_cast<uint8_t>(header.size() & 0xff);
  out[9] = static_cast<uint8_t>(header.size() >> 8);
  std::memcpy(out.data() + 10, header.data(), header.size());
  if (!a.data.empty())
    std::memcpy(out.data() + 10 + header.size(), a.data.data(), a.data.size() * 4);
  writeFileChecked(path, out);
}

}  // namespace tessera::onnx
