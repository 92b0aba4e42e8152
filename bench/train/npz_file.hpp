// NumPy .npz files of float32 arrays: a zip archive of .npy members (NumPy format 1.0), written
// stored (uncompressed) with correct CRC-32s, read stored or deflated (numpy.savez_compressed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessera::bench {

/// An ordered set of named float32 arrays, saved and loaded as .npz.
class NpzFile {
 public:
  /// One array: shape (empty for a scalar) and row-major (C-order) values.
  struct Array {
    std::vector<size_t> shape;
    std::vector<float> data;
  };

  /// Add or replace array `name` (without ".npy"); throws tessera::Error if data.size() is not
  /// the product of shape or the name is empty or not a plain file name.
  void set(const std::string& name, std::vector<size_t> shape, std::vector<float> data);
  /// Add or replace a 0-d (scalar) array.
  void setScalar(const std::string& name, float value);
  /// Whether array `name` exists.
  bool contains(const std::string& name) const;
  /// Array `name`; throws tessera::Error naming it if absent.
  const Array& get(const std::string& name) const;
  /// The value of a scalar (or one-element) array; throws tessera::Error if absent or not one
  /// value.
  float scalar(const std::string& name) const;
  /// Array names in file order.
  std::vector<std::string> names() const;

  /// Write the archive to path; throws tessera::Error naming the file on any write failure.
  void save(const std::string& path) const;
  /// Read an archive; throws tessera::Error naming the file and member on malformed input,
  /// unsupported dtypes (only little-endian float32 '<f4'), Fortran order or CRC mismatches.
  /// With `only` (array name -> most .npy bytes it may declare), any other member, or one that
  /// declares more, is refused before it is decoded (a file of parameters read for one network).
  /// Sizes are bounded before anything is allocated: the file (a regular file, never a FIFO),
  /// each member, their sum, and each member's declared size against what deflate can make of its
  /// compressed bytes (docs/limits.md, "Files").
  static NpzFile load(const std::string& path,
                      const std::map<std::string, uint64_t>* only = nullptr);
  /// The most .npy bytes an array of `elements` float32 values takes (the largest header and the
  /// data), for load's `only`.
  static uint64_t maxNpyBytes(uint64_t elements);

  /// The .npy encoding (version 1.0 header padded to 64 bytes, then the data) of one array.
  static std::vector<uint8_t> encodeNpy(const Array& array);
  /// Decode one .npy member; `what` names it in errors.
  static Array decodeNpy(const std::vector<uint8_t>& bytes, const std::string& what);

 private:
  std::vector<std::pair<std::string, Array>> arrays_;
};

}  // namespace tessera::bench
