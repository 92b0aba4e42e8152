// Device side of the link protocol (docs/link-protocol.md) for boards: takes request frames from a
// byte stream (the UART), drives the chip's host port, control registers and run input, and sends
// the reply frames. docs/bringup.md, "The UART bridge", describes it for a newcomer.
//
// Receive: bytes are matched against the magic, the 20 header bytes follow, then the payload
// (stored in a MaxPayload-byte buffer) and the CRC-32. The CRC is checked over the whole frame
// before anything is acted on: a frame that fails it is answered with BadCrc (header echoed as
// received) and counted, never executed. A length field above 65536, or a frame stalled for StallMs
// between two bytes, is dropped and counted without a reply. A frame of another protocol version
// gets BadVersion, a payload above MaxPayload (reported in the INFO reply; the host splits its
// transfers to fit) gets TooLong. While a request executes and its reply is sent, received bytes
// are ignored: the protocol has one request in flight.
// Execute: every operation of the protocol. Ranges are checked before the chip is touched.
// RUN starts the chip's run input until it stops by itself or reaches start + max cycles; WAIT
// holds its reply until the run ends or its milliseconds pass (CyclesPerMs clock cycles each).
// While a run is in progress only INFO, WAIT and RESET are served, the rest get Busy (RESET
// abandons the run: a client that finds a board left running by another can recover it without
// the reset button). The run result is read from the chip's control registers when WAIT
// collects it.
// Consoles: each tile's console bytes (captured while the chip advances) go to a ConsoleBytes
// buffer per tile; bytes beyond it are lost and counted (CR_LINK_CONSOLE_LOST).
// Bridge registers, read with CTRL_READ and not forwarded to the chip: CR_LINK_BAD_FRAMES,
// CR_LINK_CONSOLE_LOST, CR_LINK_CLOCK (rtl/params.json).
// Timing: nothing here is cycle-critical for the chip; the chip's cycle count only moves in a
// cycle after one with run_o = 1 (the chip registers it).
module tess_link_bridge #(
  parameter int NumTiles     = 4,
  parameter int MemBytes     = 65536,
  parameter int MaxPayload   = 1024,
  parameter int ConsoleBytes = 1024,
  parameter int CyclesPerMs  = 12000,
  parameter int StallMs      = 200,
  localparam int Contexts = tess_params_pkg::NUM_CONTEXTS
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
  input  logic [NumTiles*Contexts*64-1:0] instret_i,
  // status for LEDs and the simulation harness
  output logic                            busy_o,
  output logic                            running_o,
  output logic [31:0]                     bad_frames_o
);

  localparam int Pw = $clog2(MaxPayload);
  localparam int Cw = $clog2(ConsoleBytes);
  localparam int Tw = (NumTiles > 1) ? $clog2(NumTiles) : 1;
  localparam logic [31:0] MaxPayloadW = 32'(MaxPayload);
  localparam logic [31:0] MemLimit    = 32'(MemBytes);
  localparam logic [31:0] StallCycles = 32'(StallMs) * 32'(CyclesPerMs);
  localparam logic [11:0] CrTileSel   = 12'(tess_params_pkg::CR_TILE_SEL);
  localparam logic [11:0] CrCtrl      = 12'(tess_params_pkg::CR_CTRL);
  localparam logic [11:0] CrStatus    = 12'(tess_params_pkg::CR_STATUS);
  localparam logic [31:0] CrBadFrames = 32'(tess_params_pkg::CR_LINK_BAD_FRAMES);
  localparam logic [31:0] CrConsLost  = 32'(tess_params_pkg::CR_LINK_CONSOLE_LOST);
  localparam logic [31:0] CrClock     = 32'(tess_params_pkg::CR_LINK_CLOCK);
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
`endif

  // ---------------------------------------------------------------------------------------------
  // Payload buffer: MaxPayload bytes, one write and one registered read per cycle (block RAM)
  // ---------------------------------------------------------------------------------------------
  logic [7:0]    pbuf [MaxPayload];
  logic          buf_we;
  logic [Pw-1:0] buf_waddr, buf_raddr;
  logic [7:0]    buf_wdata, buf_rdata_q;
  logic [Pw-1:0] rd_addr;                 // buf_raddr, or the transmitter's while it sends

  always_ff @(posedge clk_i) begin
    if (buf_we) begin
      pbuf[buf_waddr] <= buf_wdata;
    end
    buf_rdata_q <= pbuf[rd_addr];
  end

  // ---------------------------------------------------------------------------------------------
  // Receiver
  // ---------------------------------------------------------------------------------------------
  typedef enum logic [1:0] {
    RxHunt,
    RxHdr,
    RxPay,
    RxCrc
  } rx_state_e;

  typedef enum logic [4:0] {
    ExIdle,
    ExDecide,
    ExSelSave,
    ExFill,
    ExSelRestore,
    ExMemRdReq,
    ExMemRdData,
    ExMemWrRead,
    ExMemWrReq,
    ExConsRead,
    ExConsData,
    ExCtlWrite,
    ExRunStart,
    ExRunGo,
    ExWait,
    ExWaitDone,
    ExReset,
    ExSend
  } ex_state_e;

  typedef enum logic [1:0] {
    FillInfo,
    FillCtl,
    FillStats,
    FillResult
  } fill_e;

  rx_state_e   rx_q, rx_d;
  ex_state_e   ex_q, ex_d;
  logic [1:0]  magic_q, magic_d;
  logic [4:0]  hidx_q, hidx_d;            // header byte index 4..23
  logic [159:0] hdr_q, hdr_d;             // header bytes 4..23
  logic [16:0] pidx_q, pidx_d;            // payload / CRC byte index
  logic [31:0] crc_q, crc_d;
  logic [31:0] rx_crc_q, rx_crc_d;
  logic [63:0] pw_q, pw_d;                // first 8 payload bytes
  logic [31:0] stall_q, stall_d;
  logic [31:0] bad_q, bad_d;
  logic [31:0] clock_q, clock_d;          // board clock cycles since reset
  assign clock_d = clock_q + 32'd1;

  logic [7:0]  h_ver, h_op;
  logic [31:0] h_seq, h_tile, h_addr, h_len;
  assign h_ver  = hdr_q[7:0];
  assign h_op   = hdr_q[15:8];
  assign h_seq  = hdr_q[63:32];           // bytes 6-7 are the status field, 0 in requests
  assign h_tile = hdr_q[95:64];
  assign h_addr = hdr_q[127:96];
  assign h_len  = hdr_q[159:128];

  logic        accept;                    // the receiver takes bytes (no request in execution)
  logic        frame_done;                // a whole frame arrived this cycle
  logic        frame_good;                // ... and its CRC is right
  logic [31:0] crc_next;
  logic [31:0] rx_crc_full;
  assign accept   = (ex_q == ExIdle);
  assign crc_next = tess_bridge_pkg::crc32_byte(crc_q, rx_data_i);
  assign rx_crc_full = {rx_data_i, rx_crc_q[31:8]};

  logic rx_buf_we;

  always_comb begin
    rx_d       = rx_q;
    magic_d    = magic_q;
    hidx_d     = hidx_q;
    hdr_d      = hdr_q;
    pidx_d     = pidx_q;
    crc_d      = crc_q;
    rx_crc_d   = rx_crc_q;
    pw_d       = pw_q;
    stall_d    = stall_q;
    bad_d      = bad_q;
    frame_done = 1'b0;
    frame_good = 1'b0;
    rx_buf_we  = 1'b0;
    if ((rx_q != RxHunt) && accept) begin
      stall_d = stall_q + 32'd1;
      if (stall_q >= StallCycles) begin
        rx_d  = RxHunt;
        bad_d = bad_q + 32'd1;
      end
    end
    if (rx_valid_i && accept) begin
      stall_d = '0;
      unique case (rx_q)
        RxHunt: begin
          if (rx_data_i == tess_bridge_pkg::MAGIC[8*magic_q +: 8]) begin
            crc_d   = (magic_q == 2'd0) ? tess_bridge_pkg::crc32_byte(32'hFFFF_FFFF, rx_data_i) :
                                          crc_next;
            magic_d = magic_q + 2'd1;
            if (magic_q == 2'd3) begin
              rx_d   = RxHdr;
              hidx_d = 5'd4;
            end
          end else if (rx_data_i == tess_bridge_pkg::MAGIC[7:0]) begin
            crc_d   = tess_bridge_pkg::crc32_byte(32'hFFFF_FFFF, rx_data_i);
            magic_d = 2'd1;
          end else begin
            magic_d = 2'd0;
          end
        end
        RxHdr: begin
          crc_d  = crc_next;
          hdr_d  = {rx_data_i, hdr_q[159:8]};
          hidx_d = hidx_q + 5'd1;
          pidx_d = '0;
          pw_d   = '0;
          if (hidx_q == 5'd23) begin
            // hdr_d[159:128] is the length field now
            if (hdr_d[159:128] > 32'd65536) begin
              rx_d    = RxHunt;
              magic_d = 2'd0;
              bad_d   = bad_q + 32'd1;
            end else if (hdr_d[159:128] == 32'd0) begin
              rx_d = RxCrc;
            end else begin
              rx_d = RxPay;
            end
          end
        end
        RxPay: begin
          crc_d     = crc_next;
          rx_buf_we = (pidx_q < 17'(MaxPayload));
          if (pidx_q < 17'd8) begin
            pw_d[8*pidx_q[2:0] +: 8] = rx_data_i;
          end
          pidx_d = pidx_q + 17'd1;
          if ({15'd0, pidx_q} + 32'd1 == h_len) begin
            rx_d   = RxCrc;
            pidx_d = '0;
          end
        end
        RxCrc: begin
          rx_crc_d = rx_crc_full;
          pidx_d   = pidx_q + 17'd1;
          if (pidx_q == 17'd3) begin
            rx_d       = RxHunt;
            magic_d    = 2'd0;
            frame_done = 1'b1;
            frame_good = (rx_crc_full == ~crc_q);
            if (!frame_good) begin
              bad_d = bad_q + 32'd1;
            end
          end
        end
        default: rx_d = RxHunt;
      endcase
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Executor
  // ---------------------------------------------------------------------------------------------
  logic [15:0] status_q, status_d;        // reply status
  logic [31:0] rlen_q, rlen_d;            // reply payload length
  logic [16:0] idx_q, idx_d;              // byte index of the operation
  logic [16:0] cnt_q, cnt_d;              // bytes of the operation
  logic [31:0] base_q, base_d;            // MEM address / console offset of byte 0
  fill_e       fill_q, fill_d;
  logic [4:0]  words_q, words_d;          // words to fill
  logic [31:0] sel_save_q, sel_save_d;
  logic [31:0] sel_target_q, sel_target_d;
  logic [31:0] cstat_q, cstat_d;          // STATUS when a run result is built
  logic        run_q, run_d;
  logic        result_q, result_d;        // a finished run waits to be collected
  logic [63:0] limit_q, limit_d;
  logic [15:0] wait_ms_q, wait_ms_d;
  logic [31:0] wait_cyc_q, wait_cyc_d;
  logic [1:0]  rst_cnt_q, rst_cnt_d;
  logic        cons_clear;

  // run_o: the chip advances while a run is in progress, it is RUNNING and below the limit (or
  // draining its pipelines after a halt or error, which the chip does not count). The chip
  // registers its run input (docs/chip.md, "Run input"), so run_o says whether the next cycle may
  // advance: the count then is one more than now if the chip advances now (chip_run_q, a copy of
  // the chip's register). A halt or error found in the cycle that reaches limit - 1 makes one
  // draining cycle hold, which the chip does not count.
  logic run_more;
  logic chip_run_q;
  logic [64:0] cycle_next;
  assign run_more   = (state_i == StRunning) && (stopping_i || (cycle_i < limit_q));
  assign cycle_next = {1'b0, cycle_i} + {64'd0, chip_run_q};
  assign run_o      = run_q && (state_i == StRunning) &&
                      (stopping_i || (cycle_next < {1'b0, limit_q}));

  // Tile of the request, for STATS and CONSOLE (checked against NumTiles first).
  logic [Tw-1:0] tsel;
  assign tsel = Tw'(h_tile);

  // Console buffers
  logic [NumTiles*32-1:0] cons_count;
  logic [NumTiles*8-1:0]  cons_rdata;
  logic [Cw-1:0]          cons_raddr;
  logic [31:0]            cons_lost_q, cons_lost_d;
  logic [31:0]            cons_n;          // bytes of the selected tile's console
  assign cons_n = cons_count[32*tsel +: 32];

  // The word the fill step writes, and the control register it reads.
  logic [31:0] fill_word;
  logic [11:0] fill_ctl;
  logic [3:0]  cst;
  assign cst = cstat_q[3:0];

  // The requested tile's counters as arrays of 32-bit words, so that selecting one is a plain
  // multiplexer of words (no shifter over every tile's bits).
  localparam int Iw = $clog2(NumTiles * Contexts * 2);
  localparam int Yw = $clog2(NumTiles * 2);
  logic [31:0]   instret_w [NumTiles * Contexts * 2];
  logic [31:0]   cycle_w [NumTiles * 2];
  logic [2:0]    stat_ctx;                // context of STATS words 4..15
  logic [Iw-1:0] instret_idx;
  logic [Yw-1:0] cycle_idx;
  for (genvar k = 0; k < NumTiles * Contexts * 2; k++) begin : g_instret_w
    assign instret_w[k] = instret_i[32*k +: 32];
  end
  for (genvar k = 0; k < NumTiles * 2; k++) begin : g_cycle_w
    assign cycle_w[k] = tile_cycle_i[32*k +: 32];
  end
  assign stat_ctx    = 3'((idx_q[4:0] - 5'd4) >> 1);
  assign cycle_idx   = Yw'(32'(tsel) * 32'd2 + 32'(idx_q[0]));
  assign instret_idx = Iw'((32'(tsel) * 32'(Contexts) + 32'(stat_ctx)) * 32'd2 + 32'(idx_q[0]));

  always_comb begin
    fill_ctl  = 12'(tess_params_pkg::CR_ID);
    fill_word = '0;
    unique case (fill_q)
      FillInfo: begin
        unique case (idx_q[4:0])
          5'd0: fill_word = 32'(tess_bridge_pkg::PROTOCOL_VERSION);
          5'd1: fill_word = 32'(NumTiles);
          5'd2: fill_word = MemLimit;
          5'd3: fill_word = 32'(Contexts);
          5'd4: fill_word = MaxPayloadW;
          5'd5: fill_word = 32'h72616F62;   // "boar"
          5'd6: fill_word = 32'h00000064;   // "d"
          default: fill_word = '0;
        endcase
      end
      FillCtl: begin
        fill_ctl = h_addr[11:0];
        if (h_addr == CrBadFrames) begin
          fill_word = bad_q;
        end else if (h_addr == CrConsLost) begin
          fill_word = cons_lost_q;
        end else if (h_addr == CrClock) begin
          fill_word = clock_q;
        end else begin
          fill_word = ctl_rdata_i;
        end
      end
      FillStats: begin
        unique case (idx_q[4:0])
          5'd0, 5'd1: fill_word = cycle_w[cycle_idx];
          5'd2: begin fill_ctl = 12'(tess_params_pkg::CR_T_INSTR_LO); fill_word = ctl_rdata_i; end
          5'd3: begin fill_ctl = 12'(tess_params_pkg::CR_T_INSTR_HI); fill_word = ctl_rdata_i; end
          5'd16: begin fill_ctl = 12'(tess_params_pkg::CR_T_IDLE_LO); fill_word = ctl_rdata_i; end
          5'd17: begin fill_ctl = 12'(tess_params_pkg::CR_T_IDLE_HI); fill_word = ctl_rdata_i; end
          5'd18: begin
            fill_ctl  = 12'(tess_params_pkg::CR_T_SYNCWAIT_LO);
            fill_word = ctl_rdata_i;
          end
          5'd19: begin
            fill_ctl  = 12'(tess_params_pkg::CR_T_SYNCWAIT_HI);
            fill_word = ctl_rdata_i;
          end
          5'd20: begin fill_ctl = 12'(tess_params_pkg::CR_T_EXCH_LO); fill_word = ctl_rdata_i; end
          5'd21: begin fill_ctl = 12'(tess_params_pkg::CR_T_EXCH_HI); fill_word = ctl_rdata_i; end
          5'd22: begin
            fill_ctl  = 12'(tess_params_pkg::CR_T_STATE);
            fill_word = {31'd0, ctl_rdata_i[0]};
          end
          5'd23: begin fill_ctl = 12'(tess_params_pkg::CR_T_EXIT); fill_word = ctl_rdata_i; end
          default: begin
            // words 4..15: instructions of context (w-4)/2, low word first
            fill_word = instret_w[instret_idx];
          end
        endcase
      end
      FillResult: begin
        unique case (idx_q[4:0])
          5'd0: begin
            if (cst == StHalted) begin
              fill_word = 32'd0;
            end else if (cst == StError) begin
              fill_word = 32'd1;
            end else if (cst == StSync) begin
              fill_word = cstat_q[4] ? 32'd3 : 32'd4;
            end else begin
              fill_word = 32'd2;
            end
          end
          5'd1: fill_word = cycle_i[31:0];
          5'd2: fill_word = cycle_i[63:32];
          5'd3: begin
            fill_ctl  = 12'(tess_params_pkg::CR_T_EXIT);
            fill_word = (cst == StHalted) ? ctl_rdata_i : 32'd0;
          end
          5'd4, 5'd5, 5'd6, 5'd7, 5'd8: begin
            fill_ctl  = 12'(tess_params_pkg::CR_ERR_TILE) + {6'd0, idx_q[3:0] - 4'd4, 2'b00};
            fill_word = (cst == StError) ? ctl_rdata_i : 32'd0;
          end
          5'd9: fill_word = (cst == StSync) ? {16'd0, cstat_q[31:16]} : 32'd0;
          default: fill_word = '0;
        endcase
      end
      default: ;
    endcase
  end

  logic [7:0] fill_byte;
  assign fill_byte = fill_word[8*cnt_q[1:0] +: 8];

  // Range check of MEM_READ / MEM_WRITE: tile, then addr + count <= MemBytes in 33 bits.
  logic        tile_ok;
  logic [32:0] mem_end_rd, mem_end_wr;
  assign tile_ok    = h_tile < 32'(NumTiles);
  assign mem_end_rd = {1'b0, h_addr} + {1'b0, pw_q[31:0]};
  assign mem_end_wr = {1'b0, h_addr} + {1'b0, h_len};

  logic [31:0] byte_addr;                 // MEM address of byte idx_q
  assign byte_addr = base_q + {15'd0, idx_q};

  logic [64:0] limit_sum;
  assign limit_sum = {1'b0, cycle_i} + {1'b0, pw_q};

  // TX engine handshake
  logic tx_start, tx_done;

  always_comb begin
    ex_d         = ex_q;
    status_d     = status_q;
    rlen_d       = rlen_q;
    idx_d        = idx_q;
    cnt_d        = cnt_q;
    base_d       = base_q;
    fill_d       = fill_q;
    words_d      = words_q;
    sel_save_d   = sel_save_q;
    sel_target_d = sel_target_q;
    cstat_d      = cstat_q;
    run_d        = run_q;
    result_d     = result_q;
    limit_d      = limit_q;
    wait_ms_d    = wait_ms_q;
    wait_cyc_d   = wait_cyc_q;
    rst_cnt_d    = rst_cnt_q;
    cons_clear   = 1'b0;
    tx_start     = 1'b0;
    buf_we       = rx_buf_we;
    buf_waddr    = pidx_q[Pw-1:0];
    buf_wdata    = rx_data_i;
    buf_raddr    = idx_q[Pw-1:0];
    cons_raddr   = Cw'(base_q + {15'd0, idx_q});
    host_req_o   = 1'b0;
    host_we_o    = 1'b0;
    host_tile_o  = h_tile[15:0];
    host_addr_o  = {byte_addr[31:2], 2'b00};
    host_be_o    = 4'b0001 << byte_addr[1:0];
    host_wdata_o = {4{buf_rdata_q}};
    ctl_we_o     = 1'b0;
    ctl_addr_o   = fill_ctl;
    ctl_wdata_o  = '0;

    // A run ends when the chip leaves RUNNING or reaches the limit (after draining).
    if (run_q && !run_more) begin
      run_d    = 1'b0;
      result_d = 1'b1;
    end

    unique case (ex_q)
      ExIdle: begin
        if (frame_done) begin
          ex_d     = ExDecide;
          rlen_d   = '0;
          idx_d    = '0;
          cnt_d    = '0;
          status_d = tess_bridge_pkg::ST_OK;
          if (!frame_good) begin
            status_d = tess_bridge_pkg::ST_BAD_CRC;
            ex_d     = ExSend;
          end
        end
      end
      ExDecide: begin
        ex_d = ExSend;
        if (h_ver != tess_bridge_pkg::PROTOCOL_VERSION) begin
          status_d = tess_bridge_pkg::ST_BAD_VERSION;
        end else if (h_len > MaxPayloadW) begin
          status_d = tess_bridge_pkg::ST_TOO_LONG;
        end else if (run_q && (h_op != tess_bridge_pkg::OP_INFO) &&
                     (h_op != tess_bridge_pkg::OP_WAIT) &&
                     (h_op != tess_bridge_pkg::OP_RESET)) begin
          status_d = tess_bridge_pkg::ST_BUSY;
        end else begin
          unique case (h_op)
            tess_bridge_pkg::OP_INFO: begin
              fill_d  = FillInfo;
              words_d = 5'd7;
              rlen_d  = 32'd25;
              ex_d    = ExFill;
            end
            tess_bridge_pkg::OP_MEM_READ: begin
              if (h_len < 32'd4) begin
                status_d = tess_bridge_pkg::ST_DEVICE_ERROR;
              end else if (!tile_ok || (pw_q[31:0] > MaxPayloadW) ||
                           (mem_end_rd > {1'b0, MemLimit})) begin
                status_d = tess_bridge_pkg::ST_OUT_OF_RANGE;
              end else begin
                base_d = h_addr;
                cnt_d  = pw_q[16:0];
                rlen_d = pw_q[31:0];
                if (pw_q[31:0] == 32'd0) begin
                  ex_d = ExSend;
                end else begin
                  ex_d = ExMemRdReq;
                end
              end
            end
            tess_bridge_pkg::OP_MEM_WRITE: begin
              if (!tile_ok || (mem_end_wr > {1'b0, MemLimit})) begin
                status_d = tess_bridge_pkg::ST_OUT_OF_RANGE;
              end else begin
                base_d = h_addr;
                cnt_d  = h_len[16:0];
                if (h_len == 32'd0) begin
                  ex_d = ExSend;
                end else begin
                  ex_d = ExMemWrRead;
                end
              end
            end
            tess_bridge_pkg::OP_CTRL_READ: begin
              fill_d  = FillCtl;
              words_d = 5'd1;
              rlen_d  = 32'd4;
              ex_d    = ExFill;
            end
            tess_bridge_pkg::OP_CTRL_WRITE: begin
              if (h_len < 32'd4) begin
                status_d = tess_bridge_pkg::ST_DEVICE_ERROR;
              end else begin
                ex_d = ExCtlWrite;
              end
            end
            tess_bridge_pkg::OP_RUN: begin
              if (h_len < 32'd8) begin
                status_d = tess_bridge_pkg::ST_DEVICE_ERROR;
              end else begin
                ex_d = ExRunStart;
              end
            end
            tess_bridge_pkg::OP_WAIT: begin
              if (h_len < 32'd4) begin
                status_d = tess_bridge_pkg::ST_DEVICE_ERROR;
              end else if (!run_q && !result_q) begin
                status_d = tess_bridge_pkg::ST_NOT_RUNNING;
              end else begin
                wait_ms_d  = (pw_q[31:0] > 32'd60000) ? 16'd60000 : pw_q[15:0];
                wait_cyc_d = 32'(CyclesPerMs);
                ex_d       = ExWait;
              end
            end
            tess_bridge_pkg::OP_RESET: begin
              rst_cnt_d = 2'd2;
              ex_d      = ExReset;
            end
            tess_bridge_pkg::OP_STATS: begin
              if (!tile_ok) begin
                status_d = tess_bridge_pkg::ST_OUT_OF_RANGE;
              end else begin
                fill_d       = FillStats;
                words_d      = 5'd24;
                rlen_d       = 32'd96;
                sel_target_d = h_tile;
                ex_d         = ExSelSave;
              end
            end
            tess_bridge_pkg::OP_CONSOLE: begin
              if (!tile_ok) begin
                status_d = tess_bridge_pkg::ST_OUT_OF_RANGE;
              end else begin
                // from = min(addr, n); bytes = min(n - from, MaxPayload)
                base_d = (h_addr < cons_n) ? h_addr : cons_n;
                if (cons_n - ((h_addr < cons_n) ? h_addr : cons_n) > MaxPayloadW) begin
                  cnt_d = 17'(MaxPayload);
                end else begin
                  cnt_d = 17'(cons_n - ((h_addr < cons_n) ? h_addr : cons_n));
                end
                rlen_d = {15'd0, cnt_d};
                if (cnt_d == '0) begin
                  ex_d = ExSend;
                end else begin
                  ex_d = ExConsRead;
                end
              end
            end
            default: status_d = tess_bridge_pkg::ST_UNKNOWN_OP;
          endcase
        end
      end
      // TILE_SEL := target, remembering the old value (read and write in one cycle).
      ExSelSave: begin
        ctl_addr_o  = CrTileSel;
        ctl_we_o    = 1'b1;
        ctl_wdata_o = sel_target_q;
        sel_save_d  = ctl_rdata_i;
        idx_d       = '0;
        cnt_d       = '0;
        ex_d        = ExFill;
      end
      // Four cycles per word: byte cnt_q[1:0] of word idx_q goes to buffer byte 4*idx + cnt.
      ExFill: begin
        buf_we    = 1'b1;
        buf_waddr = Pw'({idx_q[4:0], cnt_q[1:0]});
        buf_wdata = fill_byte;
        cnt_d     = {15'd0, cnt_q[1:0] + 2'd1};
        if (cnt_q[1:0] == 2'd3) begin
          idx_d = idx_q + 17'd1;
          if (idx_q[4:0] + 5'd1 == words_q) begin
            if ((fill_q == FillStats) || (fill_q == FillResult)) begin
              ex_d = ExSelRestore;
            end else begin
              ex_d = ExSend;
            end
          end
        end
      end
      ExSelRestore: begin
        ctl_addr_o  = CrTileSel;
        ctl_we_o    = 1'b1;
        ctl_wdata_o = sel_save_q;
        ex_d        = ExSend;
      end
      // MEM_READ: one host-port read per byte (the UART is far slower).
      ExMemRdReq: begin
        host_req_o = 1'b1;
        ex_d       = ExMemRdData;
      end
      ExMemRdData: begin
        buf_we    = 1'b1;
        buf_waddr = idx_q[Pw-1:0];
        buf_wdata = host_rdata_i[8*byte_addr[1:0] +: 8];
        idx_d     = idx_q + 17'd1;
        if (idx_q + 17'd1 == cnt_q) begin
          ex_d = ExSend;
        end else begin
          ex_d = ExMemRdReq;
        end
        if (host_err_i) begin
          status_d = tess_bridge_pkg::ST_DEVICE_ERROR;
          rlen_d   = '0;
          ex_d     = ExSend;
        end
      end
      // MEM_WRITE: read the byte from the buffer, then a one-byte host-port write.
      ExMemWrRead: begin
        ex_d = ExMemWrReq;
      end
      ExMemWrReq: begin
        host_req_o = 1'b1;
        host_we_o  = 1'b1;
        idx_d      = idx_q + 17'd1;
        if (idx_q + 17'd1 == cnt_q) begin
          ex_d = ExSend;
        end else begin
          ex_d = ExMemWrRead;
        end
      end
      ExConsRead: begin
        ex_d = ExConsData;
      end
      ExConsData: begin
        buf_we    = 1'b1;
        buf_waddr = idx_q[Pw-1:0];
        buf_wdata = cons_rdata[8*tsel +: 8];
        idx_d     = idx_q + 17'd1;
        if (idx_q + 17'd1 == cnt_q) begin
          ex_d = ExSend;
        end else begin
          ex_d = ExConsRead;
        end
      end
      ExCtlWrite: begin
        if ((h_addr != CrBadFrames) && (h_addr != CrConsLost) && (h_addr != CrClock)) begin
          ctl_we_o    = 1'b1;
          ctl_addr_o  = h_addr[11:0];
          ctl_wdata_o = pw_q[31:0];
          cons_clear  = (h_addr[11:0] == CrCtrl) && pw_q[0];
          // A write the chip refuses (docs/chip.md) changes nothing and is answered as an error.
          if (ctl_err_i) status_d = tess_bridge_pkg::ST_DEVICE_ERROR;
        end
        ex_d = ExSend;
      end
      // RUN: start (RESET) or release (host sync) the chip, then run to start + max cycles.
      ExRunStart: begin
        ctl_addr_o  = CrCtrl;
        ctl_we_o    = (state_i == StReset) || (state_i == StSync);
        ctl_wdata_o = (state_i == StReset) ? 32'd2 : 32'd4;
        ex_d        = ExRunGo;
      end
      ExRunGo: begin
        limit_d  = limit_sum[64] ? 64'hFFFF_FFFF_FFFF_FFFF : limit_sum[63:0];
        run_d    = (state_i == StRunning);
        result_d = (state_i != StRunning);
        ex_d     = ExSend;
      end
      ExWait: begin
        if (!run_q) begin
          ex_d = ExWaitDone;
        end else if (wait_cyc_q > 32'd1) begin
          wait_cyc_d = wait_cyc_q - 32'd1;
        end else if (wait_ms_q > 16'd1) begin
          wait_ms_d  = wait_ms_q - 16'd1;
          wait_cyc_d = 32'(CyclesPerMs);
        end else begin
          status_d = tess_bridge_pkg::ST_RUNNING;
          ex_d     = ExSend;
        end
      end
      ExWaitDone: begin
        ctl_addr_o   = CrStatus;
        cstat_d      = ctl_rdata_i;
        result_d     = 1'b0;
        fill_d       = FillResult;
        words_d      = 5'd10;
        rlen_d       = 32'd40;
        sel_target_d = '0;
        ex_d         = ExSelSave;
      end
      ExReset: begin
        cons_clear = 1'b1;
        run_d      = 1'b0;
        result_d   = 1'b0;
        rst_cnt_d  = rst_cnt_q - 2'd1;
        if (rst_cnt_q == 2'd1) begin
          ex_d = ExSend;
        end
      end
      ExSend: begin
        tx_start = 1'b1;
        if (tx_done) begin
          ex_d = ExIdle;
        end
      end
      default: ex_d = ExIdle;
    endcase
  end

  assign chip_rst_no = rst_ni && !(ex_q == ExReset);

  // ---------------------------------------------------------------------------------------------
  // Transmitter: header, payload (from the buffer), CRC
  // ---------------------------------------------------------------------------------------------
  typedef enum logic [2:0] {
    TxIdle,
    TxHdr,
    TxPay,
    TxCrc,
    TxDone
  } tx_state_e;

  tx_state_e   tx_q, tx_d;
  logic [16:0] tidx_q, tidx_d;
  logic [31:0] tcrc_q, tcrc_d;
  logic        tpay_ok_q, tpay_ok_d;     // buf_rdata_q holds payload byte tidx_q
  logic [191:0] thdr;
  logic [7:0]  tbyte;
  logic        tsend;

  assign thdr = {rlen_q, h_addr, h_tile, h_seq, status_q, h_op | 8'h80,
                 tess_bridge_pkg::PROTOCOL_VERSION, tess_bridge_pkg::MAGIC};

  always_comb begin
    tx_d      = tx_q;
    tidx_d    = tidx_q;
    tcrc_d    = tcrc_q;
    tpay_ok_d = 1'b0;
    tbyte     = '0;
    tsend     = 1'b0;
    tx_done   = 1'b0;
    unique case (tx_q)
      TxIdle: begin
        if (tx_start) begin
          tx_d   = TxHdr;
          tidx_d = '0;
          tcrc_d = 32'hFFFF_FFFF;
        end
      end
      TxHdr: begin
        tbyte = thdr[8*tidx_q[4:0] +: 8];
        tsend = tx_ready_i;
        if (tsend) begin
          tcrc_d = tess_bridge_pkg::crc32_byte(tcrc_q, tbyte);
          tidx_d = tidx_q + 17'd1;
          if (tidx_q == 17'd23) begin
            tidx_d = '0;
            if (rlen_q == 32'd0) begin
              tx_d = TxCrc;
            end else begin
              tx_d = TxPay;
            end
          end
        end
      end
      TxPay: begin
        tbyte     = buf_rdata_q;
        tpay_ok_d = 1'b1;
        tsend     = tx_ready_i && tpay_ok_q;
        if (tsend) begin
          tpay_ok_d = 1'b0;
          tcrc_d    = tess_bridge_pkg::crc32_byte(tcrc_q, tbyte);
          tidx_d    = tidx_q + 17'd1;
          if ({15'd0, tidx_q} + 32'd1 == rlen_q) begin
            tidx_d = '0;
            tx_d   = TxCrc;
          end
        end
      end
      TxCrc: begin
        tbyte = ~tcrc_q[8*tidx_q[1:0] +: 8];
        tsend = tx_ready_i;
        if (tsend) begin
          tidx_d = tidx_q + 17'd1;
          if (tidx_q == 17'd3) begin
            tx_d = TxDone;
          end
        end
      end
      TxDone: begin
        tx_done = 1'b1;
        tx_d    = TxIdle;
      end
      default: tx_d = TxIdle;
    endcase
  end

  assign tx_valid_o = tsend;
  assign tx_data_o  = tbyte;

  // The payload buffer's read port serves the transmitter while it sends the payload.
  assign rd_addr = (tx_q == TxPay) ? tidx_q[Pw-1:0] : buf_raddr;

  // ---------------------------------------------------------------------------------------------
  // Console buffers, one per tile (one write and one read port each)
  // ---------------------------------------------------------------------------------------------
  logic [NumTiles-1:0] cons_full;
  always_comb begin
    cons_lost_d = cons_lost_q;
    if (cons_clear) begin
      cons_lost_d = '0;
    end else if (|(console_valid_i & cons_full & {NumTiles{chip_run_q}})) begin
      cons_lost_d = cons_lost_q + 32'd1;
    end
  end

  for (genvar t = 0; t < NumTiles; t++) begin : g_console
    logic [7:0]  mem [ConsoleBytes];
    logic [31:0] count_q, count_d;
    logic        we;
    logic [7:0]  rdata_q;
    assign cons_full[t] = (count_q == 32'(ConsoleBytes));
    assign we           = chip_run_q && console_valid_i[t] && !cons_full[t];
    always_comb begin
      count_d = count_q;
      if (cons_clear) begin
        count_d = '0;
      end else if (we) begin
        count_d = count_q + 32'd1;
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
      rdata_q <= mem[cons_raddr];
    end
    assign cons_rdata[8*t +: 8]   = rdata_q;
    assign cons_count[32*t +: 32] = count_q;
  end

  // ---------------------------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------------------------
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rx_q         <= RxHunt;
      magic_q      <= '0;
      hidx_q       <= '0;
      hdr_q        <= '0;
      pidx_q       <= '0;
      crc_q        <= '0;
      rx_crc_q     <= '0;
      pw_q         <= '0;
      stall_q      <= '0;
      bad_q        <= '0;
      clock_q      <= '0;
      ex_q         <= ExIdle;
      status_q     <= '0;
      rlen_q       <= '0;
      idx_q        <= '0;
      cnt_q        <= '0;
      base_q       <= '0;
      fill_q       <= FillInfo;
      words_q      <= '0;
      sel_save_q   <= '0;
      sel_target_q <= '0;
      cstat_q      <= '0;
      run_q        <= 1'b0;
      chip_run_q   <= 1'b0;
      result_q     <= 1'b0;
      limit_q      <= '0;
      wait_ms_q    <= '0;
      wait_cyc_q   <= '0;
      rst_cnt_q    <= '0;
      cons_lost_q  <= '0;
      tx_q         <= TxIdle;
      tidx_q       <= '0;
      tcrc_q       <= '0;
      tpay_ok_q    <= 1'b0;
    end else begin
      rx_q         <= rx_d;
      magic_q      <= magic_d;
      hidx_q       <= hidx_d;
      hdr_q        <= hdr_d;
      pidx_q       <= pidx_d;
      crc_q        <= crc_d;
      rx_crc_q     <= rx_crc_d;
      pw_q         <= pw_d;
      stall_q      <= stall_d;
      bad_q        <= bad_d;
      clock_q      <= clock_d;
      ex_q         <= ex_d;
      status_q     <= status_d;
      rlen_q       <= rlen_d;
      idx_q        <= idx_d;
      cnt_q        <= cnt_d;
      base_q       <= base_d;
      fill_q       <= fill_d;
      words_q      <= words_d;
      sel_save_q   <= sel_save_d;
      sel_target_q <= sel_target_d;
      cstat_q      <= cstat_d;
      run_q        <= run_d;
      chip_run_q   <= run_o;
      result_q     <= result_d;
      limit_q      <= limit_d;
      wait_ms_q    <= wait_ms_d;
      wait_cyc_q   <= wait_cyc_d;
      rst_cnt_q    <= rst_cnt_d;
      cons_lost_q  <= cons_lost_d;
      tx_q         <= tx_d;
      tidx_q       <= tidx_d;
      tcrc_q       <= tcrc_d;
      tpay_ok_q    <= tpay_ok_d;
    end
  end

  assign busy_o       = (ex_q != ExIdle) || (rx_q != RxHunt) || (magic_q != 2'd0) || run_q;
  assign running_o    = run_q;
  assign bad_frames_o = bad_q;

endmodule
