// out[i] = max(in[i] + bias[(start + i) % bias.size()], 0): AddBiasFrom, then Relu's comparison
// on the rounded sum (the same bits as the two codelets one after the other). The loop runs in
// stretches up to the end of the bias run, so the inner loop steps three pointers and wraps
// nothing (9 instructions an element instead of 14 to 16 with the index wrapped each element),
// four elements a trip.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(AddBiasReluFrom, (Input, float, in), (Input, float, bias), (Output, float, out),
               (Param, uint32_t, start)) {
  const float* const b0 = bias.data();
  const float* const bEnd = b0 + bias.size();
  const float* b = b0 + static_cast<uint32_t>(start);
  const float* x = in.data();
  float* o = out.data();
  float* const oEnd = o + out.size();
  while (o != oEnd) {
    const uint32_t left = static_cast<uint32_t>(oEnd - o);
    const uint32_t run = static_cast<uint32_t>(bEnd - b);
    float* const stop = o + (run < left ? run : left);
#pragma GCC unroll 4
    while (o != stop) {
      const float v = *x++ + *b++;
      *o++ = v > 0.0f ? v : 0.0f;
    }
    if (b == bEnd) b = b0;
  }
}
