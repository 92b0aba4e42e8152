// Smoke test of tess_tile for Icarus Verilog (scripts/lint-rtl.sh runs it): loads a hand-encoded
// program through the host port, runs it to EXIT and checks what docs/tile.md says must happen.
//
// The program (supervisor only) sums 5+4+3+2+1 and writes the sum to EXIT:
//   0x00 addi x2, x0, 5        0x0c addi x2, x2, -1        0x18 sw  x3, 0(x1)   (EXIT)
//   0x04 addi x3, x0, 0        0x10 bne  x2, x0, 0x08
//   0x08 add  x3, x3, x2       0x14 lui  x1, 0x80000
// Expected, from the contract alone: exit code 15; 2 + 5*3 + 2 = 19 instructions, all issued by
// context 0 in its slots 0, 6, 12, ..., so the EXIT store issues at h = 6*18 = 108 and the cycle
// count is h + 1 = 109; the EXIT store retires, so instret of context 0 is 19 and 19 retirement
// records come out. The memory keeps the program: a host read of word 6 returns the EXIT store.
// Counters (docs/tile.md, "Counters"): before the run the host presets the cycle, idle and
// context 0's instret counters through the checkpoint port to values just below 2^32 with a high
// word of 1 (Counter*Preset). With CounterBits = 64 the run adds 109 cycles, 90 idle slots and 19
// instructions to them; with CounterBits = 32 (scripts/lint-rtl.sh runs both) the high-word writes
// are ignored and all three wrap modulo 2^32, the retirement records' cycles too.
// Latency: none (testbench).
module tess_tile_smoke_tb;

  parameter int CounterBits = tess_params_pkg::COUNTER_BITS;

  localparam int MemBytes = 4096;
  localparam int Aw       = $clog2(MemBytes / 4);
  localparam int Contexts = tess_params_pkg::NUM_CONTEXTS;
  localparam int ProgLen  = 7;
  localparam int Timeout  = 1000;

  localparam logic [31:0] ExpExit    = 32'd15;
  localparam logic [63:0] ExpCycles  = 64'd109;
  localparam logic [63:0] ExpInstret = 64'd19;
  localparam logic [63:0] ExpIdle    = 64'd90;   // 109 slots, 19 issued
  localparam logic [63:0] CyclePreset   = 64'h1_ffff_ffc0;
  localparam logic [63:0] IdlePreset    = 64'h1_ffff_ffff;
  localparam logic [63:0] InstretPreset = 64'h1_ffff_fff8;
  localparam logic [63:0] CounterMask   = (CounterBits == 64) ? '1 : 64'hffff_ffff;

  logic [31:0] prog [ProgLen];

  logic                      clk;
  logic                      rst_n;
  logic                      run;
  logic                      host_req;
  logic                      host_we;
  logic [3:0]                host_be;
  logic [Aw-1:0]             host_addr;
  logic [31:0]               host_wdata;
  logic [31:0]               host_rdata;
  logic                      halting;
  logic                      halted;
  logic [31:0]               exit_code;
  logic                      trap;
  logic [2:0]                trap_ctx;
  logic [31:0]               trap_pc;
  logic [4:0]                trap_cause;
  logic [31:0]               trap_value;
  logic                      console_valid;
  logic [7:0]                console_byte;
  logic [63:0]               cycle;
  logic [Contexts*64-1:0]    instret;
  logic [63:0]               idle;
  logic                      retire_valid;
  logic [63:0]               retire_cycle;
  logic [2:0]                retire_ctx;
  logic [31:0]               retire_pc;
  logic [31:0]               retire_insn;
  logic [1:0]                retire_dest;
  logic [4:0]                retire_rd;
  logic [31:0]               retire_value;
  logic                      hs_we;
  logic [3:0]                hs_sel;
  logic [31:0]               hs_wdata;
  logic [31:0]               unused_hs_rdata;

  // The chip-facing ports idle: enabled, never stopped or released, nothing on the fabric.
  logic        unused_arrive, unused_arrived, unused_halt_now, unused_trap_now, unused_xerr;
  logic [31:0] unused_desc, unused_sync_pc, unused_err_pc, unused_err_value, unused_tx;
  logic [2:0]  unused_err_ctx;
  logic [4:0]  unused_err_cause;
  logic        unused_rx_sel;
  logic [63:0] unused_instr, unused_sync_wait, unused_exch;

  tess_tile #(
    .MemBytes    (MemBytes),
    .NumTiles    (1),             // a lone tile
    .CounterBits (CounterBits)
  ) u_dut (
    .clk_i           (clk),
    .rst_ni          (rst_n),
    .run_i           (run),
    .tile_id_i       (16'd0),
    .rf_clear_i      (1'b0),
    .rf_clear_idx_i  (8'd0),
    .enable_i        (1'b1),
    .stop_i          (1'b0),
    .drop_i          (1'b0),
    .release_i       (1'b0),
    .arrive_o        (unused_arrive),
    .arrived_o       (unused_arrived),
    .sync_desc_o     (unused_desc),
    .sync_pc_o       (unused_sync_pc),
    .halt_now_o      (unused_halt_now),
    .trap_now_o      (unused_trap_now),
    .xerr_o          (unused_xerr),
    .err_ctx_o       (unused_err_ctx),
    .err_pc_o        (unused_err_pc),
    .err_cause_o     (unused_err_cause),
    .err_value_o     (unused_err_value),
    .tx_o            (unused_tx),
    .rx_sel_o        (unused_rx_sel),
    .rx_data_i       (32'd0),
    .host_req_i      (host_req),
    .host_we_i       (host_we),
    .host_be_i       (host_be),
    .host_addr_i     (host_addr),
    .host_wdata_i    (host_wdata),
    .host_rdata_o    (host_rdata),
    .halting_o       (halting),
    .halted_o        (halted),
    .exit_code_o     (exit_code),
    .trap_o          (trap),
    .trap_ctx_o      (trap_ctx),
    .trap_pc_o       (trap_pc),
    .trap_cause_o    (trap_cause),
    .trap_value_o    (trap_value),
    .console_valid_o (console_valid),
    .console_byte_o  (console_byte),
    .cycle_o         (cycle),
    .instret_o       (instret),
    .idle_o          (idle),
    .instr_o         (unused_instr),
    .sync_wait_o     (unused_sync_wait),
    .exch_o          (unused_exch),
    .retire_valid_o  (retire_valid),
    .retire_cycle_o  (retire_cycle),
    .retire_ctx_o    (retire_ctx),
    .retire_pc_o     (retire_pc),
    .retire_insn_o   (retire_insn),
    .retire_dest_o   (retire_dest),
    .retire_rd_o     (retire_rd),
    .retire_value_o  (retire_value),
    .hs_we_i         (hs_we),
    .hs_sel_i        (hs_sel),
    .hs_ctx_i        (3'd0),
    .hs_reg_i        (8'd0),
    .hs_wdata_i      (hs_wdata),
    .hs_rdata_o      (unused_hs_rdata)
  );

  always #5 clk = ~clk;

  int retired;
  logic [63:0] last_retire_cycle;
  always @(posedge clk) begin
    if (retire_valid) begin
      retired <= retired + 1;
      last_retire_cycle <= retire_cycle;
    end
  end

  // A checkpoint-state write while held (tess_tile hs_*): takes effect at the next edge.
  task automatic hs_write(input logic [3:0] sel, input logic [31:0] data);
    hs_we    = 1'b1;
    hs_sel   = sel;
    hs_wdata = data;
    @(negedge clk);
    hs_we = 1'b0;
  endtask

  int errors;
  task automatic check(input string what, input logic [63:0] got, input logic [63:0] want);
    if (got !== want) begin
      $display("FAIL %s: got %0d (0x%0h), want %0d", what, got, got, want);
      errors++;
    end
  endtask

  initial begin
    prog[0] = 32'h0050_0113;  // addi x2, x0, 5
    prog[1] = 32'h0000_0193;  // addi x3, x0, 0
    prog[2] = 32'h0021_81b3;  // add  x3, x3, x2
    prog[3] = 32'hfff1_0113;  // addi x2, x2, -1
    prog[4] = 32'hfe01_1ce3;  // bne  x2, x0, -8
    prog[5] = 32'h8000_00b7;  // lui  x1, 0x80000
    prog[6] = 32'h0030_a023;  // sw   x3, 0(x1)
    errors     = 0;
    retired    = 0;
    clk        = 1'b0;
    rst_n      = 1'b0;
    run        = 1'b0;
    host_req   = 1'b0;
    host_we    = 1'b0;
    host_be    = 4'h0;
    host_addr  = '0;
    host_wdata = '0;
    hs_we      = 1'b0;
    hs_sel     = '0;
    hs_wdata   = '0;
    repeat (2) @(negedge clk);
    rst_n = 1'b1;

    // Load through the host port while held: one word per cycle.
    for (int i = 0; i < ProgLen; i++) begin
      host_req   = 1'b1;
      host_we    = 1'b1;
      host_be    = 4'hf;
      host_addr  = Aw'(i);
      host_wdata = prog[i];
      @(negedge clk);
    end
    host_req = 1'b0;
    host_we  = 1'b0;

    // Counters just below 2^32, high words 1 (ignored with CounterBits = 32).
    hs_write(tess_core_pkg::HS_CYCLE_LO, CyclePreset[31:0]);
    hs_write(tess_core_pkg::HS_CYCLE_HI, CyclePreset[63:32]);
    hs_write(tess_core_pkg::HS_IDLE_LO, IdlePreset[31:0]);
    hs_write(tess_core_pkg::HS_IDLE_HI, IdlePreset[63:32]);
    hs_write(tess_core_pkg::HS_INSTRET_LO, InstretPreset[31:0]);
    hs_write(tess_core_pkg::HS_INSTRET_HI, InstretPreset[63:32]);

    // Run until halted.
    run = 1'b1;
    for (int c = 0; c < Timeout && !halted; c++) begin
      @(negedge clk);
    end
    run = 1'b0;

    check("halted", 64'(halted), 64'd1);
    check("trap", 64'(trap), 64'd0);
    check("exit code", 64'(exit_code), 64'(ExpExit));
    check("cycle count", cycle, (CyclePreset + ExpCycles) & CounterMask);
    check("idle slots", idle, (IdlePreset + ExpIdle) & CounterMask);
    check("instret[0]", instret[63:0], (InstretPreset + ExpInstret) & CounterMask);
    check("retirement records", 64'(retired), ExpInstret);
    // The EXIT store retires last; its record carries its retire (issue) cycle h = 108.
    check("last retire cycle", last_retire_cycle, (CyclePreset + ExpCycles - 64'd1) & CounterMask);

    // Read back the EXIT store's word: data one cycle after the request.
    host_req  = 1'b1;
    host_addr = Aw'(6);
    @(negedge clk);
    host_req  = 1'b0;
    check("host read of word 6", 64'(host_rdata), 64'(prog[6]));

    if (errors == 0) begin
      $display("PASS tess_tile smoke (%0d-bit counters): exit %0d, cycle counter %0d, instret %0d",
               CounterBits, exit_code, cycle, instret[63:0]);
    end
    $finish;
  end

endmodule
