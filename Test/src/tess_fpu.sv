// The one-round FP operations of the tile: fused multiply-add (which also performs FADD, FSUB and
// FMUL), min/max, compares, conversions, sign injection, moves and classify. RISC-V F semantics
// (docs/tile.md "Floating point"): all five rounding modes, subnormals, exact flags.
//
// Timing: fully pipelined, a new operation of any kind every cycle, fixed latency 3: operands in
// cycle t, result in cycle t+3 (three register stages). Stage 1 decodes, handles special
// operands, multiplies the significands and computes the alignment; stage 2 aligns the addend
// and adds; stage 3 normalises and rounds. Non-arithmetic ops finish in stage 1 and ride along.
//
// The fused datapath keeps the addend and the 48-bit product in one 77-bit window (bit k has
// weight 2^(k + tb - 202), tb being a biased exponent). The addend starts at the top and shifts
// right by (product exponent + 27 - addend exponent). When the addend is so large that the shift
// would be negative the shift is clamped to 0: the product then lies entirely below a quarter
// ulp of the addend both in truth and in the window, so the rounded result is the same. When
// the addend falls out of the bottom it only leaves a sticky bit; the subtraction then computes
// floor(p - c) and the fraction survives as that sticky bit. FADD is a*1+b, FSUB a*1-b, FMUL
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
  localparam int W            = 77;  // width of the addition window

  // ---------------------------------------------------------------------------------------------
  // Stage 1: operand selection, classification, special results, significand product, alignment
  // amount; complete results of the non-arithmetic operations.
  // ---------------------------------------------------------------------------------------------
  logic [31:0]        opa, opb, opc;
  logic               neg_prod, is_arith, is_cvt_sf;
  logic               nan_a, nan_b, nan_c, snan_a, snan_b, snan_c, inf_a, inf_b, inf_c;
  logic               zero_a, zero_b, zero_c, any_nan, any_snan, inv_mul, inv_add;
  logic [23:0]        ma, mb, mc;
  logic signed [11:0] ea, eb, ec, ep, tb_d;
  logic signed [11:0] shift_wide;
  logic [6:0]         shamt_d;
  logic               sp_d, sc_d;
  logic [47:0]        prod_d;
  logic               byp_d;
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

  always @* begin
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

    nan_a  = is_nan(opa[30:0]);
    nan_b  = is_nan(opb[30:0]);
    nan_c  = is_nan(opc[30:0]);
    snan_a = nan_a & ~opa[22];
    snan_b = nan_b & ~opb[22];
    snan_c = nan_c & ~opc[22];
    inf_a  = is_inf(opa[30:0]);
    inf_b  = is_inf(opb[30:0]);
    inf_c  = is_inf(opc[30:0]);
    zero_a = opa[30:0] == 31'd0;
    zero_b = opb[30:0] == 31'd0;
    zero_c = opc[30:0] == 31'd0;
    any_nan  = nan_a | nan_b | nan_c;
    any_snan = snan_a | snan_b | snan_c;
    // RISC-V: inf*0 is invalid even when c is a quiet NaN.
    inv_mul  = (inf_a & zero_b) | (zero_a & inf_b);

    sp_d = opa[31] ^ opb[31] ^ neg_prod;
    sc_d = opc[31];
    inv_add = (inf_a | inf_b) & ~nan_a & ~nan_b & inf_c & (sp_d != sc_d);

    // Significands and exponents (a subnormal's exponent is that of the smallest normal).
    ma = {opa[30:23] != 8'd0, opa[22:0]};
    mb = {opb[30:23] != 8'd0, opb[22:0]};
    mc = {opc[30:23] != 8'd0, opc[22:0]};
    ea = (opa[30:23] == 8'd0) ? 12'sd1 : $signed({4'd0, opa[30:23]});
    eb = (opb[30:23] == 8'd0) ? 12'sd1 : $signed({4'd0, opb[30:23]});
    ec = (opc[30:23] == 8'd0 || zero_c) ? 12'sd1 : $signed({4'd0, opc[30:23]});
    ep = ea + eb - 12'sd127;
    prod_d = ma * mb;

    // Alignment: shift of the addend and the window's exponent.
    shift_wide = ep + 12'sd27 - ec;
    if (zero_a || zero_b) begin
      tb_d    = ec;
      shamt_d = 7'd0;
    end else if (shift_wide < 12'sd0) begin
      tb_d    = ec;
      shamt_d = 7'd0;
    end else begin
      tb_d    = ep + 12'sd27;
      shamt_d = (shift_wide > 12'sd127) ? 7'd127 : shift_wide[6:0];
    end

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
        if (any_nan || inv_mul || inv_add) begin
          byp_res_d           = CanonicalNaN;
          byp_flags_d[tess_pkg::FLAG_NV] = any_snan | inv_mul | inv_add;
        end else if (inf_a || inf_b) begin
          byp_res_d = {sp_d, 31'h7f80_0000};
        end else if (inf_c) begin
          byp_res_d = {sc_d, 31'h7f80_0000};
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
  logic [2*W-1:0] c_shifted;
  logic [W-1:0]   c_al, p_al, sum_d;
  logic [W:0]     diff;
  logic           c_sticky, eff_sub, sign_d, zero_d;
  logic [6:0]     lzc_d;
  logic [127:0]   lz_x;

  always @* begin
    c_shifted = {1'b0, s1_mc_q, 52'd0, {W{1'b0}}} >> s1_shamt_q;
    c_al      = c_shifted[2*W-1:W];
    c_sticky  = c_shifted[W-1:0] != '0;
    p_al      = {27'd0, s1_prod_q, 2'd0};
    eff_sub   = s1_sp_q ^ s1_sc_q;
    diff      = {1'b0, p_al} - {1'b0, c_al} - {{W{1'b0}}, c_sticky};
    sign_d    = s1_sp_q;
    if (!eff_sub) begin
      sum_d = p_al + c_al;
    end else if (diff[W]) begin
      // Only possible when nothing of c was shifted out (c > p), so the difference is exact.
      sum_d  = c_al - p_al;
      sign_d = s1_sc_q;
    end else begin
      sum_d = diff[W-1:0];
    end
    zero_d = (sum_d == '0) && !c_sticky;
    // An exact zero sum of opposite-signed terms is +0, or -0 when rounding down.
    if (zero_d && eff_sub) sign_d = (s1_rm_q == tess_pkg::RM_RDN);
    // Leading zeros of sum_d (0 when sum_d is 0) by halving: 7 steps of a 128-bit window instead
    // of a W-step priority chain (the chain cost ~13% of a simulated tile's time).
    lz_x  = {sum_d, {(128 - W){1'b0}}};
    lzc_d = 7'd0;
    for (int k = 6; k >= 0; k--) begin
      if ((lz_x >> (128 - (1 << k))) == 128'd0) begin
        lzc_d = lzc_d | 7'(1 << k);
        lz_x  = lz_x << (1 << k);
      end
    end
    if (sum_d == '0) lzc_d = 7'd0;
  end

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
  logic [6:0]         norm_sh;
  logic [W-1:0]       norm;
  logic signed [11:0] norm_exp;
  logic [31:0]        rnd_res, result_d;
  logic               rnd_of, rnd_uf, rnd_nx;
  logic [4:0]         fflags_d;

  always @* begin
    // A shift of tb brings the window's top bit to exponent 1; shifting further would leave the
    // exponent range, so the result stays subnormal.
    if ($signed({5'd0, s2_lzc_q}) > s2_tb_q) norm_sh = s2_tb_q[6:0];
    else                                    norm_sh = s2_lzc_q;
    norm     = s2_sum_q << norm_sh;
    norm_exp = s2_tb_q + 12'sd1 - $signed({5'd0, norm_sh});
  end

  tess_fpu_round u_round (
    .sign_i   (s2_sign_q),
    .exp_i    (norm_exp),
    .mant_i   (norm[W-1 -: 24]),
    .round_i  (norm[W-25]),
    .round2_i (norm[W-26]),
    .sticky_i ((norm[W-27:0] != '0) | s2_sticky_q),
    .rm_i     (s2_rm_q),
    .result_o (rnd_res),
    .of_o     (rnd_of),
    .uf_o     (rnd_uf),
    .nx_o     (rnd_nx)
  );

  always @* begin
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
