// Clip's gradient at its input x: grad where lo < x < hi, else 0 (PyTorch's hardtanh backward,
// which relu6 and hardtanh train with; a bound itself passes nothing).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ClipGrad, (Input, float, grad), (Input, float, in), (Output, float, out),
               (Param, float, lo), (Param, float, hi)) {
  const float a = lo, b = hi;
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = in[i] > a && in[i] < b ? grad[i] : 0.0f;
}
