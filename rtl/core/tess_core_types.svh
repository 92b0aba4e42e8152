// The decoded form of one instruction, shared by tess_decoder (which produces it) and the core's
// stages (tess_core_id, tess_core_ex); the late stages' record (late_t).
// A compilation-unit typedef rather than a tess_core_pkg type: Icarus 11 asserts on struct types
// from a package and Yosys 0.23 cannot import one, while all three tools read this. Fields that
// hold an enum value are plain logic vectors named after their tess_core_pkg/tess_pkg enum.
`ifndef TESS_CORE_TYPES_SVH
`define TESS_CORE_TYPES_SVH

// Control signals the decoder derives from one instruction word.
typedef struct packed {
  logic                illegal;     // cause 2; every other field is don't-care then
  logic                ecall;
  logic                ebreak;
  logic [1:0]          dest;        // tess_core_pkg::dest_e: register file written at WB
  logic [4:0]          rd;
  logic [4:0]          rs1;
  logic [4:0]          rs2;
  logic [4:0]          rs3;
  logic [3:0]          alu_op;      // tess_core_pkg::alu_op_e
  logic [1:0]          op_a;        // tess_core_pkg::op_a_sel_e
  logic                op_b;        // tess_core_pkg::op_b_sel_e
  logic [31:0]         imm;
  logic [2:0]          res_sel;     // tess_core_pkg::res_sel_e
  logic                branch;      // conditional branch, condition in br_funct3
  logic [2:0]          br_funct3;
  logic                jal;
  logic                jalr;
  logic                load;
  logic                store;
  logic [1:0]          mem_size;    // tess_core_pkg::mem_size_e
  logic                mem_unsigned;
  logic                mem_fp;      // FSW takes its data from the FP register file
  logic [1:0]          mul_op;      // tess_core_pkg::mul_op_e
  logic [1:0]          div_op;      // tess_core_pkg::div_op_e
  logic [1:0]          csr_op;      // tess_core_pkg::csr_op_e
  logic                csr_imm;     // operand is the 5-bit uimm in rs1
  logic                csr_write;   // the instruction writes the CSR (see docs/tile.md, Zicsr)
  logic [11:0]         csr_addr;
  logic [4:0]          fpu_op;      // tess_pkg::fpu_op_e
  logic [2:0]          rm;          // resolved rounding mode (0..4)
  logic                fpu_a_int;   // FPU operand a comes from the integer register file
  logic                long_op;     // DIV*/REM*/FDIV.S/FSQRT.S: 8 passes
  logic                amp;         // a matrix-unit instruction (tess_amp); load/store: its access
  logic [2:0]          amp_op;      // its funct3 (rtl/params.json AMP_F3_*)
} decoded_t;

// One retiring instruction in M1, M2 or WB (tess_core_ex fills it, tess_core_wb carries it).
typedef struct packed {
  logic        valid;
  logic [2:0]  ctx;
  logic [31:0] pc;
  logic [31:0] insn;
  logic [1:0]  dest;         // tess_core_pkg::dest_e
  logic [4:0]  rd;
  logic [2:0]  res_sel;      // tess_core_pkg::res_sel_e
  logic [31:0] value;
  logic        load_sram;    // M1 only: value comes from SRAM port B
  logic [1:0]  mem_size;     // tess_core_pkg::mem_size_e
  logic        mem_unsigned;
  logic [1:0]  byte_off;
} late_t;

`endif  // TESS_CORE_TYPES_SVH
