// Console buffers of the link bridge (tess_link_bridge, docs/link-protocol.md "CONSOLE"): each
// tile's console bytes, captured in the cycles the chip advances (capture_i), go to a buffer of
// ConsoleBytes per tile (block RAM: one write and one registered read port each); bytes beyond it
// are lost and counted (lost_o, the bridge register CR_LINK_CONSOLE_LOST). clear_i empties every
// buffer and the count (a chip reset). The request sequencer reads tile tile_i's byte raddr_i
// (rdata_o a clock later) and its byte count (count_o, 0..ConsoleBytes).
module tess_link_console #(
  parameter int NumTiles     = tess_params_pkg::NUM_TILES,
  parameter int ConsoleBytes = 1024,
  localparam int Cw = $clog2(ConsoleBytes),
  localparam int Nw = Cw + 1,             // byte count 0..ConsoleBytes
  localparam int Tw = (NumTiles > 1) ? $clog2(NumTiles) : 1
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   capture_i,
  input  logic [NumTiles-1:0]    valid_i,
  input  logic [NumTiles*8-1:0]  byte_i,
  input  logic                   clear_i,
  input  logic [Tw-1:0]          tile_i,
  input  logic [Cw-1:0]          raddr_i,
  output logic [Nw-1:0]          count_o,
  output logic [7:0]             rdata_o,
  output logic [31:0]            lost_o
);

  logic [NumTiles*Nw-1:0] cons_count;
  logic [NumTiles*8-1:0]  cons_rdata;
  logic [NumTiles-1:0]    cons_full;
  logic [31:0]            lost_q, lost_d;
  assign count_o = cons_count[Nw*tile_i +: Nw];
  assign rdata_o = cons_rdata[8*tile_i +: 8];

  always_comb begin
    lost_d = lost_q;
    if (clear_i) begin
      lost_d = '0;
    end else if (|(valid_i & cons_full & {NumTiles{capture_i}})) begin
      lost_d = lost_q + 32'd1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      lost_q <= '0;
    end else begin
      lost_q <= lost_d;
    end
  end

  assign lost_o = lost_q;

  for (genvar t = 0; t < NumTiles; t++) begin : g_console
    logic [7:0]    mem [ConsoleBytes];
    logic [Nw-1:0] count_q, count_d;
    logic          we;
    logic [7:0]    rdata_q;
    assign cons_full[t] = count_q[Cw];    // count == ConsoleBytes
    assign we           = capture_i && valid_i[t] && !cons_full[t];
    always_comb begin
      count_d = count_q;
      if (clear_i) begin
        count_d = '0;
      end else if (we) begin
        count_d = count_q + Nw'(1);
      end
    end
    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        count_q <= '0;
      end else begin
        count_q <= count_d;
      end
    end
    always_ff @(posedge clk_i) begin
      if (we) begin
        mem[count_q[Cw-1:0]] <= byte_i[8*t +: 8];
      end
      rdata_q <= mem[raddr_i];
    end
    assign cons_rdata[8*t +: 8]   = rdata_q;
    assign cons_count[Nw*t +: Nw] = count_q;
  end

endmodule
