// out = in clamped to [lo, hi] (ONNX Clip, PyTorch's clamp, hardtanh and relu6): lo where in < lo,
// hi where in > hi, else in (NaN stays NaN). An absent bound is -inf or +inf.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Clip, (Input, float, in), (Output, float, out), (Param, float, lo),
               (Param, float, hi)) {
  const float a = lo, b = hi;
  for (uint32_t i = 0; i < out.size(); ++i) {
    const float x = in[i];
    out[i] = x < a ? a : (x > b ? b : x);
  }
}
