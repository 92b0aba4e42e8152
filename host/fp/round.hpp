// Private helper of tessera_fp: rounds an exactly known value to binary32 in software, for the
// rounding mode x86 lacks (RMM) and for checking against the host in the other four modes.
#pragma once

#include "fp32.hpp"

namespace tessera::fp {

/// Round x (finite; the exact value of an operation, a normal or zero double) to binary32 per rm,
/// with the NX/UF/OF flags of IEEE 754 (tininess after rounding, as RISC-V and x86 SSE).
Result round_double(double x, unsigned rm);

}  // namespace tessera::fp
