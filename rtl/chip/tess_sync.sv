// Sync controller of the chip (docs/chip.md, "Sync timing"). Tiles report a SYNC in its EX cycle
// c+2 (arrive_i); the tile arrives at a = c+3. A halted tile is seen as gone_i from h+3 (its halt
// register), i.e. two cycles after the logical cycle h+1 at which chip.md counts it halted. The
// controller therefore judges logical cycle y-2 in cycle y: arrivals are delayed by two cycles to
// match. When every tile has arrived or halted (cycle y, logical A = y-2):
//   - some tiles halted, some arrived: error "halted tile" (cause 26), raised in cycle y = e+2,
//     the cycle in which the chip stops every tile for an error at e (tess_core, stop_i);
//   - a descriptor differs from the lowest arrived tile's: "descriptor mismatch" (cause 25);
//   - else release_o pulses at R = A + SYNC_LATENCY (needs SYNC_LATENCY >= 3). If the sync is a
//     host sync, or sync_break_i is set, stop_req_o asks the chip to stop before cycle R until the
//     host releases it (host_release_i); release_o then pulses in the first cycle that advances.
// Latency: release SYNC_LATENCY cycles after the last arrival; errors 2 cycles after their cycle.
module tess_sync #(
  parameter int NumTiles = tess_params_pkg::NUM_TILES,
  localparam int Tw = (NumTiles > 1) ? $clog2(NumTiles) : 1
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  advance_i,       // the chip's cycle advances (not while stopping)
  input  logic [NumTiles-1:0]   arrive_i,
  input  logic [NumTiles*32-1:0] desc_i,         // tile t at [32*t +: 32], held since arrival
  input  logic [NumTiles-1:0]   gone_i,          // halted
  input  logic [NumTiles-1:0]   absent_i,        // disabled: takes no part in syncs
  input  logic                  sync_break_i,
  input  logic                  sync_break_next_i, // sync_break_i of the next cycle
  input  logic                  host_release_i,  // the host released the pending sync
  input  logic                  advance_next_i,  // advance_i of the next cycle
  output logic                  release_o,
  output logic                  release_next_o,  // release_o of the next cycle (without reset)
  output logic                  stop_req_o,
  output logic                  stop_req_next_o, // stop_req_o of the next cycle (without reset)
  output logic                  pending_host_o,  // the sync due at R is a host sync
  output logic [15:0]           pending_id_o,
  output logic                  err_o,
  output logic [Tw-1:0]         err_tile_o,
  output logic [4:0]            err_cause_o,
  output logic [31:0]           err_value_o
);

  localparam int Latency = tess_params_pkg::SYNC_LATENCY;

  // Parameters this unit cannot honour are refused at elaboration (Verilator, Yosys; Icarus 11
  // does not parse elaboration-time $error).
