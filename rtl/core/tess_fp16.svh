// The matrix unit's binary16 conversions and its stochastic-rounding generator step, as
// functions (docs/tile.md, "fp16 inputs and conversions"); the model's are host/fp/fp16.hpp.
// Included inside tess_amp's body (no include guard). No flags; every NaN result canonical.

// binary16 -> binary32, exact: subnormals normalised, NaN -> 0x7fc00000.
function automatic logic [31:0] f16_to_f32(logic [15:0] h);
  logic [4:0]  exp;
  logic [9:0]  mant;
  logic [3:0]  top;   // the position of a subnormal's leading one
  logic [9:0]  frac;  // a subnormal's fraction once its leading one is the hidden bit
  logic [31:0] out;
  exp  = h[14:10];
  mant = h[9:0];
  top  = 4'd0;
  for (int i = 0; i < 10; i++) begin
    if (mant[i]) top = 4'(i);
  end
  frac = 10'({1'b0, mant} << (4'd10 - top));
  if (exp == 5'h1f) begin
    out = (mant != 10'd0) ? 32'h7fc0_0000 : {h[15], 31'h7f80_0000};
  end else if (exp != 5'd0) begin
    out = {h[15], 8'(exp) + 8'd112, mant, 13'd0};
  end else if (mant == 10'd0) begin
    out = {h[15], 31'd0};
  end else begin
    // mant * 2^-24 = 1.f * 2^(top - 24): biased exponent 103 + top.
    out = {h[15], 8'd103 + 8'(top), frac, 13'd0};
  end
  f16_to_f32 = out;
endfunction

// binary32 -> binary16: nearest-even (sr = 0) or stochastic with the 16 random bits u: truncate
// to the binary16 grid (∞ above 65504) and round up iff F + u >= 2^16, F the first 16 bits of the
// discarded fraction. ±∞ and magnitudes >= 2^16 give ±∞, NaN 0x7e00; zero results keep the sign.
function automatic logic [15:0] f32_to_f16(logic [31:0] a, logic sr, logic [15:0] u);
  logic [7:0]  e;
  logic [5:0]  n;        // discarded bits, 13.., clamped at 40 (the same result beyond)
  logic [4:0]  eb_m1;    // the biased binary16 exponent of the grid, minus 1
  logic [50:0] x;        // {kept[10:0], fraction[39:0]}
  logic        up;
  logic [16:0] bits;
  logic [15:0] out;
  e = a[30:23];
  if (e >= 8'd113) begin
    n     = 6'd13;
    eb_m1 = 5'(e - 8'd113);
  end else begin
    // 126 - e discarded bits (a binary32 subnormal counts as e = 1), at most 40.
    n     = (e <= 8'd86) ? 6'd40 : 6'(8'd126 - ((e == 8'd0) ? 8'd1 : e));
    eb_m1 = 5'd0;
  end
  // The kept significand (below 2^11, as n >= 13) over the fraction of an ulp.
  x = 51'({(e != 8'd0), a[22:0], 40'd0} >> n);
  if (sr) up = (17'(x[39:24]) + 17'(u)) >= 17'h10000;
  else    up = x[39] & ((x[38:0] != 39'd0) | x[40]);
  bits = 17'({eb_m1, 10'd0}) + 17'(x[50:40]) + 17'(up);
  if (e == 8'hff) begin
    out = (a[22:0] != 23'd0) ? 16'h7e00 : {a[31], 15'h7c00};
  end else if (a[30:0] == 31'd0) begin
    out = {a[31], 15'd0};
  end else if ((e >= 8'd143) || (bits >= 17'h7c00)) begin
    out = {a[31], 15'h7c00};
  end else begin
    out = {a[31], bits[14:0]};
  end
  f32_to_f16 = out;
endfunction

// The generator's step: xorshift32 (13, 17, 5); a nonzero state stays nonzero.
function automatic logic [31:0] amp_sr_step(logic [31:0] s);
  logic [31:0] t;
  t = s ^ (s << 13);
  t = t ^ (t >> 17);
  t = t ^ (t << 5);
  amp_sr_step = t;
endfunction
