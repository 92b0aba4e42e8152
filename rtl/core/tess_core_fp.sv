// FP units of the core (tess_core; only with HasFpu): the pipelined tess_fpu and the iterative
// tess_fpu_divsqrt take their operands in EX and deliver results 3 cycles later (FDIV.S and
// FSQRT.S after their 8th pass), into a result queue each, which WB pops in order (the pipeline
// may pause between a result and its writeback). A queue entry is {fflags, result}.
// Timing: EX (c+2) in, WB (c+5) out; one operation a cycle.
module tess_core_fp #(
  parameter int Contexts = tess_params_pkg::NUM_CONTEXTS
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        fpu_valid_i,    // an FPU operation commits in EX
  input  logic        ds_pass_i,      // a pass of FDIV.S/FSQRT.S commits in EX
  input  logic [2:0]  pass_idx_i,
  input  logic [2:0]  ctx_i,
  input  logic [4:0]  op_i,           // tess_pkg::fpu_op_e
  input  logic [2:0]  rm_i,
  input  logic        a_int_i,        // operand a from the integer register file
  input  logic [31:0] rs1_i,
  input  logic [31:0] fs1_i,
  input  logic [31:0] fs2_i,
  input  logic [31:0] fs3_i,
  input  logic        fpu_pop_i,      // WB takes the FPU's result
  input  logic        ds_pop_i,       // WB takes the divider's result
  output logic [36:0] fpu_o,
  output logic [36:0] ds_o
);

  logic        fpu_valid_out;
  logic [31:0] fpu_result;
  logic [4:0]  fpu_flags;
  logic        ds_valid_out;
  logic [2:0]  unused_ds_ctx;
  logic [31:0] ds_result;
  logic [4:0]  ds_flags;

  tess_fpu u_fpu (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .valid_i  (fpu_valid_i),
    .op_i     (op_i),
    .rm_i     (rm_i),
    .a_i      (a_int_i ? rs1_i : fs1_i),
    .b_i      (fs2_i),
    .c_i      (fs3_i),
    .valid_o  (fpu_valid_out),
    .result_o (fpu_result),
    .fflags_o (fpu_flags)
  );

  tess_fpu_divsqrt #(
    .Contexts (Contexts)
  ) u_fpu_divsqrt (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .pass_i     (ds_pass_i),
    .pass_idx_i (pass_idx_i),
    .ctx_i      (ctx_i),
    .sqrt_i     (op_i == tess_pkg::FPU_SQRT),
    .rm_i       (rm_i),
    .a_i        (fs1_i),
    .b_i        (fs2_i),
    .valid_o    (ds_valid_out),
    .ctx_o      (unused_ds_ctx),
    .result_o   (ds_result),
    .fflags_o   (ds_flags)
  );

  tess_result_queue #(
    .Width (37),
    .Depth (4)
  ) u_fpu_queue (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .push_i (fpu_valid_out),
    .data_i ({fpu_flags, fpu_result}),
    .pop_i  (fpu_pop_i),
    .data_o (fpu_o)
  );

  tess_result_queue #(
    .Width (37),
    .Depth (4)
  ) u_ds_queue (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .push_i (ds_valid_out),
    .data_i ({ds_flags, ds_result}),
    .pop_i  (ds_pop_i),
    .data_o (ds_o)
  );

endmodule
