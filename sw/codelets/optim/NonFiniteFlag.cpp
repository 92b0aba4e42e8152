// flag[0] = 1 if some element of in is an infinity or a NaN, else 0 (a dynamic loss scale's
// overflow check, ops::lossScaleStep). acc = fma(x, 0, acc) from +0 stays a zero while every x is
// finite and turns NaN at the first infinity or NaN (inf * 0 and NaN * 0 are NaN, and NaN stays):
// two instructions an element. Like any FMA of such operands it sets NV in the context's fflags.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(NonFiniteFlag, (Input, float, in), (Output, int32_t, flag)) {
  const float* p = in.data();
  const uint32_t n = in.size();
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  uint32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a0 = __builtin_fmaf(p[i], 0.0f, a0);
    a1 = __builtin_fmaf(p[i + 1], 0.0f, a1);
    a2 = __builtin_fmaf(p[i + 2], 0.0f, a2);
    a3 = __builtin_fmaf(p[i + 3], 0.0f, a3);
  }
  for (; i < n; ++i) a0 = __builtin_fmaf(p[i], 0.0f, a0);
  const float all = (a0 + a1) + (a2 + a3);
  flag[0] = all != all ? 1 : 0;
}
