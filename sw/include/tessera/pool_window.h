/* Average pooling's divisor, PyTorch's rule, shared by the codelets AvgPoolDiv and AvgPoolDivGrad
 * (sw/codelets/pool) and the host reference (tessera/conv_reference.hpp), so that the device and
 * the reference divide by the same count. */
#ifndef TESSERA_POOL_WINDOW_H
#define TESSERA_POOL_WINDOW_H

#include <stdint.h>

/** Along one axis: how many positions of a window of k starting at `start` (in input
 * coordinates, negative inside the leading padding) count towards the divisor: those inside the
 * padded input [-pad, n + pad) when include (count_include_pad; k except for ceil mode's last
 * window), else those inside the input [0, n). */
static inline int32_t tessera_pool_extent(int32_t start, int32_t k, int32_t n, int32_t pad,
                                          int include) {
  if (include) return (start + k < n + pad ? start + k : n + pad) - start;
  return (start + k < n ? start + k : n) - (start < 0 ? 0 : start);
}

#endif
