// Receiver of the link bridge (tess_link_bridge, docs/link-protocol.md): matches bytes from the
// line against the magic, takes the 20 header bytes, the payload and the CRC-32, and decides the
// frame. Header and payload go to the bridge's frame buffer (payload at 0, header at MaxPayload;
// the header copy is already the reply's: the protocol version and the opcode with the reply bit);
// the version and the opcode are kept here, the tile, address and length fields by the request
// sequencer (tess_link_seq), which takes the header bytes as they arrive (hdr_take_o).
// The CRC (tess_link_crc) covers every byte after the magic, the frame's CRC bytes included, and is
// checked by its residue before anything is acted on: a frame that fails it is done but not good
// (answered with BadCrc) and counted. A length field above LINK_MAX_PAYLOAD, or a frame stalled for
// StallMs between two bytes, is dropped and counted without a reply.
// Bytes are taken only while accept_i (no request in execution): the protocol has one request in
// flight. While the sequencer holds a WAIT (hunt_i) bytes are taken only to find a frame's magic:
// a whole magic (framing_o) tells the sequencer that a new request is coming, which ends the WAIT
// (its client has gone: a client sends nothing while its WAIT is pending). The byte counter (idx_i) is the bridge's, shared with the sequencer and the reply sender.
// Timing: a byte per clock at most, but the CRC takes 8 clocks a byte: bytes must come at least 9
// clocks apart (the UART gives 10 * ClkPerBit >= 40); frame_done_o 9 clocks after the last byte.
module tess_link_rx #(
  parameter int MaxPayload = 1024,
  parameter int StallMs    = 200,
  localparam int Pw = $clog2(MaxPayload)
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        rx_valid_i,
  input  logic [7:0]  rx_data_i,
  input  logic        accept_i,       // the sequencer is idle
  input  logic        hunt_i,         // the sequencer holds a WAIT: take magic bytes only
  input  logic [16:0] idx_i,          // the byte counter
  input  logic        idx_end_i,      // ... is at the last byte of len_i
  input  logic [16:0] len_i,          // the length field as received so far
  input  logic        big_i,          // ... above 65535 in its higher bytes
  input  logic [31:0] crc_i,
  input  logic        crc_busy_i,
  input  logic        ms_tick_i,      // a millisecond ends
  input  logic [15:0] ms_inc_i,       // milliseconds since the last byte, with this one
  output logic        take_o,         // a byte is taken
  output logic        hdr_take_o,     // ... and it is a header byte after the magic
  output logic        frame_done_o,   // a whole frame arrived and its CRC is known
  output logic        frame_good_o,
  output logic        ver_bad_o,      // the frame's protocol version is not LINK_VERSION
  output logic [3:0]  op_o,           // opcode, low nibble
  output logic        op_hi_o,        // ... with a higher bit set
  output logic        crc_init_o,
  output logic        crc_start_o,
  output logic        idx_four_o,     // the byte counter restarts at 4 / 0
  output logic        idx_clr_o,
  output logic        buf_we_o,       // frame buffer write
  output logic        buf_hdr_o,      // ... of a header byte
  output logic [4:0]  buf_widx_o,     // ... low address bits
  output logic [7:0]  buf_wdata_o,
  output logic        busy_o,         // a frame is partly received
  output logic        framing_o,      // ... past its magic
  output logic [31:0] bad_frames_o
);

  // Header byte offsets (docs/link-protocol.md, "Frame").
  localparam logic [4:0] HdrVersion = 5'd4;
  localparam logic [4:0] HdrOpcode  = 5'd5;
  localparam logic [4:0] HdrLast    = 5'(tess_params_pkg::LINK_HEADER_BYTES - 1);
  localparam logic [31:0] Magic      = tess_params_pkg::LINK_MAGIC;
  localparam logic [31:0] CrcResidue = tess_params_pkg::LINK_CRC_RESIDUE;
  localparam logic [7:0]  Version    = 8'(tess_params_pkg::LINK_VERSION);
  localparam logic [7:0]  ReplyBit   = 8'(tess_params_pkg::LINK_REPLY_BIT);

