// NumPy .npy files of float32 arrays (format version 1.0-3.0, little-endian, C order), for the
// tools and the Python module to exchange inputs and outputs (docs/onnx.md).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tessera::onnx {

/// Largest .npy file read (bytes).
inline constexpr size_t kMaxNpyBytes = size_t{1} << 31;

/// An array: its shape and its values in row-major order, float32 (data) or integer (ints: an
/// int64 or int32 file, such as token ids for an embedding).
struct NpyArray {
  std::vector<size_t> shape;
  std::vector<float> data;    ///< the values of a float32 array
  std::vector<int64_t> ints;  ///< the values of an integer array
  bool integer = false;       ///< which of the two holds the values
  /// Elements: the product of shape (1 for a scalar).
  size_t size() const;
};

/// Read a float32, int64 or int32 little-endian .npy file; throws tessera::Error naming the file
/// and what is wrong (dtype, byte order, Fortran order, a shape that does not match the data, a
/// size over kMaxNpyBytes).
NpyArray readNpy(const std::string& path);
/// Write a float32 .npy file (version 1.0); throws tessera::Error naming the file on any failure
/// (an integer array included).
void writeNpy(const std::string& path, const NpyArray& array);

}  // namespace tessera::onnx
