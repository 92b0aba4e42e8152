// The matrix unit of a tile (docs/tile.md, "Matrix unit"): the weights W[b][k][j] (AMP_BANKS
// banks of AMP_ROWS x AMP_COLS fp32, one set per tile) and the accumulators acc[r][j] (AMP_ACC_ROWS
// x AMP_COLS fp32 per context), all +0 after reset.
// Timing (the one-round timing of the spec): EX (c+2) reads an accumulator row for AMP.SA's store
// data and AMP.RD's fd; M1 (c+3), with the 128-bit load data of SRAM port B, writes the state:
// AMP.LW a weight row, AMP.LA an accumulator row, AMP.S an accumulator row with the four FMA chains
// (fma_rne of tess_fpu_fma.svh, the FPU's arithmetic, four deep, without registers), AMP.SA with C
// clears its row, AMP.CLR the context's eight rows; a skipped row (row_skip_o) changes nothing. A
// context has one instruction in flight, so its next instruction (c+6) sees every effect; weights are written and read in M1 only, so an AMP.S
// sees exactly the AMP.LW words issued before it, whatever context issued them.
// Simulators compute the chains inside the M1 statement of an AMP.S, so they evaluate them only
// for an AMP.S; synthesis (SYNTHESIS) builds them from 16 tess_amp_fma. On an FPGA they are one
// combinational path of four FMAs (docs/decisions.md, "Matrix unit in the RTL").
// Row addressing (docs/tile.md, "Row strides and the row limit"): per context two strides and a
// row limit, set by AMP.STRIDE and AMP.ROWS at the end of EX; in EX the unit gives the core the
// row's offset from rs1 (row_off_o) and whether the row is skipped (row_skip_o: no access, no
// trap, no state change; the core still writes rd).
// Checkpoint state (docs/checkpoint.md, REG_SEL_AMP_*): while the core is held the host reads
// any weight, accumulator, generator or row-addressing word combinationally (hs_idx_i = REG_SEL -
// 64) and writes one at the clock edge, through the same one write per cycle of each array (a
// unit instruction writes only while the core advances, the host only while it is held).
`include "tess_core_types.svh"

module tess_amp #(
  parameter int Contexts = tess_params_pkg::NUM_CONTEXTS
) (
  input  logic           clk_i,
  input  logic           rst_ni,
  input  logic           advance_i,
  // the instruction in EX
  input  logic           amp_i,         // the instruction in EX is a unit instruction
  input  logic           commit_i,      // a unit instruction commits in EX
  input  logic [2:0]     op_i,          // its funct3 (AMP_F3_*)
  input  logic [2:0]     ctx_i,
  input  logic [31:0]    insn_i,
  input  logic [31:0]    rs1_i,         // x[rs1], x[rs2]: the conversions' operands
  input  logic [31:0]    rs2_i,
  output logic [127:0]   sa_data_o,     // AMP.SA: the accumulator row, as the store's 16 bytes
  output logic [31:0]    rd_value_o,    // AMP.RD: acc[r][j]; a conversion's x or f result
  output logic [31:0]    row_off_o,     // an access's address less rs1: r * the row's stride
  output logic           row_skip_o,    // AMP.S/H/LA/SA of a row at or past the context's limit
  // M1: SRAM port B's 128-bit read data, one cycle after EX's request
  input  logic [127:0]   rdata_i,
  // checkpoint state while the core is held: REG_SEL - REG_SEL_AMP_W, of context hs_ctx_i
  input  logic           hs_we_i,
  input  logic [2:0]     hs_ctx_i,
  input  logic [6:0]     hs_idx_i,
  input  logic [31:0]    hs_wdata_i,
  output logic [31:0]    hs_rdata_o
);

  `include "tess_fpu_fma.svh"
  `include "tess_fp16.svh"

  localparam int Cols     = tess_params_pkg::AMP_COLS;
  localparam int Rows     = tess_params_pkg::AMP_ROWS;
  localparam int AccRows  = tess_params_pkg::AMP_ACC_ROWS;
  localparam int Banks    = tess_params_pkg::AMP_BANKS;
  localparam int RowBits  = 32 * Cols;  // one weight or accumulator row: 128 bits
  localparam logic [2:0] OpLw  = 3'(tess_params_pkg::AMP_F3_LW);
  localparam logic [2:0] OpS   = 3'(tess_params_pkg::AMP_F3_S);
  localparam logic [2:0] OpH   = 3'(tess_params_pkg::AMP_F3_H);
  localparam logic [2:0] OpCvt = 3'(tess_params_pkg::AMP_F3_CVT);
  localparam logic [2:0] CvtHs   = 3'(tess_params_pkg::AMP_CVT_HS);
  localparam logic [2:0] CvtHsSr = 3'(tess_params_pkg::AMP_CVT_HS_SR);
  localparam logic [2:0] CvtShLo = 3'(tess_params_pkg::AMP_CVT_SH_LO);
  localparam logic [2:0] CvtShHi = 3'(tess_params_pkg::AMP_CVT_SH_HI);
  localparam logic [2:0] CvtSeed = 3'(tess_params_pkg::AMP_CVT_SEED);
  localparam logic [2:0] CvtStride = 3'(tess_params_pkg::AMP_CVT_STRIDE);
  localparam logic [2:0] CvtRows   = 3'(tess_params_pkg::AMP_CVT_ROWS);
  localparam logic [31:0] SrSeed0 = 32'(tess_params_pkg::AMP_SR_SEED0);
  localparam logic [2:0] OpLa  = 3'(tess_params_pkg::AMP_F3_LA);
  localparam logic [2:0] OpSa  = 3'(tess_params_pkg::AMP_F3_SA);
  localparam logic [2:0] OpClr = 3'(tess_params_pkg::AMP_F3_CLR);

`ifndef __ICARUS__
  if ((Cols != 4) || (Rows != 4) || (AccRows != 8) || (Banks != 2) ||
      (tess_params_pkg::AMP_STEP_BYTES != 16)) begin : g_shape_error
    $error("tess_amp: the unit's shape (rtl/params.json AMP_*) must be 2 banks of 4x4, 8 rows");
  end
