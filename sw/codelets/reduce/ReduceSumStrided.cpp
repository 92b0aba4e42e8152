// out[j] = in[0][offset + j] + in[1][offset + j] + ..., where in is [parts, width] row-major:
// several vertices of one tile share one gathered input and each sums its own columns, so the
// exchange moves whole rows (docs/library.md, "Reductions").
//
// Eight outputs at a time keep their sums in registers while a pointer walks the parts (8 loads
// and 8 adds a part, about 2.25 instructions an add instead of 5 to 6 one output at a time); the
// last 1 to 7 outputs go down the parts as 4, then 2, then 1 the same way (strided_sums.hpp). Each
// output is still the sum in part order from in[0], so the bits are those of the plain loop.
#include "strided_sums.hpp"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ReduceSumStrided, (Input, float, in), (Output, float, out), (Param, uint32_t, width),
               (Param, uint32_t, offset)) {
  using namespace tessera_strided;
  const uint32_t w = width, span = in.size();  // floats from a column's first part to past its last
  const bool odd = ((span / w - 1) & 1u) != 0;  // parts after the first
  const float* q = in.data() + static_cast<uint32_t>(offset);
  float* o = out.data();
  const uint32_t size = out.size();
  float* const end8 = o + (size & ~7u);
  for (; o != end8; o += 8, q += 8) sumColumns<8>(q, span, w, odd, o);
  if (size & 4u) sumColumns<4>(q, span, w, odd, o), o += 4, q += 4;
  // The last 1 to 3 outputs: two together (a bias gradient's two columns a context), then one.
  if (size & 2u) sumColumns<2>(q, span, w, odd, o), o += 2, q += 2;
  if (size & 1u) sumColumns<1>(q, span, w, odd, o);
}
