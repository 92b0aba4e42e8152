// ReduceSumStrided with the tile's own part read where it lies: out[j] = the sum in part order of
// parts 0 .. parts - 1 at column offset + j, where part `own` is `mine` ([width], the tile's own
// partial, read in place) and the others are the rows of `in` ([parts - 1, width], gathered) in
// order. A matmul's k-part reduction (docs/library.md, "Reductions") gathers the other tiles'
// partials into `in`; its own partial no longer goes through a local copy first. The same loop
// as ReduceSumStrided's (four outputs' sums in registers) and the same bits as the plain loop.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ReduceSumStridedOwn, (Input, float, in), (Input, float, mine), (Output, float, out),
               (Param, uint32_t, width), (Param, uint32_t, offset), (Param, uint32_t, own)) {
  const uint32_t w = width, o = offset, before = own;
  const uint32_t parts = in.size() / w + 1;
  const float* base = in.data() + o;
  const float* ownBase = mine.data() + o;
  const uint32_t size = out.size(), size4 = size & ~3u;
  float* res = out.data();
  for (uint32_t j = 0; j < size4; j += 4) {
    const float* q = base + j;
    const float* m = ownBase + j;
    float s0, s1, s2, s3;
    if (before == 0) {
      s0 = m[0], s1 = m[1], s2 = m[2], s3 = m[3];
    } else {
      s0 = q[0], s1 = q[1], s2 = q[2], s3 = q[3];
      for (uint32_t p = 1; p < before; ++p) {
        q += w;
        s0 += q[0], s1 += q[1], s2 += q[2], s3 += q[3];
      }
      q += w;
      s0 += m[0], s1 += m[1], s2 += m[2], s3 += m[3];
    }
    for (uint32_t p = before + 1; p < parts; ++p) {
      s0 += q[0], s1 += q[1], s2 += q[2], s3 += q[3];
      q += w;
    }
    res[j] = s0, res[j + 1] = s1, res[j + 2] = s2, res[j + 3] = s3;
  }
  for (uint32_t j = size4; j < size; ++j) {
    const float* q = base + j;
    float s = before == 0 ? ownBase[j] : q[0];
    if (before != 0) q += w;
    for (uint32_t p = 1; p < parts; ++p) {
      if (p == before) {
        s += ownBase[j];
      } else {
        s += q[0];
        q += w;
      }
    }
    res[j] = s;
  }
}