`endif

  // The state as unpacked arrays of 128-bit rows, indexed directly: a simulator reads or writes
  // one row per access (Verilator: four words), where one wide packed vector with variable
  // part-selects costs a shift over all of it on every cycle (docs/decisions.md, "Matrix unit in
  // the RTL"). acc_q[ctx * AccRows + r] is accumulator row r of a context, w_q[bank * Rows + k]
  // weight row k of a bank (W[b][k][j] in column j's 32 bits). The rows are not reset: a row
  // whose valid bit is clear reads as +0, so reset and the clears (AMP.CLR, AMP.SA with C) clear
  // bits instead of writing rows (a reset loop over the rows costs a simulator a pending write
  // per row on every clock).
  localparam int AccEntries = Contexts * AccRows;
  localparam int WEntries   = Banks * Rows;
  localparam int AccIdxBits = $clog2(AccEntries);
  localparam int WIdxBits   = $clog2(WEntries);
  logic [RowBits-1:0]       acc_q [AccEntries];
  logic [RowBits-1:0]       w_q   [WEntries];
  logic [2**AccIdxBits-1:0] acc_valid_q;
  logic [2**WIdxBits-1:0]   w_valid_q;

  // EX: the fields of the instruction (docs/tile.md, "Encoding").
  logic [2:0] ex_row;  // r: an accumulator row, or (AMP.LW) a weight row 0..3
  logic [1:0] ex_col;
  logic       ex_bank, ex_clear;
  logic [2:0] ex_cvt;
  assign ex_row   = {insn_i[tess_params_pkg::AMP_ROW_HI_BIT],
                     insn_i[tess_params_pkg::AMP_ROW_LSB +: 2]};
  assign ex_col   = insn_i[tess_params_pkg::AMP_COL_LSB +: 2];
  assign ex_bank  = insn_i[tess_params_pkg::AMP_BANK_BIT];
  assign ex_clear = insn_i[tess_params_pkg::AMP_CLEAR_BIT];
  assign ex_cvt   = insn_i[tess_params_pkg::AMP_CVT_LSB +: 3];
  logic [24:0] unused_insn;  // rs2, rs1, funct3, rd, opcode: decoded elsewhere
  assign unused_insn = insn_i[24:0];

  // Row addressing, per context (reset: strides 0, limit AccRows: every row at rs1, none skipped).
  localparam int LimitBits = $clog2(AccRows + 1);
  logic [32*Contexts-1:0]        stride_s_q, stride_c_q;
  logic [LimitBits*Contexts-1:0] limit_q;
  logic [31:0]                   ex_stride;
  // Only for a unit instruction of a row (AMP.S, AMP.H, AMP.LA, AMP.SA) in EX: on any other cycle
  // a simulator selects no stride or limit (funct3 alone names these for every instruction).
  always_comb begin
    ex_stride  = '0;
    row_off_o  = '0;
    row_skip_o = 1'b0;
    if (amp_i && ((op_i == OpS) || (op_i == OpH) || (op_i == OpLa) || (op_i == OpSa))) begin
      ex_stride  = ((op_i == OpS) || (op_i == OpH)) ? stride_s_q[32*ctx_i +: 32]
                                                   : stride_c_q[32*ctx_i +: 32];
      // r * stride, r < 8: three shifted copies.
      row_off_o  = (ex_row[0] ? ex_stride : '0) + (ex_row[1] ? ex_stride << 1 : '0) +
                   (ex_row[2] ? ex_stride << 2 : '0);
      row_skip_o = 32'(ex_row) >= 32'(limit_q[LimitBits*ctx_i +: LimitBits]);
    end
  end

  // ctx_i < Contexts whenever the core issues (it names a context of this tile).
  logic [AccIdxBits-1:0] ex_acc_idx;
  logic [RowBits-1:0]    ex_acc_row;
  assign ex_acc_idx = AccIdxBits'(32'(ctx_i) * AccRows + 32'(ex_row));
  assign ex_acc_row = acc_valid_q[ex_acc_idx] ? acc_q[ex_acc_idx] : '0;
  assign sa_data_o  = ex_acc_row;

  // Host access (checkpoint state): hs_idx_i 0..31 the weight W[b][k][j] at 16b + 4k + j (the
  // tile's, whatever the context), 32..63 acc[r][j] of context hs_ctx_i at 32 + 4r + j, 64 that
  // context's generator, 65 and 66 its strides, 67 its row limit (REG_SEL_AMP_* less 64; the
  // chip refuses REG_SEL past them).
  localparam int HsAcc = tess_params_pkg::REG_SEL_AMP_ACC - tess_params_pkg::REG_SEL_AMP_W;
  localparam int HsSr  = tess_params_pkg::REG_SEL_AMP_SR - tess_params_pkg::REG_SEL_AMP_W;
  localparam int HsStrideS = tess_params_pkg::REG_SEL_AMP_STRIDE_S - tess_params_pkg::REG_SEL_AMP_W;
  localparam int HsStrideC = tess_params_pkg::REG_SEL_AMP_STRIDE_C - tess_params_pkg::REG_SEL_AMP_W;
  localparam int HsRows    = tess_params_pkg::REG_SEL_AMP_ROWS - tess_params_pkg::REG_SEL_AMP_W;
  logic                  hs_w_sel, hs_acc_sel, hs_sr_sel, hs_w_we, hs_acc_we, hs_sr_we;
  logic                  hs_ss_sel, hs_sc_sel, hs_rows_sel;
  logic [1:0]            hs_col;
  logic [WIdxBits-1:0]   hs_w_idx;
  logic [AccIdxBits-1:0] hs_acc_idx;
  logic [RowBits-1:0]    hs_w_row, hs_acc_row, hs_row_d;
  assign hs_w_sel   = 32'(hs_idx_i) < HsAcc;
  assign hs_acc_sel = !hs_w_sel && (32'(hs_idx_i) < HsSr);
  assign hs_sr_sel  = 32'(hs_idx_i) == HsSr;
  assign hs_ss_sel  = 32'(hs_idx_i) == HsStrideS;
  assign hs_sc_sel  = 32'(hs_idx_i) == HsStrideC;
  assign hs_rows_sel = 32'(hs_idx_i) == HsRows;
  assign hs_col     = hs_idx_i[1:0];
  assign hs_w_idx   = WIdxBits'(hs_idx_i[4:2]);
  assign hs_acc_idx = AccIdxBits'(32'(hs_ctx_i) * AccRows + 32'(hs_idx_i[4:2]));
  assign hs_w_we    = hs_we_i && hs_w_sel;
  assign hs_acc_we  = hs_we_i && hs_acc_sel;
  assign hs_sr_we   = hs_we_i && hs_sr_sel;
  // Evaluated only while held: a running chip's simulator does not read the rows for the host.
  always_comb begin
    hs_w_row   = '0;
    hs_acc_row = '0;
    hs_row_d   = '0;
    hs_rdata_o = '0;
    if (!advance_i) begin
      hs_w_row   = w_valid_q[hs_w_idx] ? w_q[hs_w_idx] : '0;
      hs_acc_row = acc_valid_q[hs_acc_idx] ? acc_q[hs_acc_idx] : '0;
      hs_row_d   = hs_w_sel ? hs_w_row : hs_acc_row;
      hs_row_d[32*hs_col +: 32] = hs_wdata_i;
      if (hs_w_sel) begin
        hs_rdata_o = hs_w_row[32*hs_col +: 32];
      end else if (hs_acc_sel) begin
        hs_rdata_o = hs_acc_row[32*hs_col +: 32];
      end else if (hs_sr_sel) begin
        hs_rdata_o = sr_q[32*hs_ctx_i +: 32];
      end else if (hs_ss_sel) begin
        hs_rdata_o = stride_s_q[32*hs_ctx_i +: 32];
      end else if (hs_sc_sel) begin
        hs_rdata_o = stride_c_q[32*hs_ctx_i +: 32];
      end else if (hs_rows_sel) begin
        hs_rdata_o = 32'(limit_q[LimitBits*hs_ctx_i +: LimitBits]);
      end
    end
  end

  // The stochastic-rounding generators, one xorshift32 state per context (reset AMP_SR_SEED0),
  // stepped by AMP.CVTHS.SR and set by AMP.SEED at the end of EX: a context's next instruction
  // (c+6) sees the new state.
  logic [32*Contexts-1:0] sr_q, sr_d;
  logic [31:0]            ex_sr_next;
  logic                   sr_we;
  assign ex_sr_next = amp_sr_step(sr_q[32*ctx_i +: 32]);

  // EX: AMP.RD's value, or a conversion's (evaluated only for a conversion in EX).
  always_comb begin
    rd_value_o = ex_acc_row[32*ex_col +: 32];
    sr_we      = 1'b0;
    sr_d       = sr_q;
    if (commit_i && (op_i == OpCvt)) begin
      unique case (ex_cvt)
        CvtHs:   rd_value_o = {f32_to_f16(rs2_i, 1'b0, 16'd0), f32_to_f16(rs1_i, 1'b0, 16'd0)};
        CvtHsSr: begin
          rd_value_o = {f32_to_f16(rs2_i, 1'b1, ex_sr_next[31:16]),
                        f32_to_f16(rs1_i, 1'b1, ex_sr_next[15:0])};
          sr_we      = 1'b1;
          sr_d[32*ctx_i +: 32] = ex_sr_next;
        end
        CvtShLo: rd_value_o = f16_to_f32(rs1_i[15:0]);
        CvtShHi: rd_value_o = f16_to_f32(rs1_i[31:16]);
        CvtSeed: begin
          sr_we = 1'b1;
          sr_d[32*ctx_i +: 32] = (rs1_i != 32'd0) ? rs1_i : SrSeed0;
        end
        default: ;
      endcase
    end
    // The host's write (only while held: no conversion commits then). 0 gives AMP_SR_SEED0, as
    // AMP.SEED does, so the state is never 0.
    if (hs_sr_we) begin
      sr_we = 1'b1;
      sr_d[32*hs_ctx_i +: 32] = (hs_wdata_i != 32'd0) ? hs_wdata_i : SrSeed0;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      sr_q <= {Contexts{SrSeed0}};
    end else if (sr_we) begin
      sr_q <= sr_d;
    end
  end

  // AMP.STRIDE and AMP.ROWS at the end of EX (the context's next instruction sees them), or the
  // host's write while held. A limit above AccRows is stored as AccRows.
  logic cfg_stride, cfg_rows;
  assign cfg_stride = commit_i && (op_i == OpCvt) && (ex_cvt == CvtStride);
  assign cfg_rows   = commit_i && (op_i == OpCvt) && (ex_cvt == CvtRows);
  function automatic logic [LimitBits-1:0] clamp_limit(input logic [31:0] v);
    clamp_limit = (v > 32'(AccRows)) ? LimitBits'(AccRows) : LimitBits'(v);
  endfunction

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      stride_s_q <= '0;
      stride_c_q <= '0;
      limit_q    <= {Contexts{LimitBits'(AccRows)}};
    end else begin
      if (cfg_stride) begin
        stride_s_q[32*ctx_i +: 32] <= rs1_i;
        stride_c_q[32*ctx_i +: 32] <= rs2_i;
      end
      if (cfg_rows) begin
        limit_q[LimitBits*ctx_i +: LimitBits] <= clamp_limit(rs1_i);
      end
      if (hs_we_i && hs_ss_sel) begin
        stride_s_q[32*hs_ctx_i +: 32] <= hs_wdata_i;
      end
      if (hs_we_i && hs_sc_sel) begin
        stride_c_q[32*hs_ctx_i +: 32] <= hs_wdata_i;
      end
      if (hs_we_i && hs_rows_sel) begin
        limit_q[LimitBits*hs_ctx_i +: LimitBits] <= clamp_limit(hs_wdata_i);
      end
    end
  end

  // EX -> M1: what the instruction does to the state.
  logic                  m1_valid_q;
  logic [2:0]            m1_op_q;
  logic                  m1_clear_q;
  logic [AccIdxBits-1:0] m1_acc_idx_q;   // the accumulator row (AMP.LA, AMP.S, AMP.SA)
  logic [AccIdxBits-1:0] m1_ctx_base_q;  // the context's first row (AMP.CLR)
  logic [WIdxBits-1:0]   m1_w_idx_q;     // the weight row (AMP.LW)
  logic [WIdxBits-1:0]   m1_w_base_q;    // the bank's first row (AMP.S)

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      m1_valid_q    <= 1'b0;
      m1_op_q       <= '0;
      m1_clear_q    <= 1'b0;
      m1_acc_idx_q  <= '0;
      m1_ctx_base_q <= '0;
      m1_w_idx_q    <= '0;
      m1_w_base_q   <= '0;
    end else if (advance_i) begin
      m1_valid_q    <= commit_i && !row_skip_o;
      m1_op_q       <= op_i;
      m1_clear_q    <= ex_clear;
      m1_acc_idx_q  <= ex_acc_idx;
      m1_ctx_base_q <= AccIdxBits'(32'(ctx_i) * AccRows);
      m1_w_idx_q    <= WIdxBits'(32'(ex_bank) * Rows + 32'(ex_row[1:0]));
      m1_w_base_q   <= WIdxBits'(32'(ex_bank) * Rows);
    end
  end

  // M1: the load data, kept while the pipeline pauses (port B serves the host then), as
  // tess_core_wb keeps a load's word.
  logic         adv_prev_q;
  logic [127:0] hold_q, m1_data;
  assign m1_data = adv_prev_q ? rdata_i : hold_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      adv_prev_q <= 1'b0;
      hold_q     <= '0;
    end else begin
      adv_prev_q <= advance_i;
      hold_q     <= m1_data;
    end
  end

  // M1: one row write (weights or accumulators), or the context's four accumulator rows cleared.
  logic               acc_we, w_we, row_clear, ctx_clear;
  logic [RowBits-1:0] row_d;
  logic [31:0]        sum;  // one column's chain
  logic [WIdxBits-1:0] w_k;  // its weight row k (AMP.H: the row of W16[k])
  logic [RowBits-1:0]  w_row;

`ifdef SYNTHESIS
  // Synthesis: the same chains as tess_amp_fma instances (Yosys elaborates one FMA once, where
  // function bodies inlined in one process take it tens of minutes). AMP.S uses the first four
  // of each column's eight; AMP.H feeds the same four its widened halves k = 0..3 and four more
  // k = 4..7: 32 FMAs, not 48.
  logic [RowBits-1:0] m1_acc_row;
  logic [RowBits-1:0] chain_row, chain_row_h;
  logic               m1_half;
  assign m1_half    = m1_op_q == OpH;
  assign m1_acc_row = acc_valid_q[m1_acc_idx_q] ? acc_q[m1_acc_idx_q] : '0;
  for (genvar j = 0; j < Cols; j++) begin : g_col
    logic [31:0] part [2*Rows+1];
    assign part[0] = m1_acc_row[32*j +: 32];
    for (genvar k = 0; k < 2 * Rows; k++) begin : g_k
      logic [WIdxBits-1:0] w_idx, wh_idx;
      logic [RowBits-1:0]  w_row_k, wh_row;
      logic [31:0]         a_k, b_k;
      assign wh_idx  = m1_w_base_q + WIdxBits'(k / 2);
      assign wh_row  = w_valid_q[wh_idx] ? w_q[wh_idx] : '0;
      if (k < Rows) begin : g_shared
        assign w_idx   = m1_w_base_q + WIdxBits'(k);
        assign w_row_k = w_valid_q[w_idx] ? w_q[w_idx] : '0;
        assign a_k = m1_half ? f16_to_f32(m1_data[16*k +: 16]) : m1_data[32*k +: 32];
        assign b_k = m1_half ? f16_to_f32(wh_row[16*(4*(k%2)+j) +: 16]) : w_row_k[32*j +: 32];
      end else begin : g_half
        assign w_idx   = '0;
        assign w_row_k = '0;
        assign a_k = f16_to_f32(m1_data[16*k +: 16]);
        assign b_k = f16_to_f32(wh_row[16*(4*(k%2)+j) +: 16]);
      end
      tess_amp_fma u_fma (
        .a_i (a_k),
        .b_i (b_k),
        .c_i (part[k]),
        .y_o (part[k+1])
      );
    end
    assign chain_row[32*j +: 32]   = part[Rows];
    assign chain_row_h[32*j +: 32] = part[2*Rows];
  end
