// What stands in for a tile's exchange engine in a chip without exchange (HAS_EXCHANGE = 0, the
// one-tile iCE40 board chip; docs/chip.md, "A chip without exchange engines"). A sync that
// releases the tile with XCHG_PROG = 0 resumes it as in any chip (tess_tile). A release with
// XCHG_PROG != 0 is an exchange error (cause CAUSE_XCHG_ABSENT, pc = value = XCHG_PROG) with the
// timing of an engine whose first program word cannot be read (tess_exchange): error cycle
// e = R, raised on err_o at R+2, busy_o in R and R+1 (the tile counts one exchange cycle once
// the chip stops at e), finish_o never. The model (host/model) does the same.
// Every register advances only with advance_i (the chip's cycle).
module tess_exchange_absent (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        advance_i,
  input  logic        stop_i,        // chip error stop (error at now - 2): go idle
  input  logic        start_i,       // the sync releases this tile in this cycle
  input  logic [31:0] prog_i,        // XCHG_PROG (0 = none)
  output logic        busy_o,        // an exchange cycle of this tile (R, R+1)
  output logic        err_o,
  output logic [4:0]  err_cause_o,
  output logic [31:0] err_pc_o,
  output logic [31:0] err_value_o
);

  logic        begin_now;
  logic        pend_q, pend_d;      // cycle R+1 of a release with a program
  logic [31:0] prog_q, prog_d;
  logic        err_q, err_d;

  assign begin_now = start_i && (prog_i != 32'd0);

  // stop_i comes from every tile of the chip: only the always_ff block reads it (tess_exchange).
  assign pend_d = begin_now;
  assign err_d  = err_q || pend_q;

  assign prog_d = begin_now ? prog_i : prog_q;

  assign busy_o      = advance_i && (pend_q || begin_now);
  assign err_o       = err_q;
  assign err_cause_o = 5'(tess_params_pkg::CAUSE_XCHG_ABSENT);
  assign err_pc_o    = prog_q;
  assign err_value_o = prog_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      pend_q <= 1'b0;
      prog_q <= '0;
      err_q  <= 1'b0;
    end else if (advance_i) begin
      pend_q <= pend_d && !stop_i;
      prog_q <= prog_d;
      err_q  <= stop_i ? err_q : err_d;
    end
  end

endmodule
