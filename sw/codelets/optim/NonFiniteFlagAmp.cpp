// NonFiniteFlag on the matrix unit (ops::lossScaleStep on a target with the unit): weight bank 0
// set to zeros, then AMP.S of four elements at a time into accumulator row 0 from +0 (AMP.CLR):
// acc = fma(x3, 0, fma(x2, 0, fma(x1, 0, fma(x0, 0, acc)))) stays a zero while every x is finite
// and is NaN after an infinity or a NaN (docs/tile.md, "Order of operations"), one instruction for
// four elements. The head up to a 16-byte boundary and the tail (fewer than four) take the scalar
// chain. Every context of the compute set writes the same zeros to bank 0 before its first AMP.S,
// so none can see another's weights. The unit raises no fflags; the scalar part may set NV.
#include "tessera/amp.h"
#include "tessera/vertex.hpp"

TESSERA_EXCLUSIVE_VERTEX(NonFiniteFlagAmp, (Input, float, in), (Output, int32_t, flag)) {
  alignas(16) const float zeros[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  const float* z = zeros;
  TESSERA_AMP_LW(z, 0, 0);
  z = zeros;
  TESSERA_AMP_LW(z, 0, 1);
  z = zeros;
  TESSERA_AMP_LW(z, 0, 2);
  z = zeros;
  TESSERA_AMP_LW(z, 0, 3);
  TESSERA_AMP_CLR();
  const float* p = in.data();
  const float* const end = p + in.size();
  float scalar = 0.0f;
  while (p < end && (reinterpret_cast<uintptr_t>(p) & 15u) != 0)
    scalar = __builtin_fmaf(*p++, 0.0f, scalar);
  while (end - p >= 16) {
    TESSERA_AMP_S(p, 0, 0);
    TESSERA_AMP_S(p, 0, 0);
    TESSERA_AMP_S(p, 0, 0);
    TESSERA_AMP_S(p, 0, 0);
  }
  while (end - p >= 4) TESSERA_AMP_S(p, 0, 0);
  while (p < end) scalar = __builtin_fmaf(*p++, 0.0f, scalar);
  float unit = 0.0f;
  TESSERA_AMP_RD(unit, 0, 0);
  const float all = unit + scalar;
  flag[0] = all != all ? 1 : 0;
}
