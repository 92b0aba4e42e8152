// 32x32 multiplier of the tile core: MUL, MULH, MULHSU, MULHU. Combinational in EX (one round,
// like every ordinary instruction); the result travels down the pipeline to WB.
module tess_mul (
  input  logic [1:0]  op_i,     // tess_core_pkg::mul_op_e
  input  logic [31:0] a_i,
  input  logic [31:0] b_i,
  output logic [31:0] result_o
);

  logic               a_signed;
  logic               b_signed;
  logic signed [32:0] a_ext;
  logic signed [32:0] b_ext;
  logic signed [65:0] product;
  logic [1:0]         unused_product_top;

  assign a_signed = (op_i == tess_core_pkg::MUL_H) || (op_i == tess_core_pkg::MUL_HSU);
  assign b_signed = op_i == tess_core_pkg::MUL_H;
  assign a_ext    = $signed({a_signed & a_i[31], a_i});
  assign b_ext    = $signed({b_signed & b_i[31], b_i});
  assign product  = a_ext * b_ext;
  assign unused_product_top = product[65:64];

  assign result_o = (op_i == tess_core_pkg::MUL_L) ? product[31:0] : product[63:32];

endmodule
