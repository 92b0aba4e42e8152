// UART transmitter, 8N1, LSB first, ClkPerBit clock cycles per bit.
// A byte is taken when valid_i && ready_o; ready_o is 1 while the line is idle. tx_o idles high.
// Throughput: one byte per 10 * ClkPerBit cycles.
module tess_uart_tx #(
  parameter int ClkPerBit = 104
) (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic       valid_i,
  input  logic [7:0] data_i,
  output logic       ready_o,
  output logic       tx_o
);

  localparam int Cw = $clog2(ClkPerBit + 1);

  logic [Cw-1:0] cnt_q, cnt_d;
  logic [3:0]    bits_q, bits_d;      // bits left to send, 0 = idle
  logic [9:0]    shift_q, shift_d;    // stop, data, start (LSB first)

  always @* begin
    cnt_d   = cnt_q;
    bits_d  = bits_q;
    shift_d = shift_q;
    if (bits_q == 4'd0) begin
      if (valid_i) begin
        shift_d = {1'b1, data_i, 1'b0};
        bits_d  = 4'd10;
        cnt_d   = Cw'(ClkPerBit - 1);
      end
    end else if (cnt_q != '0) begin
      cnt_d = cnt_q - Cw'(1);
    end else begin
      shift_d = {1'b1, shift_q[9:1]};
      bits_d  = bits_q - 4'd1;
      cnt_d   = Cw'(ClkPerBit - 1);
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cnt_q   <= '0;
      bits_q  <= '0;
      shift_q <= '1;
    end else begin
      cnt_q   <= cnt_d;
      bits_q  <= bits_d;
      shift_q <= shift_d;
    end
  end

  assign ready_o = (bits_q == 4'd0);
  assign tx_o    = (bits_q == 4'd0) ? 1'b1 : shift_q[0];

endmodule
