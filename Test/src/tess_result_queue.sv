// Small in-order queue with bypass for results of the FP units. The FP units have a fixed
// 3-cycle latency and no stall input; when the tile's pipeline is paused (run_i low, e.g. while
// the host reads memory between two runs), results still in flight arrive before their
// instruction reaches WB and wait here. While the pipeline runs, a result arrives in the very
// cycle its instruction is in WB and passes straight through (data_o = data_i when empty).
module tess_result_queue #(
  parameter int Width = 37,
  parameter int Depth = 4
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             push_i,
  input  logic [Width-1:0] data_i,
  input  logic             pop_i,
  output logic [Width-1:0] data_o
);

  localparam int Pw = $clog2(Depth);

  // The slots are a memory without reset: a slot is read only after it was written (count_q).
  logic [Width-1:0]            slot_q [Depth];
  logic [Pw-1:0]               rd_q, rd_d;
  logic [Pw-1:0]               wr_q, wr_d;
  logic [Pw:0]                 count_q, count_d;
  logic                        empty;
  logic                        store;

  assign empty  = count_q == '0;
  assign data_o = empty ? data_i : slot_q[rd_q];
  // A pushed result is stored unless it is consumed in the same cycle through the bypass.
  assign store  = push_i && !(pop_i && empty);

  always @* begin
    rd_d    = rd_q;
    wr_d    = wr_q;
    count_d = count_q;
    if (store) begin
      wr_d = wr_q + 1'b1;
    end
    if (pop_i && !empty) begin
      rd_d = rd_q + 1'b1;
    end
    unique case ({store, pop_i && !empty})
      2'b10:   count_d = count_q + 1'b1;
      2'b01:   count_d = count_q - 1'b1;
      default: count_d = count_q;
    endcase
  end

  // Like tess_sram, the one exception to "always_ff holds only q <= d".
  always_ff @(posedge clk_i) begin
    if (store) begin
      slot_q[wr_q] <= data_i;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rd_q    <= '0;
      wr_q    <= '0;
      count_q <= '0;
    end else begin
      rd_q    <= rd_d;
      wr_q    <= wr_d;
      count_q <= count_d;
    end
  end

endmodule