`endif

  // Nothing here reads the state unless an AMP.S is in M1: an idle unit costs a simulator a
  // test of m1_valid_q per cycle.
  always_comb begin
    sum       = '0;
    w_k       = '0;
    w_row     = '0;
    acc_we    = 1'b0;
    w_we      = 1'b0;
    row_clear = 1'b0;
    ctx_clear = 1'b0;
    row_d     = '0;
    if (m1_valid_q && advance_i) begin
      unique case (m1_op_q)
        OpLw: begin
          w_we  = 1'b1;
          row_d = m1_data;
        end
        OpLa: begin
          acc_we = 1'b1;
          row_d  = m1_data;
        end
        OpS: begin
          // acc[j] = fma(x3, W[3][j], fma(x2, W[2][j], fma(x1, W[1][j], fma(x0, W[0][j], acc[j]))))
          acc_we = 1'b1;
`ifdef SYNTHESIS
          row_d = chain_row;
`else
          for (int j = 0; j < Cols; j++) begin
            sum = acc_valid_q[m1_acc_idx_q] ? acc_q[m1_acc_idx_q][32*j +: 32] : '0;
            for (int k = 0; k < Rows; k++) begin
              w_k = m1_w_base_q + WIdxBits'(k);
              sum = fma_rne(m1_data[32*k +: 32], w_valid_q[w_k] ? w_q[w_k][32*j +: 32] : '0, sum);
            end
            row_d[32*j +: 32] = sum;
          end
`endif
        end
        OpH: begin
          // acc[j] = the chain over k = 0..7 of fma(w(x_k), w(W16[k][j]), acc[j]), W16[k][j] being
          // bits 16*(4*(k%2)+j) of weight row k/2 and w the exact widening.
          acc_we = 1'b1;
