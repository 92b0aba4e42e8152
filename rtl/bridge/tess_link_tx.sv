// Reply sender of the link bridge (tess_link_bridge, docs/link-protocol.md): while start_i (the
// request sequencer's send state) it sends the reply frame a byte at a time to the line: the
// header from the frame buffer (the receiver left the request's header there, already with the
// reply's version and opcode) with the reply's status and length put in, the payload from the
// buffer, then the CRC-32. The magic is not folded into the CRC (tess_link_crc starts from its
// CRC); the CRC's bytes are shifted out of the engine in plain mode. done_o ends the reply.
// The byte counter (idx_i) is the bridge's: each sent byte steps it, each part restarts it.
// Timing: the buffer's registered read needs a clock per byte (rd_ok_q) and the CRC 8 clocks, far
// below a UART byte (10 * ClkPerBit clocks); a byte is sent when tx_ready_i.
module tess_link_tx (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        start_i,        // the reply is being sent (sequencer)
  input  logic [4:0]  idx_i,          // the byte counter, low bits
  input  logic        idx_end_i,      // ... is at the last payload byte
  input  logic [3:0]  status_i,       // the reply's status (codes below 16)
  input  logic [16:0] len_i,          // the reply's payload length
  input  logic [7:0]  buf_rdata_i,    // the frame buffer's byte at idx_i (rd_ok_q)
  input  logic [7:0]  crc_i,          // the CRC register's low byte
  input  logic        crc_busy_i,
  input  logic        tx_ready_i,
  output logic        tx_valid_o,     // a byte is sent (the byte counter steps)
  output logic [7:0]  tx_data_o,
  output logic        done_o,         // the reply's last byte is sent
  output logic        idx_clr_o,      // the next part of the reply starts
  output logic        crc_start_o,    // fold the sent byte into the CRC ...
  output logic        crc_plain_o,    // ... or shift the CRC's byte out
  output logic        buf_rhdr_o      // the buffer read is a header byte
);

  // Header byte offsets (docs/link-protocol.md, "Frame"): status 6..7, length 20..23.
  localparam logic [4:0] HdrStatus = 5'd6;
  localparam logic [4:0] HdrLength = 5'd20;
  localparam logic [4:0] HdrLast   = 5'(tess_params_pkg::LINK_HEADER_BYTES - 1);

  typedef enum logic [1:0] {
    TxHdr,
    TxPay,
    TxCrc
  } tx_state_e;

  tx_state_e tx_q, tx_d;
  logic      rd_ok_q;                     // buf_rdata_i holds the byte at idx_i
  logic      tx_last;
  logic [7:0] tbyte;
  logic      tsend;

  always_comb begin
    tx_d    = tx_q;
    tbyte   = buf_rdata_i;
    tx_last = 1'b0;
    done_o  = 1'b0;
    unique case (tx_q)
      TxHdr: begin
        unique case (idx_i)
          HdrStatus:          tbyte = {4'd0, status_i};
          HdrLength:          tbyte = len_i[7:0];
          HdrLength + 5'd1:   tbyte = len_i[15:8];
          HdrLength + 5'd2:   tbyte = {7'd0, len_i[16]};
          HdrStatus + 5'd1, HdrLast: tbyte = 8'd0;
          default: ;
        endcase
        tx_last = (idx_i == HdrLast);
      end
      TxPay: tx_last = idx_end_i;
      TxCrc: begin
        tbyte   = ~crc_i;
        tx_last = (idx_i[1:0] == 2'd3);
      end
      default: ;
    endcase
    tsend = start_i && rd_ok_q && tx_ready_i && !crc_busy_i;
    if (tsend && tx_last) begin
      unique case (tx_q)
        TxHdr: begin
          if (len_i == 17'd0) begin
            tx_d = TxCrc;
          end else begin
            tx_d = TxPay;
          end
        end
        TxPay:   tx_d = TxCrc;
        default: done_o = 1'b1;
      endcase
    end
    if (!start_i) begin
      tx_d = TxHdr;
    end
  end

  assign tx_valid_o  = tsend;
  assign tx_data_o   = tbyte;
  assign idx_clr_o   = tsend && tx_last && (tx_q != TxCrc);
  // The magic (header bytes 0..3) is not folded in.
  assign crc_start_o = tsend && ((tx_q != TxHdr) || (idx_i[4:2] != 3'd0));
  assign crc_plain_o = crc_start_o && (tx_q == TxCrc);
  assign buf_rhdr_o  = start_i && (tx_q == TxHdr);

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      tx_q    <= TxHdr;
      rd_ok_q <= 1'b0;
    end else begin
      tx_q    <= tx_d;
      rd_ok_q <= start_i && !tsend;
    end
  end

endmodule
