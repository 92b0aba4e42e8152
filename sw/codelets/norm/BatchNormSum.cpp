// Batch normalisation in training, step 1 of 3: the sum of one part of a channel's values, left
// to right from 0 (the library splits each channel's N*H*W values into parts over the tiles).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(BatchNormSum, (Input, float, in), (Output, float, sum)) {
  float s = 0.0f;
  for (uint32_t i = 0; i < in.size(); ++i) s += in[i];
  sum[0] = s;
}
