// The matrix unit's product vertices, shared by the builders that use the unit (matmul.cpp,
// conv.cpp; docs/library.md, "matmul on the matrix unit").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tessera/graph.hpp"

namespace tessera::ops {

/// MatMulAmp vertices computing c [mb, nb] (+)= a [mb, kb] b [kb, nb] on tile, one per context
/// (the six share every field): aRows is op(a)'s block as a row-major view, bOp op(b)'s (read
/// in column groups [nb / 4][kb][4], gathered so unless stored so); cBlock lies in place on the
/// tile, row-major or in column groups, 16-byte aligned. flops: what the supervisor's vertex
/// declares (default 2 mb kb nb). codelet: MatMulAmp, or MatMulAmpH for float16 a and b (the
/// same fields and roles).
void addAmpVertices(Graph& graph, ComputeSet cs, unsigned tile, const Tensor& aRows,
                    const Tensor& bOp, const Tensor& cBlock, bool accumulate,
                    const std::string& name, std::optional<uint64_t> flops = std::nullopt,
                    const char* codelet = "MatMulAmp");

}  // namespace tessera::ops
