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
  assign br_eq  = rs1_i == rs2_i;
  assign br_lt  = $signed(rs1_i) < $signed(rs2_i);
  assign br_ltu = rs1_i < rs2_i;

  always_comb begin
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

  always_comb begin
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
