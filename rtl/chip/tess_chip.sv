// The tessera chip (docs/chip.md): NumTiles tiles sharing one cycle, the sync controller, the
// exchange fabric, the host port and the control/status registers.
//
// Fabric: every tile drives its bus (tess_exchange tx_o: the value sent in the previous cycle, 0
// when nothing was sent); a pipeline of EXCHANGE_LATENCY+1 registers per bus delivers to every
// tile the value that tile's engine writes in a cycle (a receive at r is written at r+2 and takes
// the bus of r - EXCHANGE_LATENCY). Any number of tiles may select one bus. Each tile's receive
// mux reads the pipeline one stage early, for the bus the tile selects for the next cycle, and the
// tile registers the word (tess_exchange rx_*): no tile logic reads the chip's registers.
//
// Errors: a trap in some tile's EX (issue cycle e, seen at e+2), an exchange error (raised at
// e+2) or a sync error (raised at e+2) stop every tile in that same cycle (tess_core stop_i):
// what other tiles do at e still happens, nothing later; the chip's cycle count is e+1; the
// lowest-numbered failing tile is reported. Disabled tiles take no part in syncs. When every tile has
// halted the count is max(h)+1. In both cases the chip drains the tiles' pipelines (no cycles
// counted) and then enters the final state.
//
// Clocks: each tile's clock is gated off while the chip advances and the tile is disabled (its
// state holds then, apart from FPU stage registers that only carry invalid data; simulators skip
// the tile). The control registers (T_ENABLE, SYNC_BREAK, TILE_SEL, CTX_SEL, REG_SEL) are clocked
// only in cycles with a control write or reset. Gating adds no latency.
//
// Simulation speed (docs/benchmarks.md, "RTL, fourth step"): Verilator schedules combinational
// logic by the clocks of the registers it reads, so a disabled tile costs nothing only while its
// logic reads no register of the chip's clock. Each tile therefore takes the chip's per-cycle
// signals as registered copies in its own clock domain, loaded with the next cycle's value: run
// (advance), release, the draining flag and "at a sync"; the control registers it reads change
// only on their own gated clock. The one chip signal a tile still reads combinationally is the
// error stop (stop_i), which no register can carry without a cycle's delay.
//
// Ports for the simulation host:
//   run_i         1 = the chip may advance (RUNNING state) in the next cycle; 0 pauses it (e.g.
//                 a cycle limit). Registered: the value at a rising edge decides whether the
//                 cycle that edge begins advances, so the host raises or drops it one cycle ahead
//                 (docs/chip.md, "Run input"). The register keeps the chip's logic independent
//                 of the port, which simulators then evaluate once per clock, not on every input
//                 change.
//   host_*        tile memory: byte address, byte enables, one word per cycle; read data and
//                 host_err_o (tile or address out of range, or the chip is advancing) one cycle
//                 after the request. Nothing is accessed on an error.
//   ctl_*         control/status registers (offsets CR_* of rtl/params.json): reads are
//                 combinational, writes take effect at the clock edge. ctl_err_o (combinational,
//                 for the access on the ports now) flags what docs/chip.md refuses: a read of an
//                 unknown or write-only offset, a write of an unknown or read-only offset,
//                 TILE_SEL >= NumTiles, T_ENABLE outside the reset state, CTX_SEL >= 6,
//                 REG_SEL >= 64 (>= REG_SEL_AMP_END with the matrix unit), a checkpoint state write (CYCLE, C_*, T_RUN_ARG, T_XCHG_PROG,
//                 T_IDLE/SYNCWAIT/EXCH) unless the chip stands at a sync (and, for a tile's
//                 state, the selected tile is enabled). A refused write changes nothing.
//   state_o, stopping_o, cycle_o: STATUS state, draining after a halt or error, CYCLE.
//   console_*, retire_*, tile_cycle_o, instret_o: per tile, tile t at [W*t +: W].
//
// Reduced configurations (rtl/params.json; the model implements the same, docs/chip.md):
//   HasExchange = 0    no exchange engines and no fabric (tess_exchange_absent per tile): a
//                      release with XCHG_PROG != 0 is an exchange error (CAUSE_XCHG_ABSENT).
//   HasCheckpoint = 0  the checkpoint registers REG_SEL .. T_XCHG_PROG are refused (read and
//                      write), and so are the state writes of CYCLE, T_IDLE, T_SYNCWAIT, T_EXCH;
//                      no checkpoint path reaches the tiles. CTX_SEL and reading C_INSTRET
//                      stay (from instret_o): the UART bridge's STATS reads counts with them.
//   CounterBits = 32   the tiles' counters (T_INSTR, T_IDLE, T_SYNCWAIT, T_EXCH, C_INSTRET, the
//                      cycle and instret CSRs, tile_cycle_o, retire_cycle_o) wrap modulo 2^32;
//                      their _HI words read 0 and writes to them are ignored. The chip's own
//                      cycle counter (CYCLE, cycle_o) stays 64 bits: the host's run limits and
//                      RunResult count it.
module tess_chip #(
  parameter int NumTiles = tess_params_pkg::NUM_TILES,
  parameter int MemBytes = tess_params_pkg::TILE_MEM_BYTES,
  parameter bit HasFpu   = tess_params_pkg::HAS_FPU != 0,  // 0: integer-only tiles (tess_core)
  parameter bit HasMulDiv = tess_params_pkg::HAS_MULDIV != 0,  // 0: tiles without M (tess_core)
  parameter int CounterBits = tess_params_pkg::COUNTER_BITS,  // tile counters: 64 or 32 (tess_tile)
  parameter bit HasExchange   = tess_params_pkg::HAS_EXCHANGE != 0,
  parameter bit HasCheckpoint = tess_params_pkg::HAS_CHECKPOINT != 0,
  parameter int Contexts = tess_params_pkg::NUM_CONTEXTS,  // 2..6 per tile (tess_core)
  parameter bit MatrixUnit = tess_params_pkg::MATRIX_UNIT != 0,  // the tiles' matrix unit (tess_amp)
  localparam int Tw = (NumTiles > 1) ? $clog2(NumTiles) : 1,
  localparam int Aw = $clog2(MemBytes / 4)
) (
  input  logic                          clk_i,
  input  logic                          rst_ni,
  input  logic                          run_i,
  // host memory port
  input  logic                          host_req_i,
  input  logic                          host_we_i,
  input  logic [15:0]                   host_tile_i,
  input  logic [31:0]                   host_addr_i,
  input  logic [3:0]                    host_be_i,
  input  logic [31:0]                   host_wdata_i,
  output logic [31:0]                   host_rdata_o,
  output logic                          host_err_o,
  // control and status registers
  input  logic                          ctl_we_i,
  input  logic [11:0]                   ctl_addr_i,
  input  logic [31:0]                   ctl_wdata_i,
  output logic [31:0]                   ctl_rdata_o,
  output logic                          ctl_err_o,
  // status
  output logic [3:0]                    state_o,
  output logic                          stopping_o,
  output logic [63:0]                   cycle_o,
  // per tile
  output logic [NumTiles-1:0]           console_valid_o,
  output logic [NumTiles*8-1:0]         console_byte_o,
  output logic [NumTiles-1:0]           retire_valid_o,
  output logic [NumTiles*64-1:0]        retire_cycle_o,
  output logic [NumTiles*3-1:0]         retire_ctx_o,
  output logic [NumTiles*32-1:0]        retire_pc_o,
  output logic [NumTiles*32-1:0]        retire_insn_o,
  output logic [NumTiles*2-1:0]         retire_dest_o,
  output logic [NumTiles*5-1:0]         retire_rd_o,
  output logic [NumTiles*32-1:0]        retire_value_o,
  output logic [NumTiles*64-1:0]        tile_cycle_o,
  output logic [NumTiles*Contexts*64-1:0] instret_o
);

  localparam int Latency = tess_params_pkg::EXCHANGE_LATENCY;
  localparam logic [31:0] MemLimit = 32'(MemBytes);
  // REG_SEL's first refused value: the matrix unit's state follows the 64 registers
  // (REG_SEL_AMP_*, docs/checkpoint.md).
  localparam logic [31:0] RegSelEnd = MatrixUnit ? 32'(tess_params_pkg::REG_SEL_AMP_END) : 32'd64;

  typedef enum logic [3:0] {
    StReset   = 4'(tess_params_pkg::ST_RESET),
    StRunning = 4'(tess_params_pkg::ST_RUNNING),
    StSync    = 4'(tess_params_pkg::ST_HOST_SYNC),
    StHalted  = 4'(tess_params_pkg::ST_HALTED),
    StError   = 4'(tess_params_pkg::ST_ERROR)
  } state_e;

  // CTRL.RESET resets everything but the memories (and this register) one cycle later.
  logic soft_rst_q;
  logic rst_n;
  assign rst_n = rst_ni && !soft_rst_q;

  state_e              state_q, state_d;
  logic                stopping_q, stopping_d;
  state_e              final_q, final_d;
  logic [63:0]         cycle_q, cycle_d;
  logic [Tw-1:0]       err_tile_q, err_tile_d;
  logic                err_sync_q, err_sync_d;      // the error is a sync error (else the tile's)
  logic [4:0]          serr_cause_q, serr_cause_d;
  logic [31:0]         serr_value_q, serr_value_d;
  logic                sync_break_q;
  logic [Tw-1:0]       tile_sel_q;     // writes >= NumTiles are refused: Tw bits hold it
  logic [NumTiles-1:0] enable_q, enable_d;
  logic                sync_break_d;
  logic [Tw-1:0]       tile_sel_d;
  logic [2:0]          ctx_sel_q, ctx_sel_d;
  logic [7:0]          reg_sel_q, reg_sel_d;

  // Per-tile signals, tile t at [W*t +: W].
  logic [NumTiles-1:0]    arrive, arrived, halt_now, halting, halted, exited, trap_now, xerr;
  logic [NumTiles*32-1:0] desc, sync_pc, exit_code, err_pc, err_value, tx, rx_data;
  logic [NumTiles*3-1:0]  err_ctx;
  logic [NumTiles*5-1:0]  err_cause;
  logic [NumTiles*Tw-1:0] rx_sel;
  logic [NumTiles*64-1:0] instr, idle, sync_wait, exch;
  logic [NumTiles*32-1:0] tile_rdata;
  logic [NumTiles*32-1:0] hs_rdata;
  logic [NumTiles-1:0]    unused_trap;
  logic [NumTiles*3-1:0]  unused_trap_ctx;
  logic [NumTiles*32-1:0] unused_trap_pc, unused_trap_value;
  logic [NumTiles*5-1:0]  unused_trap_cause;

  // ---------------------------------------------------------------------------------------------
  // Cycle control
  // ---------------------------------------------------------------------------------------------
  logic advance;      // every tile's pipeline advances
  logic live;         // ... and the chip's cycle counts (not draining)
  logic stop_now;
  logic stop;
  logic all_halt;
  logic drained;
  logic sync_release;
  logic sync_stop_req;
  logic sync_stop_next;
  logic sync_host;
  logic [15:0] sync_id;
  logic sync_err;
  logic [Tw-1:0] sync_err_tile;
  logic [4:0] sync_err_cause;
  logic [31:0] sync_err_value;
  logic host_release;
  logic run_q;        // run_i at the last rising edge: this cycle may advance

  // Selected tile for the T_ registers (out of range reads as 0).
  logic          sel_ok;
  logic [Tw-1:0] sel;
  assign sel_ok = 32'(tile_sel_q) < 32'(NumTiles);
  assign sel    = tile_sel_q;

  // Checkpoint state registers (docs/checkpoint.md): which tess_core_pkg::hs_sel_e an offset
  // addresses, and whether the write is accepted.
  logic       hs_tile_reg;   // a per-tile / per-context state register
  logic       hs_cycle_reg;  // CYCLE_LO / CYCLE_HI
  logic [3:0] hs_sel;
  logic       hs_tile_we;
  logic       hs_cycle_we;
  logic       hs_at_sync;
  logic       hs_tile_ok;

  always_comb begin
    hs_tile_reg  = 1'b1;
    hs_cycle_reg = 1'b0;
    hs_sel       = tess_core_pkg::HS_REG;
    unique case (ctl_addr_i)
      12'(tess_params_pkg::CR_C_REG):         hs_sel = tess_core_pkg::HS_REG;
      12'(tess_params_pkg::CR_C_PC):          hs_sel = tess_core_pkg::HS_PC;
      12'(tess_params_pkg::CR_C_FCSR):        hs_sel = tess_core_pkg::HS_FCSR;
      12'(tess_params_pkg::CR_C_INSTRET_LO):  hs_sel = tess_core_pkg::HS_INSTRET_LO;
      12'(tess_params_pkg::CR_C_INSTRET_HI):  hs_sel = tess_core_pkg::HS_INSTRET_HI;
      12'(tess_params_pkg::CR_C_STATE):       hs_sel = tess_core_pkg::HS_CSTATE;
      12'(tess_params_pkg::CR_T_RUN_ARG):     hs_sel = tess_core_pkg::HS_RUN_ARG;
      12'(tess_params_pkg::CR_T_XCHG_PROG):   hs_sel = tess_core_pkg::HS_XCHG;
      12'(tess_params_pkg::CR_T_IDLE_LO):     hs_sel = tess_core_pkg::HS_IDLE_LO;
      12'(tess_params_pkg::CR_T_IDLE_HI):     hs_sel = tess_core_pkg::HS_IDLE_HI;
      12'(tess_params_pkg::CR_T_SYNCWAIT_LO): hs_sel = tess_core_pkg::HS_SWAIT_LO;
      12'(tess_params_pkg::CR_T_SYNCWAIT_HI): hs_sel = tess_core_pkg::HS_SWAIT_HI;
      12'(tess_params_pkg::CR_T_EXCH_LO):     hs_sel = tess_core_pkg::HS_EXCH_LO;
      12'(tess_params_pkg::CR_T_EXCH_HI):     hs_sel = tess_core_pkg::HS_EXCH_HI;
      12'(tess_params_pkg::CR_CYCLE_LO): begin
        hs_tile_reg  = 1'b0;
        hs_cycle_reg = 1'b1;
        hs_sel       = tess_core_pkg::HS_CYCLE_LO;
      end
      12'(tess_params_pkg::CR_CYCLE_HI): begin
        hs_tile_reg  = 1'b0;
        hs_cycle_reg = 1'b1;
        hs_sel       = tess_core_pkg::HS_CYCLE_HI;
      end
      default: hs_tile_reg = 1'b0;
    endcase
  end

  assign hs_at_sync  = state_q == StSync;
  assign hs_tile_ok  = hs_at_sync && sel_ok && enable_q[sel];
  assign hs_tile_we  = HasCheckpoint && ctl_we_i && !ctl_err_o && hs_tile_reg;
  assign hs_cycle_we = HasCheckpoint && ctl_we_i && !ctl_err_o && hs_cycle_reg;


  always_ff @(posedge clk_i) begin
    if (!rst_n) begin
      run_q <= 1'b0;
    end else begin
      run_q <= run_i;
    end
  end

  // Register-file clear (TESS_ICE40, tess_regfile): after every reset the tiles' register files
  // are cleared one entry per cycle (256 cycles) and nothing advances before that; the cycle
  // counts start with the first cycle that does, so they are what the model gives. The host
  // sees a run start up to 256 clocks later (21 us on the iCEBreaker's 12 MHz; a UART frame
  // takes longer). Without TESS_ICE40 the register files need no clear.
  logic       rf_ready, rf_ready_next;
  logic       rf_clear;
  logic [7:0] rf_clear_idx;
