// Rounds a binary32 significand per RISC-V rm and packs the result, with the NX/UF/OF flags of
// IEEE 754 (tininess detected after rounding, UF only when also inexact). Purely combinational:
// shared by the fused multiply-add (tess_fpu) and the divide/square-root unit.
//
// The caller hands over a significand that is either normalised (mant_i[23] = 1, exp_i >= 1 is its
// biased exponent, possibly >= 255: overflow) or subnormal (mant_i[23] = 0 and exp_i = 1), plus the
// first two discarded bits and the OR of the rest. Two discarded bits are needed so that tininess
// can be judged as if the exponent were unbounded (one bit finer than the subnormal lsb).
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
  logic        inexact, inc, inc_unbounded, tiny, to_inf;
  logic [11:0] exp_field;
  logic [34:0] packed_sum;

  // Increment decision for a truncated magnitude with the given lsb, half-ulp bit and sticky.
  function automatic logic round_up(logic [2:0] rm, logic sign, logic lsb, logic half, logic rest);
    logic up;
    up = 1'b0;
    case (rm)
      tess_pkg::RM_RNE:  up = half & (rest | lsb);
      tess_pkg::RM_RTZ:  up = 1'b0;
      tess_pkg::RM_RDN:  up = sign & (half | rest);
      tess_pkg::RM_RUP:  up = ~sign & (half | rest);
      tess_pkg::RM_RMM:  up = half;
      default: up = 1'b0;
    endcase
    round_up = up;
  endfunction

  always @* begin
    inexact       = round_i | round2_i | sticky_i;
    inc           = round_up(rm_i, sign_i, mant_i[0], round_i, round2_i | sticky_i);
    // With an unbounded exponent the 24-bit significand would be {mant_i[22:0], round_i}: the
    // result is not tiny only if that rounds up to 2^-126.
    inc_unbounded = round_up(rm_i, sign_i, round_i, round2_i, sticky_i);
    tiny          = ~mant_i[23] & ~(&mant_i[22:0] & round_i & inc_unbounded);
    // Adding the increment to {exponent, fraction} carries a full significand into the exponent
    // and a subnormal into the smallest normal.
    exp_field     = mant_i[23] ? exp_i : 12'd0;
    packed_sum    = {exp_field, mant_i[22:0]} + {34'd0, inc};
    to_inf        = (rm_i == tess_pkg::RM_RNE) | (rm_i == tess_pkg::RM_RMM) | ((rm_i == tess_pkg::RM_RUP) & ~sign_i) |
                    ((rm_i == tess_pkg::RM_RDN) & sign_i);
    if (packed_sum[34:23] >= 12'd255) begin
      result_o = {sign_i, to_inf ? 31'h7f80_0000 : 31'h7f7f_ffff};
      of_o     = 1'b1;
      uf_o     = 1'b0;
      nx_o     = 1'b1;
    end else begin
      result_o = {sign_i, packed_sum[30:0]};
      of_o     = 1'b0;
      uf_o     = tiny & inexact;
      nx_o     = inexact;
    end
  end

endmodule
