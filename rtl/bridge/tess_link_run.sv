// Run control of the link bridge (tess_link_bridge, docs/link-protocol.md "RUN"): the count of
// cycles left to a run's limit and the chip's run input.
// rem = {rem_hi_q, rem_lo_q} counts the cycles left to the limit: loaded with RUN's max cycles,
// it goes down by one whenever the chip's cycle counter moves (its bit 0 toggles; while the chip
// is live it moves by one a cycle), one clock late, so the cycles left now are rem - toggle.
// The counter's fix in the first draining cycle after a halt or error (tess_chip) moves it by
// 1 or 2 and may toggle: rem is wrong from then on, but the run ends there (run_o and more_o
// follow stopping_i, and the next RUN loads rem afresh). A limit beyond
// 2^64 - 1 (start + max overflowing) is not cut to 2^64 - 1, a difference no run can reach.
// Only the low 8 bits count in parallel; when they wrap, the high 56 bits are decremented
// bit-serially (a 56-clock pass through the shift register, borrow in borrow_q), before the
// low bits could wrap again or the limit be near (rem_lo_q < 3 is 253 clocks later).
// Payload bytes go into rem_hi_q a bit at a time (shift_i, from the idle CRC engine's byte
// register): RUN's bytes 1..7, CTRL_WRITE's value (then rem_hi_q[55:24], word_o); RUN's byte 0
// goes into rem_lo_q at once (load_lo_i).
//
// run_o: the chip advances while a run is in progress (run_i, the sequencer's), it is RUNNING and
// below the limit (or draining its pipelines after a halt or error, which the chip does not
// count). The chip registers its run input (docs/chip.md, "Run input"), so run_o says whether the
// next cycle may advance: the count then is one more than now if the chip advances now
// (chip_run_q, a copy of the chip's register, capture_o). A halt or error found in the cycle that
// reaches limit - 1 makes one draining cycle hold, which the chip does not count.
// more_o: the run goes on (else the sequencer ends it).
module tess_link_run (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        run_i,          // a run is in progress
  input  logic        running_i,      // the chip's state is RUNNING
  input  logic        stopping_i,     // ... and it drains after a halt or error
  input  logic        cycle0_i,       // bit 0 of the chip's cycle counter
  input  logic        load_lo_i,      // rem_lo_q := lo_byte_i
  input  logic [7:0]  lo_byte_i,
  input  logic        shift_i,        // shift shift_bit_i into rem_hi_q
  input  logic        shift_bit_i,
  input  logic        clr_i,          // rem_hi_q := 0
  output logic        run_o,
  output logic        more_o,
  output logic        capture_o,      // the chip advances in this cycle
  output logic [31:0] word_o          // CTRL_WRITE's value
);

  logic [7:0]  rem_lo_q, rem_lo_d;
  logic [55:0] rem_hi_q, rem_hi_d;
  logic        hi_nz;                     // rem_hi_q != 0
  logic        pass_q, pass_d;            // the serial decrement of rem_hi_q runs
  logic [5:0]  pcnt_q, pcnt_d;
  logic        borrow_q, borrow_d;
  logic        cyc0_q;
  logic        chip_run_q;
  logic        toggle;
  logic        rem_ge1, rem_ge2, rem_ge3;
  logic        below_now, below_next;     // count < limit now / in the next cycle
  logic        rem_mid;
  assign toggle     = cycle0_i ^ cyc0_q;
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
  assign more_o = running_i && (stopping_i || below_now);
  assign run_o  = run_i && running_i && (stopping_i || below_next);

  logic dec;
  assign dec = run_i && toggle;
  always_comb begin
    rem_lo_d = rem_lo_q - {7'd0, dec};
    rem_hi_d = rem_hi_q;
    pass_d   = pass_q;
    pcnt_d   = pcnt_q;
    borrow_d = borrow_q;
    if (load_lo_i) begin
      rem_lo_d = lo_byte_i;
    end
    if (dec && (rem_lo_q == 8'd0)) begin
      pass_d   = 1'b1;
      pcnt_d   = '0;
      borrow_d = 1'b1;
    end
    if (!run_i) pass_d = 1'b0;
    if (pass_q && run_i) begin
      rem_hi_d = {rem_hi_q[0] ^ borrow_q, rem_hi_q[55:1]};
      borrow_d = borrow_q && !rem_hi_q[0];
      pcnt_d   = pcnt_q + 6'd1;
      if (pcnt_q == 6'd55) pass_d = 1'b0;
    end else if (shift_i) begin
      rem_hi_d = {shift_bit_i, rem_hi_q[55:1]};
    end
    if (clr_i) rem_hi_d = '0;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rem_lo_q   <= '0;
      rem_hi_q   <= '0;
      pass_q     <= 1'b0;
      pcnt_q     <= '0;
      borrow_q   <= 1'b0;
      cyc0_q     <= 1'b0;
      chip_run_q <= 1'b0;
    end else begin
      rem_lo_q   <= rem_lo_d;
      rem_hi_q   <= rem_hi_d;
      pass_q     <= pass_d;
      pcnt_q     <= pcnt_d;
      borrow_q   <= borrow_d;
      cyc0_q     <= cycle0_i;
      chip_run_q <= run_o;
    end
  end

  assign capture_o = chip_run_q;
  assign word_o    = rem_hi_q[55:24];

endmodule
