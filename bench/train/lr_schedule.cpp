#include "lr_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "tessera/error.hpp"

namespace tessera::bench {

float LrSchedule::at(uint64_t step) const {
  if (kind == Kind::Constant || totalSteps == 0) return base;
  const double f =
      static_cast<double>(std::min(step, totalSteps)) / static_cast<double>(totalSteps);
  return static_cast<float>(static_cast<double>(base) * 0.5 *
                            (1.0 + std::cos(std::numbers::pi * f)));
}

std::string LrSchedule::name() const {
  return kind == Kind::Cosine ? "cosine" : "constant";
}

LrSchedule::Kind LrSchedule::parseKind(const std::string& name) {
  if (name == "constant") return Kind::Constant;
  if (name == "cosine") return Kind::Cosine;
  throw Error(fmt::format("unknown learning-rate schedule '{}': constant or cosine", name));
}

}  // namespace tessera::bench
