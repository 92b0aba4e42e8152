// ReduceSumStrided with the tile's own part read where it lies: out[j] = the sum in part order of
// parts 0 .. parts - 1 at column offset + j, where part `own` is `mine` ([width], the tile's own
// partial, read in place) and the others are the rows of `in` ([parts - 1, width], gathered) in
// order. A matmul's k-part reduction (docs/library.md, "Reductions") gathers the other tiles'
// partials into `in`; its own partial no longer goes through a local copy first. The same loops
// as ReduceSumStrided's (strided_sums.hpp) and the same bits as the plain loop.
#include "strided_sums.hpp"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ReduceSumStridedOwn, (Input, float, in), (Input, float, mine), (Output, float, out),
               (Param, uint32_t, width), (Param, uint32_t, offset), (Param, uint32_t, own)) {
  using namespace tessera_strided;
  const uint32_t w = width;
  const uint32_t before = own * w;            // floats of in's rows before `mine`
  const uint32_t after = in.size() - before;  // and after it
  const bool oddAfter = ((after / w) & 1u) != 0;
  const float* q = in.data() + static_cast<uint32_t>(offset);
  const float* m = mine.data() + static_cast<uint32_t>(offset);
  float* o = out.data();
  const uint32_t size = out.size();
  float* const end8 = o + (size & ~7u);
  for (; o != end8; o += 8, q += 8, m += 8) sumColumnsOwn<8>(q, m, before, after, w, oddAfter, o);
  if (size & 4u) sumColumnsOwn<4>(q, m, before, after, w, oddAfter, o), o += 4, q += 4, m += 4;
  // The last 1 to 3 outputs (a matmul's reduction cuts whole quads: rare) one at a time.
  for (float* const end = out.data() + size; o != end; ++o, ++q, ++m)
    sumColumnsOwn<1>(q, m, before, after, w, oddAfter, o);
}
