// conv2d on the matrix unit (docs/library.md, "conv2d on the matrix unit"): the unit's operand a,
// out [rows, Kpad] <- in [rows, K] with the taps past K set to -0 (fma(-0, +0, acc) == acc for
// every accumulator under RNE: the padded taps change no bit). taps = K | Kpad << 16.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ConvWeightsAmp, (Input, float, in), (Output, float, out), (Param, uint32_t, taps)) {
  const uint32_t K = taps & 0xffffu, Kpad = taps >> 16;
  const uint32_t rows = in.size() / K;
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t t = 0; t < Kpad; ++t) out[r * Kpad + t] = t < K ? in[r * K + t] : -0.0f;
  }
}
