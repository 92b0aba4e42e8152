// Barrel-threaded RV32IMF core of a tile (docs/tile.md). Up to six contexts share one six-stage
// pipeline; cycle c belongs to context c mod 6, which issues in that slot if it is running and
// not blocked (with Contexts < 6 the slots Contexts..5 issue nothing):
//   IF  c    issue decision, fetch (SRAM port A)      ID  c+1  decode, register read
//   EX  c+2  ALU, branch, AGU, SRAM port B, MMIO,     M1  c+3  load data
//            CSR, mul, divider pass, FPU inputs       M2  c+4  (FPU)
//   WB  c+5  register write, FP flags, retirement
// A context has at most one instruction in flight, so there is no forwarding or hazard logic.
// Long ops (DIV*/REM*, FDIV.S, FSQRT.S) make 8 passes in the context's slots; the last one
// retires (without M and F, HasMulDiv = HasFpu = 0, nothing is a long op and the pass counters
// and the long-op word memory are left out). Context-state changes (RUN, DONE, WAIT) and pc
// updates happen in EX (c+2), so issue decisions from c+3 see them. A trap or an EXIT store in
// EX halts the tile: IF and ID are squashed, M1/M2/WB drain (the EXIT store retires), the cycle
// count freezes at h+1.
// run_i low pauses the whole pipeline (the host may use the SRAM meanwhile).
// Chip (docs/chip.md): a SYNC committing in EX (c+2) blocks the supervisor (sync_o pulses; the
// tile arrives at c+3) until resume_i, which may let the supervisor issue in that same cycle.
// stop_i (a chip error at cycle e = now - 2, found on some tile) halts the core as an EXIT
// would, without recording one: the instruction in EX (issued at e) completes, younger ones are
// discarded, older ones drain, the cycle count freezes at e + 1 (docs/chip.md, "Errors").
// stop_i is read only inside the always_ff blocks (the registers it changes take their stop value
// there), never by combinational logic: it comes from every tile of the chip, and a simulator
// evaluates combinational logic that reads it on every clock of every tile, a disabled tile's
// too (docs/benchmarks.md, "RTL, fifth step"). halt_now_o leaves it out for the same reason.
// The one exception is FPGA-only: with TESS_ICE40 the idle count's take-back reads it
// (tess_core_ctx), which no simulated chip has.
// The stages, each a module (docs/tile.md, "The core's modules"):
//   tess_core_ctx  IF: issue and fetch; the context state, the counters, the halt
//   tess_core_id   ID: decode, register files, the ID/EX registers
//   tess_core_ex   EX: ALU, branches, AGU, MMIO, CSRs, mul/div, traps
//   tess_core_fp   the FP units and their result queues (HasFpu), EX in, WB out
//   tess_core_wb   M1, M2, WB: load data, register writes, retirement
`include "tess_core_types.svh"

module tess_core #(
  parameter int MemBytes = tess_params_pkg::TILE_MEM_BYTES,
  parameter int NumTiles = tess_params_pkg::NUM_TILES,
  parameter bit HasFpu   = tess_params_pkg::HAS_FPU != 0,  // 0: integer-only (tess_decoder)
  parameter bit HasMulDiv = tess_params_pkg::HAS_MULDIV != 0,  // 0: no M extension (tess_decoder)
  parameter int Contexts  = tess_params_pkg::NUM_CONTEXTS,  // 2..6: supervisor and workers
  parameter int CounterBits = tess_params_pkg::COUNTER_BITS,  // 64 or 32: cycle, idle, instret
  parameter bit MatrixUnit = tess_params_pkg::MATRIX_UNIT != 0,  // 1: tess_amp (needs HasFpu)
  localparam int Aw       = $clog2(MemBytes / 4)
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      run_i,
  input  logic [15:0]               tile_id_i,
  // register-file clear after reset (TESS_ICE40 only, tess_regfile; run_i is 0 meanwhile)
  input  logic                      rf_clear_i,
  input  logic [7:0]                rf_clear_idx_i,
  // chip control
  input  logic                      stop_i,
  input  logic                      resume_i,
  input  logic                      xchg_clear_i,
  output logic                      sync_o,
  output logic [31:0]               sync_desc_o,
  output logic [31:0]               sync_pc_o,
  output logic [31:0]               xchg_prog_o,
  output logic                      halt_now_o,   // halted, or halting by EXIT or trap in this EX
  output logic                      trap_now_o,   // an instruction traps in this cycle's EX
  // instruction fetch (SRAM port A, data one cycle later)
  output logic                      imem_req_o,
  output logic [Aw-1:0]             imem_addr_o,
  input  logic [31:0]               imem_rdata_i,
  // loads and stores (SRAM port B, read data one cycle later)
  output logic                      dmem_req_o,
  output logic                      dmem_we_o,
  output logic [3:0]                dmem_be_o,
  output logic [Aw-1:0]             dmem_addr_o,
  output logic [31:0]               dmem_wdata_o,
  input  logic [31:0]               dmem_rdata_i,
  // the matrix unit's 16-byte accesses on port B (MatrixUnit; tess_sram Wide)
  output logic                      dmem_wide_o,
  output logic [127:0]              dmem_wide_wdata_o,
  input  logic [127:0]              dmem_wide_rdata_i,
  // status
  output logic                      halting_o,
  output logic                      halted_o,
  output logic                      exited_o,     // halted by an EXIT store (not a trap or stop)
  output logic [31:0]               exit_code_o,
  output logic                      trap_o,
  output logic [2:0]                trap_ctx_o,
  output logic [31:0]               trap_pc_o,
  output logic [4:0]                trap_cause_o,
  output logic [31:0]               trap_value_o,
  output logic                      console_valid_o,
  output logic [7:0]                console_byte_o,
  // counters
  output logic [63:0]               cycle_o,
  output logic [Contexts*64-1:0]    instret_o,    // context k at [64*k +: 64]
  output logic [63:0]               idle_o,
  // retirement trace (docs/tile.md, "Retirement trace")
  output logic                      retire_valid_o,
  output logic [63:0]               retire_cycle_o,
  output logic [2:0]                retire_ctx_o,
  output logic [31:0]               retire_pc_o,
  output logic [31:0]               retire_insn_o,
  output logic [1:0]                retire_dest_o,
  output logic [4:0]                retire_rd_o,
  output logic [31:0]               retire_value_o,
  // checkpoint state (docs/checkpoint.md): the host reads and writes it while the core is held
  // (run_i = 0); hs_sel_i is a tess_core_pkg::hs_sel_e, hs_reg_i REG_SEL (64 and up: the matrix
  // unit's state, tess_amp). Reads are combinational (the register
  // files' read port a serves the host while held), writes take effect at the clock edge (the
  // register files' one write port serves the host while held).
  input  logic                      hs_we_i,
  input  logic [3:0]                hs_sel_i,
  input  logic [2:0]                hs_ctx_i,
  input  logic [7:0]                hs_reg_i,
  input  logic [31:0]               hs_wdata_i,
  output logic [31:0]               hs_rdata_o
);


  // Slots per barrel round (rtl/params.json ROUND_CYCLES, checked below to be one per pipeline
  // stage), whatever the number of contexts.
  localparam int Round = tess_params_pkg::ROUND_CYCLES;

  // Parameters of rtl/params.json that this core hard-wires are refused at elaboration
  // (Verilator, Yosys; Icarus 11 does not parse elaboration-time $error): the 3-bit long-op pass
  // counter and tess_fpu_divsqrt make 8 passes, the round has one slot per pipeline stage (IF ID
  // EX M1 M2 WB), and the MMIO map has RUN slots for workers 1..5 at most.
`ifndef __ICARUS__
  if (tess_params_pkg::LONG_OP_ROUNDS != 8) begin : g_rounds_error
    $error("tess_core: LONG_OP_ROUNDS (rtl/params.json) must be 8 (tess_div, tess_fpu_divsqrt)");
  end
  if ((Contexts < 2) || (Contexts > Round)) begin : g_contexts_error
    $error("tess_core: NUM_CONTEXTS (rtl/params.json) must be 2..6 (supervisor, workers, slots)");
  end
  if (tess_params_pkg::PIPE_WB_STAGE != 5) begin : g_wb_error
    $error("tess_core: PIPE_WB_STAGE (rtl/params.json) must be 5 (six-stage pipeline)");
  end
  if (tess_params_pkg::ROUND_CYCLES != 6) begin : g_round_error
    $error("tess_core: ROUND_CYCLES (rtl/params.json) must be 6 (one slot per pipeline stage)");
  end
  if ((CounterBits != 32) && (CounterBits != 64)) begin : g_counter_bits_error
    $error("tess_core: CounterBits (rtl/params.json COUNTER_BITS) must be 32 or 64");
  end
  if (MatrixUnit && !HasFpu) begin : g_matrix_fpu_error
    $error("tess_core: MATRIX_UNIT (rtl/params.json) needs HAS_FPU (AMP.RD writes an f-register)");
  end
