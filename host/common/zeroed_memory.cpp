#include "zeroed_memory.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "tessera/error.hpp"

namespace tessera {

ZeroedMemory::ZeroedMemory(size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  // Anonymous private pages read as zero and are backed only once written; MAP_NORESERVE keeps a
  // large declared size from being charged against the commit limit up front.
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    size_ = 0;
    throw Error(
        fmt::format("cannot reserve {} bytes of simulated memory: {}", bytes, std::strerror(e)));
  }
  data_ = static_cast<uint8_t*>(p);
}

ZeroedMemory::~ZeroedMemory() {
  release();
}

ZeroedMemory::ZeroedMemory(ZeroedMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

ZeroedMemory& ZeroedMemory::operator=(ZeroedMemory&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void ZeroedMemory::release() {
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace tessera
