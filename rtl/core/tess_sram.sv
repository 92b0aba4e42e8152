// Tile SRAM: behavioural dual-port RAM of Words 32-bit words with byte write enables and
// synchronous reads (data one cycle after the request; the read data register holds when not
// requested). Port A reads (instruction fetch); port B reads or writes (loads, stores, host port).
// A read on port A of the word port B writes in the same cycle returns the old data (the fetch
// timing rule of docs/tile.md).
// Wide = 1 (a tile with the matrix unit, docs/tile.md "Matrix unit"): the array is four banks of
// Words/4 words, bank i holding the words whose address bits 3..2 are i, so that port B can also
// read or write 128 bits (b_wide_i, b_addr_i[1:0] = 0) in one cycle, every bank at the same row;
// a 32-bit access uses its one bank. Port A reads every bank's row and keeps the word it asked for.
// Not reset: memory contents survive reset (Device::reset keeps them).
module tess_sram #(
  parameter int Words = tess_params_pkg::TILE_MEM_BYTES / 4,
  parameter bit Wide  = 1'b0,
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
  output logic [31:0]   b_rdata_o,
  // Wide only (tie to 0 otherwise): a 128-bit access of words b_addr_i .. b_addr_i + 3
  input  logic          b_wide_i,
  input  logic [127:0]  b_wide_wdata_i,
  output logic [127:0]  b_wide_rdata_o
);

if (!Wide) begin : g_narrow
  logic [31:0] mem [Words];
  logic [128:0] unused_wide;
  assign unused_wide    = {b_wide_i, b_wide_wdata_i};
  assign b_wide_rdata_o = '0;

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
end else begin : g_wide

  logic [1:0]  a_bank_q, b_bank_q;
  logic [31:0] a_word [4];
  logic [31:0] b_word [4];

  for (genvar i = 0; i < 4; i++) begin : g_bank
    logic [31:0] mem [Words / 4];
    logic        b_sel;
    logic [31:0] wdata;
    logic [3:0]  be;
    logic [31:0] a_q, b_q;
    assign b_sel = b_req_i && (b_wide_i || (b_addr_i[1:0] == 2'(i)));
    assign wdata = b_wide_i ? b_wide_wdata_i[32*i +: 32] : b_wdata_i;
    assign be    = b_wide_i ? 4'b1111 : b_be_i;
    always_ff @(posedge clk_i) begin
      if (a_req_i) begin
        a_q <= mem[a_addr_i[Aw-1:2]];
      end
    end
    always_ff @(posedge clk_i) begin
      if (b_sel) begin
        if (b_we_i) begin
          for (int k = 0; k < 4; k++) begin
            if (be[k]) begin
              mem[b_addr_i[Aw-1:2]][8*k +: 8] <= wdata[8*k +: 8];
            end
          end
        end else begin
          b_q <= mem[b_addr_i[Aw-1:2]];
        end
      end
    end
    assign a_word[i] = a_q;
    assign b_word[i] = b_q;
  end

  // The bank each port's read data register shows: the last word read (the data holds when not
  // requested, as in the one-array SRAM).
  always_ff @(posedge clk_i) begin
    if (a_req_i) begin
      a_bank_q <= a_addr_i[1:0];
    end
    if (b_req_i && !b_we_i) begin
      b_bank_q <= b_addr_i[1:0];
    end
  end

  assign a_rdata_o      = a_word[a_bank_q];
  assign b_rdata_o      = b_word[b_bank_q];
  assign b_wide_rdata_o = {b_word[3], b_word[2], b_word[1], b_word[0]};
end

endmodule
