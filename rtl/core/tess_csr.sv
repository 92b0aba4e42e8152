// CSRs of the tile core (docs/tile.md, "CSRs"): per-context fflags/frm (fcsr) and instret, plus
// the read-only cycle and id CSRs. A CSR instruction reads and writes in EX (write effective for
// the context's next instruction); FP flags accrue at WB; instret counts retirements at WB.
// The decoder has already rejected unknown CSRs and writes to read-only ones.
// Counters (the cycle input, instret) are CounterBits wide, 64 or 32 (rtl/params.json
// COUNTER_BITS): at 32 they wrap modulo 2^32 and cycleh/instreth read 0; instret_o carries each
// context's count zero-extended to 64 bits.
`include "tess_ctx_select.svh"

module tess_csr #(
  parameter int Contexts = tess_params_pkg::NUM_CONTEXTS,
  parameter int NumTiles = tess_params_pkg::NUM_TILES,
  parameter int MemBytes = tess_params_pkg::TILE_MEM_BYTES,
  parameter int CounterBits = tess_params_pkg::COUNTER_BITS
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,
  input  logic [15:0]                tile_id_i,    // a port, not a parameter: tiles share code
  // ID: rounding mode of the decoding context
  input  logic [2:0]                 id_ctx_i,
  output logic [2:0]                 id_frm_o,
  // EX: CSR instruction (csr_op_i != CSR_NONE and commit_i when it takes effect)
  input  logic                       commit_i,
  input  logic [2:0]                 ex_ctx_i,
  input  logic [1:0]                 csr_op_i,     // tess_core_pkg::csr_op_e
  input  logic                       csr_write_i,
  input  logic [11:0]                csr_addr_i,
  input  logic [31:0]                csr_wdata_i,
  input  logic [CounterBits-1:0]     issue_cycle_i,
  output logic [31:0]                csr_rdata_o,
  // WB: accrued FP flags and retirement
  input  logic                       flags_we_i,
  input  logic [2:0]                 wb_ctx_i,
  input  logic [4:0]                 flags_i,
  input  logic                       retire_i,
  // counters
  output logic [Contexts*64-1:0]     instret_o,    // context k at [64*k +: 64]
  // checkpoint state (docs/checkpoint.md): written by the host while the core is held
  input  logic [2:0]                 hs_ctx_i,
  input  logic                       hs_fcsr_we_i,
  input  logic                       hs_instret_lo_we_i,
  input  logic                       hs_instret_hi_we_i,
  input  logic [31:0]                hs_wdata_i,
  output logic [7:0]                 hs_fcsr_o
);

  // Custom read-only id CSRs, numbered by rtl/params.json.
  localparam logic [11:0] CsrTileId    = 12'(tess_params_pkg::CSR_TILE_ID);
  localparam logic [11:0] CsrContextId = 12'(tess_params_pkg::CSR_CONTEXT_ID);
  localparam logic [11:0] CsrNumTiles  = 12'(tess_params_pkg::CSR_NUM_TILES);
  localparam logic [11:0] CsrMemBytes  = 12'(tess_params_pkg::CSR_MEM_BYTES);

  // Per-context state, context k at [W*k +: W] (Yosys 0.23 reads no multi-dimensional packed
  // arrays).
  logic [Contexts*5-1:0]     fflags_q, fflags_d;
  logic [Contexts*3-1:0]     frm_q, frm_d;
  logic [Contexts*CounterBits-1:0] instret_q, instret_d;
  logic [7:0]                fcsr_old;
  logic [7:0]                fcsr_new;
  logic [31:0]               old_value;
  logic [31:0]               new_value;
  logic [23:0]               unused_new_value;

  logic [63:0]               instret_ex, issue_cycle, instret_hs;

  assign id_frm_o    = frm_q[3*id_ctx_i +: 3];
  assign instret_ex  = instret_o[64*ex_ctx_i +: 64];
  assign instret_hs  = instret_o[64*hs_ctx_i +: 64];
  assign issue_cycle = 64'(issue_cycle_i);
  assign fcsr_old    = {frm_q[3*ex_ctx_i +: 3], fflags_q[5*ex_ctx_i +: 5]};
  for (genvar k = 0; k < Contexts; k++) begin : g_instret
    assign instret_o[64*k +: 64] = 64'(instret_q[CounterBits*k +: CounterBits]);
  end
  assign hs_fcsr_o = {frm_q[3*hs_ctx_i +: 3], fflags_q[5*hs_ctx_i +: 5]};

  always_comb begin
    old_value = '0;
    unique case (csr_addr_i)
      12'h001: old_value = {27'b0, fcsr_old[4:0]};
      12'h002: old_value = {29'b0, fcsr_old[7:5]};
      12'h003: old_value = {24'b0, fcsr_old};
      12'hc00: old_value = issue_cycle[31:0];
      12'hc80: old_value = issue_cycle[63:32];
      12'hc02: old_value = instret_ex[31:0];
      12'hc82: old_value = instret_ex[63:32];
      CsrTileId:    old_value = {16'd0, tile_id_i};
      CsrContextId: old_value = {29'b0, ex_ctx_i};
      CsrNumTiles:  old_value = NumTiles;
      CsrMemBytes:  old_value = MemBytes;
      default: old_value = '0;
    endcase
  end
  assign csr_rdata_o      = old_value;
  assign unused_new_value = new_value[31:8];

  always_comb begin
    new_value = old_value;
    unique case (csr_op_i)
      tess_core_pkg::CSR_RW:  new_value = csr_wdata_i;
      tess_core_pkg::CSR_RS:  new_value = old_value | csr_wdata_i;
      tess_core_pkg::CSR_RC:  new_value = old_value & ~csr_wdata_i;
      default: new_value = old_value;
    endcase
  end

  always_comb begin
    fcsr_new = fcsr_old;
    unique case (csr_addr_i)
      12'h001: fcsr_new = {fcsr_old[7:5], new_value[4:0]};
      12'h002: fcsr_new = {new_value[2:0], fcsr_old[4:0]};
      12'h003: fcsr_new = new_value[7:0];
      default: fcsr_new = fcsr_old;
    endcase
  end

  // EX and WB never hold the same context (they are 3 slots apart), so the CSR write and the
  // flag accrual below never collide.
  always_comb begin
    fflags_d  = fflags_q;
    frm_d     = frm_q;
    instret_d = instret_q;
    if (commit_i && (csr_op_i != tess_core_pkg::CSR_NONE) && csr_write_i) begin
      `TESS_CTX_SET(fflags_d, 5, Contexts, ex_ctx_i, fcsr_new[4:0])
      `TESS_CTX_SET(frm_d, 3, Contexts, ex_ctx_i, fcsr_new[7:5])
    end
    if (flags_we_i) begin
      `TESS_CTX_SET(fflags_d, 5, Contexts, wb_ctx_i, fflags_q[5*wb_ctx_i +: 5] | flags_i)
    end
    if (retire_i) begin
      `TESS_CTX_SET(instret_d, CounterBits, Contexts, wb_ctx_i,
                    instret_q[CounterBits*wb_ctx_i +: CounterBits] + CounterBits'(1))
    end
    // Host writes come only while the core is held (nothing commits or retires then).
    if (hs_fcsr_we_i) begin
      `TESS_CTX_SET(fflags_d, 5, Contexts, hs_ctx_i, hs_wdata_i[4:0])
      `TESS_CTX_SET(frm_d, 3, Contexts, hs_ctx_i, hs_wdata_i[7:5])
    end
    if (hs_instret_lo_we_i) begin
      instret_d[CounterBits*hs_ctx_i +: CounterBits] =
          CounterBits'({instret_hs[63:32], hs_wdata_i});
    end
    if (hs_instret_hi_we_i) begin
      instret_d[CounterBits*hs_ctx_i +: CounterBits] =
          CounterBits'({hs_wdata_i, instret_hs[31:0]});
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      fflags_q  <= '0;
      frm_q     <= '0;
      instret_q <= '0;
    end else begin
      fflags_q  <= fflags_d;
      frm_q     <= frm_d;
      instret_q <= instret_d;
    end
  end

endmodule
