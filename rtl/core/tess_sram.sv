// Tile SRAM: behavioural dual-port RAM of Words 32-bit words with byte write enables and
// synchronous reads (data one cycle after the request; the read data register holds when not
// requested). Port A reads (instruction fetch); port B reads or writes (loads, stores, host port).
// A read on port A of the word port B writes in the same cycle returns the old data (the fetch
// timing rule of docs/tile.md).
// Not reset: memory contents survive reset (Device::reset keeps them).
module tess_sram #(
  parameter int Words = tess_params_pkg::TILE_MEM_BYTES / 4,
  localparam int Aw   = $clog2(Words)
) (
  input  logic          clk_i,
  input  logic          a_req_i,
  input  logic [Aw-1:0] a_addr_i,
  output logic [31:0]   a_rdata_o,
  input  logic          b_req_i,
  input  logic          b_we_i,
  input  logic [3:0]    b_be_i,
  input  logic [Aw-1:0] b_addr_i,
  input  logic [31:0]   b_wdata_i,
  output logic [31:0]   b_rdata_o
);

  logic [31:0] mem [Words];

  // Memories are the one exception to "always_ff holds only q <= d": the write enables select
  // bytes, which every tool maps to a RAM with byte enables.
`ifdef TESS_ICE40
  // iCE40 (scripts/fpga-ice40.sh): port A's block-RAM copy is read on the falling edge
  // (SB_RAM40_4KNR), half a cycle before the rising edge that writes a store of the same cycle,
  // so it returns the old word by construction; at the rising edge the word goes into a_rdata_o,
  // which gives the timing of the read below. A read on the rising edge would need Yosys'
  // read-during-write emulation around the block RAM (118 flip-flops and 90 LUT4; the block
  // RAM's own behaviour on a collision is not what docs/tile.md needs, or not established).
  logic [31:0] a_half;
  always_ff @(negedge clk_i) begin
    if (a_req_i) begin
      a_half <= mem[a_addr_i];
    end
  end
  always_ff @(posedge clk_i) begin
    if (a_req_i) begin
      a_rdata_o <= a_half;
    end
  end
`else
  always_ff @(posedge clk_i) begin
    if (a_req_i) begin
      a_rdata_o <= mem[a_addr_i];
    end
  end
`endif

  always_ff @(posedge clk_i) begin
    if (b_req_i) begin
      if (b_we_i) begin
        for (int i = 0; i < 4; i++) begin
          if (b_be_i[i]) begin
            mem[b_addr_i][8*i +: 8] <= b_wdata_i[8*i +: 8];
          end
        end
      end else begin
        b_rdata_o <= mem[b_addr_i];
      end
    end
  end

endmodule