`ifdef SYNTHESIS
          row_d = chain_row_h;
`else
          for (int j = 0; j < Cols; j++) begin
            sum = acc_valid_q[m1_acc_idx_q] ? acc_q[m1_acc_idx_q][32*j +: 32] : '0;
            for (int k = 0; k < 2 * Rows; k++) begin
              w_k   = m1_w_base_q + WIdxBits'(k / 2);
              w_row = w_valid_q[w_k] ? w_q[w_k] : '0;
              sum   = fma_rne(f16_to_f32(m1_data[16*k +: 16]),
                              f16_to_f32(w_row[16*(4*(k%2)+j) +: 16]), sum);
            end
            row_d[32*j +: 32] = sum;
          end
`endif
        end
        OpSa: row_clear = m1_clear_q;
        OpClr: ctx_clear = 1'b1;
        default: ;
      endcase
    end
  end

  // The rows take one write per cycle, an instruction's (advancing) or the host's (held); the
  // valid bits are reset and cleared.
  logic                  acc_wr, w_wr;
  logic [AccIdxBits-1:0] acc_widx;
  logic [WIdxBits-1:0]   w_widx;
  logic [RowBits-1:0]    wr_row;
  assign acc_wr   = acc_we || hs_acc_we;
  assign w_wr     = w_we || hs_w_we;
  assign acc_widx = hs_acc_we ? hs_acc_idx : m1_acc_idx_q;
  assign w_widx   = hs_w_we ? hs_w_idx : m1_w_idx_q;
  assign wr_row   = hs_we_i ? hs_row_d : row_d;

  always_ff @(posedge clk_i) begin
    if (acc_wr) begin
      acc_q[acc_widx] <= wr_row;
    end
    if (w_wr) begin
      w_q[w_widx] <= wr_row;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      acc_valid_q <= '0;
      w_valid_q   <= '0;
    end else begin
      if (acc_wr) begin
        acc_valid_q[acc_widx] <= 1'b1;
      end
      if (row_clear) begin
        acc_valid_q[m1_acc_idx_q] <= 1'b0;
      end
      if (ctx_clear) begin
        acc_valid_q[m1_ctx_base_q +: AccRows] <= '0;
      end
      if (w_wr) begin
        w_valid_q[w_widx] <= 1'b1;
      end
    end
  end

endmodule
