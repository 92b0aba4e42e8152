// Register file of the tile core for all contexts: Contexts x 32 registers of 32 bits. Used
// twice: the integer file (ZeroReg = 1, x0 reads 0 and ignores writes) and the FP file. Three
// combinational read ports for one context (ID stage); write port a (WB), and with PortB = 1 a
// second port that writes only register PortBReg of a context (RUN loads a worker's a0), both
// effective at the next clock edge. The two ports never target the same register (docs/tile.md:
// RUN only starts an idle worker, which has nothing left in WB); port b wins if they did.
// Every register reads 0 after reset (docs/tile.md). The storage is an unreset memory with one
// write port (port a), so synthesis maps it to RAM (LUT RAM, block RAM); a reset flop per
// register says whether it has been written since reset, and an unwritten register reads 0.
// With TESS_ICE40 there are no such flops (256 of them and their read muxes cost the iCE40
// about 700 logic cells): the chip clears the memory after every reset instead, one entry per
// cycle through port a (clear_i, clear_idx_i), and holds the pipeline until it is done
// (tess_chip, "register-file clear"). Without TESS_ICE40 clear_i is ignored.
// Port b writes a side register per worker context (1 .. Contexts-1: RUN never targets the
// supervisor) instead of the memory; it overrides PortBReg of that context until port a writes
// the register again.
// Latency: reads combinational, writes visible after the clock edge. With TESS_ICE40 (the iCE40
// flow, scripts/fpga-ice40.sh) the reads come from block RAM on the falling edge: same timing.
`include "tess_ctx_select.svh"

module tess_regfile #(
  parameter int Contexts = tess_params_pkg::NUM_CONTEXTS,
  parameter bit ZeroReg  = 1'b1,
  parameter bit PortB    = 1'b0,
  parameter int PortBReg = 10
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic [2:0]  rctx_i,
  input  logic [4:0]  raddr_a_i,
  input  logic [4:0]  raddr_b_i,
  input  logic [4:0]  raddr_c_i,
  output logic [31:0] rdata_a_o,
  output logic [31:0] rdata_b_o,
  output logic [31:0] rdata_c_o,
  input  logic        we_a_i,
  input  logic [2:0]  wctx_a_i,
  input  logic [4:0]  waddr_a_i,
  input  logic [31:0] wdata_a_i,
  input  logic        we_b_i,      // PortB only
  input  logic [2:0]  wctx_b_i,    // a worker: 1 .. Contexts-1
  input  logic [31:0] wdata_b_i,
  input  logic        clear_i,     // TESS_ICE40: write 0 to entry clear_idx_i
  input  logic [7:0]  clear_idx_i  // {context, register}
);

  // Power-of-two number of contexts so that every {ctx, addr} index is in range.
  // Indexes are {context, register}, Iw bits (the context ports are 3 bits wide for six).
  localparam int Cdepth = 2 ** $clog2(Contexts);
  localparam int Depth  = 32 * Cdepth;
  localparam int Iw     = $clog2(Depth);
  localparam logic [4:0] BReg = 5'(PortBReg);

  logic [31:0]      mem [Depth];
  logic [Iw-1:0]    widx_a, clear_idx;
  logic [Iw-1:0]    ridx_a, ridx_b, ridx_c;
  logic             wen_a;

  assign widx_a    = Iw'({wctx_a_i, waddr_a_i});
  assign ridx_a    = Iw'({rctx_i, raddr_a_i});
  assign ridx_b    = Iw'({rctx_i, raddr_b_i});
  assign ridx_c    = Iw'({rctx_i, raddr_c_i});
  // The chip's clear counts through 256 entries; a smaller file sees each entry several times.
  assign clear_idx = Iw'(clear_idx_i);

  // x0 of the integer file is never written, so it stays "unwritten" (cleared) and reads 0.
  assign wen_a = we_a_i && !(ZeroReg && (waddr_a_i == 5'd0));

  logic [31:0] mem_a, mem_b, mem_c;
`ifdef TESS_ICE40
  // iCE40: no written flags; the clear takes port a while the pipeline is held (nothing else
  // writes then). Memories are the one exception to "always_ff holds only q <= d".
  logic unused_rst_n;  // only port b's side registers are reset
  assign unused_rst_n = rst_ni;
  logic unused_clear_hi;  // clear_idx_i above Iw bits (a file of fewer than eight contexts)
  assign unused_clear_hi = ^clear_idx_i;
  always_ff @(posedge clk_i) begin
    if (clear_i) begin
      mem[clear_idx] <= 32'd0;
    end else if (wen_a) begin
      mem[widx_a] <= wdata_a_i;
    end
  end

  // iCE40: no LUT RAM, and block RAM reads are synchronous. The read ports are registered on
  // the falling clock edge (one block-RAM copy per port, SB_RAM40_4KNR), so their data is there
  // in the second half of the same cycle: the same cycle behaviour as the combinational read,
  // because the read addresses come from registers and writes happen on the rising edge. Costs
  // half a clock period for the read; the ID-stage logic after it has the other half.
  always_ff @(negedge clk_i) begin
    mem_a <= mem[ridx_a];
    mem_b <= mem[ridx_b];
    mem_c <= mem[ridx_c];
  end
