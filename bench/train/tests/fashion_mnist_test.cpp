#include "fashion_mnist.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <array>
#include <filesystem>
#include <numeric>

#include "tessera/error.hpp"
#include "test_util.hpp"

namespace tessera::bench {
namespace {

using testing::TempDir;

// The real files from the Debian package (scripts/setup.sh installs it).
TEST(FashionMnist, LoadsTheDebianPackageFiles) {
  ASSERT_TRUE(std::filesystem::exists(FashionMnist::defaultDir()))
      << FashionMnist::defaultDir()
      << " is missing: run scripts/setup.sh (Debian package dataset-fashion-mnist)";
  const FashionMnist d = FashionMnist::load();
  ASSERT_EQ(d.train().count(), 60000u);
  ASSERT_EQ(d.test().count(), 10000u);
  EXPECT_EQ(d.train().images.size(), 60000u * 784u);
  EXPECT_EQ(d.test().images.size(), 10000u * 784u);
  EXPECT_EQ(d.train().pixels, 784u);
  const std::vector<uint8_t> firstTrain{9, 0, 0, 3, 0, 2, 7, 2, 5, 5};
  const std::vector<uint8_t> firstTest{9, 2, 1, 1, 6, 1, 4, 6, 5, 7};
  EXPECT_EQ(std::vector<uint8_t>(d.train().labels.begin(), d.train().labels.begin() + 10),
            firstTrain);
  EXPECT_EQ(std::vector<uint8_t>(d.test().labels.begin(), d.test().labels.begin() + 10), firstTest);
  EXPECT_EQ(std::vector<uint8_t>(d.train().labels.end() - 3, d.train().labels.end()),
            (std::vector<uint8_t>{3, 0, 5}));
  // Pixel sums of single images (computed independently with Python's gzip module).
  auto imageSum = [](const LabelledImages& s, size_t i) {
    return std::accumulate(s.images.begin() + static_cast<std::ptrdiff_t>(i * 784),
                           s.images.begin() + static_cast<std::ptrdiff_t>((i + 1) * 784), 0u);
  };
  EXPECT_EQ(imageSum(d.train(), 0), 76247u);
  EXPECT_EQ(imageSum(d.train(), 59999), 16684u);
  EXPECT_EQ(imageSum(d.test(), 0), 33456u);
  // Fashion-MNIST is balanced: 6,000 and 1,000 images of each class.
  std::array<size_t, 10> train{};
  std::array<size_t, 10> test{};
  for (uint8_t l : d.train().labels) ++train.at(l);
  for (uint8_t l : d.test().labels) ++test.at(l);
  for (size_t c = 0; c < 10; ++c) {
    EXPECT_EQ(train[c], 6000u) << "class " << c;
    EXPECT_EQ(test[c], 1000u) << "class " << c;
  }
}

void putBe32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

std::vector<uint8_t> idx(uint32_t magic, std::vector<uint32_t> dims, size_t dataBytes,
                         uint8_t fill = 7) {
  std::vector<uint8_t> out;
  out.reserve(4 + 4 * dims.size() + dataBytes);
  putBe32(out, magic);
  for (uint32_t d : dims) putBe32(out, d);
  for (size_t i = 0; i < dataBytes; ++i) out.push_back(static_cast<uint8_t>((fill + i) % 10));
  return out;
}

std::vector<uint8_t> gzip(const std::vector<uint8_t>& raw) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::vector<uint8_t> out(deflateBound(&zs, raw.size()) + 64);
  zs.next_in = const_cast<Bytef*>(raw.data());
  zs.avail_in = static_cast<uInt>(raw.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// A split of n images whose files the test can then damage.
struct SmallSplit {
  TempDir dir;
  std::string images = dir.file("images.gz");
  std::string labels = dir.file("labels.gz");
  explicit SmallSplit(uint32_t n = 3) {
    testing::writeBytes(images, gzip(idx(0x803, {n, 28, 28}, n * 784)));
    testing::writeBytes(labels, gzip(idx(0x801, {n}, n)));
  }
};

// The error names the file and the Debian package, and says what is wrong.
void expectError(const SmallSplit& s, const std::string& file, const std::string& what) {
  try {
    FashionMnist::loadSplit(s.images, s.labels);
    FAIL() << "no error for " << what;
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(file), std::string::npos) << m;
    EXPECT_NE(m.find("dataset-fashion-mnist"), std::string::npos) << m;
    EXPECT_NE(m.find(what), std::string::npos) << m;
  }
}

TEST(FashionMnist, ReadsAValidSmallSplit) {
  SmallSplit s(3);
  const LabelledImages d = FashionMnist::loadSplit(s.images, s.labels);
  ASSERT_EQ(d.count(), 3u);
  ASSERT_EQ(d.images.size(), 3u * 784u);
  EXPECT_EQ(d.images[0], 7);
  EXPECT_EQ(d.images[1], 8);
  EXPECT_EQ(d.images[783], (7 + 783) % 10);
  EXPECT_EQ(d.labels, (std::vector<uint8_t>{7, 8, 9}));
}

TEST(FashionMnist, MissingFileNamesFileAndPackage) {
  SmallSplit s;
  std::filesystem::remove(s.labels);
  expectError(s, s.labels, "cannot open");
  TempDir empty;
  try {
    FashionMnist::load(empty.file("nowhere"));
    FAIL() << "no error for a missing directory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("train-images-idx3-ubyte.gz"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("dataset-fashion-mnist"), std::string::npos) << e.what();
  }
}

TEST(FashionMnist, BadMagic) {
  SmallSplit s;
  testing::writeBytes(s.images, gzip(idx(0x801, {3, 28, 28}, 3 * 784)));
  expectError(s, s.images, "bad IDX magic");
  testing::writeBytes(s.images, gzip(idx(0x0d03, {3, 28, 28}, 3 * 784)));  // float data type
  expectError(s, s.images, "bad IDX magic");
}

TEST(FashionMnist, WrongDimensions) {
  SmallSplit s;
  testing::writeBytes(s.images, gzip(idx(0x803, {3, 27, 28}, 3 * 27 * 28)));
  expectError(s, s.images, "27 x 28");
  testing::writeBytes(s.images, gzip(idx(0x803, {0, 28, 28}, 0)));
  expectError(s, s.images, "bad item count 0");
  testing::writeBytes(s.images, gzip(idx(0x803, {2, 28, 28}, 2 * 784)));
  expectError(s, s.labels, "3 labels for 2 images");
}

TEST(FashionMnist, ShortAndLongData) {
  SmallSplit s;
  testing::writeBytes(s.images, gzip(idx(0x803, {3, 28, 28}, 3 * 784 - 1)));
  expectError(s, s.images, "data truncated");
  testing::writeBytes(s.images, gzip(idx(0x803, {3, 28, 28}, 3 * 784 + 5)));
  expectError(s, s.images, "5 bytes after the data");
  testing::writeBytes(s.images, gzip(idx(0x803, {3, 28, 28}, 3 * 784)));
  testing::writeBytes(s.labels, gzip({0, 0, 8}));
  expectError(s, s.labels, "IDX header truncated");
}

TEST(FashionMnist, TruncatedGzip) {
  SmallSplit s;
  std::vector<uint8_t> bytes = testing::readBytes(s.images);
  bytes.resize(bytes.size() / 2);
  testing::writeBytes(s.images, bytes);
  expectError(s, s.images, "truncated gzip stream");
  testing::writeBytes(s.images, {});
  expectError(s, s.images, "not a gzip file");
}

TEST(FashionMnist, CorruptGzip) {
  SmallSplit s;
  std::vector<uint8_t> bytes = testing::readBytes(s.images);
  bytes[bytes.size() - 6] ^= 0xff;  // inside the trailer's CRC-32
  testing::writeBytes(s.images, bytes);
  expectError(s, s.images, "corrupt gzip data");
  // An uncompressed IDX file is not accepted as the .gz file.
  testing::writeBytes(s.images, idx(0x803, {3, 28, 28}, 3 * 784));
  expectError(s, s.images, "not a gzip file");
  // Garbage after the gzip member.
  bytes = gzip(idx(0x803, {3, 28, 28}, 3 * 784));
  bytes.push_back(0);
  bytes.push_back(1);
  testing::writeBytes(s.images, bytes);
  expectError(s, s.images, "garbage after the gzip stream");
}

TEST(FashionMnist, LabelOutOfRange) {
  SmallSplit s;
  std::vector<uint8_t> raw = idx(0x801, {3}, 3);
  raw.back() = 10;
  testing::writeBytes(s.labels, gzip(raw));
  expectError(s, s.labels, "label 10 of item 2");
}

TEST(FashionMnist, ConcatenatedGzipMembersAreOneFile) {
  SmallSplit s;
  const std::vector<uint8_t> raw = idx(0x801, {3}, 3);
  std::vector<uint8_t> bytes = gzip(std::vector<uint8_t>(raw.begin(), raw.begin() + 5));
  const std::vector<uint8_t> second = gzip(std::vector<uint8_t>(raw.begin() + 5, raw.end()));
  bytes.insert(bytes.end(), second.begin(), second.end());
  testing::writeBytes(s.labels, bytes);
  EXPECT_EQ(FashionMnist::loadSplit(s.images, s.labels).labels, (std::vector<uint8_t>{7, 8, 9}));
}

}  // namespace
}  // namespace tessera::bench