`ifndef __ICARUS__
  if ((Latency < 3) || (Latency > 17)) begin : g_param_error
    $error("tess_sync: SYNC_LATENCY (rtl/params.json) must be 3..17 (4-bit release counter)");
  end
`endif
  localparam logic [31:0] HostBit = tess_params_pkg::SYNC_HOST_BIT;

  logic [NumTiles-1:0] p1_q, p2_q;
  logic [NumTiles-1:0] arrived_q, arrived_d;
  logic                count_q, count_d;
  logic [3:0]          cnt_q, cnt_d;
  logic [31:0]         desc_q, desc_d;
  logic                released_q, released_d;

  logic                all_in;
  logic                any_arrived;
  logic                any_halted;
  logic                mismatch;
  logic [Tw-1:0]       first_arrived;
  logic [Tw-1:0]       first_arrived_c;
  logic [Tw-1:0]       first_halted;
  logic [Tw-1:0]       first_mismatch;
  logic                due;

  assign all_in      = &(arrived_q | gone_i | absent_i);
  assign any_arrived = |arrived_q;
  assign any_halted  = |(gone_i & ~arrived_q);

  // Lowest-numbered tiles of each kind (loops from the top so the lowest wins).
  always_comb begin
    first_arrived_c = '0;
    for (int t = NumTiles - 1; t >= 0; t--) begin
      if (arrived_q[t]) begin
        first_arrived_c = Tw'(t);
      end
    end
  end

  always_comb begin
    first_arrived  = '0;
    first_halted   = '0;
    first_mismatch = '0;
    mismatch       = 1'b0;
    for (int t = NumTiles - 1; t >= 0; t--) begin
      if (arrived_q[t]) begin
        first_arrived = Tw'(t);
      end
      if (gone_i[t] && !arrived_q[t]) begin
        first_halted = Tw'(t);
      end
      if (arrived_q[t] && (desc_i[32*t +: 32] != desc_i[32*first_arrived_c +: 32])) begin
        first_mismatch = Tw'(t);
        mismatch       = 1'b1;
      end
    end
  end

  assign due        = count_q && (cnt_q == 4'd1);
  assign stop_req_o = due && !released_q && (desc_q[31] || sync_break_i);
  assign release_o  = advance_i && due;
  // The same request one cycle ahead, from the values the registers take at the next edge: the
  // chip keeps a registered copy of its run decision in each tile's clock domain.
  logic        count_n;
  logic [3:0]  cnt_n;
  logic        host_n;         // bit 31 (host sync) of the next descriptor
  assign count_n = advance_i ? count_d : count_q;
  assign cnt_n   = advance_i ? cnt_d : cnt_q;
  assign host_n  = advance_i ? desc_d[31] : desc_q[31];
  assign stop_req_next_o = count_n && (cnt_n == 4'd1) && !released_d &&
                           (host_n || sync_break_next_i);
  // The same for the release: each tile keeps a registered copy.
  assign release_next_o  = advance_next_i && count_n && (cnt_n == 4'd1);
  assign pending_host_o = (desc_q & HostBit) != 32'd0;
  assign pending_id_o   = desc_q[15:0];

  always_comb begin
    err_o       = 1'b0;
    err_tile_o  = first_arrived;
    err_cause_o = 5'(tess_params_pkg::CAUSE_SYNC_HALTED);
    err_value_o = 32'(first_halted);
    if (advance_i && !count_q && all_in && any_arrived) begin
      if (any_halted) begin
        err_o = 1'b1;
      end else if (mismatch) begin
        err_o       = 1'b1;
        err_tile_o  = first_mismatch;
        err_cause_o = 5'(tess_params_pkg::CAUSE_SYNC_MISMATCH);
        err_value_o = desc_i[32*first_mismatch +: 32];
      end
    end
  end

  always_comb begin
    arrived_d  = arrived_q | p2_q;
    count_d    = count_q;
    cnt_d      = cnt_q;
    desc_d     = desc_q;
    released_d = (released_q || host_release_i) && !release_o;
    if (!count_q && all_in && any_arrived && !err_o) begin
      count_d = 1'b1;
      cnt_d   = 4'(Latency - 2);
      desc_d  = desc_i[32*first_arrived_c +: 32];
    end else if (count_q && !due) begin
      cnt_d = cnt_q - 4'd1;
    end else if (due) begin
      count_d    = 1'b0;
      arrived_d  = p2_q;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      p1_q       <= '0;
      p2_q       <= '0;
      arrived_q  <= '0;
      count_q    <= 1'b0;
      cnt_q      <= '0;
      desc_q     <= '0;
      released_q <= 1'b0;
    end else begin
      released_q <= released_d;
      if (advance_i) begin
        p1_q      <= arrive_i;
        p2_q      <= p1_q;
        arrived_q <= arrived_d;
        count_q   <= count_d;
        cnt_q     <= cnt_d;
        desc_q    <= desc_d;
      end
    end
  end

endmodule
