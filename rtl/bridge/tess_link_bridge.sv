// Device side of the link protocol (docs/link-protocol.md) for boards: takes request frames from a
// byte stream (the UART), drives the chip's host port, control registers and run input, and sends
// the reply frames. docs/bringup.md, "The UART bridge", describes it for a newcomer.
//
// Built small for the iCE40 (docs/decisions.md, "A serial UART bridge"): a UART byte takes
// 10 * ClkPerBit clocks, so the engine works a byte or a bit at a time, with one shared byte
// counter, and keeps the frame (header and payload) in one block RAM instead of registers.
// The parts, each in its own module, share what this top holds: the frame buffer, the byte
// counter, the millisecond timer and the board clock count.
//   tess_link_rx       receiver: magic, header, payload, CRC check; drops and counts bad frames
//   tess_link_crc      the CRC-32 engine, bit-serial, shared by receiver, sequencer and sender
//   tess_link_seq      request sequencer: executes the request, fills the reply (with
//                      tess_link_run, the run's cycle limit and the chip's run input)
//   tess_link_tx       reply sender: header, payload, CRC
//   tess_link_console  console buffers, one per tile
// Frame buffer: 2 * MaxPayload bytes (block RAM: payload at 0, header at MaxPayload). Only the
// fields the sequencer decides on are kept in registers. A frame that fails its CRC is answered
// with BadCrc (header echoed as received) and counted, never executed. A length field above
// 65536, or a frame stalled for StallMs between two bytes, is dropped and counted without a reply.
// A frame of another protocol version gets BadVersion, a payload above MaxPayload (reported in the
// INFO reply; the host splits its transfers to fit) gets TooLong. While a request executes and
// its reply is sent, received bytes are ignored: the protocol has one request in flight.
// WAIT's milliseconds are CyclesPerMs clock cycles each.
// Consoles: each tile's console bytes (captured while the chip advances) go to a ConsoleBytes
// buffer per tile; bytes beyond it are lost and counted (CR_LINK_CONSOLE_LOST).
// Bridge registers, read with CTRL_READ and not forwarded to the chip: CR_LINK_BAD_FRAMES,
// CR_LINK_CONSOLE_LOST, CR_LINK_CLOCK (rtl/params.json).
// Timing: received bytes must come at least 9 clocks apart (the UART gives 10 * ClkPerBit >= 40).
// Nothing here is cycle-critical for the chip; the chip's cycle count only moves in a cycle after
// one with run_o = 1 (the chip registers it).
module tess_link_bridge #(
  parameter int NumTiles     = tess_params_pkg::NUM_TILES,
  parameter int MemBytes     = tess_params_pkg::TILE_MEM_BYTES,
  parameter int Contexts     = tess_params_pkg::NUM_CONTEXTS,
  parameter int MaxPayload   = 1024,
  parameter int ConsoleBytes = 1024,
  parameter int CyclesPerMs  = 12000,
  parameter int StallMs      = 200,
  // The chip's parameters that INFO reports (tess_chip).
  parameter bit HasFpu       = tess_params_pkg::HAS_FPU != 0,
  parameter bit HasMulDiv    = tess_params_pkg::HAS_MULDIV != 0,
  parameter int CounterBits  = tess_params_pkg::COUNTER_BITS,
  parameter bit HasExchange  = tess_params_pkg::HAS_EXCHANGE != 0,
  parameter bit HasCheckpoint = tess_params_pkg::HAS_CHECKPOINT != 0,
  parameter bit MatrixUnit    = tess_params_pkg::MATRIX_UNIT != 0
) (
  input  logic                            clk_i,
  input  logic                            rst_ni,
  // bytes from and to the line
  input  logic                            rx_valid_i,
  input  logic [7:0]                      rx_data_i,
  output logic                            tx_valid_o,
  output logic [7:0]                      tx_data_o,
  input  logic                            tx_ready_i,
  // chip
  output logic                            chip_rst_no,
  output logic                            run_o,
  output logic                            host_req_o,
  output logic                            host_we_o,
  output logic [15:0]                     host_tile_o,
  output logic [31:0]                     host_addr_o,
  output logic [3:0]                      host_be_o,
  output logic [31:0]                     host_wdata_o,
  input  logic [31:0]                     host_rdata_i,
  input  logic                            host_err_i,
  output logic                            ctl_we_o,
  output logic [11:0]                     ctl_addr_o,
  output logic [31:0]                     ctl_wdata_o,
  input  logic [31:0]                     ctl_rdata_i,
  input  logic                            ctl_err_i,     // the chip refuses this control access
  input  logic [3:0]                      state_i,
  input  logic                            stopping_i,
  input  logic [63:0]                     cycle_i,
  input  logic [NumTiles-1:0]             console_valid_i,
  input  logic [NumTiles*8-1:0]           console_byte_i,
  input  logic [NumTiles*64-1:0]          tile_cycle_i,
  // status for LEDs and the simulation harness
  output logic                            busy_o,
  output logic                            running_o,
  output logic [31:0]                     bad_frames_o
);

  localparam int Pw = $clog2(MaxPayload);
  localparam int Bw = Pw + 1;                     // frame buffer address
  localparam int Cw = $clog2(ConsoleBytes);
  localparam int Nw = Cw + 1;                     // console byte count 0..ConsoleBytes
  localparam int Tw = (NumTiles > 1) ? $clog2(NumTiles) : 1;
  localparam int Kw = $clog2(CyclesPerMs);
  localparam logic [Kw-1:0] TickLast = Kw'(CyclesPerMs - 1);

