// The fused multiply-add arithmetic of the tile, as functions: the one definition that tess_fpu
// pipelines over its three stages (a register between each) and that the matrix unit (tess_amp)
// chains without registers, so both compute every bit alike (docs/tile.md, "Matrix unit").
// Included inside a module body (no include guard: each including module gets its own copy).
// Functions, not modules: a simulator evaluates a function call only when the statement around
// it runs, so the matrix unit's 16 FMAs cost nothing in a cycle without an AMP.S.
//
// The fused datapath keeps the addend and the 48-bit product in one 77-bit window (bit k has
// weight 2^(k + tb - 202), tb being a biased exponent). The addend starts at the top and shifts
// right by (product exponent + 27 - addend exponent). When the addend is so large that the shift
// would be negative the shift is clamped to 0: the product then lies entirely below a quarter
// ulp of the addend both in truth and in the window, so the rounded result is the same. When
// the addend falls out of the bottom it only leaves a sticky bit; the subtraction then computes
// floor(p - c) and the fraction survives as that sticky bit.
// tess_pkg items are named with their package prefix: Yosys 0.23 reads no package imports.

// Increment decision for a truncated magnitude with the given lsb, half-ulp bit and rest.
function automatic logic fma_round_up(logic [2:0] rm, logic sign, logic lsb, logic half,
                                      logic rest);
  logic up;
  up = 1'b0;
  case (rm)
    tess_pkg::RM_RNE: up = half & (rest | lsb);
    tess_pkg::RM_RTZ: up = 1'b0;
    tess_pkg::RM_RDN: up = sign & (half | rest);
    tess_pkg::RM_RUP: up = ~sign & (half | rest);
    tess_pkg::RM_RMM: up = half;
    default:          up = 1'b0;
  endcase
  fma_round_up = up;
endfunction

