// The order in which batch normalisation adds the partial sums of a channel's parts: p[0], then
// + p[stride], + p[2 stride], ... (docs/library.md, "Layers"). Every vertex that needs a
// channel's total computes it with this one function, so all of them get the same bits.
#pragma once

#include <stdint.h>

static inline float tessera_bn_total(const float* p, uint32_t parts, uint32_t stride) {
  float s = p[0];
  for (uint32_t k = 1; k < parts; ++k) s += p[k * stride];
  return s;
}
