// The one clock-gating cell of the design (docs/decisions.md, "FPGA-clean RTL").
// clk_o runs while en_i is 1 and stays low while it is 0. Every register behind a gate must hold
// by itself while en_i is 0 (its own enable logic), so removing the gate changes nothing but
// power and simulation speed.
//   default (simulation, ASIC): a latch-based gate; en_i is taken while clk_i is low, so clk_o
//                               has no glitch. An ASIC flow swaps this body for its library's
//                               integrated clock-gating cell.
//   TESS_FPGA defined:          no derived clock: clk_o is clk_i, and en_i acts only through the
//                               clock enables of the registers behind the gate (FPGA tools map
//                               those onto the flip-flops' CE pins).
// Latency: none.
module tess_clock_gate (
  input  logic clk_i,
  input  logic en_i,
  output logic clk_o
);

`ifdef TESS_FPGA
  logic unused_en;
  assign unused_en = en_i;
  assign clk_o     = clk_i;
`else
  logic en_l;
  always_latch begin
    if (!clk_i) begin
      en_l = en_i;
    end
  end
  assign clk_o = clk_i && en_l;
`endif

endmodule
