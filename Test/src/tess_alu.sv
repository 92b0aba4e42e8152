// Integer ALU of the tile core (EX stage): add/sub, shifts, compares, logic, and the branch
// condition of BEQ..BGEU. Purely combinational (one cycle, EX).
module tess_alu (
  input  logic [3:0]  op_i,         // tess_core_pkg::alu_op_e
  input  logic [31:0] a_i,
  input  logic [31:0] b_i,
  input  logic [2:0]  br_funct3_i,  // branch condition (funct3 of BRANCH)
  input  logic [31:0] rs1_i,        // branch compares rs1 with rs2
  input  logic [31:0] rs2_i,
  output logic [31:0] result_o,
  output logic        br_taken_o
);

  logic [4:0] shamt;
  logic       br_eq;
  logic       br_lt;
  logic       br_ltu;

  assign shamt  = b_i[4:0];

`ifdef TESS_ICE40
  // iCE40: one adder for ADD, SUB, SLT, SLTU and the branch compares (the decoder gives a
  // branch a_i = rs1, b_i = rs2), and one right shifter for the three shifts (SLL shifts the
  // bit-reversed operand right): three carry chains and two shifters fewer than the default.
  logic        sub;
  logic [32:0] sum;       // a + b, or a - b with bit 32 = no borrow
  logic        lt, ltu;
  logic        shift_left;
  logic [31:0] shift_in, shift_out, a_rev, out_rev;
  logic [32:0] shift_wide;

  assign sub = op_i != tess_core_pkg::ALU_ADD;
  assign sum = {1'b0, a_i} + {1'b0, sub ? ~b_i : b_i} + {32'd0, sub};
  assign ltu = !sum[32];
  assign lt  = (a_i[31] != b_i[31]) ? a_i[31] : sum[31];

  assign br_eq  = a_i == b_i;
  assign br_lt  = lt;
  assign br_ltu = ltu;

  always @* begin
    for (int i = 0; i < 32; i++) begin
      a_rev[i] = a_i[31 - i];
    end
  end
  assign shift_left = op_i == tess_core_pkg::ALU_SLL;
  assign shift_in   = shift_left ? a_rev : a_i;
  assign shift_wide = $unsigned($signed({(op_i == tess_core_pkg::ALU_SRA) && a_i[31], shift_in})
                                >>> shamt);
  assign shift_out  = shift_wide[31:0];
  always @* begin
    for (int i = 0; i < 32; i++) begin
      out_rev[i] = shift_out[31 - i];
    end
  end

  logic [31:0] unused_rs;
  logic        unused_shift_top;  // the sign bit shifted in
  assign unused_rs        = rs1_i ^ rs2_i;
  assign unused_shift_top = shift_wide[32];

  always @* begin
    result_o = '0;
    unique case (op_i)
      tess_core_pkg::ALU_ADD,
      tess_core_pkg::ALU_SUB:  result_o = sum[31:0];
      tess_core_pkg::ALU_SLL:  result_o = out_rev;
      tess_core_pkg::ALU_SLT:  result_o = {31'b0, lt};
      tess_core_pkg::ALU_SLTU: result_o = {31'b0, ltu};
      tess_core_pkg::ALU_XOR:  result_o = a_i ^ b_i;
      tess_core_pkg::ALU_SRL,
      tess_core_pkg::ALU_SRA:  result_o = shift_out;
      tess_core_pkg::ALU_OR:   result_o = a_i | b_i;
      tess_core_pkg::ALU_AND:  result_o = a_i & b_i;
      default:  result_o = '0;
    endcase
  end
`else
  assign br_eq  = rs1_i == rs2_i;
  assign br_lt  = $signed(rs1_i) < $signed(rs2_i);
  assign br_ltu = rs1_i < rs2_i;

  always @* begin
    result_o = '0;
    unique case (op_i)
      tess_core_pkg::ALU_ADD:  result_o = a_i + b_i;
      tess_core_pkg::ALU_SUB:  result_o = a_i - b_i;
      tess_core_pkg::ALU_SLL:  result_o = a_i << shamt;
      tess_core_pkg::ALU_SLT:  result_o = {31'b0, $signed(a_i) < $signed(b_i)};
      tess_core_pkg::ALU_SLTU: result_o = {31'b0, a_i < b_i};
      tess_core_pkg::ALU_XOR:  result_o = a_i ^ b_i;
      tess_core_pkg::ALU_SRL:  result_o = a_i >> shamt;
      tess_core_pkg::ALU_SRA:  result_o = $unsigned($signed(a_i) >>> shamt);
      tess_core_pkg::ALU_OR:   result_o = a_i | b_i;
      tess_core_pkg::ALU_AND:  result_o = a_i & b_i;
      default:  result_o = '0;
    endcase
  end
`endif

  always @* begin
    br_taken_o = 1'b0;
    unique case (br_funct3_i)
      3'b000:  br_taken_o = br_eq;
      3'b001:  br_taken_o = !br_eq;
      3'b100:  br_taken_o = br_lt;
      3'b101:  br_taken_o = !br_lt;
      3'b110:  br_taken_o = br_ltu;
      3'b111:  br_taken_o = !br_ltu;
      default: br_taken_o = 1'b0;
    endcase
  end

endmodule
