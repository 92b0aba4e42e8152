// Compiling a graph that may not fit its target with the matrix unit's layouts.
#pragma once

#include <functional>

#include "tessera/compiler.hpp"
#include "tessera/graph.hpp"

namespace tessera {

/// build(target) builds and compiles a graph for target. Where target has the matrix unit and the
/// graph does not fit its tiles (OutOfMemoryError), it is built again for target without the unit:
/// the library's scalar codelets give the same bits in less memory (docs/library.md, "matmul on
/// the matrix unit"). *usedUnit (if given) says which. Throws when neither fits.
inline Compiled compileFitting(const Target& target,
                               const std::function<Compiled(const Target&)>& build,
                               bool* usedUnit = nullptr) {
  if (usedUnit) *usedUnit = target.hasMatrixUnit;
  if (!target.hasMatrixUnit) return build(target);
  try {
    return build(target);
  } catch (const OutOfMemoryError&) {
    Target scalar = target;
    scalar.hasMatrixUnit = false;
    if (usedUnit) *usedUnit = false;
    return build(scalar);
  }
}

}  // namespace tessera
