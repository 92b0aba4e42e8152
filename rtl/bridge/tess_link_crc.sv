// CRC-32 engine of the link bridge (tess_link_bridge), shared by the receiver, the request
// sequencer and the reply sender: IEEE 802.3 (reflected polynomial 0xEDB88320), one bit per clock.
// start_i takes byte_i; it is folded in over the next 8 clocks (busy_o meanwhile). In plain mode
// (plain_i with start_i) the register shifts right by 8 without feedback: the reply sender sends
// the CRC's bytes that way, and the sequencer uses the byte register alone to load a payload byte
// a bit at a time (bit_o, the bit leaving it in this clock). init_i loads the register after the
// magic (LINK_CRC_MAGIC, rtl/params.json): a frame's CRC covers the bytes after the magic, so both
// directions start from it. A received frame and its own CRC leave LINK_CRC_RESIDUE.
// Timing: 8 clocks a byte; a UART byte is at least 40 clocks.
module tess_link_crc (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        init_i,       // load the register after the magic
  input  logic        start_i,      // fold in byte_i
  input  logic        plain_i,      // ... as a plain shift (with start_i)
  input  logic [7:0]  byte_i,
  output logic [31:0] crc_o,
  output logic        busy_o,
  output logic        bit_o         // the byte register's bit 0
);

  localparam logic [31:0] Poly     = 32'hEDB88320;
  localparam logic [31:0] CrcMagic = tess_params_pkg::LINK_CRC_MAGIC;

  logic [31:0] crc_q, crc_d;
  logic [7:0]  csh_q, csh_d;              // byte being folded in, LSB first
  logic [3:0]  ccnt_q, ccnt_d;            // bits left
  logic        cplain_q, cplain_d;
  logic        crc_fb;
  assign busy_o = (ccnt_q != 4'd0);
  assign crc_fb = !cplain_q && (crc_q[0] ^ csh_q[0]);

  always_comb begin
    crc_d    = crc_q;
    csh_d    = csh_q;
    ccnt_d   = ccnt_q;
    cplain_d = cplain_q;
    if (busy_o) begin
      crc_d  = {1'b0, crc_q[31:1]} ^ (crc_fb ? Poly : 32'd0);
      csh_d  = {1'b0, csh_q[7:1]};
      ccnt_d = ccnt_q - 4'd1;
    end
    if (init_i) begin
      crc_d  = CrcMagic;
      ccnt_d = 4'd0;
    end
    if (start_i) begin
      csh_d    = byte_i;
      ccnt_d   = 4'd8;
      cplain_d = plain_i;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      crc_q    <= '0;
      csh_q    <= '0;
      ccnt_q   <= '0;
      cplain_q <= 1'b0;
    end else begin
      crc_q    <= crc_d;
      csh_q    <= csh_d;
      ccnt_q   <= ccnt_d;
      cplain_q <= cplain_d;
    end
  end

  assign crc_o = crc_q;
  assign bit_o = csh_q[0];

endmodule
