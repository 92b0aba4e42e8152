// Types shared by the modules of the tile core (rtl/core). Chip-wide enums (FPU operations,
// rounding modes, flag bits) live in tess_pkg; numeric constants in tess_params_pkg.
// The enums name the values of plain logic fields and ports: modules refer to their items with
// the package prefix and never declare a variable of an enum type (Yosys 0.23 reads no package
// imports, Icarus 11 crashes on package types in ports and structs). The decoder's output struct
// is in tess_core_types.svh for the same reason.
package tess_core_pkg;

  // Major opcodes of RV32IMF + Zicsr (instruction bits [6:0]).
  typedef enum logic [6:0] {
    OPC_LOAD     = 7'h03,
    OPC_LOAD_FP  = 7'h07,
    OPC_MISC_MEM = 7'h0f,
    OPC_OP_IMM   = 7'h13,
    OPC_AUIPC    = 7'h17,
    OPC_STORE    = 7'h23,
    OPC_STORE_FP = 7'h27,
    OPC_OP       = 7'h33,
    OPC_LUI      = 7'h37,
    OPC_MADD     = 7'h43,
    OPC_MSUB     = 7'h47,
    OPC_NMSUB    = 7'h4b,
    OPC_NMADD    = 7'h4f,
    OPC_OP_FP    = 7'h53,
    OPC_BRANCH   = 7'h63,
    OPC_JALR     = 7'h67,
    OPC_JAL      = 7'h6f,
    OPC_SYSTEM   = 7'h73
  } opcode_e;

  // Integer ALU operations.
  typedef enum logic [3:0] {
    ALU_ADD,
    ALU_SUB,
    ALU_SLL,
    ALU_SLT,
    ALU_SLTU,
    ALU_XOR,
    ALU_SRL,
    ALU_SRA,
    ALU_OR,
    ALU_AND
  } alu_op_e;

  // ALU operand A source.
  typedef enum logic [1:0] {
    OPA_RS1,
    OPA_PC,
    OPA_ZERO
  } op_a_sel_e;

  // ALU operand B source.
  typedef enum logic {
    OPB_RS2,
    OPB_IMM
  } op_b_sel_e;

  // Which unit produces the value written back.
  typedef enum logic [2:0] {
    RES_ALU,   // ALU result (also LUI/AUIPC)
    RES_LINK,  // pc + 4 (JAL/JALR)
    RES_MUL,   // tess_mul
    RES_DIV,   // tess_div, on the last pass of the long op
    RES_CSR,   // old CSR value
    RES_LOAD,  // SRAM or MMIO load data (formatted in M1)
    RES_FPU,   // tess_fpu result at WB
    RES_FDIV   // tess_fpu_divsqrt result at WB of the last pass
  } res_sel_e;

  // Memory access size (funct3[1:0] of loads and stores).
  typedef enum logic [1:0] {
    MEM_B = 2'd0,
    MEM_H = 2'd1,
    MEM_W = 2'd2
  } mem_size_e;

  // CSR instruction kind.
  typedef enum logic [1:0] {
    CSR_NONE,
    CSR_RW,
    CSR_RS,
    CSR_RC
  } csr_op_e;

  // Multiplier operation (funct3[1:0] of MUL*).
  typedef enum logic [1:0] {
    MUL_L   = 2'd0,
    MUL_H   = 2'd1,
    MUL_HSU = 2'd2,
    MUL_HU  = 2'd3
  } mul_op_e;

  // Divider operation (funct3[1:0] of DIV*/REM*).
  typedef enum logic [1:0] {
    DIV_DIV  = 2'd0,
    DIV_DIVU = 2'd1,
    DIV_REM  = 2'd2,
    DIV_REMU = 2'd3
  } div_op_e;

  // Destination register file of an instruction (also the retirement trace's destination kind).
  typedef enum logic [1:0] {
    DEST_NONE = 2'd0,
    DEST_X    = 2'd1,
    DEST_F    = 2'd2
  } dest_e;

  // Checkpoint state reached through the host port while the chip stands at a sync
  // (docs/checkpoint.md): which register a state read or write of tess_core/tess_tile addresses.
  typedef enum logic [3:0] {
    HS_REG        = 4'd0,   // register REG_SEL (0..31 x, 32..63 f) of context CTX_SEL
    HS_PC         = 4'd1,
    HS_FCSR       = 4'd2,
    HS_INSTRET_LO = 4'd3,
    HS_INSTRET_HI = 4'd4,
    HS_CSTATE     = 4'd5,   // read only
    HS_RUN_ARG    = 4'd6,
    HS_XCHG       = 4'd7,
    HS_IDLE_LO    = 4'd8,
    HS_IDLE_HI    = 4'd9,
    HS_SWAIT_LO   = 4'd10,
    HS_SWAIT_HI   = 4'd11,
    HS_EXCH_LO    = 4'd12,
    HS_EXCH_HI    = 4'd13,
    HS_CYCLE_LO   = 4'd14,
    HS_CYCLE_HI   = 4'd15
  } hs_sel_e;

endpackage
