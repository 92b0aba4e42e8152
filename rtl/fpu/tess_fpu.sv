// The one-round FP operations of the tile: fused multiply-add (which also performs FADD, FSUB and
// FMUL), min/max, compares, conversions, sign injection, moves and classify. RISC-V F semantics
// (docs/tile.md "Floating point"): all five rounding modes, subnormals, exact flags.
//
// Timing: fully pipelined, a new operation of any kind every cycle, fixed latency 3: operands in
// cycle t, result in cycle t+3 (three register stages). Stage 1 decodes, handles special
// operands, multiplies the significands and computes the alignment; stage 2 aligns the addend
// and adds; stage 3 normalises and rounds. Non-arithmetic ops finish in stage 1 and ride along.
//
// The arithmetic of the three stages is fma_s1/fma_s2/fma_s3 of tess_fpu_fma.svh (one definition
// with the matrix unit, which chains them without registers). FADD is a*1+b, FSUB a*1-b, FMUL
// a*b+z where z is a zero of the product's sign (so a zero product keeps its sign in every mode).
// tess_pkg items are named with their package prefix: Yosys 0.23 reads no package imports.
module tess_fpu (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 valid_i,
  input  tess_pkg::fpu_op_e    op_i,
  input  logic [2:0]           rm_i,      // resolved mode 0..4 (core handles DYN / reserved)
  input  logic [31:0]          a_i,       // rs1 value: FP bits, or integer for CVT_S_W[U] / MV_W_X
  input  logic [31:0]          b_i,       // rs2
  input  logic [31:0]          c_i,       // rs3 (fused ops)
  output logic                 valid_o,   // valid_i delayed by 3
  output logic [31:0]          result_o,  // FP bits, or integer (CVT_W[U]_S, MV_X_W, EQ/LT/LE, CLASS)
  output logic [4:0]           fflags_o   // {NV,DZ,OF,UF,NX}
);
  localparam logic [31:0] CanonicalNaN = 32'h7fc0_0000;
  localparam logic [31:0] One          = 32'h3f80_0000;
  localparam int W            = 77;  // width of the addition window (tess_fpu_fma.svh)

  `include "tess_fpu_fma.svh"

  // ---------------------------------------------------------------------------------------------
  // Stage 1: operand selection, classification, special results, significand product, alignment
  // amount; complete results of the non-arithmetic operations.
  // ---------------------------------------------------------------------------------------------
  logic [31:0]        opa, opb, opc;
  logic               neg_prod, is_arith, is_cvt_sf;
  logic               fma_special, fma_nv;
  logic [31:0]        fma_special_res;
  logic [23:0]        ma, mc;
  logic signed [11:0] tb_d;
  logic [6:0]         shamt_d;
  logic               sp_d, sc_d;
  logic [47:0]        prod_d;
  logic               byp_d;
  // Each stage's function result is kept whole and then split: with a concatenation on the left of
  // the call itself the verilated model evaluates the function once per field (fma_s1 nine times
  // a cycle; docs/benchmarks.md).
  logic [126:0]       s1_d;
  logic [31:0]        byp_res_d;
  logic [4:0]         byp_flags_d;
  logic [31:0]        int_mag;
  // Conversion float -> integer.
  logic [7:0]         ex_a;
  logic [63:0]        cvt_shifted;
  logic [32:0]        cvt_mag;
  logic               cvt_guard, cvt_sticky, cvt_inc, cvt_big, cvt_ovf, cvt_unsigned;
  logic [8:0]         cvt_rs;
  // Comparisons.
  logic               a_lt_b, a_eq_b, a_order_lt;

  // Classification of a magnitude (bits 30..0).
  function automatic logic is_nan(logic [30:0] x);
    is_nan = (x[30:23] == 8'hff) && (x[22:0] != 23'd0);
  endfunction
  function automatic logic is_inf(logic [30:0] x);
    is_inf = (x[30:23] == 8'hff) && (x[22:0] == 23'd0);
  endfunction

  always_comb begin
    // Operand routing onto a*b+c.
    opa       = a_i;
    opb       = b_i;
    opc       = c_i;
    neg_prod  = 1'b0;
    is_arith  = 1'b1;
    is_cvt_sf = 1'b0;
    unique case (op_i)
      tess_pkg::FPU_ADD:   begin opb = One; opc = b_i; end
      tess_pkg::FPU_SUB:   begin opb = One; opc = {~b_i[31], b_i[30:0]}; end
      tess_pkg::FPU_MUL:   opc = {a_i[31] ^ b_i[31], 31'd0};
      tess_pkg::FPU_MADD:  opc = c_i;
      tess_pkg::FPU_MSUB:  opc = {~c_i[31], c_i[30:0]};
      tess_pkg::FPU_NMSUB: neg_prod = 1'b1;
      tess_pkg::FPU_NMADD: begin neg_prod = 1'b1; opc = {~c_i[31], c_i[30:0]}; end
      tess_pkg::FPU_CVT_S_W, tess_pkg::FPU_CVT_S_WU: begin is_arith = 1'b0; is_cvt_sf = 1'b1; end
      default:   is_arith = 1'b0;
    endcase

    s1_d = fma_s1(opa, opb, opc, neg_prod);
    {fma_special, fma_special_res, fma_nv, sp_d, sc_d, prod_d, mc, shamt_d, tb_d} = s1_d;
    ma = {opa[30:23] != 8'd0, opa[22:0]};

    // Integer -> float reuses stages 2 and 3: the magnitude enters as the "product" with bit 0 of
    // the product at window bit 2, so tb = 200 gives it weight 2^0.
    int_mag = (op_i == tess_pkg::FPU_CVT_S_W && a_i[31]) ? (32'd0 - a_i) : a_i;
    if (is_cvt_sf) begin
      prod_d  = {16'd0, int_mag};
      mc      = 24'd0;
      tb_d    = 12'sd200;
      shamt_d = 7'd0;
      sp_d    = (op_i == tess_pkg::FPU_CVT_S_W) & a_i[31];
      sc_d    = sp_d;
    end

    // Float -> integer: |a| = {m, 8'b0} * 2^(e - 158), shifted right by 158 - e.
    ex_a         = a_i[30:23];
    cvt_unsigned = op_i == tess_pkg::FPU_CVT_WU_S;
    cvt_big      = ex_a >= 8'd158;
    cvt_rs       = 9'd158 - {1'b0, (ex_a == 8'd0) ? 8'd1 : ex_a};
    if (cvt_rs > 9'd63) begin
      cvt_shifted = {63'd0, ma != 24'd0} >> 1;  // everything below half: sticky only
      cvt_sticky  = a_i[30:0] != 31'd0;
    end else begin
      cvt_shifted = {{a_i[30:23] != 8'd0, a_i[22:0]}, 8'd0, 32'd0} >> cvt_rs[5:0];
      cvt_sticky  = cvt_shifted[30:0] != 31'd0;
    end
    cvt_guard = (cvt_rs > 9'd63) ? 1'b0 : cvt_shifted[31];
    unique case (rm_i)
      tess_pkg::RM_RNE:  cvt_inc = cvt_guard & (cvt_sticky | cvt_shifted[32]);
      tess_pkg::RM_RTZ:  cvt_inc = 1'b0;
      tess_pkg::RM_RDN:  cvt_inc = a_i[31] & (cvt_guard | cvt_sticky);
      tess_pkg::RM_RUP:  cvt_inc = ~a_i[31] & (cvt_guard | cvt_sticky);
      tess_pkg::RM_RMM:  cvt_inc = cvt_guard;
      default: cvt_inc = 1'b0;
    endcase
    cvt_mag = {1'b0, (cvt_rs > 9'd63) ? 32'd0 : cvt_shifted[63:32]} + {32'd0, cvt_inc};
    if (cvt_unsigned) begin
      // e = 158 positive is 2^31..2^32-1 exactly (no fraction bits left to round).
      cvt_ovf = a_i[31] ? (cvt_big || cvt_mag != 33'd0)
                        : ((ex_a > 8'd158) || cvt_mag[32]);
      if (!a_i[31] && ex_a == 8'd158) cvt_mag = {1'b0, ma, 8'd0};
    end else begin
      cvt_ovf = a_i[31] ? ((cvt_big && !(ex_a == 8'd158 && a_i[22:0] == 23'd0)) ||
                           cvt_mag > 33'h0_8000_0000)
                        : (cvt_big || cvt_mag > 33'h0_7fff_ffff);
      if (a_i[31] && ex_a == 8'd158 && a_i[22:0] == 23'd0) cvt_mag = 33'h0_8000_0000;
    end

    // Ordering for min/max (-0 < +0) and numeric comparison (+0 == -0), valid for non-NaNs.
    if (a_i[31] != b_i[31]) a_order_lt = a_i[31];
    else if (a_i[31])       a_order_lt = a_i[30:0] > b_i[30:0];
    else                    a_order_lt = a_i[30:0] < b_i[30:0];
    a_eq_b = (a_i == b_i) || (a_i[30:0] == 31'd0 && b_i[30:0] == 31'd0);
    a_lt_b = a_order_lt && !(a_i[30:0] == 31'd0 && b_i[30:0] == 31'd0);

    // Results known in stage 1: special operands of the arithmetic and every other operation.
    byp_d       = 1'b1;
    byp_res_d   = 32'd0;
    byp_flags_d = 5'd0;
    unique case (op_i)
      tess_pkg::FPU_ADD, tess_pkg::FPU_SUB, tess_pkg::FPU_MUL, tess_pkg::FPU_MADD, tess_pkg::FPU_MSUB, tess_pkg::FPU_NMSUB, tess_pkg::FPU_NMADD: begin
        if (fma_special) begin
          byp_res_d                      = fma_special_res;
          byp_flags_d[tess_pkg::FLAG_NV] = fma_nv;
        end else begin
          byp_d = 1'b0;
        end
      end
      tess_pkg::FPU_CVT_S_W, tess_pkg::FPU_CVT_S_WU: byp_d = 1'b0;
      tess_pkg::FPU_SGNJ:   byp_res_d = {b_i[31], a_i[30:0]};
      tess_pkg::FPU_SGNJN:  byp_res_d = {~b_i[31], a_i[30:0]};
      tess_pkg::FPU_SGNJX:  byp_res_d = {a_i[31] ^ b_i[31], a_i[30:0]};
      tess_pkg::FPU_MIN, tess_pkg::FPU_MAX: begin
        byp_flags_d[tess_pkg::FLAG_NV] = (is_nan(a_i[30:0]) & ~a_i[22]) | (is_nan(b_i[30:0]) & ~b_i[22]);
        if (is_nan(a_i[30:0]) && is_nan(b_i[30:0])) byp_res_d = CanonicalNaN;
        else if (is_nan(a_i[30:0]))           byp_res_d = b_i;
        else if (is_nan(b_i[30:0]))           byp_res_d = a_i;
        else if (a_order_lt ^ (op_i == tess_pkg::FPU_MAX)) byp_res_d = a_i;
        else                            byp_res_d = b_i;
      end
      tess_pkg::FPU_CVT_W_S, tess_pkg::FPU_CVT_WU_S: begin
        if (is_nan(a_i[30:0])) begin
          byp_res_d           = cvt_unsigned ? 32'hffff_ffff : 32'h7fff_ffff;
          byp_flags_d[tess_pkg::FLAG_NV] = 1'b1;
        end else if (cvt_ovf) begin
          byp_res_d = cvt_unsigned ? (a_i[31] ? 32'd0 : 32'hffff_ffff)
                                   : (a_i[31] ? 32'h8000_0000 : 32'h7fff_ffff);
          byp_flags_d[tess_pkg::FLAG_NV] = 1'b1;
        end else begin
          byp_res_d           = a_i[31] ? (32'd0 - cvt_mag[31:0]) : cvt_mag[31:0];
          byp_flags_d[tess_pkg::FLAG_NX] = cvt_guard | cvt_sticky;
        end
      end
      tess_pkg::FPU_MV_X_W, tess_pkg::FPU_MV_W_X: byp_res_d = a_i;
      tess_pkg::FPU_EQ: begin
        byp_res_d[0]         = ~is_nan(a_i[30:0]) & ~is_nan(b_i[30:0]) & a_eq_b;
        byp_flags_d[tess_pkg::FLAG_NV] = (is_nan(a_i[30:0]) & ~a_i[22]) | (is_nan(b_i[30:0]) & ~b_i[22]);
      end
      tess_pkg::FPU_LT, tess_pkg::FPU_LE: begin
        byp_res_d[0] = ~is_nan(a_i[30:0]) & ~is_nan(b_i[30:0]) & (a_lt_b | ((op_i == tess_pkg::FPU_LE) & a_eq_b));
        byp_flags_d[tess_pkg::FLAG_NV] = is_nan(a_i[30:0]) | is_nan(b_i[30:0]);
      end
      tess_pkg::FPU_CLASS: begin
        if (is_inf(a_i[30:0]))                byp_res_d[a_i[31] ? 0 : 7] = 1'b1;
        else if (is_nan(a_i[30:0]))           byp_res_d[a_i[22] ? 9 : 8] = 1'b1;
        else if (a_i[30:0] == 31'd0)    byp_res_d[a_i[31] ? 3 : 4] = 1'b1;
        else if (a_i[30:23] == 8'd0)    byp_res_d[a_i[31] ? 2 : 5] = 1'b1;
        else                            byp_res_d[a_i[31] ? 1 : 6] = 1'b1;
      end
      default: ;  // tess_pkg::FPU_DIV / tess_pkg::FPU_SQRT belong to tess_fpu_divsqrt
    endcase
    if (!is_arith && !is_cvt_sf) byp_d = 1'b1;
  end

  logic               s1_valid_q, s1_byp_q, s1_sp_q, s1_sc_q;
  logic [2:0]         s1_rm_q;
  logic [31:0]        s1_byp_res_q;
  logic [4:0]         s1_byp_flags_q;
  logic [47:0]        s1_prod_q;
  logic [23:0]        s1_mc_q;
  logic [6:0]         s1_shamt_q;
  logic signed [11:0] s1_tb_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      s1_valid_q     <= 1'b0;
      s1_byp_q       <= 1'b0;
      s1_sp_q        <= 1'b0;
      s1_sc_q        <= 1'b0;
      s1_rm_q        <= 3'd0;
      s1_byp_res_q   <= 32'd0;
      s1_byp_flags_q <= 5'd0;
      s1_prod_q      <= 48'd0;
      s1_mc_q        <= 24'd0;
      s1_shamt_q     <= 7'd0;
      s1_tb_q        <= 12'sd0;
    end else begin
      s1_valid_q     <= valid_i;
      s1_byp_q       <= byp_d;
      s1_sp_q        <= sp_d;
      s1_sc_q        <= sc_d;
      s1_rm_q        <= rm_i;
      s1_byp_res_q   <= byp_res_d;
      s1_byp_flags_q <= byp_flags_d;
      s1_prod_q      <= prod_d;
      s1_mc_q        <= mc;
      s1_shamt_q     <= shamt_d;
      s1_tb_q        <= tb_d;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Stage 2: align the addend, add or subtract, leading-zero count.
  // ---------------------------------------------------------------------------------------------
  logic [W-1:0]   sum_d;
  logic           c_sticky, sign_d, zero_d;
  logic [6:0]     lzc_d;
  logic [86:0]    s2_d;

  assign s2_d = fma_s2(s1_prod_q, s1_mc_q, s1_shamt_q, s1_sp_q, s1_sc_q, s1_rm_q);
  assign {sum_d, lzc_d, sign_d, zero_d, c_sticky} = s2_d;

  logic               s2_valid_q, s2_byp_q, s2_sign_q, s2_zero_q, s2_sticky_q;
  logic [2:0]         s2_rm_q;
  logic [31:0]        s2_byp_res_q;
  logic [4:0]         s2_byp_flags_q;
  logic [W-1:0]       s2_sum_q;
  logic [6:0]         s2_lzc_q;
  logic signed [11:0] s2_tb_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      s2_valid_q     <= 1'b0;
      s2_byp_q       <= 1'b0;
      s2_sign_q      <= 1'b0;
      s2_zero_q      <= 1'b0;
      s2_sticky_q    <= 1'b0;
      s2_rm_q        <= 3'd0;
      s2_byp_res_q   <= 32'd0;
      s2_byp_flags_q <= 5'd0;
      s2_sum_q       <= '0;
      s2_lzc_q       <= 7'd0;
      s2_tb_q        <= 12'sd0;
    end else begin
      s2_valid_q     <= s1_valid_q;
      s2_byp_q       <= s1_byp_q;
      s2_sign_q      <= sign_d;
      s2_zero_q      <= zero_d;
      s2_sticky_q    <= c_sticky;
      s2_rm_q        <= s1_rm_q;
      s2_byp_res_q   <= s1_byp_res_q;
      s2_byp_flags_q <= s1_byp_flags_q;
      s2_sum_q       <= sum_d;
      s2_lzc_q       <= lzc_d;
      s2_tb_q        <= s1_tb_q;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Stage 3: normalise (never below the smallest normal exponent: subnormals), round, select.
  // ---------------------------------------------------------------------------------------------
  logic [31:0]        rnd_res, result_d;
  logic               rnd_of, rnd_uf, rnd_nx;
  logic [4:0]         fflags_d;
  logic [34:0]        s3_d;

  assign s3_d = fma_s3(s2_sum_q, s2_lzc_q, s2_tb_q, s2_sign_q, s2_sticky_q, s2_rm_q);
  assign {rnd_res, rnd_of, rnd_uf, rnd_nx} = s3_d;

  always_comb begin
    if (s2_byp_q) begin
      result_d = s2_byp_res_q;
      fflags_d = s2_byp_flags_q;
    end else if (s2_zero_q) begin
      result_d = {s2_sign_q, 31'd0};
      fflags_d = 5'd0;
    end else begin
      result_d          = rnd_res;
      fflags_d          = 5'd0;
      fflags_d[tess_pkg::FLAG_OF] = rnd_of;
      fflags_d[tess_pkg::FLAG_UF] = rnd_uf;
      fflags_d[tess_pkg::FLAG_NX] = rnd_nx;
      fflags_d[tess_pkg::FLAG_DZ] = 1'b0;  // only division divides by zero
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      valid_o  <= 1'b0;
      result_o <= 32'd0;
      fflags_o <= 5'd0;
    end else begin
      valid_o  <= s2_valid_q;
      result_o <= result_d;
      fflags_o <= fflags_d;
    end
  end

endmodule
