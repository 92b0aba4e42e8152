// Fashion-MNIST from Debian's dataset-fashion-mnist package: the four gzipped IDX files, read
// with zlib and checked (magic, dimensions, lengths, gzip CRC) before anything uses them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::bench {

/// Images and labels of one split, in file order: images is count() x pixels bytes, row-major.
struct LabelledImages {
  std::vector<uint8_t> images;  ///< count() * pixels values 0..255, each image 28 x 28 row-major
  std::vector<uint8_t> labels;  ///< count() class indices 0..9
  size_t pixels = 784;          ///< values per image

  /// Number of images.
  size_t count() const { return labels.size(); }
};

/// The input scaling that gives the pixels of a split zero mean and unit variance: input =
/// pixel * scale + offset with scale = 1 / sigma and offset = -mean / sigma, where mean and sigma
/// (population) are those of every pixel value 0-255 of every image, computed in double and each
/// rounded once to float.
struct Standardization {
  float scale = 1.0f / 255.0f;
  float offset = 0.0f;
};
/// That scaling for images; throws tessera::Error on an empty split or one whose pixels are all
/// equal.
Standardization standardization(const LabelledImages& images);

/// The Fashion-MNIST training (60,000) and test (10,000) splits.
class FashionMnist {
 public:
  static constexpr size_t kRows = 28;
  static constexpr size_t kCols = 28;
  static constexpr size_t kPixels = kRows * kCols;
  static constexpr size_t kClasses = 10;
  /// The Debian package that provides the files (named in every error).
  static constexpr const char* kPackage = "dataset-fashion-mnist";

  /// Where the Debian package installs the files.
  static std::string defaultDir();
  /// Load {train,t10k}-{images-idx3,labels-idx1}-ubyte.gz from dir; throws tessera::Error naming
  /// the file and the package on a missing, truncated or corrupt file.
  static FashionMnist load(const std::string& dir = defaultDir());
  /// Load one split from an images file and a labels file (same checks as load()).
  static LabelledImages loadSplit(const std::string& imagesPath, const std::string& labelsPath);

  /// The 60,000 training images and labels.
  const LabelledImages& train() const { return train_; }
  /// The 10,000 test images and labels.
  const LabelledImages& test() const { return test_; }

 private:
  LabelledImages train_;
  LabelledImages test_;
};

}  // namespace tessera::bench