`else
  logic [Depth-1:0] written_q, written_d;
  logic             unused_clear;
  assign unused_clear = ^{clear_i, clear_idx_i, clear_idx};

  // Memories are the one exception to "always_ff holds only q <= d": no reset, one write port.
  always_ff @(posedge clk_i) begin
    if (wen_a) begin
      mem[widx_a] <= wdata_a_i;
    end
  end

  always_comb begin
    written_d = written_q;
    if (wen_a) begin
      written_d[widx_a] = 1'b1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      written_q <= '0;
    end else begin
      written_q <= written_d;
    end
  end

  assign mem_a = written_q[ridx_a] ? mem[ridx_a] : 32'd0;
  assign mem_b = written_q[ridx_b] ? mem[ridx_b] : 32'd0;
  assign mem_c = written_q[ridx_c] ? mem[ridx_c] : 32'd0;
`endif

  if (PortB) begin : g_port_b
    // Side register of PortBReg per worker (worker k at k - 1), valid until port a writes that
    // register. Workers only: a side register for the supervisor, or for the unused indices up
    // to the power of two, would never be written (the iCE40 build saves about 140 cells).
    localparam int Workers = Contexts - 1;
    logic [Workers*32-1:0] side_q, side_d;
    logic [Workers-1:0]    side_valid_q, side_valid_d;
    logic                  wen_b;
    logic [2:0]            wk_a, wk_b, wk_r;
    logic                  worker_a, worker_r;
    assign wen_b    = we_b_i && !(ZeroReg && (BReg == 5'd0));
    assign wk_a     = wctx_a_i - 3'd1;
    assign wk_b     = wctx_b_i - 3'd1;
    assign wk_r     = rctx_i - 3'd1;
    assign worker_a = (wctx_a_i != 3'd0) && (32'(wctx_a_i) < 32'(Contexts));
    assign worker_r = (rctx_i != 3'd0) && (32'(rctx_i) < 32'(Contexts));

    always_comb begin
      side_d       = side_q;
      side_valid_d = side_valid_q;
      if (wen_a && worker_a && (waddr_a_i == BReg)) begin
        `TESS_CTX_SET(side_valid_d, 1, Workers, wk_a, 1'b0)
      end
      if (wen_b) begin
        `TESS_CTX_SET(side_valid_d, 1, Workers, wk_b, 1'b1)
        `TESS_CTX_SET(side_d, 32, Workers, wk_b, wdata_b_i)
      end
    end

    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        side_q       <= '0;
        side_valid_q <= '0;
      end else begin
        side_q       <= side_d;
        side_valid_q <= side_valid_d;
      end
    end

    logic side_r;
    logic [31:0] side_v;
    logic [7:0] side_valid_pad;  // side_valid_q for every 3-bit worker index
    assign side_valid_pad = 8'(side_valid_q);
    assign side_r = worker_r && side_valid_pad[wk_r];
    assign side_v = side_q[32*wk_r +: 32];
    assign rdata_a_o = (side_r && (raddr_a_i == BReg)) ? side_v : mem_a;
    assign rdata_b_o = (side_r && (raddr_b_i == BReg)) ? side_v : mem_b;
    assign rdata_c_o = (side_r && (raddr_c_i == BReg)) ? side_v : mem_c;
  end else begin : g_no_port_b
    logic        unused_we_b;
    logic [2:0]  unused_wctx_b;
    logic [31:0] unused_wdata_b;
    assign unused_we_b    = we_b_i;
    assign unused_wctx_b  = wctx_b_i;
    assign unused_wdata_b = wdata_b_i;
    assign rdata_a_o = mem_a;
    assign rdata_b_o = mem_b;
    assign rdata_c_o = mem_c;
  end

endmodule
