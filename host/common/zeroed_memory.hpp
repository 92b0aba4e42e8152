// A zero-filled byte buffer whose pages are committed as they are written, not when it is made:
// a model tile's SRAM, so that a chip declared by a file or an option (a checkpoint of 1,472
// tiles of 2 GiB) costs address space, not memory, until something is stored there
// (docs/limits.md, "Sizes read from files").
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera {

class ZeroedMemory {
 public:
  /// `bytes` zero bytes, reserved but not committed. Throws tessera::Error naming the size when
  /// the address space cannot be had.
  explicit ZeroedMemory(size_t bytes);
  ~ZeroedMemory();
  ZeroedMemory(ZeroedMemory&& other) noexcept;
  ZeroedMemory& operator=(ZeroedMemory&& other) noexcept;
  ZeroedMemory(const ZeroedMemory&) = delete;
  ZeroedMemory& operator=(const ZeroedMemory&) = delete;

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void release();
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tessera
