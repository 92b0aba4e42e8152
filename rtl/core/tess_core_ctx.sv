// Context state, issue and counters of the core (tess_core): the IF stage (c) decides which
// context issues in this cycle's slot and fetches its instruction (SRAM port A), and holds the
// IF/ID registers; the per-context state (pc, running, long-op pass, the supervisor's WAIT and
// sync blocks) takes the changes EX decides (tess_core_ex) at the end of the EX cycle (c+2), so
// issue decisions from c+3 see them; the cycle and idle counters; the halt and what it records
// (exit code, or the trap's context, pc, cause and value).
// Slot s of the round belongs to context s (s < Contexts), which issues if it is running and not
// blocked. A trap or an EXIT store in EX (halt_req_i) halts the tile: IF and ID are squashed, the
// cycle count freezes at h+1 for a halt issued at h. stop_i (a chip error) halts it the same way
// without recording one, read only in the always_ff blocks (tess_core's header explains why; with
// TESS_ICE40 the idle count's take-back reads it, as there).
// Timing: issue and fetch in the cycle; state changes take effect at the clock edge.
`include "tess_ctx_select.svh"

module tess_core_ctx #(
  parameter int MemBytes    = tess_params_pkg::TILE_MEM_BYTES,
  parameter bit HasFpu      = tess_params_pkg::HAS_FPU != 0,
  parameter bit HasMulDiv   = tess_params_pkg::HAS_MULDIV != 0,
  parameter int Contexts    = tess_params_pkg::NUM_CONTEXTS,
  parameter int CounterBits = tess_params_pkg::COUNTER_BITS,
  localparam int Aw         = $clog2(MemBytes / 4)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   advance_i,
  input  logic                   stop_i,
  input  logic                   resume_i,
  // instruction fetch (SRAM port A)
  output logic                   imem_req_o,
  output logic [Aw-1:0]          imem_addr_o,
  // IF/ID registers
  output logic                   id_valid_o,
  output logic [2:0]             id_ctx_o,
  output logic [31:0]            id_pc_o,
  output logic [2:0]             id_pass_o,
  output logic                   id_exc_o,       // fetch trap found in IF
  output logic [4:0]             id_cause_o,
  // the instruction in EX (tess_core_id's registers, tess_core_ex's decisions)
  input  logic                   ex_valid_i,
  input  logic [2:0]             ex_ctx_i,
  input  logic [31:0]            ex_pc_i,
  input  logic [2:0]             ex_pass_i,
  input  logic                   long_op_i,
  input  logic                   commit_i,
  input  logic                   last_pass_i,
  input  logic                   jump_i,
  input  logic [31:0]            target_i,
  input  logic [31:0]            link_i,
  input  logic [31:0]            store_data_i,
  input  logic                   ex_trap_i,
  input  logic [4:0]             trap_cause_i,
  input  logic [31:0]            trap_value_i,
  input  logic                   halt_req_i,
  input  logic                   mmio_exit_i,
  input  logic                   mmio_wait_i,
  input  logic                   mmio_done_i,
  input  logic                   mmio_run_i,
  input  logic                   mmio_sync_i,
  input  logic [2:0]             run_ctx_i,
  output logic                   ex_halt_o,      // the instruction in EX halts the tile
  // state and counters
  output logic [Contexts-1:0]    running_o,
  output logic [CounterBits-1:0] cycle_q_o,      // the cycle count (CSRs, retirement)
  output logic                   halt_o,         // halted or halting (older instructions drain)
  output logic                   exited_o,
  output logic [31:0]            exit_code_o,
  output logic                   trap_o,
  output logic [2:0]             trap_ctx_o,
  output logic [31:0]            trap_pc_o,
  output logic [4:0]             trap_cause_o,
  output logic [31:0]            trap_value_o,
  output logic [63:0]            cycle_o,        // frozen at a halt
  output logic [63:0]            idle_o,
  // checkpoint state (tess_core: hs_we_i only while held)
  input  logic                   hs_we_i,
  input  logic [3:0]             hs_sel_i,
  input  logic [2:0]             hs_ctx_i,
  input  logic [31:0]            hs_wdata_i,
  output logic [31:0]            hs_pc_o,        // pc of context hs_ctx_i
  output logic [3:0]             hs_cstate_o     // its state (CR_C_STATE)
);

  // Slots per barrel round (rtl/params.json ROUND_CYCLES, checked in tess_core to be one per
  // pipeline stage), whatever the number of contexts.
  localparam int Round = tess_params_pkg::ROUND_CYCLES;
  // Long ops are DIV*/REM* and FDIV.S/FSQRT.S: without M and F there are none.
  localparam bit HasLongOps = HasMulDiv || HasFpu;
  localparam logic [31:0] MemLimit = 32'(MemBytes);
  localparam logic [4:0] EXC_INSN_MISALIGNED = 5'(tess_params_pkg::CAUSE_INSN_MISALIGNED);
  localparam logic [4:0] EXC_INSN_ACCESS     = 5'(tess_params_pkg::CAUSE_INSN_ACCESS);

  // IF/ID registers.
  logic        id_valid_q, id_valid_d;
  logic [2:0]  id_ctx_q, id_ctx_d;
  logic [31:0] id_pc_q, id_pc_d;
  logic [2:0]  id_pass_q, id_pass_d;
  logic        id_exc_q, id_exc_d;           // fetch trap found in IF
  logic [4:0]  id_cause_q, id_cause_d;
  logic        id_idle_q, id_idle_d;         // this slot was counted idle

  // Per-context vectors are flat, context k at [W*k +: W] (Yosys 0.23 reads no multi-dimensional
  // packed arrays).
  logic [Contexts*32-1:0]    pc_q, pc_d;
  logic [Contexts-1:0]       running_q, running_d;
  logic [Contexts*3-1:0]     lop_q, lop_d;        // next pass of a long op in progress, 0 = none
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
  logic [63:0]               idle64;              // idle_q zero-extended (host writes)
  logic [31:0]               exit_code_q, exit_code_d;
  logic                      trap_q, trap_d;
  logic [2:0]                trap_ctx_q, trap_ctx_d;
  logic [31:0]               trap_pc_q, trap_pc_d;
  logic [4:0]                trap_cause_q, trap_cause_d;
  logic [31:0]               trap_value_q, trap_value_d;

  logic                      ex_halt;
  assign ex_halt = advance_i && !halt_q && halt_req_i;


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

  // An empty slot (Contexts < Round) issues nothing and carries context 0 down the pipeline, so
  // that every per-context index stays below Contexts; with six contexts both are constants.
  assign slot_ctx    = (Contexts == Round) || (32'(slot_q) < 32'(Contexts));
  assign if_ctx      = slot_ctx ? slot_q : 3'd0;
  assign running_pad = 8'(running_q);
  assign sup_blocked = (slot_q == 3'd0) &&
                       ((wait_q && (running_q[Contexts-1:1] != '0)) || (sync_q && !resume_i));
  assign issue       = advance_i && !halt_q && slot_ctx && running_pad[if_ctx] && !sup_blocked;
  // Slots lost after the halting instruction's EX are not part of the run (see idle_d); a stop
  // takes this cycle's count back in the always_ff block.
  assign slot_idle   = advance_i && !halt_q && !ex_halt && !issue;
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
  // Context state and control updates
  // ---------------------------------------------------------------------------------------------
  assign cycle64 = 64'(cycle_q);
  assign idle64  = 64'(idle_q);

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

    if (advance_i) begin
      slot_d  = (slot_q == 3'(Round - 1)) ? 3'd0 : slot_q + 3'd1;
      cycle_d = cycle_q + CounterBits'(1);
    end

    // The supervisor's WAIT ends in the first of its slots with every worker idle.
    if (issue && (slot_q == 3'd0)) begin
      wait_d = 1'b0;
    end
    if (advance_i && resume_i) begin
      sync_d = 1'b0;
    end

    if (commit_i) begin
      if (HasLongOps && long_op_i) begin
        `TESS_CTX_SET(lop_d, 3, Contexts, ex_ctx_i, last_pass_i ? 3'd0 : ex_pass_i + 3'd1)
      end
      if (last_pass_i) begin
        `TESS_CTX_SET(pc_d, 32, Contexts, ex_ctx_i, jump_i ? target_i : link_i)
      end
      if (mmio_wait_i) begin
        wait_d = 1'b1;
      end
      if (mmio_sync_i) begin
        sync_d = 1'b1;
      end
      if (mmio_done_i) begin
        `TESS_CTX_SET(running_d, 1, Contexts, ex_ctx_i, 1'b0)
      end
      if (mmio_run_i) begin
        `TESS_CTX_SET(running_d, 1, Contexts, run_ctx_i, 1'b1)
        `TESS_CTX_SET(pc_d, 32, Contexts, run_ctx_i, store_data_i)
      end
    end

    // Checkpoint state written by the host while held (docs/checkpoint.md).
    if (hs_we_i) begin
      unique case (hs_sel_i)
        tess_core_pkg::HS_PC:       `TESS_CTX_SET(pc_d, 32, Contexts, hs_ctx_i, hs_wdata_i)
        tess_core_pkg::HS_CYCLE_LO: cycle_d = CounterBits'({cycle64[63:32], hs_wdata_i});
        tess_core_pkg::HS_CYCLE_HI: cycle_d = CounterBits'({hs_wdata_i, cycle64[31:0]});
        default: ;
      endcase
    end

    // What a halt records (a stop records nothing).
    if (ex_halt) begin
      if (ex_valid_i && mmio_exit_i && !ex_trap_i) begin
        exit_code_d = store_data_i;
        exited_d    = 1'b1;
      end else if (ex_valid_i && ex_trap_i) begin
        trap_d       = 1'b1;
        trap_ctx_d   = ex_ctx_i;
        trap_pc_d    = ex_pc_i;
        trap_cause_d = trap_cause_i;
        trap_value_d = trap_value_i;
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
  assign slot_free   = advance_i && !halt_q && !issue;
  assign idle_back_d = ((advance_i && !halt_q && stop_i) || ex_halt) ?
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
    if (hs_we_i && (hs_sel_i == tess_core_pkg::HS_IDLE_LO)) begin
      idle_d = CounterBits'({idle64[63:32], hs_wdata_i});
    end
    if (hs_we_i && (hs_sel_i == tess_core_pkg::HS_IDLE_HI)) begin
      idle_d = CounterBits'({hs_wdata_i, idle64[31:0]});
    end
    if (ex_halt) begin
      halt_d        = 1'b1;
      halt_cycles_d = halt_cycles_at;
`ifndef TESS_ICE40
      idle_d        = idle_halt;
`endif
    end
  end

  // A halt squashes IF (a stop too: in the always_ff block below).
  logic id_valid_in;
  assign id_valid_in = id_valid_d && !ex_halt;

  // The chip's error stop (stop_i, see the module header) halts the core here: exceptions to
  // "always_ff holds only q <= d", so that no combinational logic reads stop_i (but TESS_ICE40's
  // idle take-back, above). hs_we_i never coincides with a stop (the host writes only while the
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
      idle_q        <= (advance_i && !halt_q && stop_i) ? idle_halt : idle_d;
`endif
      halt_q        <= halt_d || (advance_i && stop_i);
      exited_q      <= exited_d;
      halt_cycles_q <= (advance_i && !halt_q && stop_i) ? halt_cycles_at : halt_cycles_d;
      exit_code_q   <= exit_code_d;
      trap_q        <= trap_d;
      trap_ctx_q    <= trap_ctx_d;
      trap_pc_q     <= trap_pc_d;
      trap_cause_q  <= trap_cause_d;
      trap_value_q  <= trap_value_d;
    end
  end

  // The IF/ID registers advance only while running.
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      id_valid_q <= 1'b0;
      id_ctx_q   <= '0;
      id_pc_q    <= '0;
      id_pass_q  <= '0;
      id_exc_q   <= 1'b0;
      id_cause_q <= '0;
      id_idle_q  <= 1'b0;
    end else if (advance_i) begin
      id_valid_q <= id_valid_in && !(!halt_q && stop_i);
      id_ctx_q   <= id_ctx_d;
      id_pc_q    <= id_pc_d;
      id_pass_q  <= id_pass_d;
      id_exc_q   <= id_exc_d;
      id_cause_q <= id_cause_d;
      id_idle_q  <= id_idle_d && !(!halt_q && stop_i);
    end
  end

  assign id_valid_o   = id_valid_q;
  assign id_ctx_o     = id_ctx_q;
  assign id_pc_o      = id_pc_q;
  assign id_pass_o    = id_pass_q;
  assign id_exc_o     = id_exc_q;
  assign id_cause_o   = id_cause_q;
  assign ex_halt_o    = ex_halt;
  assign running_o    = running_q;
  assign cycle_q_o    = cycle_q;
  assign halt_o       = halt_q;
  assign exited_o     = exited_q;
  assign exit_code_o  = exit_code_q;
  assign trap_o       = trap_q;
  assign trap_ctx_o   = trap_ctx_q;
  assign trap_pc_o    = trap_pc_q;
  assign trap_cause_o = trap_cause_q;
  assign trap_value_o = trap_value_q;
  assign cycle_o      = halt_q ? 64'(halt_cycles_q) : cycle64;
  assign idle_o       = idle64;
  assign hs_pc_o      = pc_q[32*hs_ctx_i +: 32];
  assign hs_cstate_o  = {HasLongOps && (lop_q[3*hs_ctx_i +: 3] != 3'd0),
                         (hs_ctx_i == 3'd0) && sync_q,
                         (hs_ctx_i == 3'd0) && wait_q,
                         running_pad[hs_ctx_i]};

endmodule
