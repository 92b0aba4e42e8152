// Rounds a binary32 significand per RISC-V rm and packs the result, with the NX/UF/OF flags of
// IEEE 754 (tininess detected after rounding, UF only when also inexact). Purely combinational:
// shared by the fused multiply-add (tess_fpu) and the divide/square-root unit.
//
// The caller hands over a significand that is either normalised (mant_i[23] = 1, exp_i >= 1 is its
// biased exponent, possibly >= 255: overflow) or subnormal (mant_i[23] = 0 and exp_i = 1), plus the
// first two discarded bits and the OR of the rest. Two discarded bits are needed so that tininess
// can be judged as if the exponent were unbounded (one bit finer than the subnormal lsb).
// The arithmetic is fma_round of tess_fpu_fma.svh, shared with the FMA and the matrix unit.
// tess_pkg items are named with their package prefix: Yosys 0.23 reads no package imports.
module tess_fpu_round (
  input  logic               sign_i,
  input  logic signed [11:0] exp_i,
  input  logic [23:0]        mant_i,
  input  logic               round_i,   // first discarded bit (weight: half an ulp)
  input  logic               round2_i,  // second discarded bit
  input  logic               sticky_i,  // OR of all further discarded bits
  input  logic [2:0]         rm_i,
  output logic [31:0]        result_o,
  output logic               of_o,
  output logic               uf_o,
  output logic               nx_o
);
  `include "tess_fpu_fma.svh"

  // One call into a whole vector, then split: with a concatenation on the left of the call the
  // verilated model evaluates the function once per field.
  logic [34:0] rounded;
  assign rounded = fma_round(sign_i, exp_i, mant_i, round_i, round2_i, sticky_i, rm_i);
  assign {result_o, of_o, uf_o, nx_o} = rounded;

endmodule
