// FDIV.S and FSQRT.S as radix-2 digit recurrences, four steps per pass, with one partial state
// per context so that the contexts' long ops interleave freely.
//
// Timing: an operation makes exactly 8 passes (LONG_OP_ROUNDS), one per cycle in which pass_i is
// high for its context, at any spacing. Pass 0 latches and unpacks the operands (special operands
// are decided here too, but still take all 8 passes: the latency is data-independent); passes
// 1..7 each retire 4 quotient/root bits (28 = 24 significand bits, one spare for the quotient's
// normalisation, a round bit and two more so tininess can be judged). valid_o is high 3 cycles
// after the cycle of pass 7: stage 1 takes the final remainder, stage 2 normalises (and
// denormalises a subnormal quotient), stage 3 rounds through tess_fpu_round.
// tess_pkg items are named with their package prefix: Yosys 0.23 reads no package imports.
module tess_fpu_divsqrt #(
  parameter int Contexts = tess_params_pkg::NUM_CONTEXTS  // "int", not "int unsigned": Icarus 11 rejects the latter
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        pass_i,      // a pass of context ctx_i happens this cycle
  input  logic [2:0]  pass_idx_i,  // 0..7; 0 = first pass: latch operands/op/rm
  input  logic [2:0]  ctx_i,
  input  logic        sqrt_i,      // 1: sqrt(a), 0: a/b (valid on pass 0)
  input  logic [2:0]  rm_i,        // valid on pass 0
  input  logic [31:0] a_i,
  input  logic [31:0] b_i,         // valid on pass 0
  output logic        valid_o,     // 3 cycles after the cycle of pass_idx 7
  output logic [2:0]  ctx_o,
  output logic [31:0] result_o,
  output logic [4:0]  fflags_o
);
  localparam logic [31:0] CanonicalNaN = 32'h7fc0_0000;
  localparam int StepsPerPass = 4;

  // ---------------------------------------------------------------------------------------------
  // Per-context partial state.
  // ---------------------------------------------------------------------------------------------
  // Flat vectors, context k at [k*W +: W] (Yosys 0.23 reads no multi-dimensional packed arrays).
  logic [Contexts*32-1:0] rem_q;         // partial remainder
  logic [Contexts*28-1:0] quo_q;         // quotient / root bits so far
  logic [Contexts*26-1:0] opnd_q;        // divisor, or the radicand bits still to bring down
  logic [Contexts*12-1:0] exp_q;         // biased result exponent (signed)
  logic [Contexts-1:0]    sign_q, sqrt_q, spec_q;
  logic [Contexts*3-1:0]  rm_q;
  logic [Contexts*32-1:0] spec_res_q;    // result of special operands
  logic [Contexts*5-1:0]  spec_flags_q;
  localparam int Sw = $clog2(Contexts);  // index bits
  logic [Sw-1:0]          sel;           // context of this cycle's pass, as an index

  // A context number the unit does not have never has passes; keep the index in range anyway.
  assign sel = ({1'b0, ctx_i} < 4'(Contexts)) ? Sw'(ctx_i) : '0;

  logic [31:0]        rem_d;
  logic [27:0]        quo_d;
  logic [25:0]        opnd_d;
  logic signed [11:0] exp_d;
  logic               sign_d, spec_d;
  logic [31:0]        spec_res_d;
  logic [4:0]         spec_flags_d;

  // ---------------------------------------------------------------------------------------------
  // Pass 0: unpack and normalise the operands, decide special cases.
  // ---------------------------------------------------------------------------------------------
  logic               nan_a, nan_b, snan_a, snan_b, inf_a, inf_b, zero_a, zero_b;
  logic [23:0]        ma, mb, ma_n, mb_n;
  logic [4:0]         lz_a, lz_b;
  logic signed [11:0] exa, exb, sqrt_e;

  // Leading zeros of a significand (0..23 for a nonzero one).
  function automatic logic [4:0] lzc24(logic [23:0] m);
    logic [4:0] n;
    n = 5'd0;
    for (int i = 0; i < 24; i++) begin
      if (m[i]) n = 5'(23 - i);
    end
    lzc24 = n;
  endfunction

  always_comb begin
    nan_a  = (a_i[30:23] == 8'hff) && (a_i[22:0] != 23'd0);
    nan_b  = (b_i[30:23] == 8'hff) && (b_i[22:0] != 23'd0);
    snan_a = nan_a & ~a_i[22];
    snan_b = nan_b & ~b_i[22];
    inf_a  = (a_i[30:23] == 8'hff) && (a_i[22:0] == 23'd0);
    inf_b  = (b_i[30:23] == 8'hff) && (b_i[22:0] == 23'd0);
    zero_a = a_i[30:0] == 31'd0;
    zero_b = b_i[30:0] == 31'd0;
    ma     = {a_i[30:23] != 8'd0, a_i[22:0]};
    mb     = {b_i[30:23] != 8'd0, b_i[22:0]};
    lz_a   = lzc24(ma);
    lz_b   = lzc24(mb);
    ma_n   = ma << lz_a;
    mb_n   = mb << lz_b;
    // Exponents of the normalised significands (below 1 for subnormal inputs).
    exa    = ((a_i[30:23] == 8'd0) ? 12'sd1 : $signed({4'd0, a_i[30:23]})) -
             $signed({7'd0, lz_a});
    exb    = ((b_i[30:23] == 8'd0) ? 12'sd1 : $signed({4'd0, b_i[30:23]})) -
             $signed({7'd0, lz_b});
    sqrt_e = exa - 12'sd127;  // unbiased; made even by doubling the radicand when odd

    spec_d       = 1'b1;
    spec_res_d   = CanonicalNaN;
    spec_flags_d = 5'd0;
    rem_d        = 32'd0;
    quo_d        = 28'd0;
    if (sqrt_i) begin
      sign_d = a_i[31];
      exp_d  = $signed(sqrt_e - $signed({11'd0, sqrt_e[0]})) >>> 1;
      exp_d  = exp_d + 12'sd127;
      // Radicand 2X, X = the significand (doubled when the exponent is odd): root = sqrt(2X*2^30).
      opnd_d = sqrt_e[0] ? {ma_n, 2'b00} : {1'b0, ma_n, 1'b0};
      if (nan_a) begin
        spec_flags_d[tess_pkg::FLAG_NV] = snan_a;
      end else if (zero_a) begin
        spec_res_d = a_i;  // sqrt(-0) = -0
      end else if (a_i[31]) begin
        spec_flags_d[tess_pkg::FLAG_NV] = 1'b1;
      end else if (inf_a) begin
        spec_res_d = a_i;
      end else begin
        spec_d = 1'b0;
      end
    end else begin
      sign_d = a_i[31] ^ b_i[31];
      exp_d  = exa - exb + 12'sd127;
      rem_d  = {8'd0, ma_n};
      opnd_d = {2'b00, mb_n};
      if (nan_a || nan_b) begin
        spec_flags_d[tess_pkg::FLAG_NV] = snan_a | snan_b;
      end else if ((inf_a && inf_b) || (zero_a && zero_b)) begin
        spec_flags_d[tess_pkg::FLAG_NV] = 1'b1;
      end else if (inf_a) begin
        spec_res_d = {sign_d, 31'h7f80_0000};
      end else if (zero_b) begin
        spec_res_d            = {sign_d, 31'h7f80_0000};
        spec_flags_d[tess_pkg::FLAG_DZ] = 1'b1;
      end else if (zero_a || inf_b) begin
        spec_res_d = {sign_d, 31'd0};
      end else begin
        spec_d = 1'b0;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Passes 1..7: four recurrence steps on the state of ctx_i.
  //   divide (restoring): q = (R >= D); R = (R - q*D) << 1; starts with R = a's significand.
  //   square root (restoring, bit by bit): R = R*4 + next two radicand bits; T = 4Q + 1;
  //   q = (R >= T); R -= q*T; Q = 2Q + q.
  // ---------------------------------------------------------------------------------------------
  logic [31:0] it_rem, it_r4;
  logic [27:0] it_quo;
  logic [25:0] it_opnd;
  logic [31:0] it_t;
  logic        it_q;

  always_comb begin
    it_rem  = rem_q[sel*32 +: 32];
    it_quo  = quo_q[sel*28 +: 28];
    it_opnd = opnd_q[sel*26 +: 26];
    it_r4   = 32'd0;
    it_t    = 32'd0;
    it_q    = 1'b0;
    for (int s = 0; s < StepsPerPass; s++) begin
      if (sqrt_q[sel]) begin
        it_r4   = {it_rem[29:0], it_opnd[25:24]};
        it_opnd = {it_opnd[23:0], 2'b00};
        it_t    = {2'b00, it_quo, 2'b01};
        it_q    = it_r4 >= it_t;
        it_rem  = it_q ? it_r4 - it_t : it_r4;
      end else begin
        it_q   = it_rem >= {6'd0, it_opnd};
        it_rem = (it_q ? it_rem - {6'd0, it_opnd} : it_rem) << 1;
      end
      it_quo = {it_quo[26:0], it_q};
    end
  end

  for (genvar k = 0; k < Contexts; k++) begin : g_ctx
    logic first, upd;
    assign upd   = pass_i && (ctx_i == 3'(k));
    assign first = pass_idx_i == 3'd0;
    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        rem_q[k*32 +: 32]        <= 32'd0;
        quo_q[k*28 +: 28]        <= 28'd0;
        opnd_q[k*26 +: 26]       <= 26'd0;
        exp_q[k*12 +: 12]        <= 12'd0;
        sign_q[k]                <= 1'b0;
        sqrt_q[k]                <= 1'b0;
        spec_q[k]                <= 1'b0;
        rm_q[k*3 +: 3]           <= 3'd0;
        spec_res_q[k*32 +: 32]   <= 32'd0;
        spec_flags_q[k*5 +: 5]   <= 5'd0;
      end else if (upd) begin
        rem_q[k*32 +: 32]        <= first ? rem_d : it_rem;
        quo_q[k*28 +: 28]        <= first ? quo_d : it_quo;
        opnd_q[k*26 +: 26]       <= first ? opnd_d : it_opnd;
        if (first) begin
          exp_q[k*12 +: 12]        <= exp_d;
          sign_q[k]                <= sign_d;
          sqrt_q[k]                <= sqrt_i;
          spec_q[k]                <= spec_d;
          rm_q[k*3 +: 3]           <= rm_i;
          spec_res_q[k*32 +: 32]   <= spec_res_d;
          spec_flags_q[k*5 +: 5]   <= spec_flags_d;
        end
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Stage 1: capture the finished recurrence of the context whose pass 7 this is.
  // ---------------------------------------------------------------------------------------------
  logic               p1_valid_q, p1_sticky_q, p1_sign_q, p1_sqrt_q, p1_spec_q;
  logic [2:0]         p1_ctx_q, p1_rm_q;
  logic [27:0]        p1_quo_q;
  logic signed [11:0] p1_exp_q;
  logic [31:0]        p1_spec_res_q;
  logic [4:0]         p1_spec_flags_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      p1_valid_q      <= 1'b0;
      p1_sticky_q     <= 1'b0;
      p1_sign_q       <= 1'b0;
      p1_sqrt_q       <= 1'b0;
      p1_spec_q       <= 1'b0;
      p1_ctx_q        <= 3'd0;
      p1_rm_q         <= 3'd0;
      p1_quo_q        <= 28'd0;
      p1_exp_q        <= 12'sd0;
      p1_spec_res_q   <= 32'd0;
      p1_spec_flags_q <= 5'd0;
    end else begin
      p1_valid_q      <= pass_i && (pass_idx_i == 3'd7);
      p1_sticky_q     <= it_rem != 32'd0;
      p1_sign_q       <= sign_q[sel];
      p1_sqrt_q       <= sqrt_q[sel];
      p1_spec_q       <= spec_q[sel];
      p1_ctx_q        <= ctx_i;
      p1_rm_q         <= rm_q[sel*3 +: 3];
      p1_quo_q        <= it_quo;
      p1_exp_q        <= exp_q[sel*12 +: 12];
      p1_spec_res_q   <= spec_res_q[sel*32 +: 32];
      p1_spec_flags_q <= spec_flags_q[sel*5 +: 5];
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Stage 2: normalise the quotient (it lies in (1/2, 2); the root in [1, 2)) and shift a
  // quotient below the normal range right to the subnormal lsb, keeping a sticky bit.
  // ---------------------------------------------------------------------------------------------
  logic signed [11:0] n_exp, den;
  logic [25:0]        n_sig;  // {significand, round bit, second round bit}
  logic               n_sticky;
  logic [51:0]        den_shifted;

  always_comb begin
    if (p1_quo_q[27] || p1_sqrt_q) begin
      n_sig    = p1_quo_q[27:2];
      n_sticky = (p1_quo_q[1:0] != 2'd0) | p1_sticky_q;
      n_exp    = p1_exp_q;
    end else begin
      n_sig    = p1_quo_q[26:1];
      n_sticky = p1_quo_q[0] | p1_sticky_q;
      n_exp    = p1_exp_q - 12'sd1;
    end
    den         = 12'sd1 - n_exp;
    den_shifted = 52'd0;
    if (n_exp < 12'sd1) begin
      if (den > 12'sd27) begin
        n_sticky = n_sticky | (n_sig != 26'd0);
        n_sig    = 26'd0;
      end else begin
        den_shifted = {n_sig, 26'd0} >> den[4:0];
        n_sig       = den_shifted[51:26];
        n_sticky    = n_sticky | (den_shifted[25:0] != 26'd0);
      end
      n_exp = 12'sd1;
    end
  end

  logic               p2_valid_q, p2_sticky_q, p2_sign_q, p2_spec_q;
  logic [2:0]         p2_ctx_q, p2_rm_q;
  logic [25:0]        p2_sig_q;
  logic signed [11:0] p2_exp_q;
  logic [31:0]        p2_spec_res_q;
  logic [4:0]         p2_spec_flags_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      p2_valid_q      <= 1'b0;
      p2_sticky_q     <= 1'b0;
      p2_sign_q       <= 1'b0;
      p2_spec_q       <= 1'b0;
      p2_ctx_q        <= 3'd0;
      p2_rm_q         <= 3'd0;
      p2_sig_q        <= 26'd0;
      p2_exp_q        <= 12'sd0;
      p2_spec_res_q   <= 32'd0;
      p2_spec_flags_q <= 5'd0;
    end else begin
      p2_valid_q      <= p1_valid_q;
      p2_sticky_q     <= n_sticky;
      p2_sign_q       <= p1_sign_q;
      p2_spec_q       <= p1_spec_q;
      p2_ctx_q        <= p1_ctx_q;
      p2_rm_q         <= p1_rm_q;
      p2_sig_q        <= n_sig;
      p2_exp_q        <= n_exp;
      p2_spec_res_q   <= p1_spec_res_q;
      p2_spec_flags_q <= p1_spec_flags_q;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Stage 3: round and select.
  // ---------------------------------------------------------------------------------------------
  logic [31:0] rnd_res, result_d;
  logic        rnd_of, rnd_uf, rnd_nx;
  logic [4:0]  fflags_d;

  tess_fpu_round u_round (
    .sign_i   (p2_sign_q),
    .exp_i    (p2_exp_q),
    .mant_i   (p2_sig_q[25:2]),
    .round_i  (p2_sig_q[1]),
    .round2_i (p2_sig_q[0]),
    .sticky_i (p2_sticky_q),
    .rm_i     (p2_rm_q),
    .result_o (rnd_res),
    .of_o     (rnd_of),
    .uf_o     (rnd_uf),
    .nx_o     (rnd_nx)
  );

  always_comb begin
    if (p2_spec_q) begin
      result_d = p2_spec_res_q;
      fflags_d = p2_spec_flags_q;
    end else begin
      result_d          = rnd_res;
      fflags_d          = 5'd0;
      fflags_d[tess_pkg::FLAG_OF] = rnd_of;
      fflags_d[tess_pkg::FLAG_UF] = rnd_uf;
      fflags_d[tess_pkg::FLAG_NX] = rnd_nx;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      valid_o  <= 1'b0;
      ctx_o    <= 3'd0;
      result_o <= 32'd0;
      fflags_o <= 5'd0;
    end else begin
      valid_o  <= p2_valid_q;
      ctx_o    <= p2_ctx_q;
      result_o <= result_d;
      fflags_o <= fflags_d;
    end
  end

endmodule
