// out = full OP bc (or bc OP full), element by element, where bc is an operand NumPy-broadcast
// over out: output element i reads bc element ((start + i) / inner) % period, less base (the
// index of the first element of bc connected to this vertex). The broadcast operand is connected
// compact, so the exchange brings each of its elements once instead of once per use
// (docs/library.md, "Broadcasting and math"). op, bits 2..0: 0 add, 1 sub, 2 mul, 3 div, 4 pow;
// bit 3: bc is the first operand. Each element is the same IEEE operation as the plain codelets'.
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

namespace {

template <typename Op>
void run(const float* full, const float* bc, float* out, uint32_t n, uint32_t q, uint32_t j,
         uint32_t inner, uint32_t period, uint32_t base, bool bcFirst, Op op) {
  for (uint32_t i = 0; i < n; ++i) {
    const float v = bc[j - base];
    out[i] = bcFirst ? op(v, full[i]) : op(full[i], v);
    if (++q == inner) {
      q = 0;
      if (++j == period) j = 0;
    }
  }
}

}  // namespace

TESSERA_VERTEX(BinaryBroadcast, (Input, float, full), (Input, float, bc), (Output, float, out),
               (Param, uint32_t, op), (Param, uint32_t, start), (Param, uint32_t, inner),
               (Param, uint32_t, period), (Param, uint32_t, base)) {
  const uint32_t in = inner, per = period, s = start;
  const uint32_t q = s % in, j = (s / in) % per;
  const bool first = (op & 8u) != 0;
  const float* f = full.data();
  const float* b = bc.data();
  float* o = out.data();
  const uint32_t n = out.size();
  switch (op & 7u) {
    case 0:
      run(f, b, o, n, q, j, in, per, base, first, [](float x, float y) { return x + y; });
      break;
    case 1:
      run(f, b, o, n, q, j, in, per, base, first, [](float x, float y) { return x - y; });
      break;
    case 2:
      run(f, b, o, n, q, j, in, per, base, first, [](float x, float y) { return x * y; });
      break;
    case 3:
      run(f, b, o, n, q, j, in, per, base, first, [](float x, float y) { return x / y; });
      break;
    default:
      run(f, b, o, n, q, j, in, per, base, first,
          [](float x, float y) { return tessera_powf(x, y); });
      break;
  }
}
