// Dropout with a counter-based mask: element i of the op (offset + position in this region) is
// kept when its Philox word (tessera/philox.h, key = seed[0..1], stream) is >= threshold
// (threshold = p * 2^32), and then scaled: out = keep ? in * scale : 0, scale = 1 / (1 - p).
// The same seed gives the same mask on every backend, every mapping and on the host; applied to
// the output gradient it is dropout's backward pass.
#include "tessera/philox.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Dropout, (Input, float, in), (Input, int32_t, seed), (Output, float, out),
               (Param, uint32_t, offset), (Param, uint32_t, stream), (Param, uint32_t, threshold),
               (Param, float, scale)) {
  const uint32_t k0 = static_cast<uint32_t>(seed[0]), k1 = static_cast<uint32_t>(seed[1]);
  const uint32_t first = offset, str = stream, th = threshold;
  const float sc = scale;
  uint32_t w[4];
  for (uint32_t i = 0; i < out.size(); ++i) {
    const uint32_t index = first + i;
    if (i == 0 || (index & 3u) == 0) {  // one Philox block serves four consecutive elements
      const uint32_t ctr[4] = {index >> 2, str, 0u, 0u};
      tessera_philox4x32(ctr, k0, k1, w);
    }
    out[i] = w[index & 3u] >= th ? in[i] * sc : 0.0f;
  }
}