`ifndef __ICARUS__
  if ((MaxPayload < 128) || (MaxPayload > 65536) || ((1 << Pw) != MaxPayload)) begin : g_mp_err
    $error("tess_link_bridge: MaxPayload must be a power of two in 128..65536");
  end
  if ((ConsoleBytes < 4) || ((1 << Cw) != ConsoleBytes)) begin : g_cb_err
    $error("tess_link_bridge: ConsoleBytes must be a power of two >= 4");
  end
  if ((CyclesPerMs < 2) || (StallMs < 2) || (StallMs > 65535)) begin : g_ms_err
    $error("tess_link_bridge: CyclesPerMs must be >= 2 and StallMs in 2..65535");
  end
`endif

  // ---------------------------------------------------------------------------------------------
  // Frame buffer: 2 * MaxPayload bytes, one write and one registered read per cycle (block RAM).
  // Payload byte k at k, header byte k (0..23) at MaxPayload + k.
  // ---------------------------------------------------------------------------------------------
  logic [7:0]    fbuf [2 * MaxPayload];
  logic          buf_we;
  logic          buf_whdr, buf_rhdr;      // the write / read address is a header byte
  logic [Bw-1:0] buf_waddr, buf_raddr;
  logic [7:0]    buf_wdata, buf_rdata_q;

  always_ff @(posedge clk_i) begin
    if (buf_we) begin
      fbuf[buf_waddr] <= buf_wdata;
    end
    buf_rdata_q <= fbuf[buf_raddr];
  end

  // ---------------------------------------------------------------------------------------------
  // The byte counter of receiver, sequencer and sender; the millisecond timer: the stall of a
  // partial frame (restarted by each byte) or WAIT; the board clock count (CR_LINK_CLOCK)
  // ---------------------------------------------------------------------------------------------
  logic [16:0]   idx_q, idx_d;
  logic [16:0]   idx_inc;
  logic          idx_end;                 // idx_q is the last byte of the length field
  logic [Kw-1:0] tick_q, tick_d;          // clocks left of the current millisecond (free-running)
  logic          ms_tick;                 // a millisecond ends
  logic [15:0]   ms_q, ms_d;              // milliseconds since the last byte (stall) or WAIT
  logic [15:0]   ms_inc;
  logic [31:0]   clock_q, clock_d;        // board clock cycles since reset
  logic [16:0]   len;
  assign idx_inc = idx_q + 17'd1;
  assign idx_end = (idx_inc == len);
  assign ms_tick = (tick_q == '0);
  assign ms_inc  = ms_q + 16'd1;

  // ---------------------------------------------------------------------------------------------
  // The parts
  // ---------------------------------------------------------------------------------------------
  // receiver
  logic        rx_take, rx_hdr_take, frame_done, frame_good, ver_bad, op_hi;
  logic [3:0]  op;
  logic        rx_crc_init, rx_crc_start, rx_idx_four, rx_idx_clr;
  logic        rx_buf_we, rx_buf_hdr;
  logic        rx_framing;              // a frame is past its magic
  logic [4:0]  rx_buf_widx;
  logic [7:0]  rx_buf_wdata;
  logic        rx_busy;
  logic [31:0] bad_frames;
  // CRC engine
  logic        crc_init, crc_start, crc_plain, crc_busy, crc_bit;
  logic [7:0]  crc_byte;
  logic [31:0] crc;
  // sequencer
  logic          seq_idle, seq_hunt, seq_send, seq_idx_clr, seq_idx_step, seq_crc_init, seq_crc_start;
  logic          seq_buf_we, seq_busy, wait_load, big;
  logic [7:0]    seq_buf_wdata;
  logic [3:0]    status;
  logic [16:0]   reply_len;
  // sender
  logic        tsend, tx_done, tx_idx_clr, tx_crc_start, tx_crc_plain, tx_rhdr;
  logic [7:0]  tbyte;
  // console buffers
  logic          cons_clear, capture;
  logic [Tw-1:0] cons_tile;
  logic [Cw-1:0] cons_raddr;
  logic [Nw-1:0] cons_n;
  logic [7:0]    cons_byte;
  logic [31:0]   cons_lost;

  tess_link_rx #(
    .MaxPayload (MaxPayload),
    .StallMs    (StallMs)
  ) u_rx (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .rx_valid_i   (rx_valid_i),
    .rx_data_i    (rx_data_i),
    .accept_i     (seq_idle),
    .hunt_i       (seq_hunt),
    .idx_i        (idx_q),
    .idx_end_i    (idx_end),
    .len_i        (len),
    .big_i        (big),
    .crc_i        (crc),
    .crc_busy_i   (crc_busy),
    .ms_tick_i    (ms_tick),
    .ms_inc_i     (ms_inc),
    .take_o       (rx_take),
    .hdr_take_o   (rx_hdr_take),
    .frame_done_o (frame_done),
    .frame_good_o (frame_good),
    .ver_bad_o    (ver_bad),
    .op_o         (op),
    .op_hi_o      (op_hi),
    .crc_init_o   (rx_crc_init),
    .crc_start_o  (rx_crc_start),
    .idx_four_o   (rx_idx_four),
    .idx_clr_o    (rx_idx_clr),
    .buf_we_o     (rx_buf_we),
    .buf_hdr_o    (rx_buf_hdr),
    .buf_widx_o   (rx_buf_widx),
    .buf_wdata_o  (rx_buf_wdata),
    .busy_o       (rx_busy),
    .framing_o    (rx_framing),
    .bad_frames_o (bad_frames)
  );

  // The sender's bytes drive the CRC (the receiver is idle meanwhile), else the sequencer's
  // serial payload bytes, else the receiver's.
  assign crc_init  = rx_crc_init || seq_crc_init;
  assign crc_start = rx_crc_start || tx_crc_start || seq_crc_start;
  assign crc_plain = tx_crc_plain || seq_crc_start;
  assign crc_byte  = tx_crc_start ? tbyte : (seq_crc_start ? buf_rdata_q : rx_data_i);

  tess_link_crc u_crc (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .init_i  (crc_init),
    .start_i (crc_start),
    .plain_i (crc_plain),
    .byte_i  (crc_byte),
    .crc_o   (crc),
    .busy_o  (crc_busy),
    .bit_o   (crc_bit)
  );

  tess_link_seq #(
    .NumTiles     (NumTiles),
    .MemBytes     (MemBytes),
    .Contexts     (Contexts),
    .MaxPayload   (MaxPayload),
    .ConsoleBytes (ConsoleBytes),
    .HasFpu       (HasFpu),
    .HasMulDiv    (HasMulDiv),
    .CounterBits  (CounterBits),
    .HasExchange  (HasExchange),
    .HasCheckpoint (HasCheckpoint),
    .MatrixUnit    (MatrixUnit)
  ) u_seq (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .frame_done_i (frame_done),
    .rx_frame_i   (rx_framing),
    .frame_good_i (frame_good),
    .ver_bad_i    (ver_bad),
    .op_i         (op),
    .op_hi_i      (op_hi),
    .hdr_take_i   (rx_hdr_take),
    .rx_data_i    (rx_data_i),
    .idx_i        (idx_q[6:0]),
    .idx_end_i    (idx_end),
    .buf_rdata_i  (buf_rdata_q),
    .crc_busy_i   (crc_busy),
    .crc_bit_i    (crc_bit),
    .ms_tick_i    (ms_tick),
    .ms_inc_i     (ms_inc),
    .bad_frames_i (bad_frames),
    .clock_i      (clock_q),
    .tx_done_i    (tx_done),
    .send_o       (seq_send),
    .status_o     (status),
    .reply_len_o  (reply_len),
    .idle_o       (seq_idle),
    .hunt_o       (seq_hunt),
    .idx_clr_o    (seq_idx_clr),
    .idx_step_o   (seq_idx_step),
    .crc_init_o   (seq_crc_init),
    .crc_start_o  (seq_crc_start),
    .buf_we_o     (seq_buf_we),
    .buf_wdata_o  (seq_buf_wdata),
    .wait_load_o  (wait_load),
    .len_o        (len),
    .big_o        (big),
    .cons_n_i     (cons_n),
    .cons_byte_i  (cons_byte),
    .cons_lost_i  (cons_lost),
    .cons_clear_o (cons_clear),
    .cons_tile_o  (cons_tile),
    .cons_raddr_o (cons_raddr),
    .capture_o    (capture),
    .chip_rst_no  (chip_rst_no),
    .run_o        (run_o),
    .host_req_o   (host_req_o),
    .host_we_o    (host_we_o),
    .host_tile_o  (host_tile_o),
    .host_addr_o  (host_addr_o),
    .host_be_o    (host_be_o),
    .host_wdata_o (host_wdata_o),
    .host_rdata_i (host_rdata_i),
    .host_err_i   (host_err_i),
    .ctl_we_o     (ctl_we_o),
    .ctl_addr_o   (ctl_addr_o),
    .ctl_wdata_o  (ctl_wdata_o),
    .ctl_rdata_i  (ctl_rdata_i),
    .ctl_err_i    (ctl_err_i),
    .state_i      (state_i),
    .stopping_i   (stopping_i),
    .cycle0_i     (cycle_i[0]),
    .tile_cycle_i (tile_cycle_i),
    .busy_o       (seq_busy),
    .running_o    (running_o)
  );

  logic [62:0] unused_cycle;
  assign unused_cycle = cycle_i[63:1];

  tess_link_tx u_tx (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .start_i     (seq_send),
    .idx_i       (idx_q[4:0]),
    .idx_end_i   (idx_end),
    .status_i    (status),
    .len_i       (reply_len),
    .buf_rdata_i (buf_rdata_q),
    .crc_i       (crc[7:0]),
    .crc_busy_i  (crc_busy),
    .tx_ready_i  (tx_ready_i),
    .tx_valid_o  (tsend),
    .tx_data_o   (tbyte),
    .done_o      (tx_done),
    .idx_clr_o   (tx_idx_clr),
    .crc_start_o (tx_crc_start),
    .crc_plain_o (tx_crc_plain),
    .buf_rhdr_o  (tx_rhdr)
  );

  assign tx_valid_o = tsend;
  assign tx_data_o  = tbyte;

  tess_link_console #(
    .NumTiles     (NumTiles),
    .ConsoleBytes (ConsoleBytes)
  ) u_console (
    .clk_i     (clk_i),
    .rst_ni    (rst_ni),
    .capture_i (capture),
    .valid_i   (console_valid_i),
    .byte_i    (console_byte_i),
    .clear_i   (cons_clear),
    .tile_i    (cons_tile),
    .raddr_i   (cons_raddr),
    .count_o   (cons_n),
    .rdata_o   (cons_byte),
    .lost_o    (cons_lost)
  );

  // ---------------------------------------------------------------------------------------------
  // Shared registers and buffer ports
  // ---------------------------------------------------------------------------------------------
  logic idx_four, idx_clr, idx_step;
  assign idx_four = rx_idx_four;
  assign idx_clr  = rx_idx_clr || seq_idx_clr || tx_idx_clr;
  assign idx_step = rx_take || seq_idx_step || tsend;
  assign idx_d    = idx_four ? 17'd4 : (idx_clr ? 17'd0 : (idx_step ? idx_inc : idx_q));

  assign tick_d  = ms_tick ? TickLast : (tick_q - Kw'(1));
  // A byte taken while a WAIT is held restarts the count only when it completes a magic (the WAIT
  // ends, the stall timer starts): stray bytes on the line never stretch a WAIT.
  assign ms_d    = ((rx_take && (seq_idle || rx_idx_four)) || wait_load) ? 16'd0 :
                   (ms_tick ? ms_inc : ms_q);
  assign clock_d = clock_q + 32'd1;

  always_comb begin
    buf_we    = rx_buf_we || seq_buf_we;
    buf_whdr  = rx_buf_hdr;
    buf_wdata = rx_buf_we ? rx_buf_wdata : seq_buf_wdata;
    buf_rhdr  = tx_rhdr;
    buf_waddr = {buf_whdr, buf_whdr ? (Pw-5)'(0) : idx_q[Pw-1:5],
                 rx_buf_we ? rx_buf_widx : idx_q[4:0]};
    buf_raddr = {buf_rhdr, buf_rhdr ? (Pw-5)'(0) : idx_q[Pw-1:5], idx_q[4:0]};
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      idx_q   <= '0;
      tick_q  <= '0;
      ms_q    <= '0;
      clock_q <= '0;
    end else begin
      idx_q   <= idx_d;
      tick_q  <= tick_d;
      ms_q    <= ms_d;
      clock_q <= clock_d;
    end
  end

  assign busy_o       = seq_busy || rx_busy;
  assign bad_frames_o = bad_frames;

endmodule
