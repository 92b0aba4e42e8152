// Optimizer steps on the tiles (docs/library.md, "Optimizers"): SGD, SGD with momentum and Adam,
// in place, with PyTorch's semantics (L2 weight decay added to the gradient, as torch.optim.SGD
// and torch.optim.Adam do). The learning rate is a device-side float32 scalar [1] that the host
// writes between steps (Engine::writeTensor) without recompiling.
#pragma once

#include <string>
#include <vector>

#include "tessera/graph.hpp"
#include "tessera/program.hpp"

namespace tessera::ops {

/// A new float32 scalar [1] on tile 0 with the given initial value (a learning rate).
Tensor createScalar(Graph& graph, float value, const std::string& name);

/// a * (factor * s[0]) with s a device scalar [1]; mapped like a. factor +-1 keeps it exact.
Tensor scaleByScalar(Graph& graph, const Tensor& a, const Tensor& s, float factor, Sequence& prog,
                     const std::string& name);

/// SGD in place: w = w - lr (g + weightDecay w), each step fused (one rounding).
void sgdUpdate(Graph& graph, const Tensor& w, const Tensor& g, const Tensor& lr, float weightDecay,
               Sequence& prog, const std::string& name);

/// SGD with momentum in place: v = momentum v + (g + weightDecay w); w = w - lr v.
void sgdMomentumUpdate(Graph& graph, const Tensor& w, const Tensor& v, const Tensor& g,
                       const Tensor& lr, float momentum, float weightDecay, Sequence& prog,
                       const std::string& name);

/// Adam's device state of one training run: the running powers of beta1 and beta2 and the per-step
/// scalars (step size, square root of the second bias correction), all on tile 0.
struct AdamScalars {
  Tensor pows;   ///< [2]: beta1^t, beta2^t (start at 1)
  Tensor hyper;  ///< [2]: lr / (1 - beta1^t), sqrt(1 - beta2^t)
  float beta1 = 0.9f;
  float beta2 = 0.999f;
};
/// Adam's scalars for betas beta1, beta2 (state created once, advanced by adamStep).
AdamScalars createAdamScalars(Graph& graph, float beta1, float beta2, const std::string& name);
/// Advance the step count t by one and compute this step's scalars from lr (once per step).
void adamStep(Graph& graph, const AdamScalars& s, const Tensor& lr, Sequence& prog,
              const std::string& name);
/// Adam in place with bias correction (torch.optim.Adam's order of operations, see AdamUpdate.cpp):
/// m and v are the first and second moments, mapped like w.
void adamUpdate(Graph& graph, const Tensor& w, const Tensor& m, const Tensor& v, const Tensor& g,
                const AdamScalars& s, float eps, float weightDecay, Sequence& prog,
                const std::string& name);

/// Throws naming who unless scale is a finite power of two (a loss or gradient scale that divides
/// out exactly).
void requirePowerOfTwoScale(float scale, const std::string& who);

/// data = data * s[0] in place, with s a device scalar [1] (ScaleInPlaceByScalar).
void scaleInPlaceByScalar(Graph& graph, const Tensor& data, const Tensor& s, Sequence& prog,
                          const std::string& name);

/// A dynamic loss scale's device state (docs/autodiff.md, "Dynamic loss scale"): the rule of
/// PyTorch's torch.amp.GradScaler with its default factors 2 and 1/2, on the tiles.
struct LossScaler {
  Tensor scale;  ///< float32 [1] on tile 0: the scale, a power of two (multiplies the loss)
  Tensor state;  ///< int32 [2]: steps since the last overflow or growth, steps skipped so far
  Tensor inv;    ///< float32 [1]: 1 / the scale this step's gradients carry (lossScaleStep)
  Tensor ok;     ///< int32 [1]: 1 when this step's gradients are all finite (lossScaleStep)
  uint32_t interval = 2000;  ///< finite steps in a row before the scale doubles
};
/// The state for a scale starting at initialScale (a power of two) that doubles after
/// growthInterval finite steps in a row (at least 1).
LossScaler createLossScaler(Graph& graph, float initialScale, uint32_t growthInterval,
                            const std::string& name);
/// One step of the scale, after the gradients (which carry the scale) are computed: checks every
/// element of grads for an infinity or a NaN (NonFiniteFlag on each tile's chunks), then on tile 0
/// (LossScaleUpdate) writes inv = 1 / scale and ok, and halves the scale after an overflow (the
/// step is skipped: run the update under ifLossScaleOk) or doubles it after `interval` finite
/// steps in a row (unless that overflows float32).
void lossScaleStep(Graph& graph, const LossScaler& s, const std::vector<Tensor>& grads,
                   Sequence& prog, const std::string& name);
/// body when the last lossScaleStep found every gradient finite, else nothing (a RepeatWhile
/// that runs at most once: body, then ok = 0).
Program ifLossScaleOk(Graph& graph, const LossScaler& s, const Program& body,
                      const std::string& name);

}  // namespace tessera::ops
