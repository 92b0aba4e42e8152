// UART receiver, 8 data bits, no parity, one stop bit (8N1), LSB first.
// ClkPerBit clock cycles per bit (>= 4). rx_i is synchronised with two flops; a start bit is
// confirmed at its middle and every data bit is sampled at its middle. A byte whose stop bit
// reads 0 (framing error: noise, wrong baud rate, a break) is dropped and err_o pulses.
// Latency: valid_o pulses for one cycle about half a bit after the middle of the stop bit.
module tess_uart_rx #(
  parameter int ClkPerBit = 104
) (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic       rx_i,
  output logic       valid_o,
  output logic [7:0] data_o,
  output logic       err_o
);

  localparam int Cw = $clog2(ClkPerBit + 1);

  typedef enum logic [1:0] {
    RxIdle,
    RxStart,
    RxData,
    RxStop
  } rx_state_e;

  rx_state_e   state_q, state_d;
  logic [Cw-1:0] cnt_q, cnt_d;
  logic [2:0]  bit_q, bit_d;
  logic [7:0]  shift_q, shift_d;
  logic [1:0]  sync_q;
  logic        valid_d, err_d, valid_q, err_q;

  always @* begin
    state_d = state_q;
    cnt_d   = cnt_q;
    bit_d   = bit_q;
    shift_d = shift_q;
    valid_d = 1'b0;
    err_d   = 1'b0;
    unique case (state_q)
      RxIdle: begin
        if (!sync_q[1]) begin
          state_d = RxStart;
          cnt_d   = Cw'(ClkPerBit / 2 - 1);
        end
      end
      RxStart: begin
        if (cnt_q != '0) begin
          cnt_d = cnt_q - Cw'(1);
        end else if (sync_q[1]) begin
          state_d = RxIdle;                    // a glitch, not a start bit
        end else begin
          state_d = RxData;
          cnt_d   = Cw'(ClkPerBit - 1);
          bit_d   = 3'd0;
        end
      end
      RxData: begin
        if (cnt_q != '0) begin
          cnt_d = cnt_q - Cw'(1);
        end else begin
          shift_d = {sync_q[1], shift_q[7:1]};
          cnt_d   = Cw'(ClkPerBit - 1);
          bit_d   = bit_q + 3'd1;
          if (bit_q == 3'd7) begin
            state_d = RxStop;
          end
        end
      end
      RxStop: begin
        if (cnt_q != '0) begin
          cnt_d = cnt_q - Cw'(1);
        end else begin
          state_d = RxIdle;
          valid_d = sync_q[1];
          err_d   = !sync_q[1];
        end
      end
      default: state_d = RxIdle;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q <= RxIdle;
      cnt_q   <= '0;
      bit_q   <= '0;
      shift_q <= '0;
      sync_q  <= 2'b11;
      valid_q <= 1'b0;
      err_q   <= 1'b0;
    end else begin
      state_q <= state_d;
      cnt_q   <= cnt_d;
      bit_q   <= bit_d;
      shift_q <= shift_d;
      sync_q  <= {sync_q[0], rx_i};
      valid_q <= valid_d;
      err_q   <= err_d;
    end
  end

  assign valid_o = valid_q;
  assign data_o  = shift_q;
  assign err_o   = err_q;

endmodule
