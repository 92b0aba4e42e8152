// The steps of softmax and softmax cross-entropy on one row: the maximum, the exponentials and
// their sum are SoftmaxRows's too. Softmax cross-entropy's are shared by SoftmaxCrossEntropy (a
// row at a time, whole) and its split form for rows too few to fill a tile's contexts
// (sw/library/nn.cpp): SoftmaxExp on slices of a row into a scratch row, then
// SoftmaxCrossEntropyGrad on slices of the gradient and SoftmaxCrossEntropyLoss per row, both from
// the scratch row. Both ways do the same operations in the same order, so they give the same bits.
#pragma once

#include "tessera/mathf.h"

namespace tessera_softmax {

// The row's maximum, from x[0] up: mx = x[j] > mx ? x[j] : mx (a NaN after the first element is
// passed over), with the rare update out of the loop's straight path.
inline float rowMax(const float* x, uint32_t c) {
  float mx = x[0];
  const float* const end = x + c;
  for (const float* p = x + 1; p != end; ++p) {
    const float v = *p;
    if (__builtin_expect(v > mx, 0)) mx = v;
  }
  return mx;
}

// e[j] = e^(x[j] - mx) for j < n.
inline void exps(const float* x, float mx, float* e, uint32_t n) {
  for (uint32_t j = 0; j < n; ++j) e[j] = tessera_expf(x[j] - mx);
}

// The sum of a row's exponentials, left to right.
inline float sumOf(const float* e, uint32_t c) {
  float sum = 0.0f;
  const float* const end = e + c;
  for (const float* p = e; p != end; ++p) sum += *p;
  return sum;
}

inline bool validLabel(int32_t label, uint32_t c) {
  return label >= 0 && static_cast<uint32_t>(label) < c;
}

// g[j] = (e[j] / sum - [begin + j == label]) * sc for j < n, with inv = 1 / sum. Every element
// but the label's is (e[j] * inv) * sc: subtracting +0 changes no bits of a product (x - (+0) is
// x for every x, -0 and NaN included, and a NaN product is already the canonical NaN), so the
// loop has no select and the label's element, if in [begin, begin + n), is redone after it (g may
// be e: the label's exponential is read first).
inline void gradient(const float* e, float inv, float* g, uint32_t n, uint32_t begin, int32_t label,
                     float sc) {
  const uint32_t l = static_cast<uint32_t>(label) - begin;  // wraps for a label before begin
  const bool here = label >= 0 && l < n;
  const float eLabel = here ? e[l] : 0.0f;  // read first: g may be e
  const float* p = e;
  const float* const end = e + n;
  for (float* q = g; p != end; ++p, ++q) *q = (*p * inv) * sc;
  if (here) g[l] = (eLabel * inv - 1.0f) * sc;
}

// The row's loss from its exponentials' sum: log(sum) - (x[label] - mx), NaN for a label outside
// [0, c).
inline float loss(const float* x, float mx, float sum, int32_t label, uint32_t c) {
  return validLabel(label, c) ? tessera_logf(sum) - (x[label] - mx)
                              : tessera_bits_to_float_(0x7fc00000u);
}

}  // namespace tessera_softmax
