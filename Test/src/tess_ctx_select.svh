// TESS_CTX_SET(vec, w, n, idx, val): in an always_comb, set the w-bit field of context idx in the
// flat per-context vector vec (context k at [w*k +: w], n contexts) to val.
// Default: a computed part-select, one indexed store for Verilator. With TESS_ICE40 a compare per
// context instead: Yosys builds a computed part-select store as a shifter of a write mask across
// the whole vector (three mux levels per bit of vec), which a compare and an enable per context
// avoid. The loop form is for the FPGA only: Verilator runs such loops over every context each
// cycle (docs/decisions.md, "One RTL for simulation and FPGA").
`ifndef TESS_CTX_SELECT_SVH
`define TESS_CTX_SELECT_SVH

`ifdef TESS_ICE40
`define TESS_CTX_SET(vec, w, n, idx, val) \
  for (int ctx_set_k = 0; ctx_set_k < (n); ctx_set_k++) begin \
    if (32'(idx) == ctx_set_k) begin \
      vec[(w)*ctx_set_k +: (w)] = (val); \
    end \
  end
`else
`define TESS_CTX_SET(vec, w, n, idx, val) vec[(w)*(idx) +: (w)] = (val);
`endif

`endif
