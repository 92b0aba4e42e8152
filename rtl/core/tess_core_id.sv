// Decode stage of the core (tess_core), ID at c+1 for an instruction issued at c: the instruction
// word (from SRAM port A, or for the later passes of a long op the word its first pass kept),
// the decoder, the register files' reads (and their writes: WB's, RUN's a0, the host's), the
// traps found so far, and the ID/EX pipeline registers. A halt squashes the instruction in ID (a
// chip's error stop too: read only in the always_ff block, as in tess_core).
// While the core is held (advance_i = 0) read port a and the write port of each register file
// belong to the host (checkpoint state); hs_rdata_o is the register the host selects.
// Timing: the SRAM's read data and the register files' reads are combinational here; EX sees the
// registers in the next cycle.
`include "tess_core_types.svh"

module tess_core_id #(
  parameter bit HasFpu    = tess_params_pkg::HAS_FPU != 0,
  parameter bit HasMulDiv = tess_params_pkg::HAS_MULDIV != 0,
  parameter bit MatrixUnit = tess_params_pkg::MATRIX_UNIT != 0,
  parameter int Contexts  = tess_params_pkg::NUM_CONTEXTS
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        advance_i,
  input  logic        halt_i,         // the tile halted (tess_core_ctx)
  input  logic        stop_i,         // the chip's error stop (always_ff only)
  input  logic        ex_halt_i,      // the instruction in EX halts the tile
  // register-file clear after reset (TESS_ICE40 only, tess_regfile)
  input  logic        rf_clear_i,
  input  logic [7:0]  rf_clear_idx_i,
  // the instruction in ID (IF/ID registers, tess_core_ctx)
  input  logic        id_valid_i,
  input  logic [2:0]  id_ctx_i,
  input  logic [31:0] id_pc_i,
  input  logic [2:0]  id_pass_i,
  input  logic        id_exc_i,       // fetch trap found in IF
  input  logic [4:0]  id_cause_i,
  input  logic [31:0] imem_rdata_i,
  input  logic [2:0]  id_frm_i,       // the context's rounding mode (tess_csr)
  // the first pass of a long op commits in EX: keep its word
  input  logic        commit_i,
  // register writes: WB (tess_core_wb), RUN's a0 (tess_mmio)
  input  logic        xrf_we_i,
  input  logic        frf_we_i,
  input  logic [2:0]  wb_ctx_i,
  input  logic [4:0]  wb_rd_i,
  input  logic [31:0] wb_value_i,
  input  logic        run_we_i,
  input  logic [2:0]  run_ctx_i,
  input  logic [31:0] run_arg_i,
  // ID/EX registers
  output logic        ex_valid_o,
  output logic [2:0]  ex_ctx_o,
  output logic [31:0] ex_pc_o,
  output logic [31:0] ex_insn_o,
  output logic [2:0]  ex_pass_o,
  output decoded_t    ex_dec_o,
  output logic [31:0] ex_rs1_o,
  output logic [31:0] ex_rs2_o,
  output logic [31:0] ex_fs1_o,
  output logic [31:0] ex_fs2_o,
  output logic [31:0] ex_fs3_o,
  output logic        ex_exc_o,       // trap found in IF or ID
  output logic [4:0]  ex_cause_o,
  output logic [31:0] ex_value_o,
  // checkpoint state (tess_core: hs_we_i only while held)
  input  logic        hs_we_i,
  input  logic [3:0]  hs_sel_i,
  input  logic [2:0]  hs_ctx_i,
  input  logic [5:0]  hs_reg_i,
  input  logic [31:0] hs_wdata_i,
  output logic [31:0] hs_rdata_o      // register hs_reg_i of context hs_ctx_i
);

  // Long ops are DIV*/REM* and FDIV.S/FSQRT.S: without M and F there are none.
  localparam bit HasLongOps = HasMulDiv || HasFpu;

  localparam logic [4:0] EXC_ILLEGAL_INSN = 5'(tess_params_pkg::CAUSE_ILLEGAL_INSN);
  localparam logic [4:0] EXC_BREAKPOINT   = 5'(tess_params_pkg::CAUSE_BREAKPOINT);
  localparam logic [4:0] EXC_ECALL        = 5'(tess_params_pkg::CAUSE_ECALL);

  // Host register writes (never while the core advances: hs_we_i is masked).
  logic hs_x_we, hs_f_we;
  assign hs_x_we = hs_we_i && (hs_sel_i == tess_core_pkg::HS_REG) && !hs_reg_i[5];
  assign hs_f_we = hs_we_i && (hs_sel_i == tess_core_pkg::HS_REG) && hs_reg_i[5];

  logic        ex_valid_q, ex_valid_d;
  logic [2:0]  ex_ctx_q, ex_ctx_d;
  logic [31:0] ex_pc_q, ex_pc_d;
  logic [31:0] ex_insn_q, ex_insn_d;
  logic [2:0]  ex_pass_q, ex_pass_d;
  decoded_t    ex_dec_q, ex_dec_d;
  logic [31:0] ex_rs1_q, ex_rs1_d;
  logic [31:0] ex_rs2_q, ex_rs2_d;
  logic [31:0] ex_fs1_q, ex_fs1_d;
  logic [31:0] ex_fs2_q, ex_fs2_d;
  logic [31:0] ex_fs3_q, ex_fs3_d;
  logic        ex_exc_q, ex_exc_d;
  logic [4:0]  ex_cause_q, ex_cause_d;
  logic [31:0] ex_value_q, ex_value_d;

  logic [31:0] id_insn;
  decoded_t    id_dec;
  logic [31:0] id_rs1, id_rs2, id_fs1, id_fs2, id_fs3;
  logic [31:0] unused_x_c;
  logic [31:0] lop_word;                  // the long op's word (lop_insn_q, below)

  assign id_insn = (HasLongOps && (id_pass_i != 3'd0)) ? lop_word : imem_rdata_i;

  tess_decoder #(
    .HasFpu     (HasFpu),
    .HasMulDiv  (HasMulDiv),
    .MatrixUnit (MatrixUnit)
  ) u_decoder (
    .insn_i (id_insn),
    .frm_i  (id_frm_i),
    .dec_o  (id_dec)
  );

  // While held, read port a and the write port belong to the host (checkpoint state).
  logic [2:0]  rf_rctx;
  logic [4:0]  rf_raddr_a;
  logic [2:0]  xrf_wctx, frf_wctx;
  logic [4:0]  xrf_waddr, frf_waddr;
  logic [31:0] xrf_wdata, frf_wdata;
  assign rf_rctx    = advance_i ? id_ctx_i : hs_ctx_i;
  assign rf_raddr_a = advance_i ? id_insn[19:15] : hs_reg_i[4:0];
  assign xrf_wctx   = hs_x_we ? hs_ctx_i : wb_ctx_i;
  assign xrf_waddr  = hs_x_we ? hs_reg_i[4:0] : wb_rd_i;
  assign xrf_wdata  = hs_x_we ? hs_wdata_i : wb_value_i;
  assign frf_wctx   = hs_f_we ? hs_ctx_i : wb_ctx_i;
  assign frf_waddr  = hs_f_we ? hs_reg_i[4:0] : wb_rd_i;
  assign frf_wdata  = hs_f_we ? hs_wdata_i : wb_value_i;

  tess_regfile #(
    .Contexts (Contexts),
    .ZeroReg  (1'b1),
    .PortB    (1'b1)
  ) u_xregs (
    .clk_i     (clk_i),
    .rst_ni    (rst_ni),
    .rctx_i    (rf_rctx),
    .raddr_a_i (rf_raddr_a),
    .raddr_b_i (id_insn[24:20]),
    .raddr_c_i (5'd0),
    .rdata_a_o (id_rs1),
    .rdata_b_o (id_rs2),
    .rdata_c_o (unused_x_c),
    .we_a_i    (xrf_we_i || hs_x_we),
    .wctx_a_i  (xrf_wctx),
    .waddr_a_i (xrf_waddr),
    .wdata_a_i (xrf_wdata),
    .we_b_i    (run_we_i),
    .wctx_b_i  (run_ctx_i),
    .wdata_b_i (run_arg_i),
    .clear_i     (rf_clear_i),
    .clear_idx_i (rf_clear_idx_i)
  );

  // The FP register file and units exist only with HasFpu; without them F instructions are
  // illegal (tess_decoder), so nothing reads the FP operands or the FP result queues.
  if (HasFpu) begin : g_fregs
    tess_regfile #(
      .Contexts (Contexts),
      .ZeroReg  (1'b0)
    ) u_fregs (
      .clk_i     (clk_i),
      .rst_ni    (rst_ni),
      .rctx_i    (rf_rctx),
      .raddr_a_i (rf_raddr_a),
      .raddr_b_i (id_insn[24:20]),
      .raddr_c_i (id_insn[31:27]),
      .rdata_a_o (id_fs1),
      .rdata_b_o (id_fs2),
      .rdata_c_o (id_fs3),
      .we_a_i    (frf_we_i || hs_f_we),
      .wctx_a_i  (frf_wctx),
      .waddr_a_i (frf_waddr),
      .wdata_a_i (frf_wdata),
      .we_b_i    (1'b0),
      .wctx_b_i  (3'd0),
      .wdata_b_i (32'd0),
      .clear_i     (rf_clear_i),
      .clear_idx_i (rf_clear_idx_i)
    );
  end else begin : g_no_fregs
    // Host writes of f registers (checkpoint restore) are dropped: the tile has none, and a host
    // read of one gives 0.
    logic unused_frf;
    assign unused_frf = ^{frf_we_i, hs_f_we, frf_wctx, frf_waddr, frf_wdata};
    assign id_fs1 = '0;
    assign id_fs2 = '0;
    assign id_fs3 = '0;
  end

  always_comb begin
    ex_valid_d = id_valid_i;
    ex_ctx_d   = id_ctx_i;
    ex_pc_d    = id_pc_i;
    ex_insn_d  = id_insn;
    ex_pass_d  = id_pass_i;
    ex_dec_d   = id_dec;
    ex_rs1_d   = id_rs1;
    ex_rs2_d   = id_rs2;
    ex_fs1_d   = id_fs1;
    ex_fs2_d   = id_fs2;
    ex_fs3_d   = id_fs3;
    ex_exc_d   = 1'b0;
    ex_cause_d = EXC_ILLEGAL_INSN;
    ex_value_d = id_insn;
    // Traps are decided on the first pass only; later passes of a long op repeat a decoded,
    // legal instruction.
    if (id_pass_i == 3'd0) begin
      if (id_exc_i) begin
        ex_exc_d   = 1'b1;
        ex_cause_d = id_cause_i;
        ex_value_d = id_pc_i;
      end else if (id_dec.illegal) begin
        ex_exc_d   = 1'b1;
        ex_cause_d = EXC_ILLEGAL_INSN;
        ex_value_d = id_insn;
      end else if (id_dec.ecall) begin
        ex_exc_d   = 1'b1;
        ex_cause_d = EXC_ECALL;
        ex_value_d = id_pc_i;
      end else if (id_dec.ebreak) begin
        ex_exc_d   = 1'b1;
        ex_cause_d = EXC_BREAKPOINT;
        ex_value_d = id_pc_i;
      end
    end
  end


  // The word of a long op, kept for its later passes (they fetch nothing). A memory without reset:
  // a context's entry is written by the first pass before any later pass reads it. Like the SRAM,
  // an exception to "always_ff holds only q <= d".
  if (HasLongOps) begin : g_lop_insn
    localparam int Cw = $clog2(Contexts);  // index bits (contexts are always below Contexts)
    logic [31:0]   lop_insn_q [2**Cw];
    logic [Cw-1:0] lop_wi, lop_ri;
    logic          unused_lop_ctx;
    assign lop_wi = Cw'(ex_ctx_q);
    assign lop_ri = Cw'(id_ctx_i);
    assign unused_lop_ctx = ^{ex_ctx_q, id_ctx_i};
    always_ff @(posedge clk_i) begin
      if (commit_i && ex_dec_q.long_op && (ex_pass_q == 3'd0)) begin
        lop_insn_q[lop_wi] <= ex_insn_q;
      end
    end
    assign lop_word = lop_insn_q[lop_ri];
  end else begin : g_no_lop_insn
    logic unused_lop_commit;
    assign unused_lop_commit = commit_i;
    assign lop_word = '0;
  end

  // A halt squashes ID (a stop too: below, the exception to "always_ff holds only q <= d" that
  // keeps stop_i out of combinational logic, tess_core).
  logic ex_valid_in;
  assign ex_valid_in = ex_valid_d && !ex_halt_i;

  // The pipeline registers advance only while running.
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      ex_valid_q <= 1'b0;
      ex_ctx_q   <= '0;
      ex_pc_q    <= '0;
      ex_insn_q  <= '0;
      ex_pass_q  <= '0;
      ex_dec_q   <= '0;
      ex_rs1_q   <= '0;
      ex_rs2_q   <= '0;
      ex_fs1_q   <= '0;
      ex_fs2_q   <= '0;
      ex_fs3_q   <= '0;
      ex_exc_q   <= 1'b0;
      ex_cause_q <= '0;
      ex_value_q <= '0;
    end else if (advance_i) begin
      ex_valid_q <= ex_valid_in && !(!halt_i && stop_i);
      ex_ctx_q   <= ex_ctx_d;
      ex_pc_q    <= ex_pc_d;
      ex_insn_q  <= ex_insn_d;
      ex_pass_q  <= ex_pass_d;
      ex_dec_q   <= ex_dec_d;
      ex_rs1_q   <= ex_rs1_d;
      ex_rs2_q   <= ex_rs2_d;
      ex_fs1_q   <= ex_fs1_d;
      ex_fs2_q   <= ex_fs2_d;
      ex_fs3_q   <= ex_fs3_d;
      ex_exc_q   <= ex_exc_d;
      ex_cause_q <= ex_cause_d;
      ex_value_q <= ex_value_d;
    end
  end

  assign ex_valid_o = ex_valid_q;
  assign ex_ctx_o   = ex_ctx_q;
  assign ex_pc_o    = ex_pc_q;
  assign ex_insn_o  = ex_insn_q;
  assign ex_pass_o  = ex_pass_q;
  assign ex_dec_o   = ex_dec_q;
  assign ex_rs1_o   = ex_rs1_q;
  assign ex_rs2_o   = ex_rs2_q;
  assign ex_fs1_o   = ex_fs1_q;
  assign ex_fs2_o   = ex_fs2_q;
  assign ex_fs3_o   = ex_fs3_q;
  assign ex_exc_o   = ex_exc_q;
  assign ex_cause_o = ex_cause_q;
  assign ex_value_o = ex_value_q;

  // The host's register through read port a while held.
  assign hs_rdata_o = hs_reg_i[5] ? id_fs1 : id_rs1;

endmodule
