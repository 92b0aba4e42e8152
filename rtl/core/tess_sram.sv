// Tile SRAM: behavioural dual-port RAM of Words 32-bit words with byte write enables and
// synchronous reads (data one cycle after the request; the read data register holds when not
// requested). Port A reads (instruction fetch); port B reads or writes (loads, stores, host port).
// A read on port A of the word port B writes in the same cycle returns the old data.
// Not reset: memory contents survive reset (Device::reset keeps them).
module tess_sram #(
  parameter int Words = 16384,
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
  always_ff @(posedge clk_i) begin
    if (a_req_i) begin
      a_rdata_o <= mem[a_addr_i];
    end
  end

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
