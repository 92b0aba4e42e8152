// Exchange engine of one tile (docs/chip.md, "Exchange programs"). Started by a sync release at
// cycle R with the tile's XCHG_PROG; reads its program from the tile SRAM a word per cycle, sends
// on the tile's bus and receives from the bus it selects.
//
// Timing (logical cycles as in docs/chip.md; an instruction of k words starts at t):
//   t .. t+k-1     program words read on SRAM port A (data one cycle later)
//   t+k .. +n-1    transfers: a send reads mem[addr+4i] on port A at its cycle s, the word leaves
//                  on tx_o at s+1 (tx_o is the bus value of the previous cycle); a receive at r is
//                  written on port B at r+2, taking the selected bus' value of r - EXCHANGE_LATENCY,
//                  which the fabric delivers one cycle ahead (rx_sel_o at r+1 selects the bus,
//                  rx_data_i carries its word then, registered here). Delaying the write by two cycles
//                  lets a chip error at e, found at e+2, drop the receives of e+1 and later.
//                  A read at x sees every receive of r <= x-1: r <= x-3 are in the SRAM, r = x-2
//                  is forwarded by the tile's port-A bypass, r = x-1 (written now) here.
//   END at t       finish_o at t+1 = X (the supervisor may issue in that cycle).
//   errors         found when the data of the instruction's last word arrives (t+k) and raised
//                  on err_o (registered) at t+k+1, i.e. two cycles after the error cycle e = t+k-1,
//                  the cycle the chip stops every tile.
// Every register advances only with advance_i (the chip's cycle). stop_i comes from every tile of
// the chip in the same cycle: only the always_ff block reads it (the registers it clears take
// their stop value there), since a simulator evaluates combinational logic that reads it on every
// clock of every tile (docs/benchmarks.md, "RTL, fifth step"). The SRAM read of a stop's cycle
// still happens: its word is never used (the engine is idle from the next cycle on, and the chip
// has stopped).
module tess_exchange #(
  parameter int MemBytes = tess_params_pkg::TILE_MEM_BYTES,
  parameter int NumTiles = tess_params_pkg::NUM_TILES,
  localparam int Aw = $clog2(MemBytes / 4),
  localparam int Bw = (NumTiles > 1) ? $clog2(NumTiles) : 1,
  localparam int Ew = $clog2(tess_params_pkg::EXCHANGE_LATENCY + 2)
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic          advance_i,
  input  logic          stop_i,        // chip error stop (error at now - 2): go idle
  input  logic          drop_i,        // after that cycle: drop pending receives
  input  logic          start_i,       // the sync releases this tile in this cycle
  input  logic [31:0]   prog_i,        // XCHG_PROG (0 = none)
  // SRAM port A read; rd_data_i is the word read in the previous cycle
  output logic          rd_req_o,
  output logic [Aw-1:0] rd_addr_o,
  input  logic [31:0]   rd_data_i,
  // SRAM port B write (whole words)
  output logic          wr_req_o,
  output logic [Aw-1:0] wr_addr_o,
  output logic [31:0]   wr_data_o,
  // fabric
  output logic [31:0]   tx_o,
  output logic [Bw-1:0] rx_sel_o,      // the bus whose word the next cycle's receive write takes
  input  logic [31:0]   rx_data_i,     // ... that word, one cycle early (registered here)
  // status
  output logic          busy_o,        // an exchange cycle of this tile (R <= cycle < X)
  output logic          finish_o,      // X is this cycle
  output logic          err_o,
  output logic [4:0]    err_cause_o,
  output logic [31:0]   err_pc_o,
  output logic [31:0]   err_value_o
);

  localparam logic [31:0] MemLimit = 32'(MemBytes);
  localparam int          Latency  = tess_params_pkg::EXCHANGE_LATENCY;
  localparam logic [4:0]  CauseInsn   = 5'(tess_params_pkg::CAUSE_XCHG_INSN);
  localparam logic [4:0]  CauseAccess = 5'(tess_params_pkg::CAUSE_XCHG_ACCESS);
  localparam logic [3:0]  OpEnd      = 4'(tess_params_pkg::XOP_END);
  localparam logic [3:0]  OpDelay    = 4'(tess_params_pkg::XOP_DELAY);
  localparam logic [3:0]  OpSend     = 4'(tess_params_pkg::XOP_SEND);
  localparam logic [3:0]  OpRecv     = 4'(tess_params_pkg::XOP_RECV);
  localparam logic [3:0]  OpSendRecv = 4'(tess_params_pkg::XOP_SENDRECV);

  typedef enum logic [2:0] {
    StIdle,
    StStart,   // read word 0 of the instruction at pc_q
    StWord,    // word idx_q of the instruction arrives
    StXfer,    // transfers 1 .. n-1
    StDelay
  } state_e;

  // A receive on its way to port B.
  typedef struct packed {
    logic          valid;
    logic [Aw-1:0] addr;
    logic          zero;   // the bus cycle lies before R: write 0
    logic [Bw-1:0] bus;
  } wr_t;

  state_e        st_q, st_d;
  logic [31:0]   pc_q, pc_d;
  logic [1:0]    idx_q, idx_d;
  logic          wfault_q, wfault_d;       // a program word of this instruction is outside SRAM
  logic [31:0]   wfault_addr_q, wfault_addr_d;
  logic [31:0]   w0_q, w0_d;
  logic [31:0]   w1_q, w1_d;
  logic [23:0]   cnt_q, cnt_d;
  logic [31:0]   saddr_q, saddr_d;
  logic [31:0]   raddr_q, raddr_d;
  logic          send_q, send_d;
  logic          recv_q, recv_d;
  logic [Bw-1:0] bus_q, bus_d;
  logic [Ew-1:0] elapsed_q, elapsed_d;     // cycles since R, saturating at Latency
  logic          tx_valid_q, tx_valid_d;
  logic [Aw-1:0] rd_addr_q, rd_addr_d;
  wr_t           wp1_q, wp1_d, wp1_c, wp1_stop, wp2_q;
  logic [31:0]   rx_q;
  logic          err_q, err_d;
  logic [4:0]    err_cause_q, err_cause_d;
  logic [31:0]   err_pc_q, err_pc_d;
  logic [31:0]   err_value_q, err_value_d;

  // The word read in the previous cycle, with the receive written in this cycle forwarded.
  logic [31:0] wr_data;
  logic [31:0] word;
  assign wr_data = wp2_q.zero ? 32'd0 : rx_q;
  assign word    = (wp2_q.valid && (wp2_q.addr == rd_addr_q)) ? wr_data : rd_data_i;

  assign tx_o      = tx_valid_q ? word : 32'd0;
  assign rx_sel_o  = wp1_q.bus;   // its word is registered in rx_q while wp1_q moves to wp2_q
  logic unused_wp2_bus;
  assign unused_wp2_bus = ^wp2_q.bus;
  assign wr_req_o  = advance_i && !drop_i && wp2_q.valid;
  assign wr_addr_o = wp2_q.addr;
  assign wr_data_o = wr_data;

  // The decode below slices the instruction layout of rtl/params.json (XCHG_OP_LSB, XCHG_COUNT_BITS,
  // XCHG_BUS_LSB), which host/common/exchange_encoding.hpp encodes: a package that says otherwise
  // is refused at elaboration (Verilator, Yosys; Icarus 11 does not parse elaboration-time $error).
