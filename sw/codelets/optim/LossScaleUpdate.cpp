// A dynamic loss scale's step, once per training step on one tile (ops::lossScaleStep; the rule of
// PyTorch's torch.amp.GradScaler with its default factors, docs/autodiff.md "Dynamic loss scale"):
//   inv[0]   = 1 / scale (the scale this step's gradients carry; a power of two, so exact)
//   overflow = some flag set (some gradient element is an infinity or a NaN)
//   ok[0]    = !overflow (the optimizer's step runs only then)
//   overflow: scale /= 2, good = 0, skipped += 1
//   else:     good += 1; at good == interval: scale *= 2 where that stays finite, good = 0
// state = (good, skipped).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(LossScaleUpdate, (Input, int32_t, flags), (InOut, float, scale),
               (InOut, int32_t, state), (Output, float, inv), (Output, int32_t, ok),
               (Param, uint32_t, interval)) {
  // Four flags a loop trip: a lone context runs this (six cycles an instruction).
  const int32_t* f = flags.data();
  const uint32_t n = flags.size();
  int32_t o0 = 0, o1 = 0, o2 = 0, o3 = 0;
  uint32_t i = 0;
  for (; i + 4 <= n; i += 4) o0 |= f[i], o1 |= f[i + 1], o2 |= f[i + 2], o3 |= f[i + 3];
  for (; i < n; ++i) o0 |= f[i];
  const int32_t overflow = (o0 | o1) | (o2 | o3);
  const float s = scale[0];
  inv[0] = 1.0f / s;
  if (overflow != 0) {
    scale[0] = s * 0.5f;
    state[0] = 0;
    state[1] = state[1] + 1;
    ok[0] = 0;
    return;
  }
  ok[0] = 1;
  const uint32_t good = static_cast<uint32_t>(state[0]) + 1;
  if (good < static_cast<uint32_t>(interval)) {
    state[0] = static_cast<int32_t>(good);
    return;
  }
  const float grown = s * 2.0f;
  if ((__builtin_bit_cast(uint32_t, grown) & 0x7f800000u) != 0x7f800000u) scale[0] = grown;
  state[0] = 0;
}
