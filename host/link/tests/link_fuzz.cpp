// libFuzzer target for FrameCodec (docs/link-protocol.md, "Fuzzing"). The input is split into
// pieces by its first byte; the decoder must never crash, never hold more than a frame, and
// every frame it accepts must re-encode to exactly the bytes it was decoded from.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "crc32.hpp"
#include "frame_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tessera::link::FrameCodec;
  if (size == 0) return 0;
  const size_t piece = 1 + data[0] % 64;
  FrameCodec codec;
  size_t off = 1;
  while (off < size) {
    const size_t n = std::min(piece, size - off);
    size_t taken = 0;
    while (taken < n) {
      taken += codec.feed({data + off + taken, n - taken});
      while (auto ev = codec.poll()) {
        if (ev->kind != tessera::link::DecodeEvent::Kind::Frame) continue;
        const auto bytes = FrameCodec::encode(ev->frame);
        // The accepted frame must occur in the input verbatim (nothing invented).
        bool found = false;
        for (size_t at = 0; !found && at + bytes.size() <= size; ++at)
          found = std::memcmp(data + at, bytes.data(), bytes.size()) == 0;
        if (!found) std::abort();
      }
    }
    off += n;
    if (off % 4096 < piece && codec.hasPartial()) codec.dropPartial();  // exercise stalls too
  }
  return 0;
}
