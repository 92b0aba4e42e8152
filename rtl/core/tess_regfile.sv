// Register file of the tile core for all contexts: Contexts x 32 registers of 32 bits, flops with
// reset (every register is 0 after reset, docs/tile.md). Used twice: the integer file (ZeroReg = 1,
// x0 reads 0 and ignores writes) and the FP file. Three combinational read ports for one context
// (ID stage); two write ports (WB, and the RUN port that loads a worker's a0), effective at the
// next clock edge. The two write ports never target the same register (docs/tile.md: RUN only
// starts an idle worker, which has nothing left in WB); port b wins if they did.
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

  localparam int Depth = Contexts * 32;

  logic [Depth-1:0][31:0] rf;
  logic [7:0]             widx_a;
  logic [7:0]             widx_b;

  assign widx_a = {wctx_a_i, waddr_a_i};
  assign widx_b = {wctx_b_i, waddr_b_i};

  for (genvar i = 0; i < Depth; i++) begin : g_reg
    if (ZeroReg && (i % 32 == 0)) begin : g_zero
      assign rf[i] = '0;
    end else begin : g_flop
      logic [31:0] reg_q;
      logic [31:0] reg_d;
      always_comb begin
        reg_d = reg_q;
        if (we_b_i && (widx_b == 8'(i))) begin
          reg_d = wdata_b_i;
        end else if (we_a_i && (widx_a == 8'(i))) begin
          reg_d = wdata_a_i;
        end
      end
      always_ff @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          reg_q <= '0;
        end else begin
          reg_q <= reg_d;
        end
      end
      assign rf[i] = reg_q;
    end
  end

  assign rdata_a_o = rf[{rctx_i, raddr_a_i}];
  assign rdata_b_o = rf[{rctx_i, raddr_b_i}];
  assign rdata_c_o = rf[{rctx_i, raddr_c_i}];

endmodule
