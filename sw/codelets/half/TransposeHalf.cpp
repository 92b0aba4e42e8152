// out = rows [row, row + out.size() / cols) of in^T for float16 elements: in is [cols, rows]
// row-major, out the part's rows of the [rows, cols] transpose (Transpose2d's fields, with halves
// for words). ops::transposeHalf (docs/library.md, "fp16 tensors, casts and matmul") transposes
// the float16 products' operands in autodiff's backward with it. cols is even, so each output row
// is whole words and each word is stored once, its two halves from two source rows; halves are
// moved as they are (NaN payloads kept).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(TransposeHalf, (Input, uint16_t, in), (Output, uint16_t, out),
               (Param, uint32_t, rows), (Param, uint32_t, cols), (Param, uint32_t, row)) {
  const uint32_t n = rows, k = cols;
  const uint32_t count = out.size() / k;
  const uint16_t* const src = in.data() + row;
  uint32_t* dst = reinterpret_cast<uint32_t*>(out.data());
  for (uint32_t r = 0; r < count; ++r) {
    const uint16_t* s = src + r;
    for (uint32_t c = 0; c < k; c += 2, s += 2 * n) {
      const uint32_t lo = s[0], hi = s[n];
      *dst++ = lo | hi << 16;
    }
  }
}
