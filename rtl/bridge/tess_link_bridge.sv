// Device side of the link protocol (docs/link-protocol.md) for boards: takes request frames from a
// byte stream (the UART), drives the chip's host port, control registers and run input, and sends
// the reply frames. docs/bringup.md, "The UART bridge", describes it for a newcomer.
//
// Built small for the iCE40 (docs/decisions.md, "A serial UART bridge"): a UART byte takes
// 10 * ClkPerBit clocks, so the engine works a byte or a bit at a time, with one shared byte
// counter, and keeps the frame (header and payload) in one block RAM instead of registers.
//
// Receive: bytes are matched against the magic, the 20 header bytes follow, then the payload and
// the CRC-32. Header and payload go to the frame buffer (2 * MaxPayload bytes, block RAM: payload
// at 0, header at MaxPayload); only the fields the engine decides on are kept in registers, as
// far as their range needs (tile, address, length, with a flag for any higher bit set). The CRC
// is computed bit-serially (8 clocks a byte) over every byte after the magic, the frame's CRC
// bytes included, and checked by the CRC-32 residue before anything is acted on: a frame that
// fails it is answered with BadCrc (header echoed as received) and counted, never executed. A
// length field above 65536, or a frame stalled for StallMs between two bytes, is dropped and
// counted without a reply. A frame of another protocol version gets BadVersion, a payload above
// MaxPayload (reported in the INFO reply; the host splits its transfers to fit) gets TooLong.
// While a request executes and its reply is sent, received bytes are ignored: the protocol has
// one request in flight.
// Execute: every operation of the protocol, as a sequencer over the frame buffer. Ranges are
// checked before the chip is touched. Payload values (counts, register values, max cycles, wait
// milliseconds) are read from the buffer a byte at a time. RUN starts the chip's run input until
// it stops by itself or reaches start + max cycles (a 64-bit count of the cycles left, which
// follows the chip's cycle counter); WAIT holds its reply until the run ends or its milliseconds
// pass (CyclesPerMs clock cycles each). While a run is in progress only INFO, WAIT and RESET are
// served, the rest get Busy (RESET abandons the run: a client that finds a board left running by
// another can recover it without the reset button). Replies with data (INFO, CTRL_READ, STATS,
// the run result of WAIT) are filled into the buffer a byte per cycle from the chip's control
// registers (TILE_SEL and CTX_SEL are saved and restored around STATS and the run result).
// Consoles: each tile's console bytes (captured while the chip advances) go to a ConsoleBytes
// buffer per tile; bytes beyond it are lost and counted (CR_LINK_CONSOLE_LOST).
// Bridge registers, read with CTRL_READ and not forwarded to the chip: CR_LINK_BAD_FRAMES,
// CR_LINK_CONSOLE_LOST, CR_LINK_CLOCK (rtl/params.json).
// Timing: received bytes must come at least 9 clocks apart (the UART gives 10 * ClkPerBit >= 40).
// Nothing here is cycle-critical for the chip; the chip's cycle count only moves in a cycle after
// one with run_o = 1 (the chip registers it).
module tess_link_bridge #(
  parameter int NumTiles     = 4,
  parameter int MemBytes     = 65536,
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
  parameter bit HasCheckpoint = tess_params_pkg::HAS_CHECKPOINT != 0
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
  input  logic                            ctl_err_i,     // the chip refuses this control write
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
  localparam int Mw = $clog2(MemBytes + 1);
  localparam int Aw0 = (Mw > 12) ? Mw : 12;       // address kept: memory, control offset,
  localparam int Aw = (Aw0 > Nw) ? Aw0 : Nw;      // console offset
  localparam int Ew = ((Aw > Pw + 1) ? Aw : Pw + 1) + 1;  // address + length (<= MaxPayload)
  localparam int Kw = $clog2(CyclesPerMs);
  localparam logic [Kw-1:0] TickLast = Kw'(CyclesPerMs - 1);
  localparam logic [16:0]   MaxPayloadL = 17'(MaxPayload);
  localparam logic [31:0]   Poly = 32'hEDB88320;
  localparam logic [31:0]   CrcMagic = 32'h4ACFD6C6;   // CRC register after the magic "TsLk"
  localparam logic [31:0]   CrcResidue = 32'hDEBB20E3; // ... after a frame and its own CRC
  localparam logic [11:0] CrTileSel   = 12'(tess_params_pkg::CR_TILE_SEL);
  localparam logic [11:0] CrCtxSel    = 12'(tess_params_pkg::CR_CTX_SEL);
  localparam logic [11:0] CrCtrl      = 12'(tess_params_pkg::CR_CTRL);
  localparam logic [11:0] CrStatus    = 12'(tess_params_pkg::CR_STATUS);
  localparam logic [3:0]  StReset     = 4'(tess_params_pkg::ST_RESET);
  localparam logic [3:0]  StRunning   = 4'(tess_params_pkg::ST_RUNNING);
  localparam logic [3:0]  StSync      = 4'(tess_params_pkg::ST_HOST_SYNC);
  localparam logic [3:0]  StHalted    = 4'(tess_params_pkg::ST_HALTED);
  localparam logic [3:0]  StError     = 4'(tess_params_pkg::ST_ERROR);

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

  // Link protocol opcodes as kept (the low nibble; a request with a higher bit is unknown).
  localparam logic [3:0] OpInfo     = tess_bridge_pkg::OP_INFO[3:0];
  localparam logic [3:0] OpMemRead  = tess_bridge_pkg::OP_MEM_READ[3:0];
  localparam logic [3:0] OpMemWrite = tess_bridge_pkg::OP_MEM_WRITE[3:0];
  localparam logic [3:0] OpCtlRead  = tess_bridge_pkg::OP_CTRL_READ[3:0];
  localparam logic [3:0] OpCtlWrite = tess_bridge_pkg::OP_CTRL_WRITE[3:0];
  localparam logic [3:0] OpRun      = tess_bridge_pkg::OP_RUN[3:0];
  localparam logic [3:0] OpWait     = tess_bridge_pkg::OP_WAIT[3:0];
  localparam logic [3:0] OpReset    = tess_bridge_pkg::OP_RESET[3:0];
  localparam logic [3:0] OpStats    = tess_bridge_pkg::OP_STATS[3:0];
  localparam logic [3:0] OpConsole  = tess_bridge_pkg::OP_CONSOLE[3:0];

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
  // CRC-32, one bit per clock (8 clocks a byte), shared by receiver and transmitter. In plain mode
  // it shifts the register right by 8 without feedback (the transmitter sends the CRC's bytes).
  // ---------------------------------------------------------------------------------------------
  logic [31:0] crc_q, crc_d;
  logic [7:0]  csh_q, csh_d;              // byte being folded in, LSB first
  logic [3:0]  ccnt_q, ccnt_d;            // bits left
  logic        cplain_q, cplain_d;
  logic        crc_init;                  // load the register after the magic
  logic        crc_start;                 // fold in crc_byte
  logic        crc_plain;
  logic [7:0]  crc_byte;
  logic        crc_busy;
  logic        crc_fb;
  assign crc_busy = (ccnt_q != 4'd0);
  assign crc_fb   = !cplain_q && (crc_q[0] ^ csh_q[0]);

  always_comb begin
    crc_d    = crc_q;
    csh_d    = csh_q;
    ccnt_d   = ccnt_q;
    cplain_d = cplain_q;
    if (crc_busy) begin
      crc_d  = {1'b0, crc_q[31:1]} ^ (crc_fb ? Poly : 32'd0);
      csh_d  = {1'b0, csh_q[7:1]};
      ccnt_d = ccnt_q - 4'd1;
    end
    if (crc_init) begin
      crc_d  = CrcMagic;
      ccnt_d = 4'd0;
    end
    if (crc_start) begin
      csh_d    = crc_byte;
      ccnt_d   = 4'd8;
      cplain_d = crc_plain;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Receiver
  // ---------------------------------------------------------------------------------------------
  typedef enum logic [2:0] {
    RxHunt,
    RxHdr,
    RxPay,
    RxCrc,
    RxCheck
  } rx_state_e;

  typedef enum logic [4:0] {
    ExIdle,
    ExDecide,
    ExLoad,
    ExOp,
    ExRange,
    ExSelSave,
    ExCtxSave,
    ExFill,
    ExSelRestore,
    ExCtxRestore,
    ExLoop,
    ExWait,
    ExWaitDone,
    ExRunGo,
    ExReset,
    ExSend
  } ex_state_e;

  typedef enum logic [1:0] {
    FillInfo,
    FillCtl,
    FillStats,
    FillResult
  } fill_e;

  typedef enum logic [1:0] {
    TxHdr,
    TxPay,
    TxCrc
  } tx_state_e;

  rx_state_e     rx_q, rx_d;
  ex_state_e     ex_q, ex_d;
  tx_state_e     tx_q, tx_d;
  logic [1:0]    magic_q, magic_d;
  logic [16:0]   idx_q, idx_d;            // the byte counter of receiver, executor, transmitter
  logic [16:0]   idx_inc;
  logic [16:0]   len_q, len_d;            // request payload length, then the operation's bytes
  logic          big_q, big_d;            // length field above 65535
  logic          ver_bad_q, ver_bad_d;
  logic [3:0]    op_q, op_d;
  logic          op_hi_q, op_hi_d;
  logic [Tw-1:0] tile_q, tile_d;
  logic          tile_hi_q, tile_hi_d;    // a tile field bit at Tw or above
  logic [Aw-1:0] addr_q, addr_d;          // address field, then the memory / console pointer
  logic          addr_hi_q, addr_hi_d;    // an address field bit at Aw or above
  logic [Kw-1:0] tick_q, tick_d;          // clocks left of the current millisecond (free-running)
  logic          ms_tick;                 // a millisecond ends
  logic [15:0]   ms_q, ms_d;              // milliseconds since the last byte (stall) or WAIT
  logic [15:0]   ms_inc;
  assign ms_tick = (tick_q == '0);
  assign ms_inc  = ms_q + 16'd1;
  logic [31:0]   bad_q, bad_d;
  logic [31:0]   clock_q;                 // board clock cycles since reset
  logic          idx_end;                 // idx_q is the last byte of len_q
  assign idx_inc = idx_q + 17'd1;
  assign idx_end = (idx_inc == len_q);

  logic       accept;                     // the receiver takes bytes (no request in execution)
  logic       rx_take;
  logic       frame_done;                 // a whole frame arrived and its CRC is known
  logic       frame_good;
  logic [7:0] magic_byte;
  assign accept     = (ex_q == ExIdle);
  assign rx_take    = rx_valid_i && accept;
  assign magic_byte = tess_bridge_pkg::MAGIC[8*magic_q +: 8];

  // The length field with its last byte (header byte 23) as it arrives.
  logic big_now;
  assign big_now = big_q || (rx_data_i != 8'd0) || (len_q[16] && (len_q[15:0] != 16'd0));

  logic rx_buf_we;
  logic rx_crc_init, rx_crc_start;
  logic rx_bad;                           // a frame is dropped or fails its CRC
  logic rx_idx_four, rx_idx_clr;          // the receiver's counter restarts at 4 / 0
  logic stall_run;                        // the stall timer runs (a partial frame, idle engine)
  logic stall_out;                        // ... and runs out in this cycle
  assign stall_run = (rx_q != RxHunt) && accept;
  assign stall_out = stall_run && !rx_take && ms_tick && (ms_inc == 16'(StallMs));

  always_comb begin
    rx_d         = rx_q;
    magic_d      = magic_q;
    ver_bad_d    = ver_bad_q;
    op_d         = op_q;
    op_hi_d      = op_hi_q;
    frame_done   = 1'b0;
    frame_good   = 1'b0;
    rx_buf_we    = 1'b0;
    rx_crc_init  = 1'b0;
    rx_crc_start = 1'b0;
    rx_bad       = 1'b0;
    rx_idx_four  = 1'b0;
    rx_idx_clr   = 1'b0;
    if (stall_out) begin
      rx_d    = RxHunt;
      magic_d = 2'd0;
      rx_bad  = 1'b1;
    end
    if (rx_take) begin
      unique case (rx_q)
        RxHunt: begin
          if (rx_data_i == magic_byte) begin
            rx_buf_we = 1'b1;                 // the reply's magic, at MaxPayload + magic_q
            magic_d   = magic_q + 2'd1;
            if (magic_q == 2'd3) begin
              rx_d        = RxHdr;
              rx_crc_init = 1'b1;
              rx_idx_four = 1'b1;
            end
          end else if (rx_data_i == tess_bridge_pkg::MAGIC[7:0]) begin
            magic_d = 2'd1;
          end else begin
            magic_d = 2'd0;
          end
        end
        RxHdr: begin
          rx_crc_start = 1'b1;
          rx_buf_we    = 1'b1;
          if (idx_q[4:0] == 5'd4) ver_bad_d = (rx_data_i != tess_bridge_pkg::PROTOCOL_VERSION);
          if (idx_q[4:0] == 5'd5) begin
            op_d    = rx_data_i[3:0];
            op_hi_d = (rx_data_i[7:4] != 4'd0);
          end
          if (idx_q[4:0] == 5'd23) begin
            rx_idx_clr = 1'b1;
            if (big_now) begin
              rx_d    = RxHunt;
              magic_d = 2'd0;
              rx_bad  = 1'b1;
            end else if (len_q == 17'd0) begin
              rx_d = RxCrc;
            end else begin
              rx_d = RxPay;
            end
          end
        end
        RxPay: begin
          rx_crc_start = 1'b1;
          rx_buf_we    = (idx_q[16:Pw] == '0);
          if (idx_end) begin
            rx_d       = RxCrc;
            rx_idx_clr = 1'b1;
          end
        end
        RxCrc: begin
          rx_crc_start = 1'b1;
          if (idx_q[1:0] == 2'd3) begin
            rx_d = RxCheck;
          end
        end
        default: ;
      endcase
    end
    if ((rx_q == RxCheck) && !crc_busy) begin
      rx_d       = RxHunt;
      magic_d    = 2'd0;
      frame_done = 1'b1;
      frame_good = (crc_q == CrcResidue);
      rx_bad     = !frame_good;
    end
  end

  assign bad_d = bad_q + {31'd0, rx_bad};

  // ---------------------------------------------------------------------------------------------
  // Run control
  // ---------------------------------------------------------------------------------------------
  // rem = {rem_hi_q, rem_lo_q} counts the cycles left to the limit: loaded with RUN's max cycles,
  // it goes down by one whenever the chip's cycle counter moves (its bit 0 toggles; while the chip
  // is live it moves by one a cycle), one clock late, so the cycles left now are rem - toggle.
  // The counter's fix in the first draining cycle after a halt or error (tess_chip) moves it by
  // 1 or 2 and may toggle: rem is wrong from then on, but the run ends there (run_o and run_more
  // follow stopping_i, and the next RUN loads rem afresh). A limit beyond
  // 2^64 - 1 (start + max overflowing) is not cut to 2^64 - 1, a difference no run can reach.
  // Only the low 8 bits count in parallel; when they wrap, the high 56 bits are decremented
  // bit-serially (a 56-clock pass through the shift register, borrow in borrow_q), before the
  // low bits could wrap again or the limit be near (rem_lo_q < 3 is 253 clocks later).
  // Payload bytes go into rem_hi_q a bit at a time (from the idle CRC engine's byte register):
  // RUN's bytes 1..7, CTRL_WRITE's value (then rem_hi_q[55:24]).
  //
  // run_o: the chip advances while a run is in progress, it is RUNNING and below the limit (or
  // draining its pipelines after a halt or error, which the chip does not count). The chip
  // registers its run input (docs/chip.md, "Run input"), so run_o says whether the next cycle may
  // advance: the count then is one more than now if the chip advances now (chip_run_q, a copy of
  // the chip's register). A halt or error found in the cycle that reaches limit - 1 makes one
  // draining cycle hold, which the chip does not count.
  logic [7:0]  rem_lo_q, rem_lo_d;
  logic [55:0] rem_hi_q, rem_hi_d;
  logic        hi_nz;                     // rem_hi_q != 0
  logic        pass_q, pass_d;            // the serial decrement of rem_hi_q runs
  logic [5:0]  pcnt_q, pcnt_d;
  logic        borrow_q, borrow_d;
  logic        cyc0_q;
  logic        run_q, run_d;
  logic        chip_run_q;
  logic        result_q, result_d;        // a finished run waits to be collected
  logic        toggle;
  logic        rem_ge1, rem_ge2, rem_ge3;
  logic        below_now, below_next;     // count < limit now / in the next cycle
  logic        run_more;
  logic        rem_mid;
  assign toggle     = cycle_i[0] ^ cyc0_q;
  assign hi_nz      = (rem_hi_q != 56'd0);
  assign rem_mid    = hi_nz || (rem_lo_q[7:2] != 6'd0);
  assign rem_ge1    = rem_mid || (rem_lo_q[1:0] != 2'd0);
  assign rem_ge2    = rem_mid || rem_lo_q[1];
  assign rem_ge3    = rem_mid || (rem_lo_q[1:0] == 2'd3);
  assign below_now  = toggle ? rem_ge2 : rem_ge1;
  always_comb begin
    unique case ({1'b0, toggle} + {1'b0, chip_run_q})
      2'd0:    below_next = rem_ge1;
      2'd1:    below_next = rem_ge2;
      default: below_next = rem_ge3;
    endcase
  end
  assign run_more = (state_i == StRunning) && (stopping_i || below_now);
  assign run_o    = run_q && (state_i == StRunning) && (stopping_i || below_next);

  logic [62:0] unused_cycle;
  assign unused_cycle = cycle_i[63:1];

  // ---------------------------------------------------------------------------------------------
  // Console buffers, one per tile (one write and one read port each)
  // ---------------------------------------------------------------------------------------------
  logic [NumTiles*Nw-1:0] cons_count;
  logic [NumTiles*8-1:0]  cons_rdata;
  logic [NumTiles-1:0]    cons_full;
  logic [31:0]            cons_lost_q, cons_lost_d;
  logic                   cons_clear;
  logic [Nw-1:0]          cons_n;         // bytes of the requested tile's console
  logic [7:0]             cons_byte;
  assign cons_n    = cons_count[Nw*tile_q +: Nw];
  assign cons_byte = cons_rdata[8*tile_q +: 8];

  always_comb begin
    cons_lost_d = cons_lost_q;
    if (cons_clear) begin
      cons_lost_d = '0;
    end else if (|(console_valid_i & cons_full & {NumTiles{chip_run_q}})) begin
      cons_lost_d = cons_lost_q + 32'd1;
    end
  end

  for (genvar t = 0; t < NumTiles; t++) begin : g_console
    logic [7:0]    mem [ConsoleBytes];
    logic [Nw-1:0] count_q, count_d;
    logic          we;
    logic [7:0]    rdata_q;
    assign cons_full[t] = count_q[Cw];    // count == ConsoleBytes
    assign we           = chip_run_q && console_valid_i[t] && !cons_full[t];
    always_comb begin
      count_d = count_q;
      if (cons_clear) begin
        count_d = '0;
      end else if (we) begin
        count_d = count_q + Nw'(1);
      end
    end
    always_ff @(posedge clk_i) begin
      if (!rst_ni) begin
        count_q <= '0;
      end else begin
        count_q <= count_d;
      end
    end
    always_ff @(posedge clk_i) begin
      if (we) begin
        mem[count_q[Cw-1:0]] <= console_byte_i[8*t +: 8];
      end
      rdata_q <= mem[addr_q[Cw-1:0]];
    end
    assign cons_rdata[8*t +: 8]   = rdata_q;
    assign cons_count[Nw*t +: Nw] = count_q;
  end

  // ---------------------------------------------------------------------------------------------
  // Reply fill: the byte idx_q of INFO, CTRL_READ, STATS or the run result, a byte per cycle.
  // ---------------------------------------------------------------------------------------------
  fill_e      fill_q, fill_d;
  logic [4:0] fw;                         // word of the reply
  logic [1:0] fb;                         // byte of the word
  logic [11:0] fill_ctl;                  // the control register it reads
  logic [7:0]  fill_byte;
  assign fw = idx_q[6:2];
  assign fb = idx_q[1:0];
  logic [2:0] stats_ctx;                  // context of STATS words 4..15
  logic       ctx_absent;                 // ... one the tiles do not have (its words read 0)
  assign stats_ctx  = 3'(idx_q[6:3] - 4'd2);
  assign ctx_absent = (32'(stats_ctx) >= 32'(Contexts));

  // INFO: version, tiles, SRAM bytes, contexts, max payload, counter bits, extensions (bit 0 F,
  // bit 1 M, bit 2 exchange engines, bit 3 checkpoint registers), backend name "board".
  logic [31:0] info_word;
  always_comb begin
    unique case (fw[3:0])
      4'd0:    info_word = 32'(tess_bridge_pkg::PROTOCOL_VERSION);
      4'd1:    info_word = 32'(NumTiles);
      4'd2:    info_word = 32'(MemBytes);
      4'd3:    info_word = 32'(Contexts);
      4'd4:    info_word = 32'(MaxPayload);
      4'd5:    info_word = 32'(CounterBits);
      4'd6:    info_word = {28'd0, HasCheckpoint, HasExchange, HasMulDiv, HasFpu};
      4'd7:    info_word = 32'h72616F62;  // "boar"
      4'd8:    info_word = 32'h00000064;  // "d"
      default: info_word = '0;
    endcase
  end

  always_comb begin
    fill_ctl = CrStatus;
    unique case (fill_q)
      FillCtl: fill_ctl = addr_q[11:0];
      FillStats: begin
        unique case (fw)
          5'd2:  fill_ctl = 12'(tess_params_pkg::CR_T_INSTR_LO);
          5'd3:  fill_ctl = 12'(tess_params_pkg::CR_T_INSTR_HI);
          5'd16: fill_ctl = 12'(tess_params_pkg::CR_T_IDLE_LO);
          5'd17: fill_ctl = 12'(tess_params_pkg::CR_T_IDLE_HI);
          5'd18: fill_ctl = 12'(tess_params_pkg::CR_T_SYNCWAIT_LO);
          5'd19: fill_ctl = 12'(tess_params_pkg::CR_T_SYNCWAIT_HI);
          5'd20: fill_ctl = 12'(tess_params_pkg::CR_T_EXCH_LO);
          5'd21: fill_ctl = 12'(tess_params_pkg::CR_T_EXCH_HI);
          5'd22: fill_ctl = 12'(tess_params_pkg::CR_T_STATE);
          5'd23: fill_ctl = 12'(tess_params_pkg::CR_T_EXIT);
          // words 4..15: instructions of context (w-4)/2 (CTX_SEL), low word first
          default: fill_ctl = fw[0] ? 12'(tess_params_pkg::CR_C_INSTRET_HI) :
                                      12'(tess_params_pkg::CR_C_INSTRET_LO);
        endcase
      end
      FillResult: begin
        unique case (fw[3:0])
          4'd1:    fill_ctl = 12'(tess_params_pkg::CR_CYCLE_LO);
          4'd2:    fill_ctl = 12'(tess_params_pkg::CR_CYCLE_HI);
          4'd3:    fill_ctl = 12'(tess_params_pkg::CR_T_EXIT);
          4'd4:    fill_ctl = 12'(tess_params_pkg::CR_ERR_TILE);
          4'd5:    fill_ctl = 12'(tess_params_pkg::CR_ERR_CONTEXT);
          4'd6:    fill_ctl = 12'(tess_params_pkg::CR_ERR_PC);
          4'd7:    fill_ctl = 12'(tess_params_pkg::CR_ERR_CAUSE);
          4'd8:    fill_ctl = 12'(tess_params_pkg::CR_ERR_VALUE);
          default: fill_ctl = CrStatus;      // words 0 and 9
        endcase
      end
      default: ;
    endcase
  end

  // Bridge registers (full 32-bit offset match).
  logic breg_bad, breg_lost, breg_clock, breg_hit;
  assign breg_bad   = !addr_hi_q && (addr_q == Aw'(tess_params_pkg::CR_LINK_BAD_FRAMES));
  assign breg_lost  = !addr_hi_q && (addr_q == Aw'(tess_params_pkg::CR_LINK_CONSOLE_LOST));
  assign breg_clock = !addr_hi_q && (addr_q == Aw'(tess_params_pkg::CR_LINK_CLOCK));
  assign breg_hit   = breg_bad || breg_lost || breg_clock;

  // The requested tile's cycle counter as 32-bit words.
  localparam int Yw = $clog2(NumTiles * 2);
  logic [Yw-1:0] cycle_idx;               // the word of the requested tile's cycle counter
  assign cycle_idx = Yw'(32'(tile_q) * 32'd2 + 32'(fw[0]));

  // The byte comes from one of: the control register read (byte bsel, masked), a bridge register,
  // the tile's cycle counter, a constant (INFO, the stop reason), or is 0. Each source is cut to
  // its byte first, so that the selection works on bytes.
  logic [1:0]  bsel;
  logic        fzero;                     // the byte is 0
  logic [7:0]  fmask;
  logic        use_breg, use_tcyc, use_reason;
  logic [7:0]  reason;                    // stop reason of the run result
  logic [7:0]  rd_byte, breg_byte, tcyc_byte, info_byte;
  logic [31:0] breg_word;
  always_comb begin
    if (state_i == StHalted) begin
      reason = 8'd0;
    end else if (state_i == StError) begin
      reason = 8'd1;
    end else if (state_i == StSync) begin
      reason = ctl_rdata_i[4] ? 8'd3 : 8'd4;
    end else begin
      reason = 8'd2;
    end
  end

  always_comb begin
    bsel       = fb;
    fzero      = 1'b0;
    fmask      = 8'hFF;
    use_breg   = 1'b0;
    use_tcyc   = 1'b0;
    use_reason = 1'b0;
    unique case (fill_q)
      FillCtl: use_breg = breg_hit;
      FillStats: begin
        use_tcyc = (fw[4:1] == 4'd0);
        if (fw == 5'd22) fmask = {7'd0, fb == 2'd0};
        // The reply has six contexts' counts; those of contexts beyond Contexts are 0.
        fzero = (fw[4:1] >= 4'd2) && (fw[4:1] <= 4'd7) && ctx_absent;
      end
      FillResult: begin
        unique case (fw[3:0])
          4'd0: begin
            use_reason = 1'b1;
            fzero      = (fb != 2'd0);
          end
          4'd3: fzero = (state_i != StHalted);
          4'd4, 4'd5, 4'd6, 4'd7, 4'd8: fzero = (state_i != StError);
          4'd9: begin
            bsel  = {1'b1, fb[0]};            // the sync id, STATUS[31:16]
            fzero = (state_i != StSync) || fb[1];
          end
          default: ;
        endcase
      end
      default: ;
    endcase
  end

  assign breg_word = breg_bad ? bad_q : (breg_lost ? cons_lost_q : clock_q);
  assign rd_byte   = ctl_rdata_i[8*bsel +: 8] & fmask;
  assign breg_byte = breg_word[8*fb +: 8];
  assign tcyc_byte = tile_cycle_i[8*{cycle_idx, fb} +: 8];
  assign info_byte = info_word[8*fb +: 8];

  always_comb begin
    if (fill_q == FillInfo) begin
      fill_byte = info_byte;
    end else if (fzero) begin
      fill_byte = 8'd0;
    end else if (use_reason) begin
      fill_byte = reason;
    end else if (use_breg) begin
      fill_byte = breg_byte;
    end else if (use_tcyc) begin
      fill_byte = tcyc_byte;
    end else begin
      fill_byte = rd_byte;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Executor
  // ---------------------------------------------------------------------------------------------
  localparam int Sw = (Tw > 3) ? Tw : 3;  // small control register values

  logic [3:0]    status_q, status_d;      // reply status (codes below 16)
  logic          rpay_q, rpay_d;          // the reply carries len_q payload bytes
  logic          ph_q, ph_d;              // second cycle of a two-cycle step
  logic          ctxw_q, ctxw_d;          // CTX_SEL written for this STATS word
  logic [Tw-1:0] sel_save_q, sel_save_d;
  logic [2:0]    ctx_save_q, ctx_save_d;

  logic tile_ok;
  assign tile_ok = !tile_hi_q && (32'(tile_q) < 32'(NumTiles));

  // Range of MEM_READ / MEM_WRITE: addr + count <= MemBytes, the address flag clear.
  logic [Ew-1:0] mem_end;
  logic          mem_ok;
  assign mem_end = Ew'(addr_q) + Ew'(len_q[Pw:0]);
  assign mem_ok  = !addr_hi_q && (mem_end <= Ew'(MemBytes));

  // CONSOLE: from = min(addr, n); bytes = min(n - from, MaxPayload)
  logic [Nw-1:0] cons_from, cons_avail;
  logic [16:0]   cons_len;
  assign cons_from  = (!addr_hi_q && (Ew'(addr_q) < Ew'(cons_n))) ? Nw'(addr_q) : cons_n;
  assign cons_avail = cons_n - cons_from;
  if (ConsoleBytes <= MaxPayload) begin : g_cons_fits
    assign cons_len = 17'(cons_avail);    // n - from <= ConsoleBytes
  end else begin : g_cons_cut
    assign cons_len = (17'(cons_avail) > MaxPayloadL) ? MaxPayloadL : 17'(cons_avail);
  end

  // CTRL_WRITE's value
  logic [31:0] pword;
  assign pword = rem_hi_q[55:24];

  logic [7:0] host_byte;
  assign host_byte = host_rdata_i[8*addr_q[1:0] +: 8];

  logic tx_start, tx_done;
  logic        tx_begin;                  // the reply starts in the next cycle
  assign tx_start = (ex_q == ExSend);
  logic        rd_ok_q;                   // buf_rdata_q holds the byte at idx_q
  logic [7:0]  tbyte;
  logic        tsend;                     // the transmitter sends tbyte
  logic        tx_idx_clr;                // the next part of the reply starts
  logic        tx_last;
  logic [16:0] rlen;
  logic ex_buf_we;
  logic [7:0] ex_wdata;

  logic ctx_word;                         // this STATS byte starts a context's words
  assign ctx_word = (fill_q == FillStats) && (idx_q[2:0] == 3'd0) &&
                    (idx_q[6:3] >= 4'd2) && (idx_q[6:3] <= 4'd7) && !ctx_absent;

  // WAIT's milliseconds (loaded into len_q, big_q for a high byte), at most 60000.
  // WAIT's milliseconds (loaded into len_q, big_q for a high byte) pass at the tick that makes
  // min(max(ms, 1), 60000) of them (the first one may be short: the tick is free-running).
  logic wait_out;
  assign wait_out = ms_tick && ((!big_q && (len_q == {1'b0, ms_inc})) || (ms_inc == 16'd60000) ||
                                (len_q == 17'd0));

  // Controls of the shared registers, set by the executor.
  logic          ex_idx_clr, ex_idx_step;
  logic          ld_step;                 // ExLoad takes payload byte idx_q
  logic          ld_rem;                  // ... into rem (RUN, CTRL_WRITE), else into len_q
  logic          ld_serial;               // ... a bit at a time into rem_hi_q
  logic          ex_crc_start;            // ... through the CRC engine's byte register
  logic          len_const;               // len_q := len_val
  logic [16:0]   len_val;
  logic          len_cons;                // len_q := cons_len, addr_q := cons_from
  logic          addr_step;
  logic          wait_load;               // WAIT: restart the millisecond count
  logic [Sw-1:0] small_val;               // a small control register value to write
  logic          rem_clr;                 // rem_hi_q := 0, so that pword is 0
  assign ld_rem       = (op_q == OpRun) || (op_q == OpCtlWrite);
  assign ld_serial    = (op_q == OpCtlWrite) || (idx_q[2:0] != 3'd0);
  assign ex_crc_start = ld_step && ld_rem && ld_serial;

  always_comb begin
    ex_d        = ex_q;
    status_d    = status_q;
    rpay_d      = rpay_q;
    ph_d        = 1'b0;
    ctxw_d      = 1'b0;
    fill_d      = fill_q;
    sel_save_d  = sel_save_q;
    ctx_save_d  = ctx_save_q;
    run_d       = run_q;
    result_d    = result_q;
    ex_idx_clr  = 1'b0;
    ex_idx_step = 1'b0;
    ld_step     = 1'b0;
    len_const   = 1'b0;
    len_val     = 17'd4;
    len_cons    = 1'b0;
    addr_step   = 1'b0;
    wait_load   = 1'b0;
    cons_clear  = 1'b0;
    ex_buf_we   = 1'b0;
    ex_wdata    = fill_byte;
    host_req_o  = 1'b0;
    host_we_o   = 1'b0;
    ctl_we_o    = 1'b0;
    ctl_addr_o  = fill_ctl;
    small_val   = '0;

    // A run ends when the chip leaves RUNNING or reaches the limit (after draining).
    if (run_q && !run_more) begin
      run_d    = 1'b0;
      result_d = 1'b1;
    end

    unique case (ex_q)
      ExIdle: begin
        if (frame_done) begin
          ex_idx_clr = 1'b1;
          rpay_d     = 1'b0;
          status_d   = tess_bridge_pkg::ST_OK[3:0];
          ex_d       = ExDecide;
          if (!frame_good) begin
            status_d = tess_bridge_pkg::ST_BAD_CRC[3:0];
            ex_d     = ExSend;
          end
        end
      end
      ExDecide: begin
        ex_d = ExSend;
        if (ver_bad_q) begin
          status_d = tess_bridge_pkg::ST_BAD_VERSION[3:0];
        end else if (len_q > MaxPayloadL) begin
          status_d = tess_bridge_pkg::ST_TOO_LONG[3:0];
        end else if (run_q && (op_hi_q || ((op_q != OpInfo) && (op_q != OpWait) &&
                                           (op_q != OpReset)))) begin
          status_d = tess_bridge_pkg::ST_BUSY[3:0];
        end else if (op_hi_q) begin
          status_d = tess_bridge_pkg::ST_UNKNOWN_OP[3:0];
        end else begin
          unique case (op_q)
            OpInfo: begin
              fill_d    = FillInfo;
              len_const = 1'b1;
              len_val   = 17'd33;
              rpay_d    = 1'b1;
              ex_d      = ExFill;
            end
            OpMemRead, OpCtlWrite, OpWait: begin
              if (len_q[16:2] == 15'd0) begin
                status_d = tess_bridge_pkg::ST_DEVICE_ERROR[3:0];
              end else if ((op_q == OpWait) && !run_q && !result_q) begin
                status_d = tess_bridge_pkg::ST_NOT_RUNNING[3:0];
              end else begin
                ex_d = ExLoad;
              end
            end
            OpMemWrite: begin
              ex_d = ExRange;
            end
            OpCtlRead: begin
              fill_d    = FillCtl;
              len_const = 1'b1;
              len_val   = 17'd4;
              rpay_d    = 1'b1;
              ex_d      = ExFill;
            end
            // RUN: start (RESET) or release (host sync) the chip; the run starts after the load
            // (the chip does not advance before run_o rises).
            OpRun: begin
              if (len_q[16:3] == 14'd0) begin
                status_d = tess_bridge_pkg::ST_DEVICE_ERROR[3:0];
              end else begin
                ctl_addr_o = CrCtrl;
                ctl_we_o   = (state_i == StReset) || (state_i == StSync);
                small_val  = (state_i == StReset) ? Sw'(2) : Sw'(4);
                ex_d       = ExLoad;
              end
            end
            OpReset: begin
              ex_d = ExReset;
            end
            OpStats: begin
              if (!tile_ok) begin
                status_d = tess_bridge_pkg::ST_OUT_OF_RANGE[3:0];
              end else begin
                fill_d    = FillStats;
                len_const = 1'b1;
                len_val   = 17'd96;
                rpay_d    = 1'b1;
                ex_d      = ExSelSave;
              end
            end
            OpConsole: begin
              if (!tile_ok) begin
                status_d = tess_bridge_pkg::ST_OUT_OF_RANGE[3:0];
              end else begin
                len_cons = 1'b1;
                rpay_d   = 1'b1;
                if (cons_avail != '0) begin
                  ex_d = ExLoop;
                end
              end
            end
            default: status_d = tess_bridge_pkg::ST_UNKNOWN_OP[3:0];
          endcase
        end
      end
      // Payload bytes 0..3 (RUN: 0..7) from the buffer, two cycles each (and the 8 clocks of a
      // serial byte): into rem (RUN, CTRL_WRITE) or into len_q as a count (MEM_READ, WAIT; big_q
      // for a high byte).
      ExLoad: begin
        ph_d = !ph_q && !crc_busy;
        if (ph_q) begin
          ld_step     = 1'b1;
          ex_idx_step = 1'b1;
          if ((idx_q[1:0] == 2'd3) && ((op_q != OpRun) || idx_q[2])) begin
            ex_idx_clr = 1'b1;
            ex_d       = ExOp;
          end
        end
      end
      ExOp: begin
        ex_d = ExSend;
        if (crc_busy) ex_d = ExOp;          // the last serial byte
        else unique case (op_q)
          OpMemRead: begin
            if (big_q || (len_q > MaxPayloadL)) begin
              status_d = tess_bridge_pkg::ST_OUT_OF_RANGE[3:0];
            end else begin
              rpay_d = 1'b1;
              ex_d   = ExRange;
            end
          end
          OpCtlWrite: begin
            if (!breg_hit) begin
              ctl_we_o   = 1'b1;
              ctl_addr_o = addr_q[11:0];
              cons_clear = (addr_q[11:0] == CrCtrl) && pword[0];
              // A write the chip refuses (docs/chip.md) changes nothing and is answered as an error.
              if (ctl_err_i) status_d = tess_bridge_pkg::ST_DEVICE_ERROR[3:0];
            end
          end
          // RUN: run to start + max cycles.
          OpRun: begin
            ex_d = ExRunGo;
          end
          default: begin                    // OpWait
            wait_load = 1'b1;
            ex_d      = ExWait;
          end
        endcase
      end
      ExRange: begin
        ex_d = ExSend;
        if (!tile_ok || !mem_ok) begin
          status_d = tess_bridge_pkg::ST_OUT_OF_RANGE[3:0];
          rpay_d   = 1'b0;
        end else if (len_q != 17'd0) begin
          ex_d = ExLoop;
        end
      end
      // TILE_SEL := the tile (STATS) or 0 (run result), remembering the old value.
      ExSelSave: begin
        ctl_addr_o = CrTileSel;
        ctl_we_o   = 1'b1;
        small_val  = (fill_q == FillStats) ? Sw'(tile_q) : Sw'(0);
        sel_save_d = ctl_rdata_i[Tw-1:0];
        if (fill_q == FillStats) begin
          ex_d = ExCtxSave;
        end else begin
          ex_d = ExFill;
        end
      end
      ExCtxSave: begin
        ctl_addr_o = CrCtxSel;
        ctx_save_d = ctl_rdata_i[2:0];
        ex_d       = ExFill;
      end
      // A byte per cycle; STATS writes CTX_SEL before each context's words.
      ExFill: begin
        if (ctx_word && !ctxw_q) begin
          ctl_addr_o = CrCtxSel;
          ctl_we_o   = 1'b1;
          small_val  = Sw'(stats_ctx);
          ctxw_d     = 1'b1;
        end else begin
          ex_buf_we   = 1'b1;
          ex_idx_step = 1'b1;
          if (idx_end) begin
            if ((fill_q == FillStats) || (fill_q == FillResult)) begin
              ex_d = ExSelRestore;
            end else begin
              ex_d = ExSend;
            end
          end
        end
      end
      ExSelRestore: begin
        ctl_addr_o = CrTileSel;
        ctl_we_o   = 1'b1;
        small_val  = Sw'(sel_save_q);
        if (fill_q == FillStats) begin
          ex_d = ExCtxRestore;
        end else begin
          ex_d = ExSend;
        end
      end
      ExCtxRestore: begin
        ctl_addr_o = CrCtxSel;
        ctl_we_o   = 1'b1;
        small_val  = Sw'(ctx_save_q);
        ex_d       = ExSend;
      end
      // MEM_READ, MEM_WRITE, CONSOLE: two cycles a byte (the UART is far slower).
      ExLoop: begin
        ph_d = !ph_q;
        if (!ph_q) begin
          host_req_o = (op_q == OpMemRead);
        end else begin
          ex_idx_step = 1'b1;
          addr_step   = 1'b1;
          if (idx_end) begin
            ex_d = ExSend;
          end
          unique case (op_q)
            OpMemRead: begin
              ex_buf_we = 1'b1;
              ex_wdata  = host_byte;
              if (host_err_i) begin
                status_d = tess_bridge_pkg::ST_DEVICE_ERROR[3:0];
                rpay_d   = 1'b0;
                ex_d     = ExSend;
              end
            end
            OpMemWrite: begin
              host_req_o = 1'b1;
              host_we_o  = 1'b1;
            end
            default: begin                  // OpConsole
              ex_buf_we = 1'b1;
              ex_wdata  = cons_byte;
            end
          endcase
        end
      end
      ExWait: begin
        if (!run_q) begin
          ex_d = ExWaitDone;
        end else if (wait_out) begin
          status_d = tess_bridge_pkg::ST_RUNNING[3:0];
          ex_d     = ExSend;
        end
      end
      ExWaitDone: begin
        result_d  = 1'b0;
        fill_d    = FillResult;
        len_const = 1'b1;
        len_val   = 17'd40;
        rpay_d    = 1'b1;
        ex_d      = ExSelSave;
      end
      ExRunGo: begin
        run_d    = (state_i == StRunning);
        result_d = (state_i != StRunning);
        ex_d     = ExSend;
      end
      // Two cycles of chip reset.
      ExReset: begin
        cons_clear  = 1'b1;
        run_d       = 1'b0;
        result_d    = 1'b0;
        ex_idx_step = 1'b1;
        if (idx_q[0]) begin
          ex_d = ExSend;
        end
      end
      ExSend: begin
        if (tx_done) begin
          ex_d = ExIdle;
        end
      end
      default: ex_d = ExIdle;
    endcase
  end

  // pword is 0 whenever small_val is not (rem_clr before every small write), so no multiplexer.
  assign ctl_wdata_o = pword | 32'(small_val);
  assign rem_clr     = ((ex_q == ExIdle) && frame_done && !run_q) || (ex_q == ExWaitDone);

  // ---------------------------------------------------------------------------------------------
  // Fields and counters shared by receiver, executor and transmitter
  // ---------------------------------------------------------------------------------------------
  // Header fields (receiver) and payload counts (ExLoad) arrive a byte at a time; the byte's lane
  // in its 32-bit field is idx_q[1:0] (header bytes 12, 16 and 20 are aligned).
  logic       hdr_take;
  logic [7:0] dbyte;
  logic       f_tile, f_addr, f_len;
  logic [1:0] lane;
  assign hdr_take = rx_take && (rx_q == RxHdr);
  assign dbyte    = hdr_take ? rx_data_i : buf_rdata_q;
  assign lane     = idx_q[1:0];
  assign f_tile   = hdr_take && (idx_q[4:2] == 3'd3);
  assign f_addr   = hdr_take && (idx_q[4:2] == 3'd4);
  assign f_len    = (hdr_take && (idx_q[4:2] == 3'd5)) || (ld_step && !ld_rem);

  always_comb begin
    tile_d    = tile_q;
    tile_hi_d = tile_hi_q;
    addr_d    = addr_q;
    addr_hi_d = addr_hi_q;
    len_d     = len_q;
    big_d     = big_q;
    if (f_tile) begin
      if (lane == 2'd0) begin
        tile_d    = dbyte[Tw-1:0];
        tile_hi_d = (Tw < 8) && ((dbyte >> Tw) != 8'd0);
      end else begin
        tile_hi_d = tile_hi_q || (dbyte != 8'd0);
      end
    end
    if (f_addr) begin
      if (lane == 2'd0) addr_hi_d = 1'b0;
      for (int b = 0; b < 32; b++) begin
        if (lane == 2'(b / 8)) begin
          if (b < Aw) begin
            addr_d[b % Aw] = dbyte[b % 8];
          end else if (dbyte[b % 8]) begin
            addr_hi_d = 1'b1;
          end
        end
      end
    end else if (len_cons) begin
      addr_d = Aw'(cons_from);
    end else if (addr_step) begin
      addr_d = addr_q + Aw'(1);
    end
    if (f_len) begin
      unique case (lane)
        2'd0: begin
          len_d[7:0] = dbyte;
          big_d      = 1'b0;
        end
        2'd1: len_d[15:8] = dbyte;
        2'd2: begin
          len_d[16] = dbyte[0];
          big_d     = big_q || (dbyte[7:1] != 7'd0);
        end
        default: big_d = big_q || (dbyte != 8'd0);
      endcase
    end else if (len_const) begin
      len_d = len_val;
    end else if (len_cons) begin
      len_d = cons_len;
    end
  end

  // Cycles left of a run, payload bytes (RUN's byte 0 into rem_lo_q, the rest serially).
  logic dec;
  logic ld_shift;                         // a serial payload bit enters rem_hi_q
  assign dec      = run_q && toggle;
  assign ld_shift = (ex_q == ExLoad || ex_q == ExOp) && crc_busy;
  always_comb begin
    rem_lo_d = rem_lo_q - {7'd0, dec};
    rem_hi_d = rem_hi_q;
    pass_d   = pass_q;
    pcnt_d   = pcnt_q;
    borrow_d = borrow_q;
    if (ld_step && ld_rem && !ld_serial) begin
      rem_lo_d = buf_rdata_q;
    end
    if (dec && (rem_lo_q == 8'd0)) begin
      pass_d   = 1'b1;
      pcnt_d   = '0;
      borrow_d = 1'b1;
    end
    if (!run_q) pass_d = 1'b0;
    if (pass_q && run_q) begin
      rem_hi_d = {rem_hi_q[0] ^ borrow_q, rem_hi_q[55:1]};
      borrow_d = borrow_q && !rem_hi_q[0];
      pcnt_d   = pcnt_q + 6'd1;
      if (pcnt_q == 6'd55) pass_d = 1'b0;
    end else if (ld_shift) begin
      rem_hi_d = {csh_q[0], rem_hi_q[55:1]};
    end
    if (rem_clr) rem_hi_d = '0;
  end

  // The byte counter.
  logic idx_four, idx_clr, idx_step;
  assign idx_four = rx_idx_four;
  assign idx_clr  = rx_idx_clr || ex_idx_clr || tx_idx_clr || tx_begin;
  assign idx_step = rx_take || ex_idx_step || tsend;
  assign idx_d    = idx_four ? 17'd4 : (idx_clr ? 17'd0 : (idx_step ? idx_inc : idx_q));

  // Millisecond timer: the stall of a partial frame (restarted by each byte) or WAIT.
  assign tick_d = ms_tick ? TickLast : (tick_q - Kw'(1));
  assign ms_d   = (rx_take || wait_load) ? 16'd0 : (ms_tick ? ms_inc : ms_q);

  assign chip_rst_no = rst_ni && !(ex_q == ExReset);

  // ---------------------------------------------------------------------------------------------
  // Transmitter: header (from the buffer, with the reply's fields), payload (from the buffer), CRC
  // ---------------------------------------------------------------------------------------------
  assign rlen = rpay_q ? len_q : 17'd0;

  always_comb begin
    tx_d    = tx_q;
    tbyte   = buf_rdata_q;
    tx_last = 1'b0;
    tx_done = 1'b0;
    unique case (tx_q)
      TxHdr: begin
        unique case (idx_q[4:0])
          5'd6:  tbyte = {4'd0, status_q};
          5'd20: tbyte = rlen[7:0];
          5'd21: tbyte = rlen[15:8];
          5'd22: tbyte = {7'd0, rlen[16]};
          5'd7, 5'd23: tbyte = 8'd0;
          default: ;
        endcase
        tx_last = (idx_q[4:0] == 5'd23);
      end
      TxPay: tx_last = idx_end;
      TxCrc: begin
        tbyte   = ~crc_q[7:0];
        tx_last = (idx_q[1:0] == 2'd3);
      end
      default: ;
    endcase
    tsend = tx_start && rd_ok_q && tx_ready_i && !crc_busy;
    if (tsend && tx_last) begin
      unique case (tx_q)
        TxHdr: begin
          if (rlen == 17'd0) begin
            tx_d = TxCrc;
          end else begin
            tx_d = TxPay;
          end
        end
        TxPay:   tx_d = TxCrc;
        default: tx_done = 1'b1;
      endcase
    end
    if (!tx_start) begin
      tx_d = TxHdr;
    end
  end

  assign tx_valid_o = tsend;
  assign tx_data_o  = tbyte;

  // The transmitter's bytes drive the CRC and the counter (the receiver is idle meanwhile); the
  // magic is not folded in (both directions start from its CRC), the CRC bytes shift it out.
  logic tx_crc;
  assign tx_crc   = tsend && ((tx_q != TxHdr) || (idx_q[4:2] != 3'd0));
  assign tx_begin = (ex_q != ExSend) && (ex_d == ExSend);
  assign crc_init  = rx_crc_init || tx_begin;
  assign crc_start = rx_crc_start || tx_crc || ex_crc_start;
  assign crc_plain = (tx_crc && (tx_q == TxCrc)) || ex_crc_start;
  assign crc_byte  = tx_crc ? tbyte : (ex_crc_start ? buf_rdata_q : rx_data_i);

  // ---------------------------------------------------------------------------------------------
  // Buffer ports, host port
  // ---------------------------------------------------------------------------------------------
  always_comb begin
    buf_we    = rx_buf_we || ex_buf_we;
    buf_whdr  = rx_buf_we && (rx_q != RxPay);
    buf_wdata = rx_buf_we ? rx_data_i : ex_wdata;
    // The header copy is the reply's header: the protocol version, the opcode with the reply bit.
    if (rx_buf_we && (rx_q == RxHdr) && (idx_q[4:1] == 4'd2)) begin
      buf_wdata = idx_q[0] ? (rx_data_i | 8'h80) : tess_bridge_pkg::PROTOCOL_VERSION;
    end
    buf_rhdr  = tx_start && (tx_q == TxHdr);
    buf_waddr = {buf_whdr, buf_whdr ? (Pw-5)'(0) : idx_q[Pw-1:5],
                 (rx_buf_we && (rx_q == RxHunt)) ? {3'd0, magic_q} : idx_q[4:0]};
    buf_raddr = {buf_rhdr, buf_rhdr ? (Pw-5)'(0) : idx_q[Pw-1:5], idx_q[4:0]};
  end

  assign host_tile_o  = 16'(tile_q);
  assign host_addr_o  = 32'({addr_q[Aw-1:2], 2'b00});
  assign host_be_o    = 4'b0001 << addr_q[1:0];
  assign host_wdata_o = {4{buf_rdata_q}};

  // The counter: the transmitter's bytes, else the receiver's and the executor's steps.
  assign tx_idx_clr = tsend && tx_last && (tx_q != TxCrc);

  logic [31:0] clock_d;
  assign clock_d = clock_q + 32'd1;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rx_q       <= RxHunt;
      ex_q       <= ExIdle;
      tx_q       <= TxHdr;
      magic_q    <= '0;
      idx_q      <= '0;
      len_q      <= '0;
      big_q      <= 1'b0;
      ver_bad_q  <= 1'b0;
      op_q       <= '0;
      op_hi_q    <= 1'b0;
      tile_q     <= '0;
      tile_hi_q  <= 1'b0;
      addr_q     <= '0;
      addr_hi_q  <= 1'b0;
      tick_q     <= '0;
      ms_q       <= '0;
      bad_q      <= '0;
      clock_q    <= '0;
      crc_q      <= '0;
      csh_q      <= '0;
      ccnt_q     <= '0;
      cplain_q   <= 1'b0;
      rem_lo_q   <= '0;
      rem_hi_q   <= '0;
      pass_q     <= 1'b0;
      pcnt_q     <= '0;
      borrow_q   <= 1'b0;
      cyc0_q     <= 1'b0;
      run_q      <= 1'b0;
      chip_run_q <= 1'b0;
      result_q   <= 1'b0;
      cons_lost_q <= '0;
      fill_q     <= FillInfo;
      status_q   <= '0;
      rpay_q     <= 1'b0;
      ph_q       <= 1'b0;
      ctxw_q     <= 1'b0;
      sel_save_q <= '0;
      ctx_save_q <= '0;
      rd_ok_q    <= 1'b0;
    end else begin
      rx_q       <= rx_d;
      ex_q       <= ex_d;
      tx_q       <= tx_d;
      magic_q    <= magic_d;
      idx_q      <= idx_d;
      len_q      <= len_d;
      big_q      <= big_d;
      ver_bad_q  <= ver_bad_d;
      op_q       <= op_d;
      op_hi_q    <= op_hi_d;
      tile_q     <= tile_d;
      tile_hi_q  <= tile_hi_d;
      addr_q     <= addr_d;
      addr_hi_q  <= addr_hi_d;
      tick_q     <= tick_d;
      ms_q       <= ms_d;
      bad_q      <= bad_d;
      clock_q    <= clock_d;
      crc_q      <= crc_d;
      csh_q      <= csh_d;
      ccnt_q     <= ccnt_d;
      cplain_q   <= cplain_d;
      rem_lo_q   <= rem_lo_d;
      rem_hi_q   <= rem_hi_d;
      pass_q     <= pass_d;
      pcnt_q     <= pcnt_d;
      borrow_q   <= borrow_d;
      cyc0_q     <= cycle_i[0];
      run_q      <= run_d;
      chip_run_q <= run_o;
      result_q   <= result_d;
      cons_lost_q <= cons_lost_d;
      fill_q     <= fill_d;
      status_q   <= status_d;
      rpay_q     <= rpay_d;
      ph_q       <= ph_d;
      ctxw_q     <= ctxw_d;
      sel_save_q <= sel_save_d;
      ctx_save_q <= ctx_save_d;
      rd_ok_q    <= tx_start && !tsend;
    end
  end

  assign busy_o       = (ex_q != ExIdle) || (rx_q != RxHunt) || (magic_q != 2'd0) || run_q;
  assign running_o    = run_q;
  assign bad_frames_o = bad_q;

endmodule
