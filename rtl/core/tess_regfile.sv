// Register file of the tile core for all contexts: Contexts x 32 registers of 32 bits. Used
// twice: the integer file (ZeroReg = 1, x0 reads 0 and ignores writes) and the FP file. Three
// combinational read ports for one context (ID stage); two write ports (WB, and the RUN port that
// loads a worker's a0), effective at the next clock edge. The two write ports never target the
// same register (docs/tile.md: RUN only starts an idle worker, which has nothing left in WB);
// port b wins if they did.
// Every register reads 0 after reset (docs/tile.md). The storage itself is an unreset memory
// (cheap in simulation and synthesis, one array instead of Contexts*32 flops); a reset flop per
// register says whether it has been written since reset, and an unwritten register reads 0.
// Latency: reads combinational, writes visible after the clock edge.
module tess_regfile #(
  parameter int Contexts = 6,
  parameter bit          ZeroReg  = 1'b1
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
  input  logic        we_b_i,
  input  logic [2:0]  wctx_b_i,
  input  logic [4:0]  waddr_b_i,
  input  logic [31:0] wdata_b_i
);

  // Power-of-two number of contexts so that every {ctx, addr} index is in range.
  localparam int Depth = 32 * (2 ** $clog2(Contexts));

  logic [31:0]      mem [Depth];
  logic [Depth-1:0] written_q, written_d;
  logic [7:0]       widx_a, widx_b;
  logic [7:0]       ridx_a, ridx_b, ridx_c;
  logic             wen_a, wen_b;

  assign widx_a = {wctx_a_i, waddr_a_i};
  assign widx_b = {wctx_b_i, waddr_b_i};
  assign ridx_a = {rctx_i, raddr_a_i};
  assign ridx_b = {rctx_i, raddr_b_i};
  assign ridx_c = {rctx_i, raddr_c_i};

  // x0 of the integer file is never written, so it stays "unwritten" and reads 0. Port a is
  // dropped when port b writes the same register.
  assign wen_b = we_b_i && !(ZeroReg && (waddr_b_i == 5'd0));
  assign wen_a = we_a_i && !(ZeroReg && (waddr_a_i == 5'd0)) && !(wen_b && (widx_a == widx_b));

  // Memories are the one exception to "always_ff holds only q <= d": no reset, write ports only.
  always_ff @(posedge clk_i) begin
    if (wen_a) begin
      mem[widx_a] <= wdata_a_i;
    end
    if (wen_b) begin
      mem[widx_b] <= wdata_b_i;
    end
  end

  always_comb begin
    written_d = written_q;
    if (wen_a) begin
      written_d[widx_a] = 1'b1;
    end
    if (wen_b) begin
      written_d[widx_b] = 1'b1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      written_q <= '0;
    end else begin
      written_q <= written_d;
    end
  end

  assign rdata_a_o = written_q[ridx_a] ? mem[ridx_a] : 32'd0;
  assign rdata_b_o = written_q[ridx_b] ? mem[ridx_b] : 32'd0;
  assign rdata_c_o = written_q[ridx_c] ? mem[ridx_c] : 32'd0;

endmodule
