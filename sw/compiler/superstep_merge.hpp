// Merging independent compute sets into one superstep (docs/compiler.md, "Merged compute sets"):
// the compiler's pass over a program before liveness and lowering.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "tessera/graph.hpp"
#include "tessera/program.hpp"

namespace tessera {

/// A program with independent Executes merged: root is a rewritten copy of the program (the
/// graph's nodes are not changed); an Execute of root that runs more than its own compute set
/// has all of them, in program order, in sets.
struct MergedProgram {
  std::shared_ptr<const ProgramNode> root;
  std::unordered_map<const ProgramNode*, std::vector<uint32_t>> sets;
};

/// Merges each Execute into the earliest Execute of its sequence (up to 32 steps back) that it
/// can join: none of the steps between them (that one included) writes what it reads or touches
/// what it writes, and no tile both have vertices on has a vertex of an exclusive codelet
/// (CodeletInfo::exclusive). Unnamed nested sequences are inlined; stream copies, loops and named
/// sequences are not crossed.
MergedProgram mergeComputeSets(const Graph& graph, const ProgramNode& root);

}  // namespace tessera