`ifndef __ICARUS__
  // The length check below (17 bits, big_i) and the header's byte lanes are built for these.
  if ((tess_params_pkg::LINK_MAX_PAYLOAD != 65536) ||
      (tess_params_pkg::LINK_HEADER_BYTES != 24)) begin : g_link_err
    $error("tess_link_rx: LINK_MAX_PAYLOAD must be 65536 and LINK_HEADER_BYTES 24 (rtl/params.json)");
  end
`endif

  typedef enum logic [2:0] {
    RxHunt,
    RxHdr,
    RxPay,
    RxCrc,
    RxCheck
  } rx_state_e;

  rx_state_e  rx_q, rx_d;
  logic [1:0] magic_q, magic_d;
  logic       ver_bad_q, ver_bad_d;
  logic [3:0] op_q, op_d;
  logic       op_hi_q, op_hi_d;
  logic [31:0] bad_q, bad_d;
  logic       rx_bad;                     // a frame is dropped or fails its CRC
  logic [7:0] magic_byte;
  assign take_o     = rx_valid_i && (accept_i || (hunt_i && (rx_q == RxHunt)));
  assign hdr_take_o = take_o && (rx_q == RxHdr);
  assign magic_byte = Magic[8*magic_q +: 8];

  // The length field with its last byte (header byte 23) as it arrives.
  logic big_now;
  assign big_now = big_i || (rx_data_i != 8'd0) || (len_i[16] && (len_i[15:0] != 16'd0));

  logic stall_run;                        // the stall timer runs (a partial frame, idle engine)
  logic stall_out;                        // ... and runs out in this cycle
  assign stall_run = (rx_q != RxHunt) && accept_i;
  assign stall_out = stall_run && !take_o && ms_tick_i && (ms_inc_i == 16'(StallMs));

  always_comb begin
    rx_d         = rx_q;
    magic_d      = magic_q;
    ver_bad_d    = ver_bad_q;
    op_d         = op_q;
    op_hi_d      = op_hi_q;
    frame_done_o = 1'b0;
    frame_good_o = 1'b0;
    buf_we_o     = 1'b0;
    crc_init_o   = 1'b0;
    crc_start_o  = 1'b0;
    rx_bad       = 1'b0;
    idx_four_o   = 1'b0;
    idx_clr_o    = 1'b0;
    if (stall_out) begin
      rx_d    = RxHunt;
      magic_d = 2'd0;
      rx_bad  = 1'b1;
    end
    if (take_o) begin
      unique case (rx_q)
        RxHunt: begin
          if (rx_data_i == magic_byte) begin
            buf_we_o = 1'b1;                  // the reply's magic, at MaxPayload + magic_q
            magic_d  = magic_q + 2'd1;
            if (magic_q == 2'd3) begin
              rx_d       = RxHdr;
              crc_init_o = 1'b1;
              idx_four_o = 1'b1;
            end
          end else if (rx_data_i == Magic[7:0]) begin
            magic_d = 2'd1;
          end else begin
            magic_d = 2'd0;
          end
        end
        RxHdr: begin
          crc_start_o = 1'b1;
          buf_we_o    = 1'b1;
          if (idx_i[4:0] == HdrVersion) ver_bad_d = (rx_data_i != Version);
          if (idx_i[4:0] == HdrOpcode) begin
            op_d    = rx_data_i[3:0];
            op_hi_d = (rx_data_i[7:4] != 4'd0);
          end
          if (idx_i[4:0] == HdrLast) begin
            idx_clr_o = 1'b1;
            if (big_now) begin
              rx_d    = RxHunt;
              magic_d = 2'd0;
              rx_bad  = 1'b1;
            end else if (len_i == 17'd0) begin
              rx_d = RxCrc;
            end else begin
              rx_d = RxPay;
            end
          end
        end
        RxPay: begin
          crc_start_o = 1'b1;
          buf_we_o    = (idx_i[16:Pw] == '0);
          if (idx_end_i) begin
            rx_d      = RxCrc;
            idx_clr_o = 1'b1;
          end
        end
        RxCrc: begin
          crc_start_o = 1'b1;
          if (idx_i[1:0] == 2'd3) begin
            rx_d = RxCheck;
          end
        end
        default: ;
      endcase
    end
    if ((rx_q == RxCheck) && !crc_busy_i) begin
      rx_d         = RxHunt;
      magic_d      = 2'd0;
      frame_done_o = 1'b1;
      frame_good_o = (crc_i == CrcResidue);
      rx_bad       = !frame_good_o;
    end
  end

  assign bad_d = bad_q + {31'd0, rx_bad};

  // Frame buffer writes: the magic bytes at their index, the rest at the byte counter; the header
  // copy is the reply's header (the protocol version, the opcode with the reply bit).
  assign buf_hdr_o  = buf_we_o && (rx_q != RxPay);
  assign buf_widx_o = (buf_we_o && (rx_q == RxHunt)) ? {3'd0, magic_q} : idx_i[4:0];
  always_comb begin
    buf_wdata_o = rx_data_i;
    if ((rx_q == RxHdr) && (idx_i[4:1] == HdrVersion[4:1])) begin
      buf_wdata_o = idx_i[0] ? (rx_data_i | ReplyBit) : Version;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rx_q      <= RxHunt;
      magic_q   <= '0;
      ver_bad_q <= 1'b0;
      op_q      <= '0;
      op_hi_q   <= 1'b0;
      bad_q     <= '0;
    end else begin
      rx_q      <= rx_d;
      magic_q   <= magic_d;
      ver_bad_q <= ver_bad_d;
      op_q      <= op_d;
      op_hi_q   <= op_hi_d;
      bad_q     <= bad_d;
    end
  end

  logic unused_idx;
  assign unused_idx = ^idx_i[Pw-1:5];

  assign ver_bad_o    = ver_bad_q;
  assign op_o         = op_q;
  assign op_hi_o      = op_hi_q;
  assign busy_o       = (rx_q != RxHunt) || (magic_q != 2'd0);
  assign framing_o    = (rx_q != RxHunt);
  assign bad_frames_o = bad_q;

endmodule
