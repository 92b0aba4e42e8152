// Instruction decoder of the tile core: one RV32IMF + Zicsr word to the control signals of
// decoded_t (tess_core_types.svh), with every illegal-instruction check of docs/tile.md (unknown
// opcodes and funct fields, custom-0/1, privileged SYSTEM words, reserved rounding modes, unknown
// CSRs and writes to read-only CSRs). Purely combinational; used in the ID stage.
// HasFpu = 0 (integer-only tile, rtl/params.json HAS_FPU): every F instruction (FLW, FSW, the
// fused multiply-adds, OP-FP) and the fflags/frm/fcsr CSRs are illegal instructions.
// HasMulDiv = 0 (RV32I without M, rtl/params.json HAS_MULDIV): every M instruction (OP with
// funct7 0000001: MUL, MULH, MULHSU, MULHU, DIV, DIVU, REM, REMU) is an illegal instruction.
// MatrixUnit = 1 (rtl/params.json MATRIX_UNIT): the custom-0 words of docs/tile.md "Matrix unit"
// decode as unit instructions (amp, amp_op; the post-increment rs1 + 16 is the ALU's result,
// AMP.RD's and the conversions' results come from tess_amp);
// every other custom-0 word, and every custom-1 word, is illegal, as all of them are without it.
`include "tess_core_types.svh"

module tess_decoder #(
  parameter bit HasFpu    = tess_params_pkg::HAS_FPU != 0,
  parameter bit HasMulDiv = tess_params_pkg::HAS_MULDIV != 0,
  parameter bit MatrixUnit = tess_params_pkg::MATRIX_UNIT != 0
) (
  input  logic [31:0] insn_i,
  input  logic [2:0]  frm_i,   // the issuing context's frm, for DYN rounding
  output decoded_t    dec_o
);


  // Custom read-only id CSRs, numbered by rtl/params.json.
  localparam logic [11:0] CsrTileId    = 12'(tess_params_pkg::CSR_TILE_ID);
  localparam logic [11:0] CsrContextId = 12'(tess_params_pkg::CSR_CONTEXT_ID);
  localparam logic [11:0] CsrNumTiles  = 12'(tess_params_pkg::CSR_NUM_TILES);
  localparam logic [11:0] CsrMemBytes  = 12'(tess_params_pkg::CSR_MEM_BYTES);

  logic [6:0] opcode;
  logic [2:0] funct3;
  logic [6:0] funct7;
  logic [4:0] rs2_field;
  logic [2:0] rm_field;
  logic [2:0] rm_resolved;
  logic       rm_bad;
  logic       csr_known;
  logic       csr_read_only;
  logic [31:0] amp_allowed;  // the fields a unit instruction may set (docs/tile.md, "Encoding")

  // Fields of a unit instruction, placed by rtl/params.json.
  localparam logic [31:0] AmpWRow  = 32'h3 << tess_params_pkg::AMP_ROW_LSB;  // AMP.LW: 0..3
  localparam logic [31:0] AmpRow   = AmpWRow | (32'h1 << tess_params_pkg::AMP_ROW_HI_BIT);
  localparam logic [31:0] AmpBank  = 32'h1 << tess_params_pkg::AMP_BANK_BIT;
  localparam logic [31:0] AmpCol   = 32'h3 << tess_params_pkg::AMP_COL_LSB;
  localparam logic [31:0] AmpClear = 32'h1 << tess_params_pkg::AMP_CLEAR_BIT;
  localparam logic [31:0] AmpRd    = 32'h1f << 7;
  localparam logic [31:0] AmpRs1   = 32'h1f << 15;
  localparam logic [31:0] AmpRs2   = 32'h1f << 20;
  localparam logic [31:0] AmpCvt   = 32'h7 << tess_params_pkg::AMP_CVT_LSB;
  localparam logic [31:0] AmpFixed = 32'h7f | (32'h7 << 12);  // opcode and funct3

  assign opcode    = insn_i[6:0];
  assign funct3    = insn_i[14:12];
  assign funct7    = insn_i[31:25];
  assign rs2_field = insn_i[24:20];
  assign rm_field  = insn_i[14:12];

  // DYN resolves to frm; static 5/6 and a stored frm of 5..7 are reserved.
  assign rm_resolved = (rm_field == 3'(tess_pkg::RM_DYN)) ? frm_i : rm_field;
  assign rm_bad      = rm_resolved > 3'(tess_pkg::RM_RMM);

  always_comb begin
    csr_known     = 1'b1;
    csr_read_only = 1'b1;
    unique case (insn_i[31:20])
      12'h001, 12'h002, 12'h003: begin
        csr_known     = HasFpu;
        csr_read_only = 1'b0;
      end
      12'hc00, 12'hc80, 12'hc02, 12'hc82,
      CsrTileId, CsrContextId, CsrNumTiles, CsrMemBytes: csr_read_only = 1'b1;
      default: csr_known = 1'b0;
    endcase
  end

  always_comb begin
    dec_o              = '0;
    dec_o.dest         = tess_core_pkg::DEST_NONE;
    dec_o.rd           = insn_i[11:7];
    dec_o.rs1          = insn_i[19:15];
    dec_o.rs2          = insn_i[24:20];
    dec_o.rs3          = insn_i[31:27];
    dec_o.alu_op       = tess_core_pkg::ALU_ADD;
    dec_o.op_a         = tess_core_pkg::OPA_RS1;
    dec_o.op_b         = tess_core_pkg::OPB_IMM;
    dec_o.imm          = {{20{insn_i[31]}}, insn_i[31:20]};
    dec_o.res_sel      = tess_core_pkg::RES_ALU;
    dec_o.br_funct3    = funct3;
    dec_o.mem_size     = funct3[1:0];
    dec_o.mem_unsigned = funct3[2];
    dec_o.mul_op       = funct3[1:0];
    dec_o.div_op       = funct3[1:0];
    dec_o.csr_op       = tess_core_pkg::CSR_NONE;
    dec_o.csr_addr     = insn_i[31:20];
    dec_o.fpu_op       = tess_pkg::FPU_ADD;
    dec_o.rm           = rm_resolved;
    dec_o.amp_op       = funct3;
    amp_allowed        = '0;

    unique case (opcode)
      tess_core_pkg::OPC_LUI: begin
        dec_o.dest = tess_core_pkg::DEST_X;
        dec_o.op_a = tess_core_pkg::OPA_ZERO;
        dec_o.imm  = {insn_i[31:12], 12'b0};
      end
      tess_core_pkg::OPC_AUIPC: begin
        dec_o.dest = tess_core_pkg::DEST_X;
        dec_o.op_a = tess_core_pkg::OPA_PC;
        dec_o.imm  = {insn_i[31:12], 12'b0};
      end
      tess_core_pkg::OPC_JAL: begin
        dec_o.dest    = tess_core_pkg::DEST_X;
        dec_o.jal     = 1'b1;
        dec_o.res_sel = tess_core_pkg::RES_LINK;
        dec_o.imm     = {{11{insn_i[31]}}, insn_i[31], insn_i[19:12], insn_i[20], insn_i[30:21],
                         1'b0};
      end
      tess_core_pkg::OPC_JALR: begin
        dec_o.dest    = tess_core_pkg::DEST_X;
        dec_o.jalr    = 1'b1;
        dec_o.res_sel = tess_core_pkg::RES_LINK;
        dec_o.illegal = funct3 != 3'b000;
      end
      tess_core_pkg::OPC_BRANCH: begin
        dec_o.branch  = 1'b1;
        // The ALU result of a branch is unused; rs1 - rs2 there lets the iCE40 ALU decide the
        // branch with its one subtractor (tess_alu).
        dec_o.alu_op  = tess_core_pkg::ALU_SUB;
        dec_o.op_b    = tess_core_pkg::OPB_RS2;
        dec_o.imm     = {{19{insn_i[31]}}, insn_i[31], insn_i[7], insn_i[30:25], insn_i[11:8],
                         1'b0};
        dec_o.illegal = (funct3 == 3'b010) || (funct3 == 3'b011);
      end
      tess_core_pkg::OPC_LOAD: begin
        dec_o.dest    = tess_core_pkg::DEST_X;
        dec_o.load    = 1'b1;
        dec_o.res_sel = tess_core_pkg::RES_LOAD;
        dec_o.illegal = (funct3 == 3'b011) || (funct3 == 3'b110) || (funct3 == 3'b111);
      end
      tess_core_pkg::OPC_LOAD_FP: begin
        dec_o.dest    = tess_core_pkg::DEST_F;
        dec_o.load    = 1'b1;
        dec_o.res_sel = tess_core_pkg::RES_LOAD;
        dec_o.illegal = funct3 != 3'b010;
      end
      tess_core_pkg::OPC_STORE: begin
        dec_o.store   = 1'b1;
        dec_o.imm     = {{20{insn_i[31]}}, insn_i[31:25], insn_i[11:7]};
        dec_o.illegal = funct3[2] || (funct3[1:0] == 2'b11);
      end
      tess_core_pkg::OPC_STORE_FP: begin
        dec_o.store   = 1'b1;
        dec_o.mem_fp  = 1'b1;
        dec_o.imm     = {{20{insn_i[31]}}, insn_i[31:25], insn_i[11:7]};
        dec_o.illegal = funct3 != 3'b010;
      end
      tess_core_pkg::OPC_OP_IMM: begin
        dec_o.dest = tess_core_pkg::DEST_X;
        unique case (funct3)
          3'b000: dec_o.alu_op = tess_core_pkg::ALU_ADD;
          3'b010: dec_o.alu_op = tess_core_pkg::ALU_SLT;
          3'b011: dec_o.alu_op = tess_core_pkg::ALU_SLTU;
          3'b100: dec_o.alu_op = tess_core_pkg::ALU_XOR;
          3'b110: dec_o.alu_op = tess_core_pkg::ALU_OR;
          3'b111: dec_o.alu_op = tess_core_pkg::ALU_AND;
          3'b001: begin
            dec_o.alu_op  = tess_core_pkg::ALU_SLL;
            dec_o.illegal = funct7 != 7'b0000000;
          end
          3'b101: begin
            dec_o.alu_op  = funct7[5] ? tess_core_pkg::ALU_SRA : tess_core_pkg::ALU_SRL;
            dec_o.illegal = (funct7 & 7'b1011111) != 7'b0000000;
          end
          default: dec_o.illegal = 1'b1;
        endcase
      end
      tess_core_pkg::OPC_OP: begin
        dec_o.dest = tess_core_pkg::DEST_X;
        dec_o.op_b = tess_core_pkg::OPB_RS2;
        unique case (funct7)
          7'b0000000: begin
            unique case (funct3)
              3'b000:  dec_o.alu_op = tess_core_pkg::ALU_ADD;
              3'b001:  dec_o.alu_op = tess_core_pkg::ALU_SLL;
              3'b010:  dec_o.alu_op = tess_core_pkg::ALU_SLT;
              3'b011:  dec_o.alu_op = tess_core_pkg::ALU_SLTU;
              3'b100:  dec_o.alu_op = tess_core_pkg::ALU_XOR;
              3'b101:  dec_o.alu_op = tess_core_pkg::ALU_SRL;
              3'b110:  dec_o.alu_op = tess_core_pkg::ALU_OR;
              3'b111:  dec_o.alu_op = tess_core_pkg::ALU_AND;
              default: dec_o.illegal = 1'b1;
            endcase
          end
          7'b0100000: begin
            unique case (funct3)
              3'b000:  dec_o.alu_op = tess_core_pkg::ALU_SUB;
              3'b101:  dec_o.alu_op = tess_core_pkg::ALU_SRA;
              default: dec_o.illegal = 1'b1;
            endcase
          end
          7'b0000001: begin
            if (funct3[2]) begin
              dec_o.res_sel = tess_core_pkg::RES_DIV;
              dec_o.long_op = 1'b1;
            end else begin
              dec_o.res_sel = tess_core_pkg::RES_MUL;
            end
          end
          default: dec_o.illegal = 1'b1;
        endcase
      end
      tess_core_pkg::OPC_MISC_MEM: begin
        // FENCE and FENCE.I: one in-order memory port, nothing to order.
        dec_o.illegal = funct3[2:1] != 2'b00;
      end
      tess_core_pkg::OPC_SYSTEM: begin
        if (funct3 == 3'b000) begin
          dec_o.ecall   = insn_i == 32'h0000_0073;
          dec_o.ebreak  = insn_i == 32'h0010_0073;
          dec_o.illegal = !(dec_o.ecall || dec_o.ebreak);
        end else if (funct3 == 3'b100) begin
          dec_o.illegal = 1'b1;
        end else begin
          dec_o.dest    = tess_core_pkg::DEST_X;
          dec_o.res_sel = tess_core_pkg::RES_CSR;
          dec_o.csr_imm = funct3[2];
          unique case (funct3[1:0])
            2'b01:   dec_o.csr_op = tess_core_pkg::CSR_RW;
            2'b10:   dec_o.csr_op = tess_core_pkg::CSR_RS;
            default: dec_o.csr_op = tess_core_pkg::CSR_RC;
          endcase
          // CSRRW/CSRRWI always write; set/clear write unless rs1/uimm is 0.
          dec_o.csr_write = (funct3[1:0] == 2'b01) || (insn_i[19:15] != 5'd0);
          dec_o.illegal   = !csr_known || (csr_read_only && dec_o.csr_write);
        end
      end
      tess_core_pkg::OPC_MADD, tess_core_pkg::OPC_MSUB,
      tess_core_pkg::OPC_NMSUB, tess_core_pkg::OPC_NMADD: begin
        dec_o.dest    = tess_core_pkg::DEST_F;
        dec_o.res_sel = tess_core_pkg::RES_FPU;
        unique case (opcode)
          tess_core_pkg::OPC_MADD:  dec_o.fpu_op = tess_pkg::FPU_MADD;
          tess_core_pkg::OPC_MSUB:  dec_o.fpu_op = tess_pkg::FPU_MSUB;
          tess_core_pkg::OPC_NMSUB: dec_o.fpu_op = tess_pkg::FPU_NMSUB;
          default:   dec_o.fpu_op = tess_pkg::FPU_NMADD;
        endcase
        dec_o.illegal = (insn_i[26:25] != 2'b00) || rm_bad;
      end
      tess_core_pkg::OPC_OP_FP: begin
        dec_o.dest    = tess_core_pkg::DEST_F;
        dec_o.res_sel = tess_core_pkg::RES_FPU;
        unique case (funct7)
          7'b0000000: begin
            dec_o.fpu_op  = tess_pkg::FPU_ADD;
            dec_o.illegal = rm_bad;
          end
          7'b0000100: begin
            dec_o.fpu_op  = tess_pkg::FPU_SUB;
            dec_o.illegal = rm_bad;
          end
          7'b0001000: begin
            dec_o.fpu_op  = tess_pkg::FPU_MUL;
            dec_o.illegal = rm_bad;
          end
          7'b0001100: begin
            dec_o.fpu_op  = tess_pkg::FPU_DIV;
            dec_o.res_sel = tess_core_pkg::RES_FDIV;
            dec_o.long_op = 1'b1;
            dec_o.illegal = rm_bad;
          end
          7'b0101100: begin
            dec_o.fpu_op  = tess_pkg::FPU_SQRT;
            dec_o.res_sel = tess_core_pkg::RES_FDIV;
            dec_o.long_op = 1'b1;
            dec_o.illegal = rm_bad || (rs2_field != 5'd0);
          end
          7'b0010000: begin
            unique case (funct3)
              3'b000:  dec_o.fpu_op = tess_pkg::FPU_SGNJ;
              3'b001:  dec_o.fpu_op = tess_pkg::FPU_SGNJN;
              3'b010:  dec_o.fpu_op = tess_pkg::FPU_SGNJX;
              default: dec_o.illegal = 1'b1;
            endcase
          end
          7'b0010100: begin
            unique case (funct3)
              3'b000:  dec_o.fpu_op = tess_pkg::FPU_MIN;
              3'b001:  dec_o.fpu_op = tess_pkg::FPU_MAX;
              default: dec_o.illegal = 1'b1;
            endcase
          end
          7'b1100000: begin
            dec_o.dest    = tess_core_pkg::DEST_X;
            dec_o.fpu_op  = rs2_field[0] ? tess_pkg::FPU_CVT_WU_S : tess_pkg::FPU_CVT_W_S;
            dec_o.illegal = rm_bad || (rs2_field[4:1] != 4'd0);
          end
          7'b1101000: begin
            dec_o.fpu_op    = rs2_field[0] ? tess_pkg::FPU_CVT_S_WU : tess_pkg::FPU_CVT_S_W;
            dec_o.fpu_a_int = 1'b1;
            dec_o.illegal   = rm_bad || (rs2_field[4:1] != 4'd0);
          end
          7'b1110000: begin
            dec_o.dest = tess_core_pkg::DEST_X;
            unique case (funct3)
              3'b000:  dec_o.fpu_op = tess_pkg::FPU_MV_X_W;
              3'b001:  dec_o.fpu_op = tess_pkg::FPU_CLASS;
              default: dec_o.illegal = 1'b1;
            endcase
            if (rs2_field != 5'd0) dec_o.illegal = 1'b1;
          end
          7'b1010000: begin
            dec_o.dest = tess_core_pkg::DEST_X;
            unique case (funct3)
              3'b010:  dec_o.fpu_op = tess_pkg::FPU_EQ;
              3'b001:  dec_o.fpu_op = tess_pkg::FPU_LT;
              3'b000:  dec_o.fpu_op = tess_pkg::FPU_LE;
              default: dec_o.illegal = 1'b1;
            endcase
          end
          7'b1111000: begin
            dec_o.fpu_op    = tess_pkg::FPU_MV_W_X;
            dec_o.fpu_a_int = 1'b1;
            dec_o.illegal   = (funct3 != 3'b000) || (rs2_field != 5'd0);
          end
          default: dec_o.illegal = 1'b1;
        endcase
      end
      default: dec_o.illegal = 1'b1;
    endcase

    if (!HasFpu) begin
      unique case (opcode)
        tess_core_pkg::OPC_LOAD_FP, tess_core_pkg::OPC_STORE_FP, tess_core_pkg::OPC_MADD,
        tess_core_pkg::OPC_MSUB, tess_core_pkg::OPC_NMSUB, tess_core_pkg::OPC_NMADD,
        tess_core_pkg::OPC_OP_FP: dec_o.illegal = 1'b1;
        default: ;
      endcase
    end
    if (!HasMulDiv && (opcode == tess_core_pkg::OPC_OP) && (funct7 == 7'b0000001)) begin
      dec_o.illegal = 1'b1;
    end
    // Custom-0: the matrix unit. The 16-byte accesses are loads and stores at rs1 plus the row's
    // offset (tess_core_ex checks them as such) whose x result is rs1 + 16 from the ALU; AMP.RD
    // writes fd.
    if (MatrixUnit && (opcode == 7'(tess_params_pkg::AMP_OPCODE))) begin
      dec_o.illegal = 1'b0;
      dec_o.amp     = 1'b1;
      dec_o.dest    = tess_core_pkg::DEST_X;
      dec_o.imm     = 32'(tess_params_pkg::AMP_STEP_BYTES);
      unique case (funct3)
        3'(tess_params_pkg::AMP_F3_LW): begin
          dec_o.load  = 1'b1;
          amp_allowed = AmpWRow | AmpBank | AmpRd | AmpRs1;
        end
        3'(tess_params_pkg::AMP_F3_S), 3'(tess_params_pkg::AMP_F3_H): begin
          dec_o.load  = 1'b1;
          amp_allowed = AmpRow | AmpBank | AmpRd | AmpRs1;
        end
        3'(tess_params_pkg::AMP_F3_LA): begin
          dec_o.load  = 1'b1;
          amp_allowed = AmpRow | AmpRd | AmpRs1;
        end
        3'(tess_params_pkg::AMP_F3_SA): begin
          dec_o.store = 1'b1;
          amp_allowed = AmpRow | AmpClear | AmpRd | AmpRs1;
        end
        3'(tess_params_pkg::AMP_F3_RD): begin
          dec_o.dest  = tess_core_pkg::DEST_F;
          amp_allowed = AmpRow | AmpCol | AmpRd;
        end
        3'(tess_params_pkg::AMP_F3_CLR): dec_o.dest = tess_core_pkg::DEST_NONE;
        3'(tess_params_pkg::AMP_F3_CVT): begin
          // The conversions and AMP.SEED: no memory access; the result comes from tess_amp.
          unique case (insn_i[tess_params_pkg::AMP_CVT_LSB +: 3])
            3'(tess_params_pkg::AMP_CVT_HS), 3'(tess_params_pkg::AMP_CVT_HS_SR):
              amp_allowed = AmpCvt | AmpRd | AmpRs1 | AmpRs2;
            3'(tess_params_pkg::AMP_CVT_SH_LO), 3'(tess_params_pkg::AMP_CVT_SH_HI): begin
              dec_o.dest  = tess_core_pkg::DEST_F;
              amp_allowed = AmpCvt | AmpRd | AmpRs1;
            end
            3'(tess_params_pkg::AMP_CVT_SEED), 3'(tess_params_pkg::AMP_CVT_ROWS): begin
              dec_o.dest  = tess_core_pkg::DEST_NONE;
              amp_allowed = AmpCvt | AmpRs1;
            end
            3'(tess_params_pkg::AMP_CVT_STRIDE): begin
              dec_o.dest  = tess_core_pkg::DEST_NONE;
              amp_allowed = AmpCvt | AmpRs1 | AmpRs2;
            end
            default: dec_o.illegal = 1'b1;
          endcase
        end
        default: dec_o.illegal = 1'b1;
      endcase
      if ((insn_i & ~(amp_allowed | AmpFixed)) != 32'd0) dec_o.illegal = 1'b1;
    end

    // An illegal instruction has no other effect.
    if (dec_o.illegal) begin
      dec_o.dest    = tess_core_pkg::DEST_NONE;
      dec_o.long_op = 1'b0;
      dec_o.load    = 1'b0;
      dec_o.store   = 1'b0;
      dec_o.csr_op  = tess_core_pkg::CSR_NONE;
      dec_o.ecall   = 1'b0;
      dec_o.ebreak  = 1'b0;
      dec_o.amp     = 1'b0;
    end
  end

endmodule
