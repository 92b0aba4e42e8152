// Request sequencer of the link bridge (tess_link_bridge, docs/link-protocol.md "Operations"):
// executes each request the receiver (tess_link_rx) took, over the bridge's frame buffer, and hands
// the reply to the sender (tess_link_tx). It keeps the request's fields (tile, address, length,
// each as far as its range needs, with a flag for any higher bit set), which the receiver's header
// bytes and the payload's counts fill a byte at a time.
// Ranges are checked before the chip is touched. Payload values (counts, register values, max
// cycles, wait milliseconds) are read from the buffer a byte at a time. RUN starts the chip's run
// input until it stops by itself or reaches start + max cycles (tess_link_run); WAIT holds its
// reply until the run ends or its milliseconds pass. While a run is in progress only INFO, WAIT and
// RESET are served, the rest get Busy (RESET abandons the run: a client that finds a board left
// running by another can recover it without the reset button). Replies with data (INFO,
// CTRL_READ, STATS, the run result of WAIT) are filled into the buffer a byte per cycle from the
// chip's control registers (TILE_SEL and CTX_SEL are saved and restored around STATS and the run
// result). Bridge registers, read with CTRL_READ and not forwarded to the chip:
// CR_LINK_BAD_FRAMES, CR_LINK_CONSOLE_LOST, CR_LINK_CLOCK (rtl/params.json).
// Timing: a request executes in a few clocks per byte (two per memory byte, up to 9 per payload
// count byte), far below a UART byte; the chip's cycle count only moves in a cycle after one with
// run_o = 1 (the chip registers it).
module tess_link_seq #(
  parameter int NumTiles     = tess_params_pkg::NUM_TILES,
  parameter int MemBytes     = tess_params_pkg::TILE_MEM_BYTES,
  parameter int Contexts     = tess_params_pkg::NUM_CONTEXTS,
  parameter int MaxPayload   = 1024,
  parameter int ConsoleBytes = 1024,
  // The chip's parameters that INFO reports (tess_chip).
  parameter bit HasFpu       = tess_params_pkg::HAS_FPU != 0,
  parameter bit HasMulDiv    = tess_params_pkg::HAS_MULDIV != 0,
  parameter int CounterBits  = tess_params_pkg::COUNTER_BITS,
  parameter bit HasExchange  = tess_params_pkg::HAS_EXCHANGE != 0,
  parameter bit HasCheckpoint = tess_params_pkg::HAS_CHECKPOINT != 0,
  parameter bit MatrixUnit    = tess_params_pkg::MATRIX_UNIT != 0,
  localparam int Tw = (NumTiles > 1) ? $clog2(NumTiles) : 1,
  localparam int Cw = $clog2(ConsoleBytes),
  localparam int Nw = Cw + 1                       // console byte count 0..ConsoleBytes
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  // receiver
  input  logic                   frame_done_i,
  input  logic                   frame_good_i,
  input  logic                   ver_bad_i,
  input  logic [3:0]             op_i,
  input  logic                   op_hi_i,
  input  logic                   hdr_take_i,       // rx_data_i is a header byte
  input  logic                   rx_frame_i,       // the receiver has a frame's magic: a request comes
  input  logic [7:0]             rx_data_i,
  // shared: the byte counter, the frame buffer's read data, the CRC engine, the millisecond timer
  input  logic [6:0]             idx_i,            // low bits: reply word and byte, lanes
  input  logic                   idx_end_i,        // idx_i is the last byte of len_o
  input  logic [7:0]             buf_rdata_i,
  input  logic                   crc_busy_i,
  input  logic                   crc_bit_i,        // the CRC engine's byte register, bit 0
  input  logic                   ms_tick_i,
  input  logic [15:0]            ms_inc_i,
  input  logic [31:0]            bad_frames_i,     // bridge registers
  input  logic [31:0]            clock_i,
  // reply sender
  input  logic                   tx_done_i,
  output logic                   send_o,           // the reply is being sent
  output logic [3:0]             status_o,
  output logic [16:0]            reply_len_o,
  // controls of the shared parts
  output logic                   idle_o,           // no request in execution: the receiver takes bytes
  output logic                   hunt_o,           // a WAIT is held: the receiver looks for a magic
  output logic                   idx_clr_o,
  output logic                   idx_step_o,
  output logic                   crc_init_o,       // the reply starts in the next cycle
  output logic                   crc_start_o,      // a payload byte enters the CRC's byte register
  output logic                   buf_we_o,
  output logic [7:0]             buf_wdata_o,
  output logic                   wait_load_o,      // WAIT: restart the millisecond count
  output logic [16:0]            len_o,            // the length field (the receiver's checks)
  output logic                   big_o,
  // console buffers
  input  logic [Nw-1:0]          cons_n_i,         // bytes of the requested tile's console
  input  logic [7:0]             cons_byte_i,
  input  logic [31:0]            cons_lost_i,
  output logic                   cons_clear_o,
  output logic [Tw-1:0]          cons_tile_o,
  output logic [Cw-1:0]          cons_raddr_o,
  output logic                   capture_o,        // the chip advances: capture console bytes
  // chip
  output logic                   chip_rst_no,
  output logic                   run_o,
  output logic                   host_req_o,
  output logic                   host_we_o,
  output logic [15:0]            host_tile_o,
  output logic [31:0]            host_addr_o,
  output logic [3:0]             host_be_o,
  output logic [31:0]            host_wdata_o,
  input  logic [31:0]            host_rdata_i,
  input  logic                   host_err_i,
  output logic                   ctl_we_o,
  output logic [11:0]            ctl_addr_o,
  output logic [31:0]            ctl_wdata_o,
  input  logic [31:0]            ctl_rdata_i,
  input  logic                   ctl_err_i,        // the chip refuses this control access
  input  logic [3:0]             state_i,
  input  logic                   stopping_i,
  input  logic                   cycle0_i,         // bit 0 of the chip's cycle counter
  input  logic [NumTiles*64-1:0] tile_cycle_i,
  output logic                   busy_o,           // a request executes or a run is in progress
  output logic                   running_o
);

  localparam int Pw = $clog2(MaxPayload);
  localparam int Mw = $clog2(MemBytes + 1);
  localparam int Aw0 = (Mw > 12) ? Mw : 12;       // address kept: memory, control offset,
  localparam int Aw = (Aw0 > Nw) ? Aw0 : Nw;      // console offset
  localparam int Ew = ((Aw > Pw + 1) ? Aw : Pw + 1) + 1;  // address + length (<= MaxPayload)
  localparam logic [16:0]   MaxPayloadL = 17'(MaxPayload);
  localparam logic [11:0] CrTileSel   = 12'(tess_params_pkg::CR_TILE_SEL);
  localparam logic [11:0] CrCtxSel    = 12'(tess_params_pkg::CR_CTX_SEL);
  localparam logic [11:0] CrCtrl      = 12'(tess_params_pkg::CR_CTRL);
  localparam logic [3:0]  StReset     = 4'(tess_params_pkg::ST_RESET);
  localparam logic [3:0]  StRunning   = 4'(tess_params_pkg::ST_RUNNING);
  localparam logic [3:0]  StSync      = 4'(tess_params_pkg::ST_HOST_SYNC);

  // Link protocol opcodes as kept (the low nibble; a request with a higher bit is unknown).
  localparam logic [3:0] OpInfo     = tess_params_pkg::LINK_OP_INFO[3:0];
  localparam logic [3:0] OpMemRead  = tess_params_pkg::LINK_OP_MEM_READ[3:0];
  localparam logic [3:0] OpMemWrite = tess_params_pkg::LINK_OP_MEM_WRITE[3:0];
  localparam logic [3:0] OpCtlRead  = tess_params_pkg::LINK_OP_CTRL_READ[3:0];
  localparam logic [3:0] OpCtlWrite = tess_params_pkg::LINK_OP_CTRL_WRITE[3:0];
  localparam logic [3:0] OpRun      = tess_params_pkg::LINK_OP_RUN[3:0];
  localparam logic [3:0] OpWait     = tess_params_pkg::LINK_OP_WAIT[3:0];
  localparam logic [3:0] OpReset    = tess_params_pkg::LINK_OP_RESET[3:0];
  localparam logic [3:0] OpStats    = tess_params_pkg::LINK_OP_STATS[3:0];
  localparam logic [3:0] OpConsole  = tess_params_pkg::LINK_OP_CONSOLE[3:0];

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

  ex_state_e     ex_q, ex_d;
  logic [16:0]   len_q, len_d;            // request payload length, then the operation's bytes
  logic          big_q, big_d;            // length field above 65535
  logic [Tw-1:0] tile_q, tile_d;
  logic          tile_hi_q, tile_hi_d;    // a tile field bit at Tw or above
  logic [Aw-1:0] addr_q, addr_d;          // address field, then the memory / console pointer
  logic          addr_hi_q, addr_hi_d;    // an address field bit at Aw or above
  logic          run_q, run_d;            // a run is in progress
  logic          result_q, result_d;      // a finished run waits to be collected
  logic          run_more;                // the run goes on (tess_link_run)
  logic [31:0]   pword;                   // CTRL_WRITE's value (tess_link_run)

  // ---------------------------------------------------------------------------------------------
  // Reply fill: the byte idx_i of INFO, CTRL_READ, STATS or the run result, a byte per cycle.
  // ---------------------------------------------------------------------------------------------
  logic [1:0]  fill_q, fill_d;            // tess_bridge_pkg::fill_e
  logic [11:0] fill_ctl;                  // the control register it reads
  logic [7:0]  fill_byte;
  logic        breg_hit;                  // the address is a bridge register
  logic        ctl_wide;                  // the address is beyond the 12-bit control offsets
  logic [2:0]  stats_ctx;                 // context of STATS words 4..15
  logic        ctx_word;                  // this STATS byte starts a context's words

  tess_link_reply #(
    .NumTiles      (NumTiles),
    .MemBytes      (MemBytes),
    .Contexts      (Contexts),
    .MaxPayload    (MaxPayload),
    .HasFpu        (HasFpu),
    .HasMulDiv     (HasMulDiv),
    .CounterBits   (CounterBits),
    .HasExchange   (HasExchange),
    .HasCheckpoint (HasCheckpoint),
    .MatrixUnit    (MatrixUnit)
  ) u_reply (
    .fill_i       (fill_q),
    .idx_i        (idx_i),
    .addr_i       (32'(addr_q)),
    .addr_hi_i    (addr_hi_q),
    .tile_i       (tile_q),
    .state_i      (state_i),
    .ctl_rdata_i  (ctl_rdata_i),
    .tile_cycle_i (tile_cycle_i),
    .bad_frames_i (bad_frames_i),
    .cons_lost_i  (cons_lost_i),
    .clock_i      (clock_i),
    .ctl_addr_o   (fill_ctl),
    .byte_o       (fill_byte),
    .breg_hit_o   (breg_hit),
    .stats_ctx_o  (stats_ctx),
    .ctx_word_o   (ctx_word)
  );

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
  assign ctl_wide = addr_hi_q || ((addr_q >> 12) != '0);
  assign mem_end = Ew'(addr_q) + Ew'(len_q[Pw:0]);
  assign mem_ok  = !addr_hi_q && (mem_end <= Ew'(MemBytes));

  // CONSOLE: from = min(addr, n); bytes = min(n - from, MaxPayload)
  logic [Nw-1:0] cons_from, cons_avail;
  logic [16:0]   cons_len;
  assign cons_from  = (!addr_hi_q && (Ew'(addr_q) < Ew'(cons_n_i))) ? Nw'(addr_q) : cons_n_i;
  assign cons_avail = cons_n_i - cons_from;
  if (ConsoleBytes <= MaxPayload) begin : g_cons_fits
    assign cons_len = 17'(cons_avail);    // n - from <= ConsoleBytes
  end else begin : g_cons_cut
    assign cons_len = (17'(cons_avail) > MaxPayloadL) ? MaxPayloadL : 17'(cons_avail);
  end

  logic [7:0] host_byte;
  assign host_byte = host_rdata_i[8*addr_q[1:0] +: 8];

  // WAIT's milliseconds (loaded into len_q, big_q for a high byte) pass at the tick that makes
  // min(max(ms, 1), 60000) of them (the first one may be short: the tick is free-running).
  logic wait_out;
  assign wait_out = ms_tick_i && ((!big_q && (len_q == {1'b0, ms_inc_i})) ||
                                  (ms_inc_i == 16'd60000) || (len_q == 17'd0));

  // Controls of the shared registers, set by the executor.
  logic          ex_idx_clr, ex_idx_step;
  logic          ld_step;                 // ExLoad takes payload byte idx_i
  logic          ld_rem;                  // ... into rem (RUN, CTRL_WRITE), else into len_q
  logic          ld_serial;               // ... a bit at a time into rem_hi_q (tess_link_run),
                                          // through the CRC engine's byte register (crc_start_o)
  logic          len_const;               // len_q := len_val
  logic [16:0]   len_val;
  logic          len_cons;                // len_q := cons_len, addr_q := cons_from
  logic          addr_step;
  logic [Sw-1:0] small_val;               // a small control register value to write
  logic          rem_clr;                 // rem_hi_q := 0, so that pword is 0
  assign ld_rem      = (op_i == OpRun) || (op_i == OpCtlWrite);
  assign ld_serial   = (op_i == OpCtlWrite) || (idx_i[2:0] != 3'd0);
  assign crc_start_o = ld_step && ld_rem && ld_serial;

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
    wait_load_o   = 1'b0;
    cons_clear_o  = 1'b0;
    buf_we_o   = 1'b0;
    buf_wdata_o    = fill_byte;
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
        if (frame_done_i) begin
          ex_idx_clr = 1'b1;
          rpay_d     = 1'b0;
          status_d   = tess_params_pkg::LINK_ST_OK[3:0];
          ex_d       = ExDecide;
          if (!frame_good_i) begin
            status_d = tess_params_pkg::LINK_ST_BAD_CRC[3:0];
            ex_d     = ExSend;
          end
        end
      end
      ExDecide: begin
        ex_d = ExSend;
        if (ver_bad_i) begin
          status_d = tess_params_pkg::LINK_ST_BAD_VERSION[3:0];
        end else if (len_q > MaxPayloadL) begin
          status_d = tess_params_pkg::LINK_ST_TOO_LONG[3:0];
        end else if (run_q && (op_hi_i || ((op_i != OpInfo) && (op_i != OpWait) &&
                                           (op_i != OpReset)))) begin
          status_d = tess_params_pkg::LINK_ST_BUSY[3:0];
        end else if (op_hi_i) begin
          status_d = tess_params_pkg::LINK_ST_UNKNOWN_OP[3:0];
        end else begin
          unique case (op_i)
            OpInfo: begin
              fill_d    = tess_bridge_pkg::FILL_INFO;
              len_const = 1'b1;
              len_val   = 17'd33;
              rpay_d    = 1'b1;
              ex_d      = ExFill;
            end
            OpMemRead, OpCtlWrite, OpWait: begin
              if (len_q[16:2] == 15'd0) begin
                status_d = tess_params_pkg::LINK_ST_DEVICE_ERROR[3:0];
              end else if ((op_i == OpWait) && !run_q && !result_q) begin
                status_d = tess_params_pkg::LINK_ST_NOT_RUNNING[3:0];
              end else begin
                ex_d = ExLoad;
              end
            end
            OpMemWrite: begin
              ex_d = ExRange;
            end
            OpCtlRead: begin
              fill_d    = tess_bridge_pkg::FILL_CTL;
              len_const = 1'b1;
              len_val   = 17'd4;
              rpay_d    = 1'b1;
              ex_d      = ExFill;
            end
            // RUN: start (RESET) or release (host sync) the chip; the run starts after the load
            // (the chip does not advance before run_o rises).
            OpRun: begin
              if (len_q[16:3] == 14'd0) begin
                status_d = tess_params_pkg::LINK_ST_DEVICE_ERROR[3:0];
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
                status_d = tess_params_pkg::LINK_ST_OUT_OF_RANGE[3:0];
              end else begin
                fill_d    = tess_bridge_pkg::FILL_STATS;
                len_const = 1'b1;
                len_val   = 17'd96;
                rpay_d    = 1'b1;
                ex_d      = ExSelSave;
              end
            end
            OpConsole: begin
              if (!tile_ok) begin
                status_d = tess_params_pkg::LINK_ST_OUT_OF_RANGE[3:0];
              end else begin
                len_cons = 1'b1;
                rpay_d   = 1'b1;
                if (cons_avail != '0) begin
                  ex_d = ExLoop;
                end
              end
            end
            default: status_d = tess_params_pkg::LINK_ST_UNKNOWN_OP[3:0];
          endcase
        end
      end
      // Payload bytes 0..3 (RUN: 0..7) from the buffer, two cycles each (and the 8 clocks of a
      // serial byte): into rem (RUN, CTRL_WRITE) or into len_q as a count (MEM_READ, WAIT; big_q
      // for a high byte).
      ExLoad: begin
        ph_d = !ph_q && !crc_busy_i;
        if (ph_q) begin
          ld_step     = 1'b1;
          ex_idx_step = 1'b1;
          if ((idx_i[1:0] == 2'd3) && ((op_i != OpRun) || idx_i[2])) begin
            ex_idx_clr = 1'b1;
            ex_d       = ExOp;
          end
        end
      end
      ExOp: begin
        ex_d = ExSend;
        if (crc_busy_i) ex_d = ExOp;          // the last serial byte
        else unique case (op_i)
          OpMemRead: begin
            if (big_q || (len_q > MaxPayloadL)) begin
              status_d = tess_params_pkg::LINK_ST_OUT_OF_RANGE[3:0];
            end else begin
              rpay_d = 1'b1;
              ex_d   = ExRange;
            end
          end
          OpCtlWrite: begin
            // The control-register contract of docs/chip.md, as tessera-server --device rtl
            // keeps it: a bridge register is read-only and an offset of 0x1000 or more is no
            // register; both are refused, and nothing is written.
            if (breg_hit || ctl_wide) begin
              status_d = tess_params_pkg::LINK_ST_DEVICE_ERROR[3:0];
            end else begin
              ctl_we_o   = 1'b1;
              ctl_addr_o = addr_q[11:0];
              cons_clear_o = (addr_q[11:0] == CrCtrl) && pword[0];
              // A write the chip refuses (docs/chip.md) changes nothing and is answered as an error.
              if (ctl_err_i) status_d = tess_params_pkg::LINK_ST_DEVICE_ERROR[3:0];
            end
          end
          // RUN: run to start + max cycles.
          OpRun: begin
            ex_d = ExRunGo;
          end
          default: begin                    // OpWait
            wait_load_o = 1'b1;
            ex_d      = ExWait;
          end
        endcase
      end
      ExRange: begin
        ex_d = ExSend;
        if (!tile_ok || !mem_ok) begin
          status_d = tess_params_pkg::LINK_ST_OUT_OF_RANGE[3:0];
          rpay_d   = 1'b0;
        end else if (len_q != 17'd0) begin
          ex_d = ExLoop;
        end
      end
      // TILE_SEL := the tile (STATS) or 0 (run result), remembering the old value.
      ExSelSave: begin
        ctl_addr_o = CrTileSel;
        ctl_we_o   = 1'b1;
        small_val  = (fill_q == tess_bridge_pkg::FILL_STATS) ? Sw'(tile_q) : Sw'(0);
        sel_save_d = ctl_rdata_i[Tw-1:0];
        if (fill_q == tess_bridge_pkg::FILL_STATS) begin
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
          buf_we_o   = 1'b1;
          ex_idx_step = 1'b1;
          if (idx_end_i) begin
            if ((fill_q == tess_bridge_pkg::FILL_STATS) ||
                (fill_q == tess_bridge_pkg::FILL_RESULT)) begin
              ex_d = ExSelRestore;
            end else begin
              ex_d = ExSend;
            end
          end
        end
        // CTRL_READ of what the chip refuses (an unknown or write-only offset: ctl_err_i for the
        // read now on the ports) or of an offset of 0x1000 or more: an error, no data. (Only the
        // reply is decided here, never the control port, which ctl_err_i depends on.)
        if ((fill_q == tess_bridge_pkg::FILL_CTL) && !breg_hit && (ctl_err_i || ctl_wide)) begin
          buf_we_o    = 1'b0;
          ex_idx_step = 1'b0;
          ex_idx_clr  = 1'b1;
          status_d    = tess_params_pkg::LINK_ST_DEVICE_ERROR[3:0];
          rpay_d      = 1'b0;
          ex_d        = ExSend;
        end
      end
      ExSelRestore: begin
        ctl_addr_o = CrTileSel;
        ctl_we_o   = 1'b1;
        small_val  = Sw'(sel_save_q);
        if (fill_q == tess_bridge_pkg::FILL_STATS) begin
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
          host_req_o = (op_i == OpMemRead);
        end else begin
          ex_idx_step = 1'b1;
          addr_step   = 1'b1;
          if (idx_end_i) begin
            ex_d = ExSend;
          end
          unique case (op_i)
            OpMemRead: begin
              buf_we_o = 1'b1;
              buf_wdata_o  = host_byte;
              if (host_err_i) begin
                status_d = tess_params_pkg::LINK_ST_DEVICE_ERROR[3:0];
                rpay_d   = 1'b0;
                ex_d     = ExSend;
              end
            end
            OpMemWrite: begin
              host_req_o = 1'b1;
              host_we_o  = 1'b1;
            end
            default: begin                  // OpConsole
              buf_we_o = 1'b1;
              buf_wdata_o  = cons_byte_i;
            end
          endcase
        end
      end
      // A new request ends a held WAIT without a reply: a client sends nothing while its WAIT is
      // pending, so the WAIT's client has gone, and its WAIT must not make the board deaf (a
      // RESET from the next client would otherwise wait up to 60 s).
      ExWait: begin
        if (rx_frame_i) begin
          ex_d = ExIdle;
        end else if (!run_q) begin
          ex_d = ExWaitDone;
        end else if (wait_out) begin
          status_d = tess_params_pkg::LINK_ST_RUNNING[3:0];
          ex_d     = ExSend;
        end
      end
      ExWaitDone: begin
        ex_idx_clr = 1'b1;                  // magic bytes looked for during the WAIT moved it
        result_d  = 1'b0;
        fill_d    = tess_bridge_pkg::FILL_RESULT;
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
        cons_clear_o  = 1'b1;
        run_d       = 1'b0;
        result_d    = 1'b0;
        ex_idx_step = 1'b1;
        if (idx_i[0]) begin
          ex_d = ExSend;
        end
      end
      ExSend: begin
        if (tx_done_i) begin
          ex_d = ExIdle;
        end
      end
      default: ex_d = ExIdle;
    endcase
  end

  // pword is 0 whenever small_val is not (rem_clr before every small write), so no multiplexer.
  assign ctl_wdata_o = pword | 32'(small_val);
  assign rem_clr     = ((ex_q == ExIdle) && frame_done_i && !run_q) || (ex_q == ExWaitDone);


  // ---------------------------------------------------------------------------------------------
  // The request's fields
  // ---------------------------------------------------------------------------------------------
  // Header fields (receiver) and payload counts (ExLoad) arrive a byte at a time; the byte's lane
  // in its 32-bit field is idx_i[1:0] (header bytes 12, 16 and 20 are aligned).
  logic [7:0] dbyte;
  logic       f_tile, f_addr, f_len;
  logic [1:0] lane;
  assign dbyte    = hdr_take_i ? rx_data_i : buf_rdata_i;
  assign lane     = idx_i[1:0];
  assign f_tile   = hdr_take_i && (idx_i[4:2] == 3'd3);
  assign f_addr   = hdr_take_i && (idx_i[4:2] == 3'd4);
  assign f_len    = (hdr_take_i && (idx_i[4:2] == 3'd5)) || (ld_step && !ld_rem);

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


  // ---------------------------------------------------------------------------------------------
  // Run control: the cycles left of a run, payload bytes (RUN's byte 0 into rem_lo_q, the rest
  // serially)
  // ---------------------------------------------------------------------------------------------
  tess_link_run u_run (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .run_i       (run_q),
    .running_i   (state_i == StRunning),
    .stopping_i  (stopping_i),
    .cycle0_i    (cycle0_i),
    .load_lo_i   (ld_step && ld_rem && !ld_serial),
    .lo_byte_i   (buf_rdata_i),
    .shift_i     ((ex_q == ExLoad || ex_q == ExOp) && crc_busy_i),
    .shift_bit_i (crc_bit_i),
    .clr_i       (rem_clr),
    .run_o       (run_o),
    .more_o      (run_more),
    .capture_o   (capture_o),
    .word_o      (pword)
  );

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      ex_q       <= ExIdle;
      len_q      <= '0;
      big_q      <= 1'b0;
      tile_q     <= '0;
      tile_hi_q  <= 1'b0;
      addr_q     <= '0;
      addr_hi_q  <= 1'b0;
      run_q      <= 1'b0;
      result_q   <= 1'b0;
      fill_q     <= tess_bridge_pkg::FILL_INFO;
      status_q   <= '0;
      rpay_q     <= 1'b0;
      ph_q       <= 1'b0;
      ctxw_q     <= 1'b0;
      sel_save_q <= '0;
      ctx_save_q <= '0;
    end else begin
      ex_q       <= ex_d;
      len_q      <= len_d;
      big_q      <= big_d;
      tile_q     <= tile_d;
      tile_hi_q  <= tile_hi_d;
      addr_q     <= addr_d;
      addr_hi_q  <= addr_hi_d;
      run_q      <= run_d;
      result_q   <= result_d;
      fill_q     <= fill_d;
      status_q   <= status_d;
      rpay_q     <= rpay_d;
      ph_q       <= ph_d;
      ctxw_q     <= ctxw_d;
      sel_save_q <= sel_save_d;
      ctx_save_q <= ctx_save_d;
    end
  end

  assign idle_o      = (ex_q == ExIdle);
  assign hunt_o      = (ex_q == ExWait);
  assign send_o      = (ex_q == ExSend);
  assign status_o    = status_q;
  assign reply_len_o = rpay_q ? len_q : 17'd0;
  assign idx_clr_o   = ex_idx_clr || crc_init_o;
  assign idx_step_o  = ex_idx_step;
  assign crc_init_o  = (ex_q != ExSend) && (ex_d == ExSend);
  assign len_o       = len_q;
  assign big_o       = big_q;
  assign cons_tile_o  = tile_q;
  assign cons_raddr_o = addr_q[Cw-1:0];
  assign chip_rst_no  = rst_ni && !(ex_q == ExReset);
  assign host_tile_o  = 16'(tile_q);
  assign host_addr_o  = 32'({addr_q[Aw-1:2], 2'b00});
  assign host_be_o    = 4'b0001 << addr_q[1:0];
  assign host_wdata_o = {4{buf_rdata_i}};
  assign busy_o       = (ex_q != ExIdle) || run_q;
  assign running_o    = run_q;

endmodule
