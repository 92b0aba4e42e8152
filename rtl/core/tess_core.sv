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
// The one exception is FPGA-only: with TESS_ICE40 the idle count's take-back reads it (below),
// which no simulated chip has.
`include "tess_core_types.svh"
`include "tess_ctx_select.svh"

module tess_core #(
  parameter int MemBytes = 65536,
  parameter int NumTiles = 1,
  parameter bit HasFpu   = tess_params_pkg::HAS_FPU != 0,  // 0: integer-only (tess_decoder)
  parameter bit HasMulDiv = tess_params_pkg::HAS_MULDIV != 0,  // 0: no M extension (tess_decoder)
  parameter int Contexts  = tess_params_pkg::NUM_CONTEXTS,  // 2..6: supervisor and workers
  parameter int CounterBits = tess_params_pkg::COUNTER_BITS,  // 64 or 32: cycle, idle, instret
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
  // (run_i = 0); hs_sel_i is a tess_core_pkg::hs_sel_e. Reads are combinational (the register
  // files' read port a serves the host while held), writes take effect at the clock edge (the
  // register files' one write port serves the host while held).
  input  logic                      hs_we_i,
  input  logic [3:0]                hs_sel_i,
  input  logic [2:0]                hs_ctx_i,
  input  logic [5:0]                hs_reg_i,
  input  logic [31:0]               hs_wdata_i,
  output logic [31:0]               hs_rdata_o
);


  localparam int MmioBits = $clog2(tess_params_pkg::MMIO_SIZE);
  // Slots per barrel round (rtl/params.json ROUND_CYCLES, checked below to be one per pipeline
  // stage), whatever the number of contexts.
  localparam int Round = tess_params_pkg::ROUND_CYCLES;
  // Long ops are DIV*/REM* and FDIV.S/FSQRT.S: without M and F there are none.
  localparam bit HasLongOps = HasMulDiv || HasFpu;

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
`endif
  localparam logic [31:0]  MmioBase = tess_params_pkg::MMIO_BASE;
  localparam logic [31:0] MemLimit  = 32'(MemBytes);

  // Trap causes (docs/tile.md, "Halting and traps"), numbered by rtl/params.json. Constants
  // here rather than an enum in tess_core_pkg: Yosys 0.23 and Icarus 11 cannot read another
  // package's constants inside a package.
  localparam logic [4:0] EXC_INSN_MISALIGNED  = 5'(tess_params_pkg::CAUSE_INSN_MISALIGNED);
  localparam logic [4:0] EXC_INSN_ACCESS      = 5'(tess_params_pkg::CAUSE_INSN_ACCESS);
  localparam logic [4:0] EXC_ILLEGAL_INSN     = 5'(tess_params_pkg::CAUSE_ILLEGAL_INSN);
  localparam logic [4:0] EXC_BREAKPOINT       = 5'(tess_params_pkg::CAUSE_BREAKPOINT);
  localparam logic [4:0] EXC_LOAD_MISALIGNED  = 5'(tess_params_pkg::CAUSE_LOAD_MISALIGNED);
  localparam logic [4:0] EXC_LOAD_ACCESS      = 5'(tess_params_pkg::CAUSE_LOAD_ACCESS);
  localparam logic [4:0] EXC_STORE_MISALIGNED = 5'(tess_params_pkg::CAUSE_STORE_MISALIGNED);
  localparam logic [4:0] EXC_STORE_ACCESS     = 5'(tess_params_pkg::CAUSE_STORE_ACCESS);
  localparam logic [4:0] EXC_ECALL            = 5'(tess_params_pkg::CAUSE_ECALL);
  localparam logic [4:0] EXC_CONTEXT_MISUSE   = 5'(tess_params_pkg::CAUSE_CONTEXT_MISUSE);


  logic advance;
  assign advance = run_i;

  // Host state writes (never while the core advances).
  logic hs_we, hs_x_we, hs_f_we;
  assign hs_we   = hs_we_i && !advance;
  assign hs_x_we = hs_we && (hs_sel_i == tess_core_pkg::HS_REG) && !hs_reg_i[5];
  assign hs_f_we = hs_we && (hs_sel_i == tess_core_pkg::HS_REG) && hs_reg_i[5];

  // ---------------------------------------------------------------------------------------------
  // Context state
  // ---------------------------------------------------------------------------------------------
  // Per-context vectors are flat, context k at [W*k +: W] (Yosys 0.23 reads no multi-dimensional
  // packed arrays).
  logic [Contexts*32-1:0]    pc_q, pc_d;
  logic [Contexts-1:0]       running_q, running_d;
  logic [Contexts*3-1:0]     lop_q, lop_d;        // next pass of a long op in progress, 0 = none
  logic [31:0]               lop_word;            // the long op's word (lop_insn_q, below)
  logic                      wait_q, wait_d;      // supervisor blocked by WAIT
  logic                      sync_q, sync_d;      // supervisor blocked at a sync
  logic [2:0]                slot_q, slot_d;      // slot of the round in this cycle, 0..5
  logic                      slot_ctx;            // slot_q is a context's (slot_q < Contexts)
  logic [2:0]                if_ctx;              // that context, else 0 (an empty slot)
  logic [7:0]                running_pad;         // running_q for every 3-bit context index
  // The counters hold CounterBits bits and wrap modulo 2^CounterBits; the ports carry them
  // zero-extended to 64 bits (docs/tile.md, "Counters").
  logic [CounterBits-1:0]    cycle_q, cycle_d;    // cycles the pipeline advanced since reset
  logic [CounterBits-1:0]    idle_q, idle_d;
  logic                      halt_q, halt_d;
  logic                      exited_q, exited_d;
  logic [CounterBits-1:0]    halt_cycles_q, halt_cycles_d;
  logic [63:0]               cycle64;             // cycle_q zero-extended (host writes)
  logic [CounterBits-1:0]    retire_cycle;        // WB cycle - 5 modulo 2^CounterBits
  logic [31:0]               exit_code_q, exit_code_d;
  logic                      trap_q, trap_d;
  logic [2:0]                trap_ctx_q, trap_ctx_d;
  logic [31:0]               trap_pc_q, trap_pc_d;
  logic [4:0]                trap_cause_q, trap_cause_d;
  logic [31:0]               trap_value_q, trap_value_d;

  // ---------------------------------------------------------------------------------------------
  // Pipeline registers
  // ---------------------------------------------------------------------------------------------
  logic        id_valid_q, id_valid_d;
  logic [2:0]  id_ctx_q, id_ctx_d;
  logic [31:0] id_pc_q, id_pc_d;
  logic [2:0]  id_pass_q, id_pass_d;
  logic        id_exc_q, id_exc_d;           // fetch trap found in IF
  logic [4:0]  id_cause_q, id_cause_d;
  logic        id_idle_q, id_idle_d;         // this slot was counted idle

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
  logic        ex_exc_q, ex_exc_d;           // trap found in IF or ID
  logic [4:0]  ex_cause_q, ex_cause_d;
  logic [31:0] ex_value_q, ex_value_d;

  // M1, M2 and WB carry one retiring instruction each.
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

  late_t m1_q, m1_d;
  late_t m2_q, m2_d;
  late_t wb_q, wb_d;

  // ---------------------------------------------------------------------------------------------
  // IF
  // ---------------------------------------------------------------------------------------------
  logic        sup_blocked;
  logic        issue;
  logic        slot_idle;
  logic [31:0] if_pc;
  logic [2:0]  if_pass;
  logic        if_fetch_fault;
  logic        if_fetch_misaligned;
  logic        ex_halt;

  // An empty slot (Contexts < Round) issues nothing and carries context 0 down the pipeline, so
  // that every per-context index stays below Contexts; with six contexts both are constants.
  assign slot_ctx    = (Contexts == Round) || (32'(slot_q) < 32'(Contexts));
  assign if_ctx      = slot_ctx ? slot_q : 3'd0;
  assign running_pad = 8'(running_q);
  assign sup_blocked = (slot_q == 3'd0) &&
                       ((wait_q && (running_q[Contexts-1:1] != '0)) || (sync_q && !resume_i));
  assign issue       = advance && !halt_q && slot_ctx && running_pad[if_ctx] && !sup_blocked;
  // Slots lost after the halting instruction's EX are not part of the run (see idle_d); a stop
  // takes this cycle's count back in the always_ff block.
  assign slot_idle   = advance && !halt_q && !ex_halt && !issue;
  assign if_pc       = pc_q[32*if_ctx +: 32];
  assign if_pass     = HasLongOps ? lop_q[3*if_ctx +: 3] : 3'd0;

  assign if_fetch_fault      = (if_pass == 3'd0) && (if_pc >= MemLimit);
  assign if_fetch_misaligned = (if_pass == 3'd0) && (if_pc[1:0] != 2'b00);

  assign imem_req_o  = issue && (if_pass == 3'd0);
  assign imem_addr_o = if_pc[Aw+1:2];

  always_comb begin
    id_valid_d = issue;
    id_ctx_d   = if_ctx;
    id_pc_d    = if_pc;
    id_pass_d  = if_pass;
    id_exc_d   = if_fetch_fault || if_fetch_misaligned;
    // A pc outside SRAM is a fetch fault; an unaligned pc (only reachable through RUN) is
    // reported as an instruction address misalignment at the fetch.
    id_cause_d = if_fetch_fault ? EXC_INSN_ACCESS : EXC_INSN_MISALIGNED;
    id_idle_d  = slot_idle;
  end

  // ---------------------------------------------------------------------------------------------
  // ID
  // ---------------------------------------------------------------------------------------------
  logic [31:0] id_insn;
  logic [2:0]  id_frm;
  decoded_t    id_dec;
  logic [31:0] id_rs1, id_rs2, id_fs1, id_fs2, id_fs3;
  logic [31:0] unused_x_c;

  assign id_insn = (HasLongOps && (id_pass_q != 3'd0)) ? lop_word : imem_rdata_i;

  tess_decoder #(
    .HasFpu    (HasFpu),
    .HasMulDiv (HasMulDiv)
  ) u_decoder (
    .insn_i (id_insn),
    .frm_i  (id_frm),
    .dec_o  (id_dec)
  );

  // WB and RUN write ports of the integer file; declared below.
  logic        xrf_we, frf_we, run_we;
  logic [2:0]  run_ctx;
  logic [31:0] run_arg;
  logic [31:0] wb_value;

  // While held, read port a and the write port belong to the host (checkpoint state).
  logic [2:0]  rf_rctx;
  logic [4:0]  rf_raddr_a;
  logic [2:0]  xrf_wctx, frf_wctx;
  logic [4:0]  xrf_waddr, frf_waddr;
  logic [31:0] xrf_wdata, frf_wdata;
  assign rf_rctx    = advance ? id_ctx_q : hs_ctx_i;
  assign rf_raddr_a = advance ? id_insn[19:15] : hs_reg_i[4:0];
  assign xrf_wctx   = hs_x_we ? hs_ctx_i : wb_q.ctx;
  assign xrf_waddr  = hs_x_we ? hs_reg_i[4:0] : wb_q.rd;
  assign xrf_wdata  = hs_x_we ? hs_wdata_i : wb_value;
  assign frf_wctx   = hs_f_we ? hs_ctx_i : wb_q.ctx;
  assign frf_waddr  = hs_f_we ? hs_reg_i[4:0] : wb_q.rd;
  assign frf_wdata  = hs_f_we ? hs_wdata_i : wb_value;

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
    .we_a_i    (xrf_we || hs_x_we),
    .wctx_a_i  (xrf_wctx),
    .waddr_a_i (xrf_waddr),
    .wdata_a_i (xrf_wdata),
    .we_b_i    (run_we),
    .wctx_b_i  (run_ctx),
    .wdata_b_i (run_arg),
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
      .we_a_i    (frf_we || hs_f_we),
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
    assign unused_frf = ^{frf_we, hs_f_we, frf_wctx, frf_waddr, frf_wdata};
    assign id_fs1 = '0;
    assign id_fs2 = '0;
    assign id_fs3 = '0;
  end

  always_comb begin
    ex_valid_d = id_valid_q;
    ex_ctx_d   = id_ctx_q;
    ex_pc_d    = id_pc_q;
    ex_insn_d  = id_insn;
    ex_pass_d  = id_pass_q;
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
    if (id_pass_q == 3'd0) begin
      if (id_exc_q) begin
        ex_exc_d   = 1'b1;
        ex_cause_d = id_cause_q;
        ex_value_d = id_pc_q;
      end else if (id_dec.illegal) begin
        ex_exc_d   = 1'b1;
        ex_cause_d = EXC_ILLEGAL_INSN;
        ex_value_d = id_insn;
      end else if (id_dec.ecall) begin
        ex_exc_d   = 1'b1;
        ex_cause_d = EXC_ECALL;
        ex_value_d = id_pc_q;
      end else if (id_dec.ebreak) begin
        ex_exc_d   = 1'b1;
        ex_cause_d = EXC_BREAKPOINT;
        ex_value_d = id_pc_q;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // EX
  // ---------------------------------------------------------------------------------------------
  decoded_t    dec;
  logic [31:0] op_a, op_b;
  logic [31:0] alu_result;
  logic        br_taken;
  logic        jump;
  logic [31:0] target;
  logic [31:0] link;
  logic [31:0] mem_addr;
  logic        mem_access;
  logic        mem_misaligned;
  logic        in_sram;
  logic        in_mmio;
  logic        target_misaligned;
  logic        ex_trap;
  logic [4:0]  ex_trap_cause;
  logic [31:0] ex_trap_value;
  logic        commit;
  logic        last_pass;
  logic [31:0] store_data;
  logic [31:0] mul_result;
  logic [31:0] div_result;
  logic [31:0] csr_rdata;
  logic [31:0] mmio_rdata;
  logic        mmio_req;
  logic        mmio_fault;
  logic        mmio_misuse;
  logic        mmio_exit, mmio_console, mmio_wait, mmio_done, mmio_run, mmio_sync;
  logic [31:0] ex_result;
  logic [1:0]  ex_dest;

  assign dec        = ex_dec_q;
  // Traps of the decoder were resolved in ID; rs2/rs3 only address the register files.
  logic [12:0] unused_dec;
  assign unused_dec = {dec.illegal, dec.ecall, dec.ebreak, dec.rs2, dec.rs3};
  assign last_pass  = !HasLongOps || !dec.long_op ||
                      (ex_pass_q == 3'(tess_params_pkg::LONG_OP_ROUNDS - 1));
  assign link       = ex_pc_q + 32'd4;
  assign store_data = dec.mem_fp ? ex_fs2_q : ex_rs2_q;

  always_comb begin
    unique case (dec.op_a)
      tess_core_pkg::OPA_PC:   op_a = ex_pc_q;
      tess_core_pkg::OPA_ZERO: op_a = '0;
      default:  op_a = ex_rs1_q;
    endcase
    op_b = (dec.op_b == tess_core_pkg::OPB_IMM) ? dec.imm : ex_rs2_q;
  end

  tess_alu u_alu (
    .op_i        (dec.alu_op),
    .a_i         (op_a),
    .b_i         (op_b),
    .br_funct3_i (dec.br_funct3),
    .rs1_i       (ex_rs1_q),
    .rs2_i       (ex_rs2_q),
    .result_o    (alu_result),
    .br_taken_o  (br_taken)
  );

  // The multiplier and divider exist only with HasMulDiv; without them M instructions are
  // illegal (tess_decoder), so RES_MUL and RES_DIV are never selected.
  if (HasMulDiv) begin : g_muldiv
    tess_mul u_mul (
      .op_i     (dec.mul_op),
      .a_i      (ex_rs1_q),
      .b_i      (ex_rs2_q),
      .result_o (mul_result)
    );

    tess_div #(
      .Contexts (Contexts)
    ) u_div (
      .clk_i      (clk_i),
      .pass_i     (commit && (dec.res_sel == tess_core_pkg::RES_DIV)),
      .pass_idx_i (ex_pass_q),
      .ctx_i      (ex_ctx_q),
      .ctx_next_i (advance ? id_ctx_q : ex_ctx_q),
      .op_i       (dec.div_op),
      .a_i        (ex_rs1_q),
      .b_i        (ex_rs2_q),
      .result_o   (div_result)
    );
  end else begin : g_no_muldiv
    logic [3:0] unused_muldiv_ops;
    assign unused_muldiv_ops = {dec.mul_op, dec.div_op};
    assign mul_result = '0;
    assign div_result = '0;
  end

  // Branches and jumps.
  assign jump   = dec.jal || dec.jalr || (dec.branch && br_taken);
  assign target = dec.jalr ? ((ex_rs1_q + dec.imm) & ~32'd1) : (ex_pc_q + dec.imm);
  assign target_misaligned = jump && (target[1:0] != 2'b00);

  // Address generation and access checks (docs/tile.md, "Tile memory map").
  assign mem_access = dec.load || dec.store;
  assign mem_addr   = ex_rs1_q + dec.imm;
  always_comb begin
    unique case (dec.mem_size)
      tess_core_pkg::MEM_H:   mem_misaligned = mem_addr[0];
      tess_core_pkg::MEM_W:   mem_misaligned = mem_addr[1:0] != 2'b00;
      default: mem_misaligned = 1'b0;
    endcase
  end
  assign in_sram  = mem_addr < MemLimit;
  assign in_mmio  = (mem_addr >> MmioBits) == (MmioBase >> MmioBits);
  assign mmio_req = ex_valid_q && !ex_exc_q && mem_access && !mem_misaligned && in_mmio;

  tess_mmio #(
    .Contexts (Contexts)
  ) u_mmio (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .req_i          (mmio_req && advance),
    .commit_i       (commit),
    .xchg_clear_i   (xchg_clear_i),
    .we_i           (dec.store),
    .word_i         (dec.mem_size == tess_core_pkg::MEM_W),
    .offset_i       (mem_addr[11:0]),
    .wdata_i        (store_data),
    .ctx_i          (ex_ctx_q),
    .running_i      (running_q),
    .rdata_o        (mmio_rdata),
    .access_fault_o (mmio_fault),
    .misuse_o       (mmio_misuse),
    .exit_o         (mmio_exit),
    .console_o      (mmio_console),
    .wait_o         (mmio_wait),
    .done_o         (mmio_done),
    .run_o          (mmio_run),
    .run_ctx_o      (run_ctx),
    .run_arg_o      (run_arg),
    .sync_o         (mmio_sync),
    .xchg_prog_o    (xchg_prog_o),
    .hs_run_arg_we_i (hs_we && (hs_sel_i == tess_core_pkg::HS_RUN_ARG)),
    .hs_xchg_we_i    (hs_we && (hs_sel_i == tess_core_pkg::HS_XCHG)),
    .hs_wdata_i      (hs_wdata_i)
  );

  // Trap priority: fetch, illegal, ECALL/EBREAK (all in ex_exc_q), misaligned target,
  // misaligned access, access fault, context misuse.
  always_comb begin
    ex_trap       = 1'b1;
    ex_trap_cause = ex_cause_q;
    ex_trap_value = ex_value_q;
    if (ex_exc_q) begin
      ex_trap = 1'b1;
    end else if (target_misaligned) begin
      ex_trap_cause = EXC_INSN_MISALIGNED;
      ex_trap_value = target;
    end else if (mem_access && mem_misaligned) begin
      ex_trap_cause = dec.store ? EXC_STORE_MISALIGNED : EXC_LOAD_MISALIGNED;
      ex_trap_value = mem_addr;
    end else if (mem_access && ((!in_sram && !in_mmio) || mmio_fault)) begin
      ex_trap_cause = dec.store ? EXC_STORE_ACCESS : EXC_LOAD_ACCESS;
      ex_trap_value = mem_addr;
    end else if (mmio_misuse) begin
      ex_trap_cause = EXC_CONTEXT_MISUSE;
      ex_trap_value = mem_addr;
    end else begin
      ex_trap = 1'b0;
    end
  end

  assign commit  = advance && ex_valid_q && !ex_trap;
  // The instruction in EX halts the tile (trap or EXIT). The chip's error stop halts it in the
  // same way; the always_ff blocks add that (module header).
  assign ex_halt = advance && !halt_q && ex_valid_q && (ex_trap || mmio_exit);

  assign trap_now_o  = advance && ex_valid_q && ex_trap;
  assign halt_now_o  = halt_q || ex_halt;
  assign sync_o      = commit && mmio_sync;
  assign sync_desc_o = store_data;
  assign sync_pc_o   = ex_pc_q;

  // SRAM port B for loads and stores.
  assign dmem_req_o   = commit && mem_access && in_sram;
  assign dmem_we_o    = dec.store;
  assign dmem_addr_o  = mem_addr[Aw+1:2];
  assign dmem_wdata_o = store_data << {mem_addr[1:0], 3'b000};
  always_comb begin
    unique case (dec.mem_size)
      tess_core_pkg::MEM_B:   dmem_be_o = 4'b0001 << mem_addr[1:0];
      tess_core_pkg::MEM_H:   dmem_be_o = 4'b0011 << mem_addr[1:0];
      default: dmem_be_o = 4'b1111;
    endcase
  end

  assign console_valid_o = commit && mmio_console;
  assign console_byte_o  = store_data[7:0];

  // CSRs; FP flags and retirement come from WB.
  logic [7:0] hs_fcsr;
  logic [4:0] wb_flags;
  logic       wb_flags_we;

  tess_csr #(
    .Contexts (Contexts),
    .NumTiles (NumTiles),
    .MemBytes (MemBytes),
    .CounterBits (CounterBits)
  ) u_csr (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .tile_id_i     (tile_id_i),
    .id_ctx_i      (id_ctx_q),
    .id_frm_o      (id_frm),
    .commit_i      (commit),
    .ex_ctx_i      (ex_ctx_q),
    .csr_op_i      (dec.csr_op),
    .csr_write_i   (dec.csr_write),
    .csr_addr_i    (dec.csr_addr),
    .csr_wdata_i   (dec.csr_imm ? {27'b0, dec.rs1} : ex_rs1_q),
    .issue_cycle_i (cycle_q - CounterBits'(2)),
    .csr_rdata_o   (csr_rdata),
    .flags_we_i    (wb_flags_we),
    .wb_ctx_i      (wb_q.ctx),
    .flags_i       (wb_flags),
    .retire_i      (advance && wb_q.valid),
    .instret_o     (instret_o),
    .hs_ctx_i           (hs_ctx_i),
    .hs_fcsr_we_i       (hs_we && (hs_sel_i == tess_core_pkg::HS_FCSR)),
    .hs_instret_lo_we_i (hs_we && (hs_sel_i == tess_core_pkg::HS_INSTRET_LO)),
    .hs_instret_hi_we_i (hs_we && (hs_sel_i == tess_core_pkg::HS_INSTRET_HI)),
    .hs_wdata_i         (hs_wdata_i),
    .hs_fcsr_o          (hs_fcsr)
  );

  always_comb begin
    unique case (dec.res_sel)
      tess_core_pkg::RES_LINK: ex_result = link;
      tess_core_pkg::RES_MUL:  ex_result = mul_result;
      tess_core_pkg::RES_DIV:  ex_result = div_result;
      tess_core_pkg::RES_CSR:  ex_result = csr_rdata;
      tess_core_pkg::RES_LOAD: ex_result = mmio_rdata;
      default:  ex_result = alu_result;
    endcase
  end

  // x0 is never written and is reported as "no destination".
  assign ex_dest = ((dec.dest == tess_core_pkg::DEST_X) && (dec.rd == 5'd0)) ?
                   tess_core_pkg::DEST_NONE : dec.dest;

  always_comb begin
    m1_d              = '0;
    m1_d.valid        = commit && last_pass;
    m1_d.ctx          = ex_ctx_q;
    m1_d.pc           = ex_pc_q;
    m1_d.insn         = ex_insn_q;
    m1_d.dest         = ex_dest;
    m1_d.rd           = dec.rd;
    m1_d.res_sel      = dec.res_sel;
    m1_d.value        = ex_result;
    m1_d.load_sram    = dec.load && in_sram;
    m1_d.mem_size     = dec.mem_size;
    m1_d.mem_unsigned = dec.mem_unsigned;
    m1_d.byte_off     = mem_addr[1:0];
  end

  // ---------------------------------------------------------------------------------------------
  // FP units: inputs in EX, results 3 cycles later in WB
  // ---------------------------------------------------------------------------------------------
  logic [36:0] fpu_q_out, ds_q_out;

  if (HasFpu) begin : g_fpu
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
      .valid_i  (commit && (dec.res_sel == tess_core_pkg::RES_FPU)),
      .op_i     (dec.fpu_op),
      .rm_i     (dec.rm),
      .a_i      (dec.fpu_a_int ? ex_rs1_q : ex_fs1_q),
      .b_i      (ex_fs2_q),
      .c_i      (ex_fs3_q),
      .valid_o  (fpu_valid_out),
      .result_o (fpu_result),
      .fflags_o (fpu_flags)
    );

    tess_fpu_divsqrt #(
      .Contexts (Contexts)
    ) u_fpu_divsqrt (
      .clk_i      (clk_i),
      .rst_ni     (rst_ni),
      .pass_i     (commit && (dec.res_sel == tess_core_pkg::RES_FDIV)),
      .pass_idx_i (ex_pass_q),
      .ctx_i      (ex_ctx_q),
      .sqrt_i     (dec.fpu_op == tess_pkg::FPU_SQRT),
      .rm_i       (dec.rm),
      .a_i        (ex_fs1_q),
      .b_i        (ex_fs2_q),
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
      .pop_i  (advance && wb_q.valid && (wb_q.res_sel == tess_core_pkg::RES_FPU)),
      .data_o (fpu_q_out)
    );

    tess_result_queue #(
      .Width (37),
      .Depth (4)
    ) u_ds_queue (
      .clk_i  (clk_i),
      .rst_ni (rst_ni),
      .push_i (ds_valid_out),
      .data_i ({ds_flags, ds_result}),
      .pop_i  (advance && wb_q.valid && (wb_q.res_sel == tess_core_pkg::RES_FDIV)),
      .data_o (ds_q_out)
    );
  end else begin : g_no_fpu
    logic [31:0] unused_fp_ops;
    logic [8:0]  unused_fp_ctl;
    assign unused_fp_ops = ex_fs1_q ^ ex_fs2_q ^ ex_fs3_q;
    assign unused_fp_ctl = {dec.fpu_op, dec.rm, dec.fpu_a_int};
    assign fpu_q_out = '0;
    assign ds_q_out  = '0;
  end

  // ---------------------------------------------------------------------------------------------
  // M1: load data. The SRAM read data register is shared with the host port, so a load caught
  // in M1 when the pipeline pauses keeps its data in ld_hold_q.
  // ---------------------------------------------------------------------------------------------
  logic        adv_prev_q;
  logic [31:0] ld_hold_q, ld_hold_d;
  logic [31:0] ld_word;
  logic [31:0] ld_shifted;
  logic [31:0] ld_value;

  assign ld_word    = adv_prev_q ? dmem_rdata_i : ld_hold_q;
  assign ld_hold_d  = adv_prev_q ? dmem_rdata_i : ld_hold_q;
  assign ld_shifted = ld_word >> {m1_q.byte_off, 3'b000};

  always_comb begin
    unique case (m1_q.mem_size)
      tess_core_pkg::MEM_B:   ld_value = m1_q.mem_unsigned ? {24'b0, ld_shifted[7:0]}
                                            : {{24{ld_shifted[7]}}, ld_shifted[7:0]};
      tess_core_pkg::MEM_H:   ld_value = m1_q.mem_unsigned ? {16'b0, ld_shifted[15:0]}
                                            : {{16{ld_shifted[15]}}, ld_shifted[15:0]};
      default: ld_value = ld_shifted;
    endcase
  end

  always_comb begin
    m2_d = m1_q;
    if (m1_q.load_sram) begin
      m2_d.value = ld_value;
    end
    m2_d.load_sram = 1'b0;
  end

  assign wb_d = m2_q;

  // The memory fields of late_t are only used in M1.
  logic [5:0] unused_wb_mem;
  assign unused_wb_mem = {wb_q.load_sram, wb_q.mem_size, wb_q.mem_unsigned, wb_q.byte_off};

  // ---------------------------------------------------------------------------------------------
  // WB
  // ---------------------------------------------------------------------------------------------
  always_comb begin
    unique case (wb_q.res_sel)
      tess_core_pkg::RES_FPU:  wb_value = fpu_q_out[31:0];
      tess_core_pkg::RES_FDIV: wb_value = ds_q_out[31:0];
      default:  wb_value = wb_q.value;
    endcase
    unique case (wb_q.res_sel)
      tess_core_pkg::RES_FPU:  wb_flags = fpu_q_out[36:32];
      tess_core_pkg::RES_FDIV: wb_flags = ds_q_out[36:32];
      default:  wb_flags = '0;
    endcase
  end

  assign wb_flags_we = advance && wb_q.valid &&
                       ((wb_q.res_sel == tess_core_pkg::RES_FPU) ||
                        (wb_q.res_sel == tess_core_pkg::RES_FDIV));
  assign xrf_we      = advance && wb_q.valid && (wb_q.dest == tess_core_pkg::DEST_X);
  assign frf_we      = advance && wb_q.valid && (wb_q.dest == tess_core_pkg::DEST_F);
  assign run_we      = commit && mmio_run;

  assign retire_valid_o = advance && wb_q.valid;
  assign retire_cycle   = cycle_q - CounterBits'(tess_params_pkg::PIPE_WB_STAGE);
  assign retire_cycle_o = 64'(retire_cycle);
  assign retire_ctx_o   = wb_q.ctx;
  assign retire_pc_o    = wb_q.pc;
  assign retire_insn_o  = wb_q.insn;
  assign retire_dest_o  = wb_q.dest;
  assign retire_rd_o    = (wb_q.dest == tess_core_pkg::DEST_NONE) ? 5'd0 : wb_q.rd;
  assign retire_value_o = (wb_q.dest == tess_core_pkg::DEST_NONE) ? 32'd0 : wb_value;

  // ---------------------------------------------------------------------------------------------
  // Context state and control updates
  // ---------------------------------------------------------------------------------------------
  assign cycle64 = 64'(cycle_q);

  always_comb begin
    pc_d          = pc_q;
    running_d     = running_q;
    lop_d         = lop_q;
    wait_d        = wait_q;
    sync_d        = sync_q;
    slot_d        = slot_q;
    cycle_d       = cycle_q;
    exited_d      = exited_q;
    exit_code_d   = exit_code_q;
    trap_d        = trap_q;
    trap_ctx_d    = trap_ctx_q;
    trap_pc_d     = trap_pc_q;
    trap_cause_d  = trap_cause_q;
    trap_value_d  = trap_value_q;

    if (advance) begin
      slot_d  = (slot_q == 3'(Round - 1)) ? 3'd0 : slot_q + 3'd1;
      cycle_d = cycle_q + CounterBits'(1);
    end

    // The supervisor's WAIT ends in the first of its slots with every worker idle.
    if (issue && (slot_q == 3'd0)) begin
      wait_d = 1'b0;
    end
    if (advance && resume_i) begin
      sync_d = 1'b0;
    end

    if (commit) begin
      if (HasLongOps && dec.long_op) begin
        `TESS_CTX_SET(lop_d, 3, Contexts, ex_ctx_q, last_pass ? 3'd0 : ex_pass_q + 3'd1)
      end
      if (last_pass) begin
        `TESS_CTX_SET(pc_d, 32, Contexts, ex_ctx_q, jump ? target : link)
      end
      if (mmio_wait) begin
        wait_d = 1'b1;
      end
      if (mmio_sync) begin
        sync_d = 1'b1;
      end
      if (mmio_done) begin
        `TESS_CTX_SET(running_d, 1, Contexts, ex_ctx_q, 1'b0)
      end
      if (mmio_run) begin
        `TESS_CTX_SET(running_d, 1, Contexts, run_ctx, 1'b1)
        `TESS_CTX_SET(pc_d, 32, Contexts, run_ctx, store_data)
      end
    end

    // Checkpoint state written by the host while held (docs/checkpoint.md).
    if (hs_we) begin
      unique case (hs_sel_i)
        tess_core_pkg::HS_PC:       `TESS_CTX_SET(pc_d, 32, Contexts, hs_ctx_i, hs_wdata_i)
        tess_core_pkg::HS_CYCLE_LO: cycle_d = CounterBits'({cycle64[63:32], hs_wdata_i});
        tess_core_pkg::HS_CYCLE_HI: cycle_d = CounterBits'({hs_wdata_i, cycle64[31:0]});
        default: ;
      endcase
    end

    // What a halt records (a stop records nothing).
    if (ex_halt) begin
      if (ex_valid_q && mmio_exit && !ex_trap) begin
        exit_code_d = store_data;
        exited_d    = 1'b1;
      end else if (ex_valid_q && ex_trap) begin
        trap_d       = 1'b1;
        trap_ctx_d   = ex_ctx_q;
        trap_pc_d    = ex_pc_q;
        trap_cause_d = ex_trap_cause;
        trap_value_d = ex_trap_value;
      end
    end
  end

  // The halt and the idle count; a stop's values (idle_halt, halt_cycles_at) are taken in the
  // always_ff block.
  logic [CounterBits-1:0] halt_cycles_at;
`ifndef TESS_ICE40
  logic [CounterBits-1:0] idle_halt;
  // Slot h + 1 (in ID) was counted idle in its IF cycle but lies after the halt.
  assign idle_halt      = idle_q - CounterBits'(id_idle_q);
`endif
  // Cycle count h + 1 for a halt issued at h; this is its EX cycle h + 2.
  assign halt_cycles_at = cycle_q - CounterBits'(1);
`ifdef TESS_ICE40
  // iCE40: one adder for the idle count's +1 and its take-back at a halt or a stop (idle_halt),
  // whose operand reads no signal of EX (a halt and a stop are found late in the cycle): that
  // cycle counts its slot as if nothing halted (slot_free), and the next one, halted, takes back
  // what it and slot h + 1 counted (idle_back_q, 0..2). The stop is read here; FPGA only, see
  // the module header (the default keeps stop_i in the always_ff block and two adders).
  logic                   slot_free;
  logic [1:0]             idle_back_q, idle_back_d;
  logic [CounterBits-1:0] idle_step;
  assign slot_free   = advance && !halt_q && !issue;
  assign idle_back_d = ((advance && !halt_q && stop_i) || ex_halt) ?
                       2'(slot_free) + 2'(id_idle_q) : 2'd0;
  assign idle_step   = idle_q + {{(CounterBits - 1){|idle_back_q}},
                                 idle_back_q[0] || slot_free};
`endif
  always_comb begin
    halt_d        = halt_q;
    halt_cycles_d = halt_cycles_q;
`ifdef TESS_ICE40
    idle_d        = idle_step;
`else
    idle_d        = idle_q;
    if (slot_idle) begin
      idle_d = idle_q + CounterBits'(1);
    end
`endif
    if (hs_we && (hs_sel_i == tess_core_pkg::HS_IDLE_LO)) begin
      idle_d = CounterBits'({idle_o[63:32], hs_wdata_i});
    end
    if (hs_we && (hs_sel_i == tess_core_pkg::HS_IDLE_HI)) begin
      idle_d = CounterBits'({hs_wdata_i, idle_o[31:0]});
    end
    if (ex_halt) begin
      halt_d        = 1'b1;
      halt_cycles_d = halt_cycles_at;
`ifndef TESS_ICE40
      idle_d        = idle_halt;
`endif
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
    assign lop_ri = Cw'(id_ctx_q);
    assign unused_lop_ctx = ^{ex_ctx_q, id_ctx_q};
    always_ff @(posedge clk_i) begin
      if (commit && dec.long_op && (ex_pass_q == 3'd0)) begin
        lop_insn_q[lop_wi] <= ex_insn_q;
      end
    end
    assign lop_word = lop_insn_q[lop_ri];
  end else begin : g_no_lop_insn
    assign lop_word = '0;
  end

  // A halt squashes IF and ID (a stop too: in the always_ff block below).
  logic id_valid_in, ex_valid_in;
  assign id_valid_in = id_valid_d && !ex_halt;
  assign ex_valid_in = ex_valid_d && !ex_halt;

  // The chip's error stop (stop_i, see the module header) halts the core here: exceptions to
  // "always_ff holds only q <= d", so that no combinational logic reads stop_i (but TESS_ICE40's
  // idle take-back, above). hs_we never coincides with a stop (the host writes only while the
  // core is held).
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      pc_q          <= '0;
      running_q     <= Contexts'(1);
      lop_q         <= '0;
      wait_q        <= 1'b0;
      sync_q        <= 1'b0;
      slot_q        <= '0;
      cycle_q       <= '0;
      idle_q        <= '0;
`ifdef TESS_ICE40
      idle_back_q   <= '0;
`endif
      halt_q        <= 1'b0;
      exited_q      <= 1'b0;
      halt_cycles_q <= '0;
      exit_code_q   <= '0;
      trap_q        <= 1'b0;
      trap_ctx_q    <= '0;
      trap_pc_q     <= '0;
      trap_cause_q  <= '0;
      trap_value_q  <= '0;
    end else begin
      pc_q          <= pc_d;
      running_q     <= running_d;
      lop_q         <= lop_d;
      wait_q        <= wait_d;
      sync_q        <= sync_d;
      slot_q        <= slot_d;
      cycle_q       <= cycle_d;
`ifdef TESS_ICE40
      idle_q        <= idle_d;
      idle_back_q   <= idle_back_d;
`else
      idle_q        <= (advance && !halt_q && stop_i) ? idle_halt : idle_d;
`endif
      halt_q        <= halt_d || (advance && stop_i);
      exited_q      <= exited_d;
      halt_cycles_q <= (advance && !halt_q && stop_i) ? halt_cycles_at : halt_cycles_d;
      exit_code_q   <= exit_code_d;
      trap_q        <= trap_d;
      trap_ctx_q    <= trap_ctx_d;
      trap_pc_q     <= trap_pc_d;
      trap_cause_q  <= trap_cause_d;
      trap_value_q  <= trap_value_d;
    end
  end

  // Pipeline registers advance only while running.
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      id_valid_q <= 1'b0;
      id_ctx_q   <= '0;
      id_pc_q    <= '0;
      id_pass_q  <= '0;
      id_exc_q   <= 1'b0;
      id_cause_q <= '0;
      id_idle_q  <= 1'b0;
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
      m1_q       <= '0;
      m2_q       <= '0;
      wb_q       <= '0;
    end else if (advance) begin
      id_valid_q <= id_valid_in && !(!halt_q && stop_i);
      id_ctx_q   <= id_ctx_d;
      id_pc_q    <= id_pc_d;
      id_pass_q  <= id_pass_d;
      id_exc_q   <= id_exc_d;
      id_cause_q <= id_cause_d;
      id_idle_q  <= id_idle_d && !(!halt_q && stop_i);
      ex_valid_q <= ex_valid_in && !(!halt_q && stop_i);
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
      m1_q       <= m1_d;
      m2_q       <= m2_d;
      wb_q       <= wb_d;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      adv_prev_q <= 1'b0;
      ld_hold_q  <= '0;
    end else begin
      adv_prev_q <= advance;
      ld_hold_q  <= ld_hold_d;
    end
  end

  // Status: halted once the instructions older than the halt have drained.
  assign halting_o    = halt_q;
  assign halted_o     = halt_q && !m1_q.valid && !m2_q.valid && !wb_q.valid;
  assign exited_o     = exited_q;
  assign exit_code_o  = exit_code_q;
  assign trap_o       = trap_q;
  assign trap_ctx_o   = trap_ctx_q;
  assign trap_pc_o    = trap_pc_q;
  assign trap_cause_o = trap_cause_q;
  assign trap_value_o = trap_value_q;
  assign cycle_o      = halt_q ? 64'(halt_cycles_q) : cycle64;
  assign idle_o       = 64'(idle_q);

  // Checkpoint state reads (the host's context and register through read port a while held).
  always_comb begin
    unique case (hs_sel_i)
      tess_core_pkg::HS_REG:        hs_rdata_o = hs_reg_i[5] ? id_fs1 : id_rs1;
      tess_core_pkg::HS_PC:         hs_rdata_o = pc_q[32*hs_ctx_i +: 32];
      tess_core_pkg::HS_FCSR:       hs_rdata_o = {24'd0, hs_fcsr};
      tess_core_pkg::HS_INSTRET_LO: hs_rdata_o = instret_o[64*hs_ctx_i +: 32];
      tess_core_pkg::HS_INSTRET_HI: hs_rdata_o = instret_o[64*hs_ctx_i+32 +: 32];
      tess_core_pkg::HS_CSTATE:     hs_rdata_o = {28'd0,
                                                  HasLongOps && (lop_q[3*hs_ctx_i +: 3] != 3'd0),
                                                  (hs_ctx_i == 3'd0) && sync_q,
                                                  (hs_ctx_i == 3'd0) && wait_q,
                                                  running_pad[hs_ctx_i]};
      tess_core_pkg::HS_RUN_ARG:    hs_rdata_o = run_arg;
      tess_core_pkg::HS_XCHG:       hs_rdata_o = xchg_prog_o;
      default:                      hs_rdata_o = '0;
    endcase
  end

endmodule
