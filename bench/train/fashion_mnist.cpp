#include "fashion_mnist.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>

#include "file_io.hpp"
#include "tessera/error.hpp"

namespace tessera::bench {
namespace {

// Bounds on what a file may make us allocate: the real files are 26 MB compressed, 47 MB raw.
constexpr size_t kMaxCompressed = size_t{256} << 20;
constexpr size_t kMaxRaw = size_t{512} << 20;
constexpr uint32_t kMaxImages = 10'000'000;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(
      fmt::format("fashion-mnist: {}: {} (the files come from the Debian package {}; "
                  "scripts/setup.sh installs it)",
                  path, what, FashionMnist::kPackage));
}

// A regular file of at most kMaxCompressed bytes (a FIFO is refused, never waited on).
std::vector<uint8_t> readFile(const std::string& path) {
  try {
    return readRegularFile(path, kMaxCompressed, "a gzipped IDX file");
  } catch (const Error& e) {
    throw Error(
        fmt::format("fashion-mnist: {} (the files come from the Debian package {}; "
                    "scripts/setup.sh installs it)",
                    e.what(), FashionMnist::kPackage));
  }
}

// Inflate every gzip member of the file; truncation, a bad CRC or length, or trailing non-gzip
// bytes are errors.
std::vector<uint8_t> gunzip(const std::string& path, const std::vector<uint8_t>& in) {
  if (in.size() < 2 || in[0] != 0x1f || in[1] != 0x8b)
    fail(path, "not a gzip file (bad gzip magic)");
  std::vector<uint8_t> out;
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) fail(path, "zlib inflateInit2 failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  std::vector<uint8_t> chunk(1 << 16);
  for (;;) {
    zs.next_out = chunk.data();
    zs.avail_out = static_cast<uInt>(chunk.size());
    const int rc = inflate(&zs, Z_NO_FLUSH);
    const size_t produced = chunk.size() - zs.avail_out;
    if (out.size() + produced > kMaxRaw) fail(path, "decompressed data too large");
    out.insert(out.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(produced));
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      if (zs.avail_in < 2 || zs.next_in[0] != 0x1f || zs.next_in[1] != 0x8b)
        fail(path, fmt::format("{} bytes of garbage after the gzip stream", zs.avail_in));
      if (inflateReset(&zs) != Z_OK) fail(path, "zlib inflateReset failed");
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0)
      fail(path, "truncated gzip stream (unexpected end of file)");
    fail(path, fmt::format("corrupt gzip data: {}", zs.msg != nullptr ? zs.msg : zError(rc)));
  }
  return out;
}

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// IDX: magic 0x0000 08 nd (unsigned bytes, nd dimensions), nd big-endian uint32 sizes, data.
std::vector<uint8_t> readIdx(const std::string& path, uint32_t dims, std::vector<uint32_t>& sizes) {
  const std::vector<uint8_t> raw = gunzip(path, readFile(path));
  const size_t header = 4 + 4 * size_t{dims};
  if (raw.size() < header) fail(path, fmt::format("IDX header truncated ({} bytes)", raw.size()));
  const uint32_t magic = be32(raw.data());
  const uint32_t want = 0x00000800u | dims;
  if (magic != want)
    fail(path, fmt::format("bad IDX magic 0x{:08x} (expected 0x{:08x})", magic, want));
  sizes.clear();
  size_t n = 1;
  for (uint32_t d = 0; d < dims; ++d) {
    sizes.push_back(be32(raw.data() + 4 + 4 * d));
    n *= sizes.back();
  }
  if (sizes[0] == 0 || sizes[0] > kMaxImages)
    fail(path, fmt::format("bad item count {}", sizes[0]));
  if (dims == 3 && (sizes[1] != FashionMnist::kRows || sizes[2] != FashionMnist::kCols))
    fail(path, fmt::format("images are {} x {}, expected {} x {}", sizes[1], sizes[2],
                           FashionMnist::kRows, FashionMnist::kCols));
  if (raw.size() - header < n)
    fail(path, fmt::format("data truncated: {} bytes, header says {}", raw.size() - header, n));
  if (raw.size() - header > n)
    fail(path,
         fmt::format("{} bytes after the data the header describes", raw.size() - header - n));
  return std::vector<uint8_t>(raw.begin() + static_cast<std::ptrdiff_t>(header), raw.end());
}

}  // namespace

std::string FashionMnist::defaultDir() {
  return "/usr/share/datasets/fashion-mnist";
}

LabelledImages FashionMnist::loadSplit(const std::string& imagesPath,
                                       const std::string& labelsPath) {
  LabelledImages split;
  std::vector<uint32_t> imageDims;
  std::vector<uint32_t> labelDims;
  split.images = readIdx(imagesPath, 3, imageDims);
  split.labels = readIdx(labelsPath, 1, labelDims);
  split.pixels = kPixels;
  if (imageDims[0] != labelDims[0])
    fail(labelsPath,
         fmt::format("{} labels for {} images in {}", labelDims[0], imageDims[0], imagesPath));
  for (size_t i = 0; i < split.labels.size(); ++i)
    if (split.labels[i] >= kClasses)
      fail(labelsPath, fmt::format("label {} of item {} is not a class 0..9", split.labels[i], i));
  return split;
}

FashionMnist FashionMnist::load(const std::string& dir) {
  FashionMnist d;
  d.train_ = loadSplit(dir + "/train-images-idx3-ubyte.gz", dir + "/train-labels-idx1-ubyte.gz");
  d.test_ = loadSplit(dir + "/t10k-images-idx3-ubyte.gz", dir + "/t10k-labels-idx1-ubyte.gz");
  return d;
}

Standardization standardization(const LabelledImages& images) {
  std::array<uint64_t, 256> histogram{};
  for (const uint8_t v : images.images) ++histogram[v];
  const double n = static_cast<double>(images.images.size());
  double sum = 0, squares = 0;
  for (size_t v = 0; v < histogram.size(); ++v) {
    sum += static_cast<double>(v) * static_cast<double>(histogram[v]);
    squares += static_cast<double>(v * v) * static_cast<double>(histogram[v]);
  }
  const double mean = n > 0 ? sum / n : 0, variance = n > 0 ? squares / n - mean * mean : 0;
  if (!(variance > 0))
    throw Error(fmt::format("standardization: {} pixels with no variance", images.images.size()));
  const double sigma = std::sqrt(variance);
  return {static_cast<float>(1.0 / sigma), static_cast<float>(-mean / sigma)};
}

}  // namespace tessera::bench