`endif

  logic advance;
  assign advance = run_i;

  // Host state writes (never while the core advances).
  logic hs_we;
  assign hs_we = hs_we_i && !advance;
  // REG_SEL 64 and up (REG_SEL_AMP_*) is the matrix unit's state, not a register file's; the
  // chip refuses those values without the unit.
  logic hs_amp;
  assign hs_amp = hs_reg_i[7:6] != 2'b00;

  // IF: context state, issue, counters, halt
  logic                   id_valid, id_exc;
  logic [2:0]             id_ctx, id_pass;
  logic [31:0]            id_pc;
  logic [4:0]             id_cause;
  logic                   ex_halt;
  logic [Contexts-1:0]    running;
  logic [CounterBits-1:0] cycle_q;
  logic                   halt_q;
  logic [31:0]            hs_pc;
  logic [3:0]             hs_cstate;
  // ID: the ID/EX registers
  logic                   ex_valid, ex_exc;
  logic [2:0]             ex_ctx, ex_pass;
  logic [31:0]            ex_pc, ex_insn, ex_rs1, ex_rs2, ex_fs1, ex_fs2, ex_fs3, ex_value;
  decoded_t               ex_dec;
  logic [4:0]             ex_cause;
  logic [31:0]            hs_reg;
  // EX
  logic [2:0]             id_frm;
  logic                   commit, last_pass, jump, ex_trap, halt_req;
  logic [31:0]            target, link, store_data, ex_trap_value;
  logic [4:0]             ex_trap_cause;
  logic                   mmio_exit, mmio_wait, mmio_done, mmio_run, mmio_sync;
  logic [2:0]             run_ctx;
  logic [31:0]            run_arg;
  late_t                  m1_d;
  logic [7:0]             hs_fcsr;
  logic [127:0]           amp_sa_data;
  logic [31:0]            amp_rd_value;
  logic [31:0]            amp_row_off;
  logic                   amp_row_skip;
  logic [31:0]            hs_amp_rdata;
  // FP units
  logic [36:0]            fpu_q_out, ds_q_out;
  // M1, M2, WB
  logic                   fpu_pop, ds_pop, late_busy;
  logic                   xrf_we, frf_we, wb_flags_we, retire;
  logic [2:0]             wb_ctx;
  logic [4:0]             wb_rd, wb_flags;
  logic [31:0]            wb_value;

  tess_core_ctx #(
    .MemBytes    (MemBytes),
    .HasFpu      (HasFpu),
    .HasMulDiv   (HasMulDiv),
    .Contexts    (Contexts),
    .CounterBits (CounterBits)
  ) u_ctx (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .advance_i    (advance),
    .stop_i       (stop_i),
    .resume_i     (resume_i),
    .imem_req_o   (imem_req_o),
    .imem_addr_o  (imem_addr_o),
    .id_valid_o   (id_valid),
    .id_ctx_o     (id_ctx),
    .id_pc_o      (id_pc),
    .id_pass_o    (id_pass),
    .id_exc_o     (id_exc),
    .id_cause_o   (id_cause),
    .ex_valid_i   (ex_valid),
    .ex_ctx_i     (ex_ctx),
    .ex_pc_i      (ex_pc),
    .ex_pass_i    (ex_pass),
    .long_op_i    (ex_dec.long_op),
    .commit_i     (commit),
    .last_pass_i  (last_pass),
    .jump_i       (jump),
    .target_i     (target),
    .link_i       (link),
    .store_data_i (store_data),
    .ex_trap_i    (ex_trap),
    .trap_cause_i (ex_trap_cause),
    .trap_value_i (ex_trap_value),
    .halt_req_i   (halt_req),
    .mmio_exit_i  (mmio_exit),
    .mmio_wait_i  (mmio_wait),
    .mmio_done_i  (mmio_done),
    .mmio_run_i   (mmio_run),
    .mmio_sync_i  (mmio_sync),
    .run_ctx_i    (run_ctx),
    .ex_halt_o    (ex_halt),
    .running_o    (running),
    .cycle_q_o    (cycle_q),
    .halt_o       (halt_q),
    .exited_o     (exited_o),
    .exit_code_o  (exit_code_o),
    .trap_o       (trap_o),
    .trap_ctx_o   (trap_ctx_o),
    .trap_pc_o    (trap_pc_o),
    .trap_cause_o (trap_cause_o),
    .trap_value_o (trap_value_o),
    .cycle_o      (cycle_o),
    .idle_o       (idle_o),
    .hs_we_i      (hs_we),
    .hs_sel_i     (hs_sel_i),
    .hs_ctx_i     (hs_ctx_i),
    .hs_wdata_i   (hs_wdata_i),
    .hs_pc_o      (hs_pc),
    .hs_cstate_o  (hs_cstate)
  );

  tess_core_id #(
    .HasFpu    (HasFpu),
    .HasMulDiv (HasMulDiv),
    .MatrixUnit (MatrixUnit),
    .Contexts  (Contexts)
  ) u_id (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .advance_i      (advance),
    .halt_i         (halt_q),
    .stop_i         (stop_i),
    .ex_halt_i      (ex_halt),
    .rf_clear_i     (rf_clear_i),
    .rf_clear_idx_i (rf_clear_idx_i),
    .id_valid_i     (id_valid),
    .id_ctx_i       (id_ctx),
    .id_pc_i        (id_pc),
    .id_pass_i      (id_pass),
    .id_exc_i       (id_exc),
    .id_cause_i     (id_cause),
    .imem_rdata_i   (imem_rdata_i),
    .id_frm_i       (id_frm),
    .commit_i       (commit),
    .xrf_we_i       (xrf_we),
    .frf_we_i       (frf_we),
    .wb_ctx_i       (wb_ctx),
    .wb_rd_i        (wb_rd),
    .wb_value_i     (wb_value),
    .run_we_i       (commit && mmio_run),
    .run_ctx_i      (run_ctx),
    .run_arg_i      (run_arg),
    .ex_valid_o     (ex_valid),
    .ex_ctx_o       (ex_ctx),
    .ex_pc_o        (ex_pc),
    .ex_insn_o      (ex_insn),
    .ex_pass_o      (ex_pass),
    .ex_dec_o       (ex_dec),
    .ex_rs1_o       (ex_rs1),
    .ex_rs2_o       (ex_rs2),
    .ex_fs1_o       (ex_fs1),
    .ex_fs2_o       (ex_fs2),
    .ex_fs3_o       (ex_fs3),
    .ex_exc_o       (ex_exc),
    .ex_cause_o     (ex_cause),
    .ex_value_o     (ex_value),
    .hs_we_i        (hs_we && !hs_amp),
    .hs_sel_i       (hs_sel_i),
    .hs_ctx_i       (hs_ctx_i),
    .hs_reg_i       (hs_reg_i[5:0]),
    .hs_wdata_i     (hs_wdata_i),
    .hs_rdata_o     (hs_reg)
  );

  tess_core_ex #(
    .MemBytes    (MemBytes),
    .NumTiles    (NumTiles),
    .HasFpu      (HasFpu),
    .HasMulDiv   (HasMulDiv),
    .Contexts    (Contexts),
    .CounterBits (CounterBits),
    .MatrixUnit  (MatrixUnit)
  ) u_ex (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .advance_i       (advance),
    .tile_id_i       (tile_id_i),
    .xchg_clear_i    (xchg_clear_i),
    .ex_valid_i      (ex_valid),
    .ex_ctx_i        (ex_ctx),
    .ex_pc_i         (ex_pc),
    .ex_insn_i       (ex_insn),
    .ex_pass_i       (ex_pass),
    .dec_i           (ex_dec),
    .rs1_i           (ex_rs1),
    .rs2_i           (ex_rs2),
    .fs2_i           (ex_fs2),
    .exc_i           (ex_exc),
    .cause_i         (ex_cause),
    .value_i         (ex_value),
    .running_i       (running),
    .cycle_i         (cycle_q),
    .id_ctx_i        (id_ctx),
    .id_frm_o        (id_frm),
    .commit_o        (commit),
    .last_pass_o     (last_pass),
    .jump_o          (jump),
    .target_o        (target),
    .link_o          (link),
    .store_data_o    (store_data),
    .trap_o          (ex_trap),
    .trap_cause_o    (ex_trap_cause),
    .trap_value_o    (ex_trap_value),
    .halt_req_o      (halt_req),
    .trap_now_o      (trap_now_o),
    .mmio_exit_o     (mmio_exit),
    .mmio_wait_o     (mmio_wait),
    .mmio_done_o     (mmio_done),
    .mmio_run_o      (mmio_run),
    .mmio_sync_o     (mmio_sync),
    .run_ctx_o       (run_ctx),
    .run_arg_o       (run_arg),
    .xchg_prog_o     (xchg_prog_o),
    .sync_o          (sync_o),
    .sync_desc_o     (sync_desc_o),
    .sync_pc_o       (sync_pc_o),
    .m1_d_o          (m1_d),
    .dmem_req_o      (dmem_req_o),
    .dmem_we_o       (dmem_we_o),
    .dmem_be_o       (dmem_be_o),
    .dmem_addr_o     (dmem_addr_o),
    .dmem_wdata_o    (dmem_wdata_o),
    .dmem_wide_o       (dmem_wide_o),
    .dmem_wide_wdata_o (dmem_wide_wdata_o),
    .amp_sa_data_i     (amp_sa_data),
    .amp_rd_value_i    (amp_rd_value),
    .amp_row_off_i     (amp_row_off),
    .amp_row_skip_i    (amp_row_skip),
    .console_valid_o (console_valid_o),
    .console_byte_o  (console_byte_o),
    .flags_we_i      (wb_flags_we),
    .wb_ctx_i        (wb_ctx),
    .flags_i         (wb_flags),
    .retire_i        (retire),
    .instret_o       (instret_o),
    .hs_we_i         (hs_we),
    .hs_sel_i        (hs_sel_i),
    .hs_ctx_i        (hs_ctx_i),
    .hs_wdata_i      (hs_wdata_i),
    .hs_fcsr_o       (hs_fcsr)
  );

  // The FP register file and units exist only with HasFpu; without them F instructions are
  // illegal (tess_decoder), so nothing reads the FP operands or the FP result queues.
  if (HasFpu) begin : g_fpu
    tess_core_fp #(
      .Contexts (Contexts)
    ) u_fp (
      .clk_i       (clk_i),
      .rst_ni      (rst_ni),
      .fpu_valid_i (commit && (ex_dec.res_sel == tess_core_pkg::RES_FPU)),
      .ds_pass_i   (commit && (ex_dec.res_sel == tess_core_pkg::RES_FDIV)),
      .pass_idx_i  (ex_pass),
      .ctx_i       (ex_ctx),
      .op_i        (ex_dec.fpu_op),
      .rm_i        (ex_dec.rm),
      .a_int_i     (ex_dec.fpu_a_int),
      .rs1_i       (ex_rs1),
      .fs1_i       (ex_fs1),
      .fs2_i       (ex_fs2),
      .fs3_i       (ex_fs3),
      .fpu_pop_i   (fpu_pop),
      .ds_pop_i    (ds_pop),
      .fpu_o       (fpu_q_out),
      .ds_o        (ds_q_out)
    );
  end else begin : g_no_fpu
    logic [63:0] unused_fp_ops;
    logic        unused_fp_pops;
    assign unused_fp_ops  = {ex_fs1 ^ ex_fs3, ex_fs2};
    assign unused_fp_pops = fpu_pop ^ ds_pop;
    assign fpu_q_out = '0;
    assign ds_q_out  = '0;
  end

  // The matrix unit exists only with MatrixUnit; without it its words are illegal (tess_decoder).
  if (MatrixUnit) begin : g_amp
    tess_amp #(
      .Contexts (Contexts)
    ) u_amp (
      .clk_i      (clk_i),
      .rst_ni     (rst_ni),
      .advance_i  (advance),
      .amp_i      (ex_dec.amp),
      .commit_i   (commit && ex_dec.amp),
      .op_i       (ex_dec.amp_op),
      .ctx_i      (ex_ctx),
      .insn_i     (ex_insn),
      .rs1_i      (ex_rs1),
      .rs2_i      (ex_rs2),
      .sa_data_o  (amp_sa_data),
      .rd_value_o (amp_rd_value),
      .row_off_o  (amp_row_off),
      .row_skip_o (amp_row_skip),
      .rdata_i    (dmem_wide_rdata_i),
      .hs_we_i    (hs_we && hs_amp && (hs_sel_i == tess_core_pkg::HS_REG)),
      .hs_ctx_i   (hs_ctx_i),
      .hs_idx_i   (7'(hs_reg_i - 8'(tess_params_pkg::REG_SEL_AMP_W))),
      .hs_wdata_i (hs_wdata_i),
      .hs_rdata_o (hs_amp_rdata)
    );
  end else begin : g_no_amp
    logic [131:0] unused_amp;
    assign unused_amp   = {dmem_wide_rdata_i, ex_dec.amp, ex_dec.amp_op};
    assign amp_sa_data  = '0;
    assign amp_rd_value = '0;
    assign amp_row_off  = '0;
    assign amp_row_skip = 1'b0;
    assign hs_amp_rdata = '0;
  end

  tess_core_wb #(
    .CounterBits (CounterBits)
  ) u_wb (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .advance_i      (advance),
    .m1_d_i         (m1_d),
    .dmem_rdata_i   (dmem_rdata_i),
    .fpu_i          (fpu_q_out),
    .ds_i           (ds_q_out),
    .cycle_i        (cycle_q),
    .fpu_pop_o      (fpu_pop),
    .ds_pop_o       (ds_pop),
    .busy_o         (late_busy),
    .xrf_we_o       (xrf_we),
    .frf_we_o       (frf_we),
    .wb_ctx_o       (wb_ctx),
    .wb_rd_o        (wb_rd),
    .wb_value_o     (wb_value),
    .flags_we_o     (wb_flags_we),
    .flags_o        (wb_flags),
    .retire_o       (retire),
    .retire_valid_o (retire_valid_o),
    .retire_cycle_o (retire_cycle_o),
    .retire_ctx_o   (retire_ctx_o),
    .retire_pc_o    (retire_pc_o),
    .retire_insn_o  (retire_insn_o),
    .retire_dest_o  (retire_dest_o),
    .retire_rd_o    (retire_rd_o),
    .retire_value_o (retire_value_o)
  );

  // Status: halted once the instructions older than the halt have drained.
  assign halt_now_o = halt_q || ex_halt;
  assign halting_o  = halt_q;
  assign halted_o   = halt_q && !late_busy;

  // Checkpoint state reads (the host's context and register through read port a while held).
  always_comb begin
    unique case (hs_sel_i)
      tess_core_pkg::HS_REG:        hs_rdata_o = hs_amp ? hs_amp_rdata : hs_reg;
      tess_core_pkg::HS_PC:         hs_rdata_o = hs_pc;
      tess_core_pkg::HS_FCSR:       hs_rdata_o = {24'd0, hs_fcsr};
      tess_core_pkg::HS_INSTRET_LO: hs_rdata_o = instret_o[64*hs_ctx_i +: 32];
      tess_core_pkg::HS_INSTRET_HI: hs_rdata_o = instret_o[64*hs_ctx_i+32 +: 32];
      tess_core_pkg::HS_CSTATE:     hs_rdata_o = {28'd0, hs_cstate};
      tess_core_pkg::HS_RUN_ARG:    hs_rdata_o = run_arg;
      tess_core_pkg::HS_XCHG:       hs_rdata_o = xchg_prog_o;
      default:                      hs_rdata_o = '0;
    endcase
  end

endmodule
