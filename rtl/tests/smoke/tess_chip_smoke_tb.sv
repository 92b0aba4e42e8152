// Smoke test of tess_chip for Icarus Verilog (scripts/lint-rtl.sh runs it): a 2-tile chip with
// 1 KiB tiles runs one sync and one exchange, checked against docs/chip.md.
//
// Both supervisors (hand-encoded):
//   0x00 lui   x1, 0x80000          0x10 csrrs x3, cycle, x0
//   0x04 addi  x2, x0, 0x200        0x14 sw    x3, 0x300(x0)
//   0x08 sw    x2, 0x40(x1)  XCHG   0x18 sw    x0, 0(x1)     EXIT
//   0x0c sw    x0, 0x44(x1)  SYNC
// SYNC issues at 18 on both tiles: a = 21, R = 21 + SYNC_LATENCY (4) = 25.
// Tile 0's exchange program: SEND 2 from 0x100; END: words at 25, 26, sends at 27, 28, END at 29
//   -> X = 30, 5 exchange cycles; the supervisor resumes at 30 and stores 30 at 0x300.
// Tile 1's: DELAY 2 (25; idle 26, 27); RECV 2 from bus 0 into 0x180: words 28, 29, receives at
//   30, 31 = bus 0 of 27, 28 (EXCHANGE_LATENCY 3); END at 32 -> X = 33, 8 exchange cycles;
//   resumes at 36 (first supervisor slot >= 33), stores 36; EXIT at 48 -> the chip halts with 49
//   cycles. Both tiles waited R - a = 4 cycles at the sync.
// Then: host accesses to tile 2 or to byte 1024 set the error flag.
// Latency: none (testbench).
module tess_chip_smoke_tb;

  localparam int NumTiles = 2;
  localparam int MemBytes = 1024;
  localparam bit HasFpu   = 1'b1;
  localparam bit HasMulDiv = 1'b1;
  localparam int CounterBits = 64;
  localparam bit HasExchange   = 1'b1;
  localparam bit HasCheckpoint = 1'b1;
  localparam bit MatrixUnit = tess_params_pkg::MATRIX_UNIT != 0;
  localparam int Contexts = tess_params_pkg::NUM_CONTEXTS;
  localparam int Timeout  = 1000;

  `include "tess_chip_tb_dut.svh"

  always #5 clk = ~clk;

  int errors;
  task automatic check(input string what, input logic [63:0] got, input logic [63:0] want);
    if (got !== want) begin
      $display("FAIL %s: got %0d (0x%0h), want %0d (0x%0h)", what, got, got, want, want);
      errors++;
    end
  endtask

  // Host-port helpers; every access takes one cycle, read data and error after it.
  task automatic host_write(input int tile, input logic [31:0] addr, input logic [31:0] data);
    host_req   = 1'b1;
    host_we    = 1'b1;
    host_tile  = 16'(tile);
    host_addr  = addr;
    host_be    = 4'hf;
    host_wdata = data;
    @(negedge clk);
    host_req = 1'b0;
    host_we  = 1'b0;
  endtask

  task automatic host_read(input int tile, input logic [31:0] addr, output logic [31:0] data,
                           output logic err);
    host_req  = 1'b1;
    host_we   = 1'b0;
    host_tile = 16'(tile);
    host_addr = addr;
    @(negedge clk);
    host_req = 1'b0;
    data = host_rdata;
    err  = host_err;
  endtask

  task automatic ctl_write(input logic [11:0] addr, input logic [31:0] data);
    ctl_we    = 1'b1;
    ctl_addr  = addr;
    ctl_wdata = data;
    @(negedge clk);
    ctl_we = 1'b0;
  endtask

  task automatic ctl_read(input logic [11:0] addr, output logic [31:0] data);
    ctl_addr = addr;
    #1;
    data = ctl_rdata;
  endtask

  logic [31:0] sup [7];
  logic [31:0] rdata;
  logic        rerr;

  initial begin
    sup[0] = 32'h8000_00b7;  // lui   x1, 0x80000
    sup[1] = 32'h2000_0113;  // addi  x2, x0, 0x200
    sup[2] = 32'h0420_a023;  // sw    x2, 0x40(x1)
    sup[3] = 32'h0400_a223;  // sw    x0, 0x44(x1)
    sup[4] = 32'hc000_21f3;  // csrrs x3, cycle, x0
    sup[5] = 32'h3030_2023;  // sw    x3, 0x300(x0)
    sup[6] = 32'h0000_a023;  // sw    x0, 0(x1)
    errors     = 0;
    clk        = 1'b0;
    rst_n      = 1'b0;
    run        = 1'b0;
    host_req   = 1'b0;
    host_we    = 1'b0;
    host_tile  = '0;
    host_addr  = '0;
    host_be    = '0;
    host_wdata = '0;
    ctl_we     = 1'b0;
    ctl_addr   = '0;
    ctl_wdata  = '0;
    repeat (2) @(negedge clk);
    rst_n = 1'b1;
    @(negedge clk);

    ctl_read(12'(tess_params_pkg::CR_ID), rdata);
    check("ID", 64'(rdata), 64'(tess_params_pkg::CHIP_ID));
    ctl_read(12'(tess_params_pkg::CR_TILES), rdata);
    check("TILES", 64'(rdata), 64'(NumTiles));

    for (int t = 0; t < NumTiles; t++) begin
      for (int i = 0; i < 7; i++) begin
        host_write(t, 32'(4 * i), sup[i]);
      end
    end
    host_write(0, 32'h100, 32'ha5a5_0001);
    host_write(0, 32'h104, 32'ha5a5_0002);
    host_write(0, 32'h200, 32'h2000_0002);  // SEND 2
    host_write(0, 32'h204, 32'h0000_0100);  //   from 0x100
    host_write(0, 32'h208, 32'h0000_0000);  // END
    host_write(1, 32'h200, 32'h1000_0002);  // DELAY 2
    host_write(1, 32'h204, 32'h3000_0002);  // RECV 2
    host_write(1, 32'h208, 32'h0000_0180);  //   bus 0, into 0x180
    host_write(1, 32'h20c, 32'h0000_0000);  // END

    ctl_write(12'(tess_params_pkg::CR_CTRL), 32'd2);  // RUN
    run = 1'b1;
    for (int c = 0; c < Timeout && state == 4'(tess_params_pkg::ST_RUNNING); c++) begin
      @(negedge clk);
    end
    run = 1'b0;

    check("state", 64'(state), 64'(tess_params_pkg::ST_HALTED));
    check("cycles", cycle, 64'd49);
    host_read(0, 32'h300, rdata, rerr);
    check("tile 0 resume cycle", 64'(rdata), 64'd30);
    host_read(1, 32'h300, rdata, rerr);
    check("tile 1 resume cycle", 64'(rdata), 64'd36);
    host_read(1, 32'h180, rdata, rerr);
    check("tile 1 word 0 received", 64'(rdata), 64'h0000_0000_a5a5_0001);
    host_read(1, 32'h184, rdata, rerr);
    check("tile 1 word 1 received", 64'(rdata), 64'h0000_0000_a5a5_0002);
    check("host read error flag", 64'(rerr), 64'd0);
    for (int t = 0; t < NumTiles; t++) begin
      ctl_write(12'(tess_params_pkg::CR_TILE_SEL), 32'(t));
      ctl_read(12'(tess_params_pkg::CR_T_SYNCWAIT_LO), rdata);
      check("sync wait", 64'(rdata), 64'd4);
      ctl_read(12'(tess_params_pkg::CR_T_EXCH_LO), rdata);
      check("exchange cycles", 64'(rdata), (t == 0) ? 64'd5 : 64'd8);
    end

    host_read(2, 32'h0, rdata, rerr);
    check("host read of tile 2 flagged", 64'(rerr), 64'd1);
    host_read(0, 32'(MemBytes), rdata, rerr);
    check("host read past the memory flagged", 64'(rerr), 64'd1);

    if (errors == 0) begin
      $display("PASS tess_chip smoke: sync and exchange on %0d tiles, halted after %0d cycles",
               NumTiles, cycle);
    end
    $finish;
  end

endmodule
