// The learning rate of each training step (docs/training.md, "Learning-rate schedule"): constant,
// or a cosine decay from the base rate to zero over the run's steps. The trainer writes it into
// the device's "lr" scalar at each step's host sync, and the CPU references take the same value
// from the same function, so the device and its references agree bit for bit.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::bench {

struct LrSchedule {
  enum class Kind { Constant, Cosine };
  Kind kind = Kind::Constant;
  float base = 0.05f;       ///< the rate of step 0 (and of every step when constant)
  uint64_t totalSteps = 1;  ///< cosine: the rate reaches zero at this step

  /// The rate of step `step` (0-based, counted over the whole run): constant: base; cosine:
  /// base * (1 + cos(pi * min(step, totalSteps) / totalSteps)) / 2, evaluated in double and
  /// rounded once to float.
  float at(uint64_t step) const;
  /// "constant" or "cosine".
  std::string name() const;
  /// The kind named by `name`; throws tessera::Error naming it when it is neither.
  static Kind parseKind(const std::string& name);
};

}  // namespace tessera::bench