// Rounds a binary32 significand per RISC-V rm and packs it, with the NX/UF/OF flags of IEEE 754
// (tininess after rounding, UF only when also inexact). mant is normalised (mant[23] = 1, exp >= 1
// its biased exponent, possibly >= 255: overflow) or subnormal (mant[23] = 0, exp = 1); round is
// the first discarded bit, round2 the second, sticky the OR of the rest. Returns
// {result[31:0], of, uf, nx}.
function automatic logic [34:0] fma_round(logic sign, logic signed [11:0] exp, logic [23:0] mant,
                                          logic round, logic round2, logic sticky,
                                          logic [2:0] rm);
  logic        inexact, inc, inc_unbounded, tiny, to_inf;
  logic [11:0] exp_field;
  logic [34:0] packed_sum;
  logic [34:0] out;
  inexact       = round | round2 | sticky;
  inc           = fma_round_up(rm, sign, mant[0], round, round2 | sticky);
  // With an unbounded exponent the 24-bit significand would be {mant[22:0], round}: the result
  // is not tiny only if that rounds up to 2^-126.
  inc_unbounded = fma_round_up(rm, sign, round, round2, sticky);
  tiny          = ~mant[23] & ~(&mant[22:0] & round & inc_unbounded);
  // Adding the increment to {exponent, fraction} carries a full significand into the exponent
  // and a subnormal into the smallest normal.
  exp_field     = mant[23] ? exp : 12'd0;
  packed_sum    = {exp_field, mant[22:0]} + {34'd0, inc};
  to_inf        = (rm == tess_pkg::RM_RNE) | (rm == tess_pkg::RM_RMM) |
                  ((rm == tess_pkg::RM_RUP) & ~sign) | ((rm == tess_pkg::RM_RDN) & sign);
  if (packed_sum[34:23] >= 12'd255) begin
    out = {sign, to_inf ? 31'h7f80_0000 : 31'h7f7f_ffff, 1'b1, 1'b0, 1'b1};
  end else begin
    out = {sign, packed_sum[30:0], 1'b0, tiny & inexact, inexact};
  end
  fma_round = out;
endfunction

// Stage 1 of (-1)^neg * a * b + c: special operands, significand product, alignment.
// Returns {special, special_result[31:0], nv, sp, sc, prod[47:0], mc[23:0], shamt[6:0], tb[11:0]}
// (127 bits): special = the result is special_result (a NaN, with NV if invalid, or an infinity);
// sp/sc the signs of the product and the addend.
function automatic logic [126:0] fma_s1(logic [31:0] a, logic [31:0] b, logic [31:0] c,
                                        logic neg_prod);
  logic               nan_a, nan_b, nan_c, inf_a, inf_b, inf_c, zero_a, zero_b, zero_c;
  logic               any_nan, any_snan, inv_mul, inv_add, sp, sc, special, nv;
  logic [31:0]        special_res;
  logic [23:0]        ma, mb, mc;
  logic signed [11:0] ea, eb, ec, ep, tb, shift_wide;
  logic [6:0]         shamt;
  logic [47:0]        prod;
  nan_a    = (a[30:23] == 8'hff) && (a[22:0] != 23'd0);
  nan_b    = (b[30:23] == 8'hff) && (b[22:0] != 23'd0);
  nan_c    = (c[30:23] == 8'hff) && (c[22:0] != 23'd0);
  inf_a    = (a[30:23] == 8'hff) && (a[22:0] == 23'd0);
  inf_b    = (b[30:23] == 8'hff) && (b[22:0] == 23'd0);
  inf_c    = (c[30:23] == 8'hff) && (c[22:0] == 23'd0);
  zero_a   = a[30:0] == 31'd0;
  zero_b   = b[30:0] == 31'd0;
  zero_c   = c[30:0] == 31'd0;
  any_nan  = nan_a | nan_b | nan_c;
  any_snan = (nan_a & ~a[22]) | (nan_b & ~b[22]) | (nan_c & ~c[22]);
  // RISC-V: inf*0 is invalid even when c is a quiet NaN.
  inv_mul  = (inf_a & zero_b) | (zero_a & inf_b);
  sp       = a[31] ^ b[31] ^ neg_prod;
  sc       = c[31];
  inv_add  = (inf_a | inf_b) & ~nan_a & ~nan_b & inf_c & (sp != sc);

  special     = 1'b1;
  nv          = 1'b0;
  special_res = 32'h7fc0_0000;  // the canonical NaN
  if (any_nan || inv_mul || inv_add) begin
    nv = any_snan | inv_mul | inv_add;
  end else if (inf_a || inf_b) begin
    special_res = {sp, 31'h7f80_0000};
  end else if (inf_c) begin
    special_res = {sc, 31'h7f80_0000};
  end else begin
    special = 1'b0;
  end

  // Significands and exponents (a subnormal's exponent is that of the smallest normal).
  ma   = {a[30:23] != 8'd0, a[22:0]};
  mb   = {b[30:23] != 8'd0, b[22:0]};
  mc   = {c[30:23] != 8'd0, c[22:0]};
  ea   = (a[30:23] == 8'd0) ? 12'sd1 : $signed({4'd0, a[30:23]});
  eb   = (b[30:23] == 8'd0) ? 12'sd1 : $signed({4'd0, b[30:23]});
  ec   = (c[30:23] == 8'd0 || zero_c) ? 12'sd1 : $signed({4'd0, c[30:23]});
  ep   = ea + eb - 12'sd127;
  prod = ma * mb;

  // Alignment: shift of the addend and the window's exponent.
  shift_wide = ep + 12'sd27 - ec;
  if (zero_a || zero_b || (shift_wide < 12'sd0)) begin
    tb    = ec;
    shamt = 7'd0;
  end else begin
    tb    = ep + 12'sd27;
    shamt = (shift_wide > 12'sd127) ? 7'd127 : shift_wide[6:0];
  end
  fma_s1 = {special, special_res, nv, sp, sc, prod, mc, shamt, tb};
endfunction

// Stage 2: align the addend, add or subtract, count leading zeros. Returns {sum[76:0], lzc[6:0],
// sign, zero, sticky} (87 bits).
function automatic logic [86:0] fma_s2(logic [47:0] prod, logic [23:0] mc, logic [6:0] shamt,
                                       logic sp, logic sc, logic [2:0] rm);
  logic [153:0] c_shifted;
  logic [76:0]  c_al, p_al, sum;
  logic [77:0]  diff;
  logic         c_sticky, eff_sub, sign, zero;
  logic [6:0]   lzc;
  logic [127:0] lz_x;
  c_shifted = {1'b0, mc, 52'd0, 77'd0} >> shamt;
  c_al      = c_shifted[153:77];
  c_sticky  = c_shifted[76:0] != '0;
  p_al      = {27'd0, prod, 2'd0};
  eff_sub   = sp ^ sc;
  diff      = {1'b0, p_al} - {1'b0, c_al} - {77'd0, c_sticky};
  sign      = sp;
  if (!eff_sub) begin
    sum = p_al + c_al;
  end else if (diff[77]) begin
    // Only possible when nothing of c was shifted out (c > p), so the difference is exact.
    sum  = c_al - p_al;
    sign = sc;
  end else begin
    sum = diff[76:0];
  end
  zero = (sum == '0) && !c_sticky;
  // An exact zero sum of opposite-signed terms is +0, or -0 when rounding down.
  if (zero && eff_sub) sign = (rm == tess_pkg::RM_RDN);
  // Leading zeros of sum (0 when sum is 0) by halving: 7 steps of a 128-bit window instead of a
  // 77-step priority chain (the chain cost ~13% of a simulated tile's time).
  lz_x = {sum, 51'd0};
  lzc  = 7'd0;
  for (int k = 6; k >= 0; k--) begin
    if ((lz_x >> (128 - (1 << k))) == 128'd0) begin
      lzc  = lzc | 7'(1 << k);
      lz_x = lz_x << (1 << k);
    end
  end
  if (sum == '0) lzc = 7'd0;
  fma_s2 = {sum, lzc, sign, zero, c_sticky};
endfunction

// Stage 3: normalise (never below the smallest normal exponent: subnormals) and round a nonzero
// sum. Returns {result[31:0], of, uf, nx}.
function automatic logic [34:0] fma_s3(logic [76:0] sum, logic [6:0] lzc, logic signed [11:0] tb,
                                       logic sign, logic sticky, logic [2:0] rm);
  logic [6:0]         norm_sh;
  logic [76:0]        norm;
  logic signed [11:0] norm_exp;
  // A shift of tb brings the window's top bit to exponent 1; shifting further would leave the
  // exponent range, so the result stays subnormal.
  if ($signed({5'd0, lzc}) > tb) norm_sh = tb[6:0];
  else                           norm_sh = lzc;
  norm     = sum << norm_sh;
  norm_exp = tb + 12'sd1 - $signed({5'd0, norm_sh});
  fma_s3 = fma_round(sign, norm_exp, norm[76:53], norm[52], norm[51], (norm[50:0] != '0) | sticky,
                     rm);
endfunction

// One whole fused a * b + c in round-to-nearest-even, without flags: the three stages of tess_fpu
// with no register between them (the matrix unit's step, FMADD.S's result bits).
function automatic logic [31:0] fma_rne(logic [31:0] a, logic [31:0] b, logic [31:0] c);
  logic [126:0]       s1;
  logic [86:0]        s2;
  logic [34:0]        s3;
  logic signed [11:0] tb;
  logic [3:0]         unused_flags;  // NV of stage 1, OF/UF/NX of stage 3: the unit has no flags
  s1 = fma_s1(a, b, c, 1'b0);
  tb = s1[11:0];
  s2 = fma_s2(s1[90:43], s1[42:19], s1[18:12], s1[92], s1[91], 3'(tess_pkg::RM_RNE));
  s3 = fma_s3(s2[86:10], s2[9:3], tb, s2[2], s2[0], 3'(tess_pkg::RM_RNE));
  unused_flags = {s1[93], s3[2:0]};
  if (s1[126])    fma_rne = s1[125:94];
  else if (s2[1]) fma_rne = {s2[2], 31'd0};
  else            fma_rne = s3[34:3];
endfunction
