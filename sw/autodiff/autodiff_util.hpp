// Helpers shared by the tape and the ops' backward functions.
#pragma once

#include <string>

#include "tessera/autodiff.hpp"

namespace tessera::autodiff {

/// A new float32 variable of t's shape mapped element by element like t.
Tensor likeMapped(Graph& graph, const Tensor& t, const std::string& name);
/// True when every tile's elements of the 2-D tensor t form one rectangular block (what
/// ops::matmulAccumulate needs of its target).
bool blockMapped(const Graph& graph, const Tensor& t);
/// g as a tensor: a constant is filled into a new variable mapped like `like`.
Tensor materialize(Graph& graph, Sequence& prog, const Gradient& g, const Tensor& like,
                   const std::string& name);
/// t if it is a whole variable; else a copy of it into a new variable mapped like `like`.
Tensor wholeTensor(Graph& graph, Sequence& prog, const Tensor& t, const Tensor& like,
                   const std::string& name);

}  // namespace tessera::autodiff
