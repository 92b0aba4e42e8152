// Execute stage of the core (tess_core), EX at c+2 for an instruction issued at c: operands, ALU,
// branches and jumps, address generation and access checks, SRAM port B, the MMIO page
// (tess_mmio), the CSRs (tess_csr), the multiplier and the divider's pass (HasMulDiv), the trap
// decision, and the record the instruction carries into M1 (m1_d_o). The FP units take their
// operands here too (tess_core_fp, beside this stage in tess_core).
// An instruction commits (commit_o) unless it traps; a trap or an EXIT store asks for the tile's
// halt (halt_req_o, which tess_core_ctx takes). Context-state changes (RUN, DONE, WAIT, SYNC) and
// the pc update are decided here and applied by tess_core_ctx at the end of this cycle, so issue
// decisions from c+3 see them.
// Timing: combinational from the ID/EX registers; SRAM port B's read data one cycle later (M1).
`include "tess_core_types.svh"

module tess_core_ex #(
  parameter int MemBytes    = tess_params_pkg::TILE_MEM_BYTES,
  parameter int NumTiles    = tess_params_pkg::NUM_TILES,
  parameter bit HasFpu      = tess_params_pkg::HAS_FPU != 0,
  parameter bit HasMulDiv   = tess_params_pkg::HAS_MULDIV != 0,
  parameter int Contexts    = tess_params_pkg::NUM_CONTEXTS,
  parameter int CounterBits = tess_params_pkg::COUNTER_BITS,
  parameter bit MatrixUnit  = tess_params_pkg::MATRIX_UNIT != 0,
  localparam int Aw         = $clog2(MemBytes / 4)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   advance_i,
  input  logic [15:0]            tile_id_i,
  input  logic                   xchg_clear_i,
  // the instruction in EX (ID/EX registers, tess_core_id)
  input  logic                   ex_valid_i,
  input  logic [2:0]             ex_ctx_i,
  input  logic [31:0]            ex_pc_i,
  input  logic [31:0]            ex_insn_i,
  input  logic [2:0]             ex_pass_i,
  input  decoded_t               dec_i,
  input  logic [31:0]            rs1_i,
  input  logic [31:0]            rs2_i,
  input  logic [31:0]            fs2_i,
  input  logic                   exc_i,          // trap found in IF or ID
  input  logic [4:0]             cause_i,
  input  logic [31:0]            value_i,
  // context state and counters (tess_core_ctx), the context in ID
  input  logic [Contexts-1:0]    running_i,
  input  logic [CounterBits-1:0] cycle_i,
  input  logic [2:0]             id_ctx_i,
  output logic [2:0]             id_frm_o,       // the ID context's rounding mode (decoder)
  // what the instruction does
  output logic                   commit_o,
  output logic                   last_pass_o,    // the last pass of a long op, or no long op
  output logic                   jump_o,
  output logic [31:0]            target_o,
  output logic [31:0]            link_o,
  output logic [31:0]            store_data_o,
  output logic                   trap_o,
  output logic [4:0]             trap_cause_o,
  output logic [31:0]            trap_value_o,
  output logic                   halt_req_o,     // it traps or stores to EXIT
  output logic                   trap_now_o,
  output logic                   mmio_exit_o,
  output logic                   mmio_wait_o,
  output logic                   mmio_done_o,
  output logic                   mmio_run_o,
  output logic                   mmio_sync_o,
  output logic [2:0]             run_ctx_o,
  output logic [31:0]            run_arg_o,
  output logic [31:0]            xchg_prog_o,
  output logic                   sync_o,
  output logic [31:0]            sync_desc_o,
  output logic [31:0]            sync_pc_o,
  output late_t                  m1_d_o,
  // loads and stores (SRAM port B)
  output logic                   dmem_req_o,
  output logic                   dmem_we_o,
  output logic [3:0]             dmem_be_o,
  output logic [Aw-1:0]          dmem_addr_o,
  output logic [31:0]            dmem_wdata_o,
  output logic                   dmem_wide_o,     // MatrixUnit: a 16-byte access
  output logic [127:0]           dmem_wide_wdata_o,
  // the matrix unit (tess_amp, MatrixUnit): AMP.SA's store data, AMP.RD's or a conversion's value
  input  logic [127:0]           amp_sa_data_i,
  input  logic [31:0]            amp_rd_value_i,
  // its row addressing: the access's offset from rs1, and a row past the context's limit (no
  // access, no trap)
  input  logic [31:0]            amp_row_off_i,
  input  logic                   amp_row_skip_i,
  output logic                   console_valid_o,
  output logic [7:0]             console_byte_o,
  // FP flags and retirement from WB (tess_core_wb), for the CSRs
  input  logic                   flags_we_i,
  input  logic [2:0]             wb_ctx_i,
  input  logic [4:0]             flags_i,
  input  logic                   retire_i,
  output logic [Contexts*64-1:0] instret_o,
  // checkpoint state (tess_core: hs_we_i only while held)
  input  logic                   hs_we_i,
  input  logic [3:0]             hs_sel_i,
  input  logic [2:0]             hs_ctx_i,
  input  logic [31:0]            hs_wdata_i,
  output logic [7:0]             hs_fcsr_o
);

  localparam int MmioBits = $clog2(tess_params_pkg::MMIO_SIZE);
  // Long ops are DIV*/REM* and FDIV.S/FSQRT.S: without M and F there are none.
  localparam bit HasLongOps = HasMulDiv || HasFpu;
  localparam logic [31:0] MmioBase = tess_params_pkg::MMIO_BASE;
  localparam logic [31:0] MemLimit = 32'(MemBytes);
  // A unit access (16 bytes) lies wholly inside SRAM when it starts at or below this.
  localparam logic [31:0] AmpLimit = 32'(MemBytes - tess_params_pkg::AMP_STEP_BYTES);

  // Trap causes (docs/tile.md, "Halting and traps"), numbered by rtl/params.json.
  localparam logic [4:0] EXC_INSN_MISALIGNED  = 5'(tess_params_pkg::CAUSE_INSN_MISALIGNED);
  localparam logic [4:0] EXC_LOAD_MISALIGNED  = 5'(tess_params_pkg::CAUSE_LOAD_MISALIGNED);
  localparam logic [4:0] EXC_LOAD_ACCESS      = 5'(tess_params_pkg::CAUSE_LOAD_ACCESS);
  localparam logic [4:0] EXC_STORE_MISALIGNED = 5'(tess_params_pkg::CAUSE_STORE_MISALIGNED);
  localparam logic [4:0] EXC_STORE_ACCESS     = 5'(tess_params_pkg::CAUSE_STORE_ACCESS);
  localparam logic [4:0] EXC_CONTEXT_MISUSE   = 5'(tess_params_pkg::CAUSE_CONTEXT_MISUSE);

  decoded_t    dec;
  logic [31:0] op_a, op_b;
  logic [31:0] alu_result;
  logic        br_taken;
  logic [31:0] mem_addr;
  logic        mem_access;
  logic        mem_misaligned;
  logic        in_sram;
  logic        in_mmio;
  logic        target_misaligned;
  logic [31:0] mul_result;
  logic [31:0] div_result;
  logic [31:0] csr_rdata;
  logic [31:0] mmio_rdata;
  logic        mmio_req;
  logic        mmio_fault;
  logic        mmio_misuse;
  logic        mmio_console;
  logic [31:0] ex_result;
  logic [1:0]  ex_dest;

  assign dec        = dec_i;
  // Traps of the decoder were resolved in ID; rs2/rs3 only address the register files.
  logic [12:0] unused_dec;
  assign unused_dec = {dec.illegal, dec.ecall, dec.ebreak, dec.rs2, dec.rs3};
  // The FP controls go to tess_core_fp from the ID/EX registers directly.
  logic [8:0] unused_fp_ctl;
  assign unused_fp_ctl = {dec.fpu_op, dec.rm, dec.fpu_a_int};
  // A unit instruction (MatrixUnit) accesses 16 bytes at rs1 + its row's offset (imm is its
  // post-increment, 16), aligned, in SRAM only: an address in the MMIO page is an access fault
  // (docs/tile.md); a skipped row accesses nothing.
  logic amp_access;
  assign amp_access = MatrixUnit && dec.amp;
  assign last_pass_o  = !HasLongOps || !dec.long_op ||
                        (ex_pass_i == 3'(tess_params_pkg::LONG_OP_ROUNDS - 1));
  assign link_o       = ex_pc_i + 32'd4;
  assign store_data_o = dec.mem_fp ? fs2_i : rs2_i;

  always_comb begin
    unique case (dec.op_a)
      tess_core_pkg::OPA_PC:   op_a = ex_pc_i;
      tess_core_pkg::OPA_ZERO: op_a = '0;
      default:  op_a = rs1_i;
    endcase
    op_b = (dec.op_b == tess_core_pkg::OPB_IMM) ? dec.imm : rs2_i;
  end

  tess_alu u_alu (
    .op_i        (dec.alu_op),
    .a_i         (op_a),
    .b_i         (op_b),
    .br_funct3_i (dec.br_funct3),
    .rs1_i       (rs1_i),
    .rs2_i       (rs2_i),
    .result_o    (alu_result),
    .br_taken_o  (br_taken)
  );

  // The multiplier and divider exist only with HasMulDiv; without them M instructions are
  // illegal (tess_decoder), so RES_MUL and RES_DIV are never selected.
  if (HasMulDiv) begin : g_muldiv
    tess_mul u_mul (
      .op_i     (dec.mul_op),
      .a_i      (rs1_i),
      .b_i      (rs2_i),
      .result_o (mul_result)
    );

    tess_div #(
      .Contexts (Contexts)
    ) u_div (
      .clk_i      (clk_i),
      .pass_i     (commit_o && (dec.res_sel == tess_core_pkg::RES_DIV)),
      .pass_idx_i (ex_pass_i),
      .ctx_i      (ex_ctx_i),
      .ctx_next_i (advance_i ? id_ctx_i : ex_ctx_i),
      .op_i       (dec.div_op),
      .a_i        (rs1_i),
      .b_i        (rs2_i),
      .result_o   (div_result)
    );
  end else begin : g_no_muldiv
    logic [3:0] unused_muldiv_ops;
    assign unused_muldiv_ops = {dec.mul_op, dec.div_op};
    assign mul_result = '0;
    assign div_result = '0;
  end

  // Branches and jumps.
  assign jump_o   = dec.jal || dec.jalr || (dec.branch && br_taken);
  assign target_o = dec.jalr ? ((rs1_i + dec.imm) & ~32'd1) : (ex_pc_i + dec.imm);
  assign target_misaligned = jump_o && (target_o[1:0] != 2'b00);

  // Address generation and access checks (docs/tile.md, "Tile memory map").
  assign mem_access = (dec.load || dec.store) && !(amp_access && amp_row_skip_i);
  assign mem_addr   = amp_access ? rs1_i + amp_row_off_i : rs1_i + dec.imm;
  always_comb begin
    unique case (dec.mem_size)
      tess_core_pkg::MEM_H:   mem_misaligned = mem_addr[0];
      tess_core_pkg::MEM_W:   mem_misaligned = mem_addr[1:0] != 2'b00;
      default: mem_misaligned = 1'b0;
    endcase
    if (amp_access) mem_misaligned = mem_addr[3:0] != 4'd0;
  end
  assign in_sram  = amp_access ? (mem_addr <= AmpLimit) : (mem_addr < MemLimit);
  assign in_mmio  = !amp_access && ((mem_addr >> MmioBits) == (MmioBase >> MmioBits));
  assign mmio_req = ex_valid_i && !exc_i && mem_access && !mem_misaligned && in_mmio;

  tess_mmio #(
    .Contexts (Contexts)
  ) u_mmio (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .req_i          (mmio_req && advance_i),
    .commit_i       (commit_o),
    .xchg_clear_i   (xchg_clear_i),
    .we_i           (dec.store),
    .word_i         (dec.mem_size == tess_core_pkg::MEM_W),
    .offset_i       (mem_addr[11:0]),
    .wdata_i        (store_data_o),
    .ctx_i          (ex_ctx_i),
    .running_i      (running_i),
    .rdata_o        (mmio_rdata),
    .access_fault_o (mmio_fault),
    .misuse_o       (mmio_misuse),
    .exit_o         (mmio_exit_o),
    .console_o      (mmio_console),
    .wait_o         (mmio_wait_o),
    .done_o         (mmio_done_o),
    .run_o          (mmio_run_o),
    .run_ctx_o      (run_ctx_o),
    .run_arg_o      (run_arg_o),
    .sync_o         (mmio_sync_o),
    .xchg_prog_o    (xchg_prog_o),
    .hs_run_arg_we_i (hs_we_i && (hs_sel_i == tess_core_pkg::HS_RUN_ARG)),
    .hs_xchg_we_i    (hs_we_i && (hs_sel_i == tess_core_pkg::HS_XCHG)),
    .hs_wdata_i      (hs_wdata_i)
  );

  // Trap priority: fetch, illegal, ECALL/EBREAK (all in exc_i), misaligned target,
  // misaligned access, access fault, context misuse.
  always_comb begin
    trap_o       = 1'b1;
    trap_cause_o = cause_i;
    trap_value_o = value_i;
    if (exc_i) begin
      trap_o = 1'b1;
    end else if (target_misaligned) begin
      trap_cause_o = EXC_INSN_MISALIGNED;
      trap_value_o = target_o;
    end else if (mem_access && mem_misaligned) begin
      trap_cause_o = dec.store ? EXC_STORE_MISALIGNED : EXC_LOAD_MISALIGNED;
      trap_value_o = mem_addr;
    end else if (mem_access && ((!in_sram && !in_mmio) || mmio_fault)) begin
      trap_cause_o = dec.store ? EXC_STORE_ACCESS : EXC_LOAD_ACCESS;
      trap_value_o = mem_addr;
    end else if (mmio_misuse) begin
      trap_cause_o = EXC_CONTEXT_MISUSE;
      trap_value_o = mem_addr;
    end else begin
      trap_o = 1'b0;
    end
  end

  assign commit_o = advance_i && ex_valid_i && !trap_o;
  // The instruction in EX halts the tile (trap or EXIT; tess_core_ctx decides whether it is the
  // halt, and records it).
  assign halt_req_o = ex_valid_i && (trap_o || mmio_exit_o);

  assign trap_now_o  = advance_i && ex_valid_i && trap_o;
  assign sync_o      = commit_o && mmio_sync_o;
  assign sync_desc_o = store_data_o;
  assign sync_pc_o   = ex_pc_i;

  // SRAM port B for loads and stores.
  assign dmem_req_o   = commit_o && mem_access && in_sram;
  assign dmem_we_o    = dec.store;
  assign dmem_addr_o  = mem_addr[Aw+1:2];
  assign dmem_wdata_o = store_data_o << {mem_addr[1:0], 3'b000};
  assign dmem_wide_o       = amp_access;
  assign dmem_wide_wdata_o = amp_sa_data_i;
  always_comb begin
    unique case (dec.mem_size)
      tess_core_pkg::MEM_B:   dmem_be_o = 4'b0001 << mem_addr[1:0];
      tess_core_pkg::MEM_H:   dmem_be_o = 4'b0011 << mem_addr[1:0];
      default: dmem_be_o = 4'b1111;
    endcase
  end

  assign console_valid_o = commit_o && mmio_console;
  assign console_byte_o  = store_data_o[7:0];

  // CSRs; FP flags and retirement come from WB.

  tess_csr #(
    .Contexts (Contexts),
    .NumTiles (NumTiles),
    .MemBytes (MemBytes),
    .CounterBits (CounterBits)
  ) u_csr (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .tile_id_i     (tile_id_i),
    .id_ctx_i      (id_ctx_i),
    .id_frm_o      (id_frm_o),
    .commit_i      (commit_o),
    .ex_ctx_i      (ex_ctx_i),
    .csr_op_i      (dec.csr_op),
    .csr_write_i   (dec.csr_write),
    .csr_addr_i    (dec.csr_addr),
    .csr_wdata_i   (dec.csr_imm ? {27'b0, dec.rs1} : rs1_i),
    .issue_cycle_i (cycle_i - CounterBits'(2)),
    .csr_rdata_o   (csr_rdata),
    .flags_we_i    (flags_we_i),
    .wb_ctx_i      (wb_ctx_i),
    .flags_i       (flags_i),
    .retire_i      (retire_i),
    .instret_o     (instret_o),
    .hs_ctx_i           (hs_ctx_i),
    .hs_fcsr_we_i       (hs_we_i && (hs_sel_i == tess_core_pkg::HS_FCSR)),
    .hs_instret_lo_we_i (hs_we_i && (hs_sel_i == tess_core_pkg::HS_INSTRET_LO)),
    .hs_instret_hi_we_i (hs_we_i && (hs_sel_i == tess_core_pkg::HS_INSTRET_HI)),
    .hs_wdata_i         (hs_wdata_i),
    .hs_fcsr_o          (hs_fcsr_o)
  );

  always_comb begin
    unique case (dec.res_sel)
      tess_core_pkg::RES_LINK: ex_result = link_o;
      tess_core_pkg::RES_MUL:  ex_result = mul_result;
      tess_core_pkg::RES_DIV:  ex_result = div_result;
      tess_core_pkg::RES_CSR:  ex_result = csr_rdata;
      tess_core_pkg::RES_LOAD: ex_result = mmio_rdata;
      default:  ex_result = alu_result;
    endcase
    // AMP.RD's fd and the conversions' x or f result; the unit's other results are the ALU's
    // rs1 + 16.
    if (amp_access && ((dec.amp_op == 3'(tess_params_pkg::AMP_F3_RD)) ||
                       (dec.amp_op == 3'(tess_params_pkg::AMP_F3_CVT)))) begin
      ex_result = amp_rd_value_i;
    end
  end

  // x0 is never written and is reported as "no destination".
  assign ex_dest = ((dec.dest == tess_core_pkg::DEST_X) && (dec.rd == 5'd0)) ?
                   tess_core_pkg::DEST_NONE : dec.dest;

  always_comb begin
    m1_d_o              = '0;
    m1_d_o.valid        = commit_o && last_pass_o;
    m1_d_o.ctx          = ex_ctx_i;
    m1_d_o.pc           = ex_pc_i;
    m1_d_o.insn         = ex_insn_i;
    m1_d_o.dest         = ex_dest;
    m1_d_o.rd           = dec.rd;
    m1_d_o.res_sel      = dec.res_sel;
    m1_d_o.value        = ex_result;
    m1_d_o.load_sram    = dec.load && !amp_access && in_sram;
    m1_d_o.mem_size     = dec.mem_size;
    m1_d_o.mem_unsigned = dec.mem_unsigned;
    m1_d_o.byte_off     = mem_addr[1:0];
  end


endmodule
