// Late stages of the core (tess_core): M1 (load data), M2, WB (register write, FP flags,
// retirement). Each stage carries one retiring instruction (late_t), entered by EX (m1_d_i); the
// stages advance only while advance_i.
// M1: the SRAM's port B read data register is shared with the host port, so a load caught in M1
// when the pipeline pauses keeps its data in ld_hold_q. WB: the value comes from M2, or from the
// FP result queues (tess_core_fp) for FP results, which WB pops.
// Timing: M1 c+3, M2 c+4, WB c+5 for an instruction issued at c; the retirement record's cycle is
// the issue cycle (WB cycle - PIPE_WB_STAGE, modulo 2^CounterBits).
`include "tess_core_types.svh"

module tess_core_wb #(
  parameter int CounterBits = tess_params_pkg::COUNTER_BITS
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   advance_i,
  input  late_t                  m1_d_i,
  input  logic [31:0]            dmem_rdata_i,
  input  logic [36:0]            fpu_i,          // FP result queue heads, {fflags, result}
  input  logic [36:0]            ds_i,
  input  logic [CounterBits-1:0] cycle_i,        // the core's cycle count
  output logic                   fpu_pop_o,
  output logic                   ds_pop_o,
  output logic                   busy_o,         // an instruction is in M1, M2 or WB
  // register and flag writes of WB
  output logic                   xrf_we_o,
  output logic                   frf_we_o,
  output logic [2:0]             wb_ctx_o,
  output logic [4:0]             wb_rd_o,
  output logic [31:0]            wb_value_o,
  output logic                   flags_we_o,
  output logic [4:0]             flags_o,
  output logic                   retire_o,       // an instruction retires (instret)
  // retirement trace (docs/tile.md, "Retirement trace")
  output logic                   retire_valid_o,
  output logic [63:0]            retire_cycle_o,
  output logic [2:0]             retire_ctx_o,
  output logic [31:0]            retire_pc_o,
  output logic [31:0]            retire_insn_o,
  output logic [1:0]             retire_dest_o,
  output logic [4:0]             retire_rd_o,
  output logic [31:0]            retire_value_o
);

  late_t m1_q;
  late_t m2_q, m2_d;
  late_t wb_q, wb_d;

  // ---------------------------------------------------------------------------------------------
  // M1: load data
  // ---------------------------------------------------------------------------------------------
  logic        adv_prev_q;
  logic [31:0] ld_hold_q, ld_hold_d;
  logic [31:0] ld_word;
  logic [31:0] ld_shifted;
  logic [31:0] ld_value;

  assign ld_word    = adv_prev_q ? dmem_rdata_i : ld_hold_q;
  assign ld_hold_d  = adv_prev_q ? dmem_rdata_i : ld_hold_q;
  assign ld_shifted = ld_word >> {m1_q.byte_off, 3'b000};

  always_comb begin
    unique case (m1_q.mem_size)
      tess_core_pkg::MEM_B:   ld_value = m1_q.mem_unsigned ? {24'b0, ld_shifted[7:0]}
                                            : {{24{ld_shifted[7]}}, ld_shifted[7:0]};
      tess_core_pkg::MEM_H:   ld_value = m1_q.mem_unsigned ? {16'b0, ld_shifted[15:0]}
                                            : {{16{ld_shifted[15]}}, ld_shifted[15:0]};
      default: ld_value = ld_shifted;
    endcase
  end

  always_comb begin
    m2_d = m1_q;
    if (m1_q.load_sram) begin
      m2_d.value = ld_value;
    end
    m2_d.load_sram = 1'b0;
  end

  assign wb_d = m2_q;

  // The memory fields of late_t are only used in M1.
  logic [5:0] unused_wb_mem;
  assign unused_wb_mem = {wb_q.load_sram, wb_q.mem_size, wb_q.mem_unsigned, wb_q.byte_off};

  // ---------------------------------------------------------------------------------------------
  // WB
  // ---------------------------------------------------------------------------------------------
  logic [31:0] wb_value;
  always_comb begin
    unique case (wb_q.res_sel)
      tess_core_pkg::RES_FPU:  wb_value = fpu_i[31:0];
      tess_core_pkg::RES_FDIV: wb_value = ds_i[31:0];
      default:  wb_value = wb_q.value;
    endcase
    unique case (wb_q.res_sel)
      tess_core_pkg::RES_FPU:  flags_o = fpu_i[36:32];
      tess_core_pkg::RES_FDIV: flags_o = ds_i[36:32];
      default:  flags_o = '0;
    endcase
  end

  assign fpu_pop_o  = advance_i && wb_q.valid && (wb_q.res_sel == tess_core_pkg::RES_FPU);
  assign ds_pop_o   = advance_i && wb_q.valid && (wb_q.res_sel == tess_core_pkg::RES_FDIV);
  assign flags_we_o = advance_i && wb_q.valid &&
                      ((wb_q.res_sel == tess_core_pkg::RES_FPU) ||
                       (wb_q.res_sel == tess_core_pkg::RES_FDIV));
  assign xrf_we_o   = advance_i && wb_q.valid && (wb_q.dest == tess_core_pkg::DEST_X);
  assign frf_we_o   = advance_i && wb_q.valid && (wb_q.dest == tess_core_pkg::DEST_F);
  assign wb_ctx_o   = wb_q.ctx;
  assign wb_rd_o    = wb_q.rd;
  assign wb_value_o = wb_value;
  assign retire_o   = advance_i && wb_q.valid;
  assign busy_o     = m1_q.valid || m2_q.valid || wb_q.valid;

  logic [CounterBits-1:0] retire_cycle;   // WB cycle - 5 modulo 2^CounterBits
  assign retire_valid_o = advance_i && wb_q.valid;
  assign retire_cycle   = cycle_i - CounterBits'(tess_params_pkg::PIPE_WB_STAGE);
  assign retire_cycle_o = 64'(retire_cycle);
  assign retire_ctx_o   = wb_q.ctx;
  assign retire_pc_o    = wb_q.pc;
  assign retire_insn_o  = wb_q.insn;
  assign retire_dest_o  = wb_q.dest;
  assign retire_rd_o    = (wb_q.dest == tess_core_pkg::DEST_NONE) ? 5'd0 : wb_q.rd;
  assign retire_value_o = (wb_q.dest == tess_core_pkg::DEST_NONE) ? 32'd0 : wb_value;

  // The late stages advance only while running.
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      m1_q <= '0;
      m2_q <= '0;
      wb_q <= '0;
    end else if (advance_i) begin
      m1_q <= m1_d_i;
      m2_q <= m2_d;
      wb_q <= wb_d;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      adv_prev_q <= 1'b0;
      ld_hold_q  <= '0;
    end else begin
      adv_prev_q <= advance_i;
      ld_hold_q  <= ld_hold_d;
    end
  end

endmodule
