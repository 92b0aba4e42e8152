// Iterative integer divider of the tile core: DIV, DIVU, REM, REMU as a long op.
// Radix-2 restoring division of the operand magnitudes, 4 quotient bits per pass; the instruction
// makes 8 passes through EX in its context's slots (docs/tile.md: LONG_OP_ROUNDS = 8), so one
// partial state is kept per context. Pass 0 latches the operands (and already does 4 steps);
// on pass 7 result_o carries the final, sign-corrected result combinationally (EX).
// Latency is fixed: division by zero and overflow take the same 8 passes and give the RISC-V
// results (quotient all ones / remainder = dividend; -2^31 / -1 = -2^31 rem 0).
module tess_div #(
  parameter int Contexts = tess_params_pkg::NUM_CONTEXTS
) (
  input  logic        clk_i,
  input  logic        pass_i,      // a pass of a divide is in EX this cycle
  input  logic [2:0]  pass_idx_i,  // 0..7
  input  logic [2:0]  ctx_i,
  input  logic [2:0]  ctx_next_i,  // the context in EX in the next cycle (TESS_ICE40 only)
  input  logic [1:0]  op_i,        // tess_core_pkg::div_op_e, used on pass 0
  input  logic [31:0] a_i,         // dividend, used on pass 0
  input  logic [31:0] b_i,         // divisor, used on pass 0
  output logic [31:0] result_o     // valid on pass 7
);

  localparam int StepsPerPass = 4;

  // Parameters this unit cannot honour are refused at elaboration (Verilator, Yosys; Icarus 11
  // does not parse elaboration-time $error).
`ifndef __ICARUS__
  if (tess_params_pkg::LONG_OP_ROUNDS != 8) begin : g_param_error
    $error("tess_div: LONG_OP_ROUNDS (rtl/params.json) must be 8: the divider makes 8 passes of 4 steps");
  end
`endif

  // Partial state of one context: remainder, dividend/quotient shift register, divisor magnitude,
  // and what the result needs at the end.
  typedef struct packed {
    logic [31:0] rem;
    logic [31:0] quo;
    logic [31:0] dvs;
    logic        neg_quo;
    logic        neg_rem;
    logic        want_rem;
  } div_state_t;

  // One entry per context (a power-of-two count, indexed by the low Cw bits of a context: every
  // context is below Contexts).
  localparam int Cw    = $clog2(Contexts);
  localparam int Depth = 2 ** Cw;
  logic [Cw-1:0] ci, ci_next;
  logic          unused_ctx;
  assign ci         = Cw'(ctx_i);
  assign ci_next    = Cw'(ctx_next_i);
  assign unused_ctx = ^{ctx_i, ctx_next_i};

  div_state_t                stored;       // ctx_i's partial state
  div_state_t                start, cur, next;

  // $bits(div_state_t), spelled out: Yosys 0.23 and Icarus 11 cannot size a declaration by it.
  localparam int StateBits = 3 * 32 + 3;
`ifdef VERILATOR
  if ($bits(div_state_t) != StateBits) begin : g_state_bits_error
    $error("tess_div: StateBits must be $bits(div_state_t)");
  end
`endif
  logic                      a_signed;
  logic                      a_neg;
  logic                      b_neg;
  logic [33:0]               trial;
  logic                      unused_trial;

  assign a_signed = (op_i == tess_core_pkg::DIV_DIV) || (op_i == tess_core_pkg::DIV_REM);
  assign a_neg    = a_signed & a_i[31];
  assign b_neg    = a_signed & b_i[31];

  always_comb begin
    start          = '0;
    start.quo      = a_neg ? (~a_i + 32'd1) : a_i;
    start.dvs      = b_neg ? (~b_i + 32'd1) : b_i;
    // Division by zero keeps the all-ones quotient unsigned (-1); the remainder keeps the
    // dividend's sign as usual.
    start.neg_quo  = (a_neg ^ b_neg) && (b_i != 32'd0);
    start.neg_rem  = a_neg;
    start.want_rem = (op_i == tess_core_pkg::DIV_REM) || (op_i == tess_core_pkg::DIV_REMU);
  end

  always_comb begin
    cur   = (pass_idx_i == 3'd0) ? start : stored;
    next  = cur;
    trial = '0;
    for (int i = 0; i < StepsPerPass; i++) begin
      trial = {1'b0, next.rem, next.quo[31]} - {2'b0, next.dvs};
      if (!trial[33]) begin
        next.rem = trial[31:0];
        next.quo = {next.quo[30:0], 1'b1};
      end else begin
        next.rem = {next.rem[30:0], next.quo[31]};
        next.quo = {next.quo[30:0], 1'b0};
      end
    end
  end

  // Bit 32 of the last trial subtraction is never needed (the remainder stays below 2^32).
  assign unused_trial = trial[32];

  always_comb begin
    if (next.want_rem) begin
      result_o = next.neg_rem ? (~next.rem + 32'd1) : next.rem;
    end else begin
      result_o = next.neg_quo ? (~next.quo + 32'd1) : next.quo;
    end
  end

  // The partial states are a memory without reset: pass 0 never reads its context's entry, so an
  // entry is always written before it is read. Like tess_sram, the one exception to "always_ff
  // holds only q <= d".
`ifdef TESS_ICE40
  // iCE40 (scripts/fpga-ice40.sh): as registers the states cost 8 x 99 flip-flops and their read
  // mux, so the wide part goes to block RAM, whose reads are synchronous: it is read at the edge
  // that starts the EX cycle, with the context EX holds then (ctx_next_i), which gives the same
  // data as the combinational read (an entry is written only by its own context's passes, never
  // in the cycle before that context's next pass). The three flags stay in registers: 99 bits
  // would take 7 block RAMs of 16 bits, 96 take 6.
  localparam int WideBits = StateBits - 3;
  (* no_rw_check *)
  logic [WideBits-1:0] wide_mem [Depth];
  logic [WideBits-1:0] wide_q;
  logic [2:0]          flags_mem [Depth];

  always_ff @(posedge clk_i) begin
    wide_q <= wide_mem[ci_next];
  end

  always_ff @(posedge clk_i) begin
    if (pass_i) begin
      wide_mem[ci]  <= next[StateBits-1:3];
      flags_mem[ci] <= next[2:0];
    end
  end

  assign stored = {wide_q, flags_mem[ci]};
`else
  // An array of vectors, not of the struct: Yosys 0.23 reads an unpacked array of a packed struct
  // as one vector and its synthesised divider kept no per-context state.
  logic [StateBits-1:0] state_q [Depth];
  logic [Cw-1:0] unused_ci_next;
  assign unused_ci_next = ci_next;

  always_ff @(posedge clk_i) begin
    if (pass_i) begin
      state_q[ci] <= next;
    end
  end

  assign stored = state_q[ci];
`endif

endmodule