`ifdef TESS_ICE40
  logic [8:0] rf_clr_q, rf_clr_d;  // bit 8: done
  assign rf_clr_d      = rf_clr_q[8] ? rf_clr_q : rf_clr_q + 9'd1;
  assign rf_ready      = rf_clr_q[8];
  assign rf_ready_next = rf_clr_d[8];
  assign rf_clear      = !rf_clr_q[8];
  assign rf_clear_idx  = rf_clr_q[7:0];

  always_ff @(posedge clk_i) begin
    if (!rst_n) begin
      rf_clr_q <= '0;
    end else begin
      rf_clr_q <= rf_clr_d;
    end
  end
`else
  assign rf_ready      = 1'b1;
  assign rf_ready_next = 1'b1;
  assign rf_clear      = 1'b0;
  assign rf_clear_idx  = '0;
`endif

  assign advance  = run_q && rf_ready && (state_q == StRunning) &&
                    !(sync_stop_req && !stopping_q);
  assign live     = advance && !stopping_q;
  assign stop_now = live && ((|trap_now) || (|xerr) || sync_err);
  assign stop     = stop_now || stopping_q;
  assign all_halt = &halt_now;
  assign drained  = &(halted | ~enable_q);

  tess_sync #(
    .NumTiles (NumTiles)
  ) u_sync (
    .clk_i          (clk_i),
    .rst_ni         (rst_n),
    .advance_i      (live),
    .arrive_i       (arrive),
    .desc_i         (desc),
    .gone_i         (halting & enable_q),
    .absent_i       (~enable_q),
    .sync_break_i   (sync_break_q),
    .sync_break_next_i (sync_break_d),
    .host_release_i (host_release),
    .advance_next_i (live_next),
    .release_o      (sync_release),
    .release_next_o (release_next),
    .stop_req_o     (sync_stop_req),
    .stop_req_next_o (sync_stop_next),
    .pending_host_o (sync_host),
    .pending_id_o   (sync_id),
    .err_o          (sync_err),
    .err_tile_o     (sync_err_tile),
    .err_cause_o    (sync_err_cause),
    .err_value_o    (sync_err_value)
  );

  // The lowest-numbered failing tile.
  logic [Tw-1:0] fail_tile;
  logic          fail_sync;
  always_comb begin
    fail_tile = '0;
    fail_sync = 1'b0;
    for (int t = NumTiles - 1; t >= 0; t--) begin
      if (trap_now[t] || xerr[t]) begin
        fail_tile = Tw'(t);
        fail_sync = 1'b0;
      end else if (sync_err && (sync_err_tile == Tw'(t))) begin
        fail_tile = Tw'(t);
        fail_sync = 1'b1;
      end
    end
  end

  // CYCLE while live: -1 at an error stop, -1 at a halt (0 stays 0), +1 otherwise. One adder,
  // whose operand reads no signal of the cycle's EX stage (an error stop and a halt are found
  // late in the cycle): every live cycle adds 1, and the cycle that finds a stop or a halt is
  // set right in the next, the first draining cycle, which never counts (cycle_fix_q: -1 to take
  // the +1 back, cycle_back_q: -1 more). Once the chip has left RUNNING the count is what the
  // steps above give; in that one draining cycle it reads 1 or 2 higher.
  logic        cycle_fix_q, cycle_fix_d, cycle_back_q, cycle_back_d;
  logic [63:0] cycle_step;
  assign cycle_fix_d  = live && (stop_now || all_halt);
  assign cycle_back_d = live && (stop_now || (all_halt && (cycle_q != 64'd0)));
  assign cycle_step   = cycle_q + {{63{cycle_fix_q}}, live || (cycle_fix_q && !cycle_back_q)};
  always_ff @(posedge clk_i) begin
    if (!rst_n) begin
      cycle_fix_q  <= 1'b0;
      cycle_back_q <= 1'b0;
    end else begin
      cycle_fix_q  <= cycle_fix_d;
      cycle_back_q <= cycle_back_d;
    end
  end
  always_comb begin
    state_d      = state_q;
    stopping_d   = stopping_q;
    final_d      = final_q;
    err_tile_d   = err_tile_q;
    err_sync_d   = err_sync_q;
    serr_cause_d = serr_cause_q;
    serr_value_d = serr_value_q;
    cycle_d      = cycle_step;
    if (live) begin
      if (stop_now) begin
        // Found in EX of issue cycle e = now - 2: the count is e + 1.
        stopping_d   = 1'b1;
        final_d      = StError;
        err_tile_d   = fail_tile;
        err_sync_d   = fail_sync;
        serr_cause_d = sync_err_cause;
        serr_value_d = sync_err_value;
      end else if (all_halt) begin
        stopping_d = 1'b1;
        final_d    = StHalted;
      end
    end
    if (hs_cycle_we) begin
      if (ctl_addr_i == 12'(tess_params_pkg::CR_CYCLE_LO)) begin
        cycle_d[31:0] = ctl_wdata_i;
      end else begin
        cycle_d[63:32] = ctl_wdata_i;
      end
    end
    if ((state_q == StRunning) && stopping_q && drained) begin
      state_d    = final_q;
      stopping_d = 1'b0;
    end
    if (run_q && (state_q == StRunning) && sync_stop_req && !stopping_q) begin
      state_d = StSync;
    end
    if (ctl_we_i && (ctl_addr_i == 12'(tess_params_pkg::CR_CTRL))) begin
      if (ctl_wdata_i[1] && (state_q == StReset)) begin
        state_d = StRunning;
      end
      if (ctl_wdata_i[2] && (state_q == StSync)) begin
        state_d = StRunning;
      end
    end
  end

  assign host_release = ctl_we_i && (ctl_addr_i == 12'(tess_params_pkg::CR_CTRL)) &&
                        ctl_wdata_i[2] && (state_q == StSync);

  // advance of the next cycle, from the values the registers take at the next edge (each tile
  // keeps a registered copy, below).
  logic adv_next;
  logic live_next;
  logic release_next;
  assign adv_next  = run_i && rf_ready_next && (state_d == StRunning) &&
                     !(sync_stop_next && !stopping_d);
  assign live_next = adv_next && !stopping_d;

  always_ff @(posedge clk_i) begin
    if (!rst_n) begin
      state_q      <= StReset;
      stopping_q   <= 1'b0;
      final_q      <= StHalted;
      cycle_q      <= '0;
      err_tile_q   <= '0;
      err_sync_q   <= 1'b0;
      serr_cause_q <= '0;
      serr_value_q <= '0;
    end else begin
      state_q      <= state_d;
      stopping_q   <= stopping_d;
      final_q      <= final_d;
      cycle_q      <= cycle_d;
      err_tile_q   <= err_tile_d;
      err_sync_q   <= err_sync_d;
      serr_cause_q <= serr_cause_d;
      serr_value_q <= serr_value_d;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      soft_rst_q <= 1'b0;
    end else begin
      soft_rst_q <= ctl_we_i && (ctl_addr_i == 12'(tess_params_pkg::CR_CTRL)) && ctl_wdata_i[0];
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Control registers
  // ---------------------------------------------------------------------------------------------
  always_comb begin
    enable_d     = enable_q;
    sync_break_d = sync_break_q;
    tile_sel_d   = tile_sel_q;
    ctx_sel_d    = ctx_sel_q;
    reg_sel_d    = reg_sel_q;
    if (ctl_we_i && !ctl_err_o) begin
      unique case (ctl_addr_i)
        12'(tess_params_pkg::CR_SYNC_BREAK): sync_break_d = ctl_wdata_i[0];
        12'(tess_params_pkg::CR_TILE_SEL):   tile_sel_d   = Tw'(ctl_wdata_i);
        12'(tess_params_pkg::CR_CTX_SEL):    ctx_sel_d    = ctl_wdata_i[2:0];
        12'(tess_params_pkg::CR_REG_SEL):    reg_sel_d    = ctl_wdata_i[7:0];
        12'(tess_params_pkg::CR_T_ENABLE): begin
          for (int t = 0; t < NumTiles; t++) begin
            if (32'(tile_sel_q) == 32'(t)) begin
              enable_d[t] = ctl_wdata_i[0];
            end
          end
        end
        default: ;
      endcase
    end
    if (!HasCheckpoint) begin
      reg_sel_d = '0;
    end
  end

  // The control registers change only on control writes and reset: their own gated clock keeps
  // the logic that reads them (each tile's checkpoint-state path) off the chip's clock.
  logic ctl_clk;
  tess_clock_gate u_ctl_clock_gate (
    .clk_i (clk_i),
    .en_i  (ctl_we_i || !rst_n),
    .clk_o (ctl_clk)
  );

  always_ff @(posedge ctl_clk) begin
    if (!rst_n) begin
      enable_q     <= '1;
      sync_break_q <= 1'b0;
      tile_sel_q   <= '0;
      ctx_sel_q    <= '0;
      reg_sel_q    <= '0;
    end else begin
      enable_q     <= enable_d;
      sync_break_q <= sync_break_d;
      tile_sel_q   <= tile_sel_d;
      ctx_sel_q    <= ctx_sel_d;
      reg_sel_q    <= reg_sel_d;
    end
  end

  logic [31:0] status;
  assign status = {(state_q == StSync) ? sync_id : 16'd0, 11'd0,
                   (state_q == StSync) && sync_host, state_q};

  // Refused accesses (docs/chip.md, "Host port and control registers"), as the model refuses them.
  // Without checkpoints (HasCheckpoint = 0) the checkpoint registers and state writes are
  // refused too.
  logic ctl_err;
  logic ckpt_reg;     // REG_SEL .. T_XCHG_PROG, but CTX_SEL and reading C_INSTRET stay (STATS)
  assign ckpt_reg = (ctl_addr_i > 12'(tess_params_pkg::CR_CTX_SEL)) &&
                    (ctl_addr_i <= 12'(tess_params_pkg::CR_T_XCHG_PROG)) &&
                    (ctl_we_i || ctl_addr_i < 12'(tess_params_pkg::CR_C_INSTRET_LO) ||
                     ctl_addr_i > 12'(tess_params_pkg::CR_C_INSTRET_HI));
  assign ctl_err_o = ctl_err ||
                     (!HasCheckpoint && (ckpt_reg || (ctl_we_i && (hs_tile_reg || hs_cycle_reg))));

  always_comb begin
    ctl_err = 1'b0;
    if (ctl_we_i) begin
      unique case (ctl_addr_i)
        12'(tess_params_pkg::CR_CTRL),
        12'(tess_params_pkg::CR_SYNC_BREAK): ctl_err = 1'b0;
        12'(tess_params_pkg::CR_TILE_SEL):   ctl_err = ctl_wdata_i >= 32'(NumTiles);
        12'(tess_params_pkg::CR_T_ENABLE):   ctl_err = state_q != StReset;
        12'(tess_params_pkg::CR_CTX_SEL):    ctl_err = ctl_wdata_i >= 32'(Contexts);
        12'(tess_params_pkg::CR_REG_SEL):    ctl_err = ctl_wdata_i >= RegSelEnd;
        12'(tess_params_pkg::CR_CYCLE_LO),
        12'(tess_params_pkg::CR_CYCLE_HI):   ctl_err = !hs_at_sync;
        12'(tess_params_pkg::CR_C_REG), 12'(tess_params_pkg::CR_C_PC),
        12'(tess_params_pkg::CR_C_FCSR), 12'(tess_params_pkg::CR_C_INSTRET_LO),
        12'(tess_params_pkg::CR_C_INSTRET_HI), 12'(tess_params_pkg::CR_T_RUN_ARG),
        12'(tess_params_pkg::CR_T_XCHG_PROG), 12'(tess_params_pkg::CR_T_IDLE_LO),
        12'(tess_params_pkg::CR_T_IDLE_HI), 12'(tess_params_pkg::CR_T_SYNCWAIT_LO),
        12'(tess_params_pkg::CR_T_SYNCWAIT_HI), 12'(tess_params_pkg::CR_T_EXCH_LO),
        12'(tess_params_pkg::CR_T_EXCH_HI):  ctl_err = !hs_tile_ok;
        default:                             ctl_err = 1'b1;
      endcase
    end else begin
      unique case (ctl_addr_i)
        12'(tess_params_pkg::CR_ID), 12'(tess_params_pkg::CR_TILES),
        12'(tess_params_pkg::CR_MEM_BYTES), 12'(tess_params_pkg::CR_CONTEXTS),
        12'(tess_params_pkg::CR_STATUS), 12'(tess_params_pkg::CR_CYCLE_LO),
        12'(tess_params_pkg::CR_CYCLE_HI), 12'(tess_params_pkg::CR_ERR_TILE),
        12'(tess_params_pkg::CR_ERR_CONTEXT), 12'(tess_params_pkg::CR_ERR_PC),
        12'(tess_params_pkg::CR_ERR_CAUSE), 12'(tess_params_pkg::CR_ERR_VALUE),
        12'(tess_params_pkg::CR_SYNC_BREAK), 12'(tess_params_pkg::CR_TILE_SEL),
        12'(tess_params_pkg::CR_T_ENABLE), 12'(tess_params_pkg::CR_T_STATE),
        12'(tess_params_pkg::CR_T_EXIT), 12'(tess_params_pkg::CR_T_INSTR_LO),
        12'(tess_params_pkg::CR_T_INSTR_HI), 12'(tess_params_pkg::CR_T_IDLE_LO),
        12'(tess_params_pkg::CR_T_IDLE_HI), 12'(tess_params_pkg::CR_T_SYNCWAIT_LO),
        12'(tess_params_pkg::CR_T_SYNCWAIT_HI), 12'(tess_params_pkg::CR_T_EXCH_LO),
        12'(tess_params_pkg::CR_T_EXCH_HI), 12'(tess_params_pkg::CR_CTX_SEL),
        12'(tess_params_pkg::CR_REG_SEL), 12'(tess_params_pkg::CR_C_REG),
        12'(tess_params_pkg::CR_C_PC), 12'(tess_params_pkg::CR_C_FCSR),
        12'(tess_params_pkg::CR_C_INSTRET_LO), 12'(tess_params_pkg::CR_C_INSTRET_HI),
        12'(tess_params_pkg::CR_C_STATE), 12'(tess_params_pkg::CR_T_RUN_ARG),
        12'(tess_params_pkg::CR_T_XCHG_PROG): ctl_err = 1'b0;
        default:                            ctl_err = 1'b1;
      endcase
    end
  end

  always_comb begin
    ctl_rdata_o = '0;
    unique case (ctl_addr_i)
      12'(tess_params_pkg::CR_ID):          ctl_rdata_o = tess_params_pkg::CHIP_ID;
      12'(tess_params_pkg::CR_TILES):       ctl_rdata_o = 32'(NumTiles);
      12'(tess_params_pkg::CR_MEM_BYTES):   ctl_rdata_o = MemLimit;
      12'(tess_params_pkg::CR_CONTEXTS):    ctl_rdata_o = 32'(Contexts);
      12'(tess_params_pkg::CR_STATUS):      ctl_rdata_o = status;
      12'(tess_params_pkg::CR_CYCLE_LO):    ctl_rdata_o = cycle_q[31:0];
      12'(tess_params_pkg::CR_CYCLE_HI):    ctl_rdata_o = cycle_q[63:32];
      12'(tess_params_pkg::CR_ERR_TILE):    ctl_rdata_o = 32'(err_tile_q);
      12'(tess_params_pkg::CR_ERR_CONTEXT): ctl_rdata_o = err_sync_q ? 32'd0 :
                                                          32'(err_ctx[3*err_tile_q +: 3]);
      12'(tess_params_pkg::CR_ERR_PC):      ctl_rdata_o = err_sync_q ? sync_pc[32*err_tile_q +: 32] :
                                                          err_pc[32*err_tile_q +: 32];
      12'(tess_params_pkg::CR_ERR_CAUSE):   ctl_rdata_o = err_sync_q ? 32'(serr_cause_q) :
                                                          32'(err_cause[5*err_tile_q +: 5]);
      12'(tess_params_pkg::CR_ERR_VALUE):   ctl_rdata_o = err_sync_q ? serr_value_q :
                                                          err_value[32*err_tile_q +: 32];
      12'(tess_params_pkg::CR_SYNC_BREAK):  ctl_rdata_o = {31'd0, sync_break_q};
      12'(tess_params_pkg::CR_TILE_SEL):    ctl_rdata_o = 32'(tile_sel_q);
      12'(tess_params_pkg::CR_T_ENABLE):    ctl_rdata_o = {31'd0, sel_ok && enable_q[sel]};
      12'(tess_params_pkg::CR_T_STATE):     ctl_rdata_o = sel_ok ?
          {30'd0, arrived[sel], exited[sel] || !enable_q[sel]} : 32'd0;
      12'(tess_params_pkg::CR_T_EXIT):      ctl_rdata_o = sel_ok ? exit_code[32*sel +: 32] : 32'd0;
      12'(tess_params_pkg::CR_T_INSTR_LO):  ctl_rdata_o = sel_ok ? instr[64*sel +: 32] : 32'd0;
      12'(tess_params_pkg::CR_T_INSTR_HI):  ctl_rdata_o = sel_ok ? instr[64*sel+32 +: 32] : 32'd0;
      12'(tess_params_pkg::CR_T_IDLE_LO):   ctl_rdata_o = sel_ok ? idle[64*sel +: 32] : 32'd0;
      12'(tess_params_pkg::CR_T_IDLE_HI):   ctl_rdata_o = sel_ok ? idle[64*sel+32 +: 32] : 32'd0;
      12'(tess_params_pkg::CR_T_SYNCWAIT_LO): ctl_rdata_o = sel_ok ? sync_wait[64*sel +: 32] : 32'd0;
      12'(tess_params_pkg::CR_T_SYNCWAIT_HI): ctl_rdata_o = sel_ok ? sync_wait[64*sel+32 +: 32] :
                                                            32'd0;
      12'(tess_params_pkg::CR_T_EXCH_LO):   ctl_rdata_o = sel_ok ? exch[64*sel +: 32] : 32'd0;
      12'(tess_params_pkg::CR_T_EXCH_HI):   ctl_rdata_o = sel_ok ? exch[64*sel+32 +: 32] : 32'd0;
      12'(tess_params_pkg::CR_CTX_SEL):     ctl_rdata_o = 32'(ctx_sel_q);
      12'(tess_params_pkg::CR_REG_SEL):     ctl_rdata_o = 32'(reg_sel_q);
      12'(tess_params_pkg::CR_C_REG), 12'(tess_params_pkg::CR_C_PC),
      12'(tess_params_pkg::CR_C_FCSR), 12'(tess_params_pkg::CR_C_INSTRET_LO),
      12'(tess_params_pkg::CR_C_INSTRET_HI), 12'(tess_params_pkg::CR_C_STATE),
      12'(tess_params_pkg::CR_T_RUN_ARG), 12'(tess_params_pkg::CR_T_XCHG_PROG):
        // Without checkpoints the tile's state path is absent; C_INSTRET comes from instret_o.
        if (!(sel_ok && enable_q[sel])) ctl_rdata_o = 32'd0;
        else if (HasCheckpoint) ctl_rdata_o = hs_rdata[32*sel +: 32];
        else if (ctl_addr_i == 12'(tess_params_pkg::CR_C_INSTRET_LO) ||
                 ctl_addr_i == 12'(tess_params_pkg::CR_C_INSTRET_HI))
          ctl_rdata_o = instret_o[64 * (Contexts * 32'(sel) + 32'(ctx_sel_q)) +
                                  (ctl_addr_i == 12'(tess_params_pkg::CR_C_INSTRET_HI) ? 32 : 0) +: 32];
        else ctl_rdata_o = 32'd0;
      default: ctl_rdata_o = '0;
    endcase
  end

  assign state_o    = state_q;
  assign stopping_o = stopping_q;
  assign cycle_o    = cycle_q;

  // ---------------------------------------------------------------------------------------------
  // Host memory port
  // ---------------------------------------------------------------------------------------------
  logic          host_ok;
  logic [Tw-1:0] host_tile;
  logic [Tw-1:0] host_tile_q;
  logic          host_err_q;
  logic [15:0]   unused_host_tile;
  assign host_ok   = !advance && ({16'd0, host_tile_i} < 32'(NumTiles)) &&
                     (host_addr_i < MemLimit);
  assign host_tile = Tw'(host_tile_i);
  assign unused_host_tile = host_tile_i;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      host_tile_q <= '0;
      host_err_q  <= 1'b0;
    end else if (host_req_i) begin
      host_tile_q <= host_tile;
      host_err_q  <= !host_ok;
    end
  end

  assign host_rdata_o = host_err_q ? 32'd0 : tile_rdata[32*host_tile_q +: 32];
  assign host_err_o   = host_err_q;

  // ---------------------------------------------------------------------------------------------
  // Fabric: EXCHANGE_LATENCY+1 registers per bus, then every tile's receive mux
  // ---------------------------------------------------------------------------------------------
  if (HasExchange) begin : g_fabric
    localparam int Stages = Latency + 1;
    logic [NumTiles*Stages*32-1:0] pipe_q, pipe_d;

    always_comb begin
      for (int t = 0; t < NumTiles; t++) begin
        pipe_d[32*Stages*t +: 32] = tx[32*t +: 32];
        for (int s = 1; s < Stages; s++) begin
          pipe_d[32*(Stages*t + s) +: 32] = pipe_q[32*(Stages*t + s - 1) +: 32];
        end
      end
    end

    always_ff @(posedge clk_i) begin
      if (!rst_n) begin
        pipe_q <= '0;
      end else if (advance) begin
        pipe_q <= pipe_d;
      end
    end

    // Every tile's receive mux: the word the selected bus reaches the last stage with at the
    // next edge (the tile registers it as that stage's value, tess_exchange rx_data_i).
    logic [NumTiles*32-1:0] last_next;
    for (genvar b = 0; b < NumTiles; b++) begin : g_last_next
      if (Stages > 1) begin : g_stage
        assign last_next[32*b +: 32] = pipe_q[32*(Stages*b + Stages - 2) +: 32];
      end else begin : g_bus
        assign last_next[32*b +: 32] = tx[32*b +: 32];
      end
    end

    always_comb begin
      for (int t = 0; t < NumTiles; t++) begin
        rx_data[32*t +: 32] = '0;
        for (int b = 0; b < NumTiles; b++) begin
          if (rx_sel[Tw*t +: Tw] == Tw'(b)) begin
            rx_data[32*t +: 32] = last_next[32*b +: 32];
          end
        end
      end
    end
  end else begin : g_no_fabric
    // No engines: nothing drives a bus (tess_tile ties tx to 0) and nothing receives.
    logic unused_fabric;
    assign unused_fabric = ^{tx, rx_sel};
    assign rx_data = '0;
  end

  // ---------------------------------------------------------------------------------------------
  // Tiles
  // ---------------------------------------------------------------------------------------------
  // Clock gate per tile: while the chip advances, a disabled tile's registers all hold (its core,
  // engine and counters advance only with run_i && enable_i; the FPU stages that load every edge
  // only carry invalid data there), so its clock is stopped and a simulator skips the tile. The
  // clock runs whenever the chip does not advance (reset, host port, control writes). The gate
  // is the tess_clock_gate primitive (a plain clock enable on FPGAs).
  logic [NumTiles-1:0] tile_clk_en;
  assign tile_clk_en = enable_q | {NumTiles{!advance}};

  // Each tile runs on copies of the chip's per-cycle signals taken from registers of its own clock
  // domain, loaded with the next cycle's value, not from the chip's registers: a simulator
  // evaluates the logic behind them only when that tile's clock ticks, so a disabled tile costs
  // little. The copies:
  //   t_run_q   advance && enable_q[t]
  //   t_rel_q   the sync release && enable_q[t]
  //   t_drop_q  stopping_q && enable_q[t] (tess_exchange drop_i, the tile's counters)
  //   t_sync_q  state_q == StSync (the checkpoint state may be written)
  // The copies stay exact while a disabled tile's clock is stopped: that happens only in cycles
  // that advance, in which state_d is never StSync (entering StSync holds the chip for that
  // cycle), so every copy of a disabled tile is 0 then and would be loaded with 0 again.
  logic sync_next;
  assign sync_next = state_d == StSync;
  // What the copies replace: compared with them in Icarus runs (below), else unused.
  logic unused_copied;
  assign unused_copied = ^{sync_release, hs_tile_we};

  for (genvar t = 0; t < NumTiles; t++) begin : g_tile
    logic          t_host_req;
    logic          t_clk;
    logic          t_run_q;
    logic          t_rel_q;
    logic          t_drop_q;
    logic          t_sync_q;
    logic          t_hs_we;    // per tile, not a vector: a simulator schedules a vector as one
    assign t_host_req = host_req_i && host_ok && (host_tile == Tw'(t));
    // A refused write (ctl_err_o) changes nothing: for a state register that is a write outside
    // a sync or to a disabled or unselected tile (the same rule as ctl_err, with the tile's copy
    // of "at a sync").
    assign t_hs_we  = HasCheckpoint && ctl_we_i && t_sync_q && enable_q[t] &&
                      (hs_cycle_reg || (hs_tile_reg && (sel == Tw'(t))));

    always_ff @(posedge t_clk) begin
      if (!rst_n) begin
        t_run_q  <= 1'b0;
        t_rel_q  <= 1'b0;
        t_drop_q <= 1'b0;
        t_sync_q <= 1'b0;
      end else begin
        t_run_q  <= adv_next && enable_d[t];
        t_rel_q  <= release_next && enable_d[t];
        t_drop_q <= stopping_d && enable_d[t];
        t_sync_q <= sync_next;
      end
    end

`ifndef SYNTHESIS
`ifndef VERILATOR
    // The copy must equal what it replaces (checked in Icarus runs; Verilator runs are checked
    // against the model's cycle counts).
    always @(posedge t_clk) begin
      if (rst_n && ((t_run_q != (advance && enable_q[t])) ||
                    (t_rel_q != (sync_release && enable_q[t])) ||
                    (t_drop_q != (stopping_q && enable_q[t])) ||
                    (t_sync_q != (state_q == StSync)) ||
                    (t_hs_we != (hs_cycle_we ? enable_q[t] : (hs_tile_we && (sel == Tw'(t))))))) begin
        $display("ERROR tess_chip: tile %0d copies run %0d rel %0d drop %0d sync %0d hs_we %0d, chip advance %0d release %0d stopping %0d state %0d enable %0d",
                 t, t_run_q, t_rel_q, t_drop_q, t_sync_q, t_hs_we, advance, sync_release,
                 stopping_q, state_q, enable_q[t]);
        $finish;
      end
    end
`endif
`endif

    tess_clock_gate u_clock_gate (
      .clk_i (clk_i),
      .en_i  (tile_clk_en[t]),
      .clk_o (t_clk)
    );

    tess_tile #(
      .MemBytes (MemBytes),
      .NumTiles (NumTiles),
      .HasFpu   (HasFpu),
      .HasMulDiv (HasMulDiv),
      .Contexts (Contexts),
      .CounterBits (CounterBits),
      .HasExchange   (HasExchange),
      .HasCheckpoint (HasCheckpoint),
      .MatrixUnit    (MatrixUnit)
    ) u_tile (
      .clk_i           (t_clk),
      .rst_ni          (rst_n),
      .run_i           (t_run_q),
      .tile_id_i       (16'(t)),
      .rf_clear_i      (rf_clear),
      .rf_clear_idx_i  (rf_clear_idx),
      .enable_i        (enable_q[t]),
      .stop_i          (stop),
      .drop_i          (t_drop_q),
      .release_i       (t_rel_q),
      .arrive_o        (arrive[t]),
      .arrived_o       (arrived[t]),
      .sync_desc_o     (desc[32*t +: 32]),
      .sync_pc_o       (sync_pc[32*t +: 32]),
      .halt_now_o      (halt_now[t]),
      .trap_now_o      (trap_now[t]),
      .xerr_o          (xerr[t]),
      .err_ctx_o       (err_ctx[3*t +: 3]),
      .err_pc_o        (err_pc[32*t +: 32]),
      .err_cause_o     (err_cause[5*t +: 5]),
      .err_value_o     (err_value[32*t +: 32]),
      .tx_o            (tx[32*t +: 32]),
      .rx_sel_o        (rx_sel[Tw*t +: Tw]),
      .rx_data_i       (rx_data[32*t +: 32]),
      .host_req_i      (t_host_req),
      .host_we_i       (host_we_i),
      .host_be_i       (host_be_i),
      .host_addr_i     (host_addr_i[Aw+1:2]),
      .host_wdata_i    (host_wdata_i),
      .host_rdata_o    (tile_rdata[32*t +: 32]),
      .halting_o       (halting[t]),
      .halted_o        (halted[t]),
      .exited_o        (exited[t]),
      .exit_code_o     (exit_code[32*t +: 32]),
      .trap_o          (unused_trap[t]),
      .trap_ctx_o      (unused_trap_ctx[3*t +: 3]),
      .trap_pc_o       (unused_trap_pc[32*t +: 32]),
      .trap_cause_o    (unused_trap_cause[5*t +: 5]),
      .trap_value_o    (unused_trap_value[32*t +: 32]),
      .console_valid_o (console_valid_o[t]),
      .console_byte_o  (console_byte_o[8*t +: 8]),
      .cycle_o         (tile_cycle_o[64*t +: 64]),
      .instret_o       (instret_o[Contexts*64*t +: Contexts*64]),
      .idle_o          (idle[64*t +: 64]),
      .instr_o         (instr[64*t +: 64]),
      .sync_wait_o     (sync_wait[64*t +: 64]),
      .exch_o          (exch[64*t +: 64]),
      .retire_valid_o  (retire_valid_o[t]),
      .retire_cycle_o  (retire_cycle_o[64*t +: 64]),
      .retire_ctx_o    (retire_ctx_o[3*t +: 3]),
      .retire_pc_o     (retire_pc_o[32*t +: 32]),
      .retire_insn_o   (retire_insn_o[32*t +: 32]),
      .retire_dest_o   (retire_dest_o[2*t +: 2]),
      .retire_rd_o     (retire_rd_o[5*t +: 5]),
      .retire_value_o  (retire_value_o[32*t +: 32]),
      .hs_we_i         (t_hs_we),
      .hs_sel_i        (hs_sel),
      .hs_ctx_i        (ctx_sel_q),
      .hs_reg_i        (reg_sel_q),
      .hs_wdata_i      (ctl_wdata_i),
      .hs_rdata_o      (hs_rdata[32*t +: 32])
    );
  end

endmodule
