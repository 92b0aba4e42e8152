// One tessera tile: SRAM (MemBytes, dual-port, synchronous read), the barrel-threaded core and
// its MMIO page, the exchange engine (rtl/chip/tess_exchange.sv), the tile's counters, and a host
// memory port (docs/tile.md, docs/chip.md).
//
// SRAM ports: A = core fetch or exchange-engine read (the core is quiet while its engine runs);
// B = core load/store, exchange receive write, or the host while the tile does not advance.
// A port-A read of the word an engine receive writes in the same cycle returns the new word
// (receives are "written at the end of" an earlier cycle, docs/chip.md); core stores keep the
// old-data rule of docs/tile.md ("instruction fetch").
//
// Ports:
//   run_i        0 = held (the host may use the memory port), 1 = run (the chip's cycle). The
//                first cycle with run_i = 1 after reset is cycle 0; run_i = 0 pauses everything.
//                Must be 0 while enable_i is 0. The chip drives it, release_i and drop_i from
//                registers of the tile's own clock, so that nothing behind them depends on
//                chip-wide signals; stop_i, which it cannot register, is read only inside
//                always_ff blocks (here, tess_core, tess_exchange): a simulator evaluates
//                combinational logic that reads it on every clock of every tile
//                (docs/benchmarks.md, "RTL, fifth step"). FPGA-only exception: with TESS_ICE40
//                the idle and sync-wait take-backs read it in their steps.
//   enable_i     0 = the tile is disabled (T_ENABLE): its core never runs.
//   stop_i       chip error stop in this cycle (see tess_core), drop_i in the cycles after it
//                (tess_exchange); release_i: the sync releases.
//   sync_*       arrive_o pulses when a SYNC commits (the tile arrives next cycle); desc/pc held.
//   tx_o/rx_*    the tile's bus and receive mux, one cycle ahead (tess_exchange).
//   err_*        the tile's error (core trap, else exchange error), valid after it is raised.
//   host_*       memory access while run_i = 0: one word per cycle, byte enables on writes,
//                read data on host_rdata_o one cycle after the request. Ignored while running.
//   halting_o    an EXIT or trap has stopped issue (cycle_o is final); older instructions drain.
//   halted_o     the tile halted (EXIT or trap) and every older instruction has retired;
//                exit_code_o / trap_* say why. cycle_o is then the tile's cycle count h + 1.
//   console_*    one byte per CONSOLE store, in its EX cycle.
//   cycle_o, instret_o (per context), idle_o: counters since reset (TileStats).
//   retire_*     retirement trace: one record per retiring instruction in its WB cycle;
//                retire_cycle_o = WB cycle - 5, retire_dest_o 0 none / 1 x / 2 f.
//   hs_*         checkpoint state (docs/checkpoint.md) while run_i = 0: tess_core_pkg::hs_sel_e
//                selects the register; writes at the clock edge, reads combinational. Writing a
//                context's instret moves the tile's instruction counter by the same amount.
// Parameters HasExchange = 0 (no exchange engine: tess_exchange_absent, no port-A bypass; tx_o
// is 0) and HasCheckpoint = 0 (no hs_* writes: the chip refuses them) leave logic out; the
// exchange counter then needs 2 bits (it counts at most R and R+1 of the one release that ends
// in an error, docs/chip.md), zero-extended on exch_o. CounterBits (64 or 32, rtl/params.json
// COUNTER_BITS) is the width of the tile's counters here and in tess_core: at 32 they wrap modulo
// 2^32, and the 64-bit ports carry them zero-extended (host writes of a high word are ignored).
// Latency: host read data 1 cycle; tile pipeline timing per tess_core.
module tess_tile #(
  parameter int MemBytes = tess_params_pkg::TILE_MEM_BYTES,
  parameter int NumTiles = tess_params_pkg::NUM_TILES,
  parameter bit HasFpu   = tess_params_pkg::HAS_FPU != 0,  // 0: integer-only core (tess_core)
  parameter bit HasMulDiv = tess_params_pkg::HAS_MULDIV != 0,  // 0: no M extension (tess_core)
  parameter int CounterBits = tess_params_pkg::COUNTER_BITS,  // 64 or 32 (tess_core)
  parameter bit HasExchange   = tess_params_pkg::HAS_EXCHANGE != 0,
  parameter bit HasCheckpoint = tess_params_pkg::HAS_CHECKPOINT != 0,
  parameter int Contexts = tess_params_pkg::NUM_CONTEXTS,  // 2..6 (tess_core)
  parameter bit MatrixUnit = tess_params_pkg::MATRIX_UNIT != 0,  // tess_amp, a 128-bit port B
  localparam int Aw       = $clog2(MemBytes / 4),
  localparam int Bw       = (NumTiles > 1) ? $clog2(NumTiles) : 1
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      run_i,
  input  logic [15:0]               tile_id_i,    // the tile's index (CSR 0xCC0)
  input  logic                      rf_clear_i,   // register-file clear (tess_core, TESS_ICE40)
  input  logic [7:0]                rf_clear_idx_i,
  input  logic                      enable_i,
  input  logic                      stop_i,
  input  logic                      drop_i,
  input  logic                      release_i,
  // sync and exchange
  output logic                      arrive_o,
  output logic                      arrived_o,
  output logic [31:0]               sync_desc_o,
  output logic [31:0]               sync_pc_o,
  output logic                      halt_now_o,
  output logic                      trap_now_o,
  output logic                      xerr_o,
  output logic [2:0]                err_ctx_o,
  output logic [31:0]               err_pc_o,
  output logic [4:0]                err_cause_o,
  output logic [31:0]               err_value_o,
  output logic [31:0]               tx_o,
  output logic [Bw-1:0]             rx_sel_o,
  input  logic [31:0]               rx_data_i,
  // host memory port
  input  logic                      host_req_i,
  input  logic                      host_we_i,
  input  logic [3:0]                host_be_i,
  input  logic [Aw-1:0]             host_addr_i,
  input  logic [31:0]               host_wdata_i,
  output logic [31:0]               host_rdata_o,
  // status
  output logic                      halting_o,
  output logic                      halted_o,
  output logic                      exited_o,     // halted by EXIT (T_STATE bit 0 with !enable)
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
  output logic [63:0]               instr_o,      // all contexts
  output logic [63:0]               sync_wait_o,
  output logic [63:0]               exch_o,
  // retirement trace
  output logic                      retire_valid_o,
  output logic [63:0]               retire_cycle_o,
  output logic [2:0]                retire_ctx_o,
  output logic [31:0]               retire_pc_o,
  output logic [31:0]               retire_insn_o,
  output logic [1:0]                retire_dest_o,
  output logic [4:0]                retire_rd_o,
  output logic [31:0]               retire_value_o,
  // checkpoint state while held (tess_core; sync-wait and exchange counters here)
  input  logic                      hs_we_i,
  input  logic [3:0]                hs_sel_i,
  input  logic [2:0]                hs_ctx_i,
  input  logic [7:0]                hs_reg_i,
  input  logic [31:0]               hs_wdata_i,
  output logic [31:0]               hs_rdata_o
);

  logic          imem_req;
  logic [Aw-1:0] imem_addr;
  logic [31:0]   imem_rdata;
  logic          dmem_req;
  logic          dmem_we;
  logic [3:0]    dmem_be;
  logic [Aw-1:0] dmem_addr;
  logic [31:0]   dmem_wdata;
  logic [31:0]   b_rdata;
  logic          dmem_wide;        // the matrix unit's 16-byte accesses (MatrixUnit)
  logic [127:0]  dmem_wide_wdata;
  logic [127:0]  b_wide_rdata;
  logic          b_req;
  logic          b_we;
  logic [3:0]    b_be;
  logic [Aw-1:0] b_addr;
  logic [31:0]   b_wdata;

  logic        core_run;
  logic        resume;
  logic        sync_arrive;
  logic [31:0] sync_desc;
  logic [31:0] sync_pc;
  logic [31:0] xchg_prog;
  logic        trap_q;
  logic [2:0]  trap_ctx;
  logic [31:0] trap_pc;
  logic [4:0]  trap_cause;
  logic [31:0] trap_value;
  logic        core_halting;
  logic        core_halt_now;
  logic        x_rd_req;
  logic [Aw-1:0] x_rd_addr;
  logic        x_wr_req;
  logic [Aw-1:0] x_wr_addr;
  logic [31:0] x_wr_data;
  logic        x_busy;
  logic        x_finish;
  logic        x_err;
  logic [4:0]  x_err_cause;
  logic [31:0] x_err_pc;
  logic [31:0] x_err_value;
  logic [31:0] a_rdata;

  // A disabled tile never advances (run_i is 0): it is halted from cycle 0 (the chip counts it as
  // halted).
  assign core_run = run_i;
  assign resume   = (release_i && (xchg_prog == 32'd0)) || (core_run && x_finish);

  tess_core #(
    .MemBytes (MemBytes),
    .NumTiles (NumTiles),
    .HasFpu   (HasFpu),
    .HasMulDiv (HasMulDiv),
    .Contexts (Contexts),
    .CounterBits (CounterBits),
    .MatrixUnit (MatrixUnit)
  ) u_core (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .run_i           (core_run),
    .tile_id_i       (tile_id_i),
    .rf_clear_i      (rf_clear_i),
    .rf_clear_idx_i  (rf_clear_idx_i),
    .stop_i          (stop_i),   // acts only with run_i, 0 while disabled
    .resume_i        (resume),
    .xchg_clear_i    (release_i),
    .sync_o          (sync_arrive),
    .sync_desc_o     (sync_desc),
    .sync_pc_o       (sync_pc),
    .xchg_prog_o     (xchg_prog),
    .halt_now_o      (core_halt_now),
    .trap_now_o      (trap_now_o),
    .imem_req_o      (imem_req),
    .imem_addr_o     (imem_addr),
    .imem_rdata_i    (a_rdata),
    .dmem_req_o      (dmem_req),
    .dmem_we_o       (dmem_we),
    .dmem_be_o       (dmem_be),
    .dmem_addr_o     (dmem_addr),
    .dmem_wdata_o    (dmem_wdata),
    .dmem_rdata_i    (b_rdata),
    .dmem_wide_o       (dmem_wide),
    .dmem_wide_wdata_o (dmem_wide_wdata),
    .dmem_wide_rdata_i (b_wide_rdata),
    .halting_o       (core_halting),
    .halted_o        (halted_o),
    .exited_o        (exited_o),
    .exit_code_o     (exit_code_o),
    .trap_o          (trap_q),
    .trap_ctx_o      (trap_ctx),
    .trap_pc_o       (trap_pc),
    .trap_cause_o    (trap_cause),
    .trap_value_o    (trap_value),
    .console_valid_o (console_valid_o),
    .console_byte_o  (console_byte_o),
    .cycle_o         (cycle_o),
    .instret_o       (instret_o),
    .idle_o          (idle_o),
    .retire_valid_o  (retire_valid_o),
    .retire_cycle_o  (retire_cycle_o),
    .retire_ctx_o    (retire_ctx_o),
    .retire_pc_o     (retire_pc_o),
    .retire_insn_o   (retire_insn_o),
    .retire_dest_o   (retire_dest_o),
    .retire_rd_o     (retire_rd_o),
    .retire_value_o  (retire_value_o),
    .hs_we_i         (hs_we_i && !core_run),
    .hs_sel_i        (hs_sel_i),
    .hs_ctx_i        (hs_ctx_i),
    .hs_reg_i        (hs_reg_i),
    .hs_wdata_i      (hs_wdata_i),
    .hs_rdata_o      (hs_rdata_o)
  );

  assign trap_o       = trap_q;
  assign trap_ctx_o   = trap_ctx;
  assign trap_pc_o    = trap_pc;
  assign trap_cause_o = trap_cause;
  assign trap_value_o = trap_value;
  assign halting_o    = core_halting;
  assign halt_now_o   = !enable_i || core_halt_now;

  if (HasExchange) begin : g_exchange
    tess_exchange #(
      .MemBytes (MemBytes),
      .NumTiles (NumTiles)
    ) u_exchange (
      .clk_i       (clk_i),
      .rst_ni      (rst_ni),
      .advance_i   (core_run),
      .stop_i      (stop_i),
      .drop_i      (drop_i),
      .start_i     (release_i),
      .prog_i      (xchg_prog),
      .rd_req_o    (x_rd_req),
      .rd_addr_o   (x_rd_addr),
      .rd_data_i   (a_rdata),
      .wr_req_o    (x_wr_req),
      .wr_addr_o   (x_wr_addr),
      .wr_data_o   (x_wr_data),
      .tx_o        (tx_o),
      .rx_sel_o    (rx_sel_o),
      .rx_data_i   (rx_data_i),
      .busy_o      (x_busy),
      .finish_o    (x_finish),
      .err_o       (x_err),
      .err_cause_o (x_err_cause),
      .err_pc_o    (x_err_pc),
      .err_value_o (x_err_value)
    );
  end else begin : g_no_exchange
    // No engine: the memory ports and the bus stay the core's and 0 (docs/chip.md).
    logic unused_exchange;
    assign unused_exchange = ^{drop_i, rx_data_i};
    assign x_rd_req  = 1'b0;
    assign x_rd_addr = '0;
    assign x_wr_req  = 1'b0;
    assign x_wr_addr = '0;
    assign x_wr_data = '0;
    assign tx_o      = '0;
    assign rx_sel_o  = '0;
    assign x_finish  = 1'b0;
    tess_exchange_absent u_exchange (
      .clk_i       (clk_i),
      .rst_ni      (rst_ni),
      .advance_i   (core_run),
      .stop_i      (stop_i),
      .start_i     (release_i),
      .prog_i      (xchg_prog),
      .busy_o      (x_busy),
      .err_o       (x_err),
      .err_cause_o (x_err_cause),
      .err_pc_o    (x_err_pc),
      .err_value_o (x_err_value)
    );
  end

  assign xerr_o      = x_err;
  assign err_ctx_o   = trap_q ? trap_ctx : 3'(tess_params_pkg::EXCHANGE_CONTEXT);
  assign err_pc_o    = trap_q ? trap_pc : x_err_pc;
  assign err_cause_o = trap_q ? trap_cause : x_err_cause;
  assign err_value_o = trap_q ? trap_value : x_err_value;

  // Sync state and counters (docs/chip.md, "Sync timing"; T_ registers).
  localparam int ExchW = (HasExchange || HasCheckpoint) ? CounterBits : 2;
  logic        arrived_q, arrived_d;
  logic [31:0] desc_q, desc_d;
  logic [31:0] spc_q, spc_d;
  logic [CounterBits-1:0] instr_q, instr_d;
  logic [CounterBits-1:0] swait_q, swait_d;
  logic [ExchW-1:0] exch_q, exch_d;
  logic [63:0] exch64, swait64;
  logic        swait_go, exch_go;        // the counters count this cycle unless it stops
  logic        swait_inc_q, exch_inc_q;  // ... counted in the last cycle the chip advanced
  logic        hs_we;
  logic [63:0] hs_instret_old;
  logic [CounterBits-1:0] hs_instret_new;

  assign hs_we          = HasCheckpoint && hs_we_i && !core_run;
  assign exch64         = 64'(exch_q);
  assign swait64        = 64'(swait_q);
  assign hs_instret_old = instret_o[64*hs_ctx_i +: 64];
  assign hs_instret_new = CounterBits'((hs_sel_i == tess_core_pkg::HS_INSTRET_HI) ?
                          {hs_wdata_i, hs_instret_old[31:0]} : {hs_instret_old[63:32], hs_wdata_i});

  always_comb begin
    arrived_d = arrived_q;
    desc_d    = desc_q;
    spc_d     = spc_q;
    instr_d   = instr_q;
    if (sync_arrive) begin
      arrived_d = 1'b1;
      // Only bit 31 (host sync) and the id (15..0) are kept (docs/chip.md; the model too).
      desc_d    = sync_desc & (tess_params_pkg::SYNC_HOST_BIT | 32'h0000_ffff);
      spc_d     = sync_pc;
    end
    if (release_i) begin
      arrived_d = 1'b0;
    end
    if (retire_valid_o) begin
      instr_d = instr_q + CounterBits'(1);
    end
    if (hs_we && ((hs_sel_i == tess_core_pkg::HS_INSTRET_LO) ||
                  (hs_sel_i == tess_core_pkg::HS_INSTRET_HI))) begin
      instr_d = instr_q - CounterBits'(hs_instret_old) + hs_instret_new;
    end
  end

  // The sync-wait and exchange counters count cycles a_t .. R-1 and R .. X-1, up to and
  // including the cycle e of a chip error: the error is found at e+2 (stop_i), so that cycle is
  // not counted and e+1's count is taken back (swait_back, exch_back), in the always_ff block.
  // Nothing counts in the cycles after it (drop_i; the chip stops in every one of them).
  logic [ExchW-1:0] exch_back;
`ifndef TESS_ICE40
  logic [CounterBits-1:0] swait_back;
  assign swait_back = swait_q - CounterBits'(swait_inc_q);
`endif
  assign exch_back  = exch_q - ExchW'(exch_inc_q);
`ifdef TESS_ICE40
  // iCE40: one adder for the sync-wait count's +1 and its take-back at a stop, whose operand
  // reads no signal of the stop's cycle (the stop is found late in it): that cycle counts as any
  // other, and the next one (drop_i: nothing counts) takes back what it and e+1 counted
  // (swait_back_q, 0..2). The stop is read here; FPGA only, see the module header.
  logic [1:0]             swait_back_q, swait_back_d;
  logic [CounterBits-1:0] swait_step;
  assign swait_back_d = (stop_i && enable_i && !drop_i) ? 2'(swait_inc_q) + 2'(swait_go) : 2'd0;
  assign swait_step   = swait_q + {{(CounterBits - 1){|swait_back_q}},
                                   swait_back_q[0] || (swait_go && !drop_i)};
`endif
  always_comb begin
    exch_d  = exch_q;
`ifdef TESS_ICE40
    swait_d = swait_step;
`else
    swait_d = swait_q;
    if (swait_go && !drop_i) begin
      swait_d = swait_q + CounterBits'(1);
    end
`endif
    if (exch_go && !drop_i) begin
      exch_d = exch_q + ExchW'(1);
    end
    // Checkpoint state written by the host while held (nothing counts then).
    if (hs_we) begin
      unique case (hs_sel_i)
        tess_core_pkg::HS_SWAIT_LO: swait_d = CounterBits'({swait64[63:32], hs_wdata_i});
        tess_core_pkg::HS_SWAIT_HI: swait_d = CounterBits'({hs_wdata_i, swait64[31:0]});
        tess_core_pkg::HS_EXCH_LO:  exch_d = ExchW'({exch64[63:32], hs_wdata_i});
        tess_core_pkg::HS_EXCH_HI:  exch_d = ExchW'({hs_wdata_i, exch64[31:0]});
        default: ;
      endcase
    end
  end

  assign swait_go  = core_run && arrived_q && !release_i;
  assign exch_go   = core_run && x_busy;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      arrived_q <= 1'b0;
      desc_q    <= '0;
      spc_q     <= '0;
      instr_q   <= '0;
      swait_q   <= '0;
`ifdef TESS_ICE40
      swait_back_q <= '0;
`endif
      exch_q    <= '0;
      swait_inc_q <= 1'b0;
      exch_inc_q  <= 1'b0;
    end else begin
      arrived_q <= arrived_d;
      desc_q    <= desc_d;
      spc_q     <= spc_d;
      instr_q   <= instr_d;
      // The chip's error stop, read only here (module header; hs_we never coincides with it).
`ifdef TESS_ICE40
      swait_q      <= swait_d;
      swait_back_q <= swait_back_d;
`else
      swait_q   <= (stop_i && enable_i && !drop_i) ? swait_back : swait_d;
`endif
      exch_q    <= (stop_i && enable_i && !drop_i) ? exch_back : exch_d;
      if (core_run) begin
        swait_inc_q <= swait_go && !stop_i;
        exch_inc_q  <= exch_go && !stop_i;
      end
    end
  end

  assign arrive_o    = sync_arrive;
  assign arrived_o   = arrived_q;
  assign sync_desc_o = desc_q;
  assign sync_pc_o   = spc_q;
  assign instr_o     = 64'(instr_q);
  assign sync_wait_o = swait64;
  assign exch_o      = exch64;

  // Port A: the exchange engine's reads, else instruction fetch. A read of the word the engine
  // writes on port B in the same cycle takes the new word (bypass register).
  logic          a_req;
  logic [Aw-1:0] a_addr;
  logic          byp_q, byp_d;
  logic [31:0]   byp_data_q, byp_data_d;

  assign a_req  = x_rd_req || imem_req;
  assign a_addr = x_rd_req ? x_rd_addr : imem_addr;
  assign a_rdata = (HasExchange && byp_q) ? byp_data_q : imem_rdata;

  always_comb begin
    byp_d      = byp_q;
    byp_data_d = byp_data_q;
    if (a_req) begin
      byp_d      = x_wr_req && (x_wr_addr == a_addr);
      byp_data_d = x_wr_data;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      byp_q      <= 1'b0;
      byp_data_q <= '0;
    end else begin
      byp_q      <= byp_d;
      byp_data_q <= byp_data_d;
    end
  end

  // Port B belongs to the core (or a receive of the engine) while running and to the host while
  // held. The request is decided on its own: the host's is refused by the chip while it advances
  // (host_ok), which a simulator evaluates on every chip clock.
  assign b_req = x_wr_req || (core_run ? dmem_req : host_req_i);

  always_comb begin
    if (x_wr_req) begin
      b_we    = 1'b1;
      b_be    = 4'b1111;
      b_addr  = x_wr_addr;
      b_wdata = x_wr_data;
    end else if (core_run) begin
      b_we    = dmem_we;
      b_be    = dmem_be;
      b_addr  = dmem_addr;
      b_wdata = dmem_wdata;
    end else begin
      b_we    = host_we_i;
      b_be    = host_be_i;
      b_addr  = host_addr_i;
      b_wdata = host_wdata_i;
    end
  end

  assign host_rdata_o = b_rdata;

  // With the matrix unit port B is 128 bits wide for its accesses (four banks, tess_sram Wide).
  tess_sram #(
    .Words (MemBytes / 4),
    .Wide  (MatrixUnit)
  ) u_sram (
    .clk_i     (clk_i),
    .a_req_i   (a_req),
    .a_addr_i  (a_addr),
    .a_rdata_o (imem_rdata),
    .b_req_i   (b_req),
    .b_we_i    (b_we),
    .b_be_i    (b_be),
    .b_addr_i  (b_addr),
    .b_wdata_i (b_wdata),
    .b_rdata_o (b_rdata),
    .b_wide_i       (!x_wr_req && core_run && dmem_wide),
    .b_wide_wdata_i (dmem_wide_wdata),
    .b_wide_rdata_o (b_wide_rdata)
  );

endmodule