`ifndef __ICARUS__
  if (tess_params_pkg::XCHG_OP_LSB != 28 || tess_params_pkg::XCHG_COUNT_BITS != 24 ||
      tess_params_pkg::XCHG_BUS_LSB != 20) begin : g_layout_error
    $error("tess_exchange: the exchange instruction layout in rtl/params.json is not the one decoded here");
  end
`endif

  // Decoding of the instruction whose word arrives in StWord.
  logic [31:0] w0;
  logic [3:0]  op;
  logic [23:0] n;
  logic [1:0]  k_last;       // index of the instruction's last word
  logic        is_send, is_recv;
  logic [31:0] saddr_w, rword;
  logic [31:0] raddr_w;
  logic [33:0] send_end, recv_end;
  logic        bad_bus;

  assign w0      = (idx_q == 2'd0) ? word : w0_q;
  assign op      = w0[31:28];
  assign n       = w0[23:0];
  assign is_send = (op == OpSend) || (op == OpSendRecv);
  assign is_recv = (op == OpRecv) || (op == OpSendRecv);
  assign k_last  = (op == OpSendRecv) ? 2'd2 : ((op == OpSend) || (op == OpRecv)) ? 2'd1 : 2'd0;
  assign saddr_w = (op == OpSendRecv) ? w1_q : word;
  assign rword   = word;
  assign raddr_w = {12'd0, rword[19:0]};
  assign send_end = {2'b00, saddr_w} + {8'd0, n, 2'b00};
  assign recv_end = {2'b00, raddr_w} + {8'd0, n, 2'b00};
  assign bad_bus  = {20'd0, rword[31:20]} >= 32'(NumTiles);

  logic [Ew-1:0] elapsed_now;
  assign elapsed_now = (st_q == StIdle) ? '0 : elapsed_q;

  logic        begin_insn;
  logic [31:0] begin_pc;
  logic        fetch;         // read the program word at fetch_addr
  logic [31:0] fetch_addr;
  logic        xfer;          // a transfer happens in this cycle
  logic        x_send, x_recv;
  logic [31:0] x_saddr, x_raddr;
  logic [Bw-1:0] x_bus;
  logic        err_now;
  logic [4:0]  err_now_cause;
  logic [31:0] err_now_value;

  always_comb begin
    st_d          = st_q;
    pc_d          = pc_q;
    idx_d         = idx_q;
    wfault_d      = wfault_q;
    wfault_addr_d = wfault_addr_q;
    w0_d          = w0_q;
    w1_d          = w1_q;
    cnt_d         = cnt_q;
    saddr_d       = saddr_q;
    raddr_d       = raddr_q;
    send_d        = send_q;
    recv_d        = recv_q;
    bus_d         = bus_q;
    begin_insn    = 1'b0;
    begin_pc      = pc_q;
    fetch         = 1'b0;
    fetch_addr    = pc_q;
    xfer          = 1'b0;
    x_send        = send_q;
    x_recv        = recv_q;
    x_saddr       = saddr_q;
    x_raddr       = raddr_q;
    x_bus         = bus_q;
    err_now       = 1'b0;
    err_now_cause = CauseInsn;
    err_now_value = '0;
    finish_o      = 1'b0;

    unique case (st_q)
      StIdle: begin
        if (start_i && (prog_i != 32'd0)) begin
          begin_insn = 1'b1;
          begin_pc   = prog_i;
        end
      end
      StStart: begin
        begin_insn = 1'b1;
      end
      StWord: begin
        if (wfault_q && ((idx_q == k_last) || (idx_q == 2'd0))) begin
          // An instruction word outside SRAM; with word 0 missing the instruction has one word.
          err_now       = 1'b1;
          err_now_cause = CauseAccess;
          err_now_value = wfault_addr_q;
        end else if (idx_q != k_last) begin
          if (idx_q == 2'd0) begin
            w0_d = word;
          end else begin
            w1_d = word;
          end
          idx_d      = idx_q + 2'd1;
          fetch      = 1'b1;
          fetch_addr = pc_q + {28'd0, idx_q + 2'd1, 2'b00};
        end else if (idx_q == 2'd0) begin
          // One-word instructions: END, DELAY, or an unknown opcode.
          if ((op == OpEnd) && (word == 32'd0)) begin
            finish_o = 1'b1;
            st_d     = StIdle;
          end else if ((op == OpDelay) && (word[27:24] == 4'd0) && (n != 24'd0)) begin
            pc_d  = pc_q + 32'd4;
            cnt_d = n - 24'd1;
            if (n == 24'd1) begin
              st_d = StStart;
            end else begin
              st_d = StDelay;
            end
          end else begin
            err_now       = 1'b1;
            err_now_cause = CauseInsn;
            err_now_value = word;
          end
        end else begin
          // The last word of SEND / RECV / SENDRECV.
          if ((w0[27:24] != 4'd0) || (n == 24'd0)) begin
            err_now       = 1'b1;
            err_now_cause = CauseInsn;
            err_now_value = w0;
          end else if (is_recv && bad_bus) begin
            err_now       = 1'b1;
            err_now_cause = CauseInsn;
            err_now_value = rword;
          end else if (is_send && ((saddr_w[1:0] != 2'b00) || (send_end > {2'b00, MemLimit}))) begin
            err_now       = 1'b1;
            err_now_cause = CauseAccess;
            err_now_value = saddr_w;
          end else if (is_recv && ((raddr_w[1:0] != 2'b00) || (recv_end > {2'b00, MemLimit}))) begin
            err_now       = 1'b1;
            err_now_cause = CauseAccess;
            err_now_value = raddr_w;
          end else begin
            xfer    = 1'b1;
            x_send  = is_send;
            x_recv  = is_recv;
            x_saddr = saddr_w;
            x_raddr = raddr_w;
            x_bus   = Bw'(rword[31:20]);
            send_d  = is_send;
            recv_d  = is_recv;
            bus_d   = Bw'(rword[31:20]);
            saddr_d = saddr_w + 32'd4;
            raddr_d = raddr_w + 32'd4;
            cnt_d   = n - 24'd1;
            pc_d    = pc_q + {28'd0, k_last + 2'd1, 2'b00};
            if (n == 24'd1) begin
              st_d = StStart;
            end else begin
              st_d = StXfer;
            end
          end
        end
      end
      StXfer: begin
        xfer    = 1'b1;
        saddr_d = saddr_q + 32'd4;
        raddr_d = raddr_q + 32'd4;
        cnt_d   = cnt_q - 24'd1;
        if (cnt_q == 24'd1) begin
          st_d = StStart;
        end
      end
      StDelay: begin
        cnt_d = cnt_q - 24'd1;
        if (cnt_q == 24'd1) begin
          st_d = StStart;
        end
      end
      default: st_d = StIdle;
    endcase

    if (begin_insn) begin
      pc_d       = begin_pc;
      idx_d      = 2'd0;
      wfault_d   = 1'b0;
      fetch      = 1'b1;
      fetch_addr = begin_pc;
      st_d       = StWord;
    end
    if (fetch) begin
      // Words past a missing one are missing too; the first one's address is reported.
      if (!(wfault_q && !begin_insn)) begin
        wfault_addr_d = fetch_addr;
      end
      wfault_d = (wfault_q && !begin_insn) || (fetch_addr[1:0] != 2'b00) ||
                 (fetch_addr >= MemLimit);
    end
    if (err_now) begin
      st_d = StIdle;
    end
  end

  // SRAM port A: a program word or a send.
  logic [31:0] rd_byte_addr;
  assign rd_byte_addr = xfer ? x_saddr : fetch_addr;
  logic rd_go;
  assign rd_go     = advance_i && ((fetch && !wfault_d) || (xfer && x_send));
  assign rd_req_o  = rd_go;
  assign rd_addr_o = rd_byte_addr[Aw+1:2];
  assign rd_addr_d = rd_req_o ? rd_addr_o : rd_addr_q;

  // Byte addresses were checked (aligned, inside SRAM); only their word index is used.
  logic unused_addr_bits;
  assign unused_addr_bits = ^{x_raddr[31:Aw+2], x_raddr[1:0], rd_byte_addr[31:Aw+2],
                              rd_byte_addr[1:0]};

  assign busy_o = advance_i && ((st_q != StIdle) || begin_insn) && !finish_o;

  logic err_new;
  always_comb begin
    wp1_c       = '0;
    wp1_c.valid = xfer && x_recv;
    wp1_c.addr  = x_raddr[Aw+1:2];
    wp1_c.zero  = elapsed_now < Ew'(Latency);
    wp1_c.bus   = x_bus;
    elapsed_d   = (st_d == StIdle) ? '0 :
                  (elapsed_now < Ew'(Latency)) ? elapsed_now + Ew'(1) : elapsed_now;
    err_new     = err_now && !err_q;
  end

  // A stop discards this cycle's send, receive and error: the always_ff block takes wp1_stop
  // and leaves the error registers alone then.
  always_comb begin
    tx_valid_d     = xfer && x_send;
    wp1_d          = wp1_c;
    wp1_stop       = wp1_c;
    wp1_stop.valid = 1'b0;
    err_d          = err_q || err_now;
    err_cause_d    = err_cause_q;
    err_pc_d       = err_pc_q;
    err_value_d    = err_value_q;
    if (err_new) begin
      err_cause_d = err_now_cause;
      err_pc_d    = pc_q;
      err_value_d = err_now_value;
    end
  end

  assign err_o       = err_q;
  assign err_cause_o = err_cause_q;
  assign err_pc_o    = err_pc_q;
  assign err_value_o = err_value_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      st_q          <= StIdle;
      pc_q          <= '0;
      idx_q         <= '0;
      wfault_q      <= 1'b0;
      wfault_addr_q <= '0;
      w0_q          <= '0;
      w1_q          <= '0;
      cnt_q         <= '0;
      saddr_q       <= '0;
      raddr_q       <= '0;
      send_q        <= 1'b0;
      recv_q        <= 1'b0;
      bus_q         <= '0;
      elapsed_q     <= '0;
      tx_valid_q    <= 1'b0;
      rd_addr_q     <= '0;
      wp1_q         <= '0;
      wp2_q         <= '0;
      rx_q          <= '0;
      err_q         <= 1'b0;
      err_cause_q   <= '0;
      err_pc_q      <= '0;
      err_value_q   <= '0;
    end else if (advance_i) begin
      st_q          <= stop_i ? StIdle : st_d;
      pc_q          <= pc_d;
      idx_q         <= idx_d;
      wfault_q      <= wfault_d;
      wfault_addr_q <= wfault_addr_d;
      w0_q          <= w0_d;
      w1_q          <= w1_d;
      cnt_q         <= cnt_d;
      saddr_q       <= saddr_d;
      raddr_q       <= raddr_d;
      send_q        <= send_d;
      recv_q        <= recv_d;
      bus_q         <= bus_d;
      elapsed_q     <= elapsed_d;
      tx_valid_q    <= tx_valid_d && !stop_i;
      rd_addr_q     <= rd_addr_d;
      wp1_q         <= stop_i ? wp1_stop : wp1_d;
      wp2_q         <= stop_i ? '0 : wp1_q;
      rx_q          <= rx_data_i;
      err_q         <= stop_i ? err_q : err_d;
      err_cause_q   <= stop_i ? err_cause_q : err_cause_d;
      err_pc_q      <= stop_i ? err_pc_q : err_pc_d;
      err_value_q   <= stop_i ? err_value_q : err_value_d;
    end
  end

endmodule
