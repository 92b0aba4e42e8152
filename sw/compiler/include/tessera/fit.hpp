// Compiling a graph that may not fit its target with the matrix unit's layouts.
#pragma once

#include <functional>
#include <string>

#include "tessera/compiler.hpp"
#include "tessera/graph.hpp"

namespace tessera {

/// build(target) builds and compiles a graph for target. Where target has the matrix unit and the
/// graph does not fit its tiles (OutOfMemoryError), it is built again for target without the unit:
/// the library's scalar codelets give the same bits in less memory (docs/library.md, "matmul on
/// the matrix unit"). *usedUnit (if given) says which; *unitRefusal (if given) gets the
/// out-of-memory message of the unit's build when it fell back (empty otherwise). Throws when
/// neither fits. unitRequired: the graph cannot be built without the unit (float16 tensors), so
/// the unit build's out-of-memory error is thrown as it is.
inline Compiled compileFitting(const Target& target,
                               const std::function<Compiled(const Target&)>& build,
                               bool* usedUnit = nullptr, std::string* unitRefusal = nullptr,
                               bool unitRequired = false) {
  if (usedUnit) *usedUnit = target.hasMatrixUnit;
  if (unitRefusal) unitRefusal->clear();
  if (!target.hasMatrixUnit) return build(target);
  try {
    return build(target);
  } catch (const OutOfMemoryError& e) {
    if (unitRequired) throw;
    if (unitRefusal) *unitRefusal = e.what();
    Target scalar = target;
    scalar.hasMatrixUnit = false;
    if (usedUnit) *usedUnit = false;
    return build(scalar);
  }
}

}  // namespace tessera
