// One FMA of the matrix unit's chain for synthesis (tess_amp, SYNTHESIS): y = fma_rne(a, b, c) of
// tess_fpu_fma.svh, round-to-nearest-even, no flags. Purely combinational. Synthesis tools
// elaborate this module once and instantiate it 16 times; simulators compute the same function
// inside tess_amp's AMP.S branch instead (docs/decisions.md, "Matrix unit in the RTL").
module tess_amp_fma (
  input  logic [31:0] a_i,
  input  logic [31:0] b_i,
  input  logic [31:0] c_i,
  output logic [31:0] y_o
);

  `include "tess_fpu_fma.svh"

  assign y_o = fma_rne(a_i, b_i, c_i);

endmodule
