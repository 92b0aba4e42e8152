// Reply fill of the link bridge (tess_link_bridge, docs/link-protocol.md "Operations"): byte idx_i
// of the reply the request sequencer (tess_link_seq) fills into the frame buffer, a byte per
// cycle: INFO (a constant: the chip's parameters), CTRL_READ (a control register or a bridge
// register), STATS (a tile's counters: control registers the sequencer selects with TILE_SEL and
// CTX_SEL, and the tile's cycle counter) or the run result of WAIT (the chip's state, cycle count,
// exit code and error registers). ctl_addr_o is the control register the byte comes from (the
// chip answers it combinationally, ctl_rdata_i). The INFO reply's extensions word is assembled
// here, in one place (info_ext).
// Timing: combinational.
module tess_link_reply #(
  parameter int NumTiles    = tess_params_pkg::NUM_TILES,
  parameter int MemBytes    = tess_params_pkg::TILE_MEM_BYTES,
  parameter int Contexts    = tess_params_pkg::NUM_CONTEXTS,
  parameter int MaxPayload  = 1024,
  parameter bit HasFpu      = tess_params_pkg::HAS_FPU != 0,
  parameter bit HasMulDiv   = tess_params_pkg::HAS_MULDIV != 0,
  parameter int CounterBits = tess_params_pkg::COUNTER_BITS,
  parameter bit HasExchange   = tess_params_pkg::HAS_EXCHANGE != 0,
  parameter bit HasCheckpoint = tess_params_pkg::HAS_CHECKPOINT != 0,
  parameter bit MatrixUnit    = tess_params_pkg::MATRIX_UNIT != 0,
  localparam int Tw = (NumTiles > 1) ? $clog2(NumTiles) : 1
) (
  input  logic [1:0]             fill_i,         // tess_bridge_pkg::fill_e
  input  logic [6:0]             idx_i,          // the reply's byte
  input  logic [31:0]            addr_i,         // the address field as kept (higher bits 0)
  input  logic                   addr_hi_i,      // ... with a bit set beyond what is kept
  input  logic [Tw-1:0]          tile_i,
  input  logic [3:0]             state_i,
  input  logic [31:0]            ctl_rdata_i,
  input  logic [NumTiles*64-1:0] tile_cycle_i,
  input  logic [31:0]            bad_frames_i,   // the bridge registers
  input  logic [31:0]            cons_lost_i,
  input  logic [31:0]            clock_i,
  output logic [11:0]            ctl_addr_o,
  output logic [7:0]             byte_o,
  output logic                   breg_hit_o,     // the address is a bridge register
  output logic [2:0]             stats_ctx_o,    // context of STATS words 4..15
  output logic                   ctx_word_o      // this STATS byte starts a context's words
);

  localparam logic [11:0] CrStatus = 12'(tess_params_pkg::CR_STATUS);
  localparam logic [3:0]  StSync   = 4'(tess_params_pkg::ST_HOST_SYNC);
  localparam logic [3:0]  StHalted = 4'(tess_params_pkg::ST_HALTED);
  localparam logic [3:0]  StError  = 4'(tess_params_pkg::ST_ERROR);

  logic [4:0] fw;                         // word of the reply
  logic [1:0] fb;                         // byte of the word
  assign fw = idx_i[6:2];
  assign fb = idx_i[1:0];
  logic [2:0] stats_ctx;                  // context of STATS words 4..15
  logic       ctx_absent;                 // ... one the tiles do not have (its words read 0)
  assign stats_ctx  = 3'(idx_i[6:3] - 4'd2);
  assign ctx_absent = (32'(stats_ctx) >= 32'(Contexts));

  // INFO: version, tiles, SRAM bytes, contexts, max payload, counter bits, extensions, backend
  // name "board".
  // The extensions word: one bit per feature of the chip (rtl/params.json, LINK_INFO_EXT_*).
  localparam logic [31:0] InfoExt =
      (HasFpu ? tess_params_pkg::LINK_INFO_EXT_F : 32'd0) |
      (HasMulDiv ? tess_params_pkg::LINK_INFO_EXT_M : 32'd0) |
      (HasExchange ? tess_params_pkg::LINK_INFO_EXT_EXCHANGE : 32'd0) |
      (HasCheckpoint ? tess_params_pkg::LINK_INFO_EXT_CHECKPOINT : 32'd0) |
      (MatrixUnit ? tess_params_pkg::LINK_INFO_EXT_MATRIX : 32'd0);
  logic [31:0] info_ext;
  logic [31:0] info_word;
  assign info_ext = InfoExt;
  always_comb begin
    unique case (fw[3:0])
      4'd0:    info_word = tess_params_pkg::LINK_VERSION;
      4'd1:    info_word = 32'(NumTiles);
      4'd2:    info_word = 32'(MemBytes);
      4'd3:    info_word = 32'(Contexts);
      4'd4:    info_word = 32'(MaxPayload);
      4'd5:    info_word = 32'(CounterBits);
      4'd6:    info_word = info_ext;
      4'd7:    info_word = 32'h72616F62;  // "boar"
      4'd8:    info_word = 32'h00000064;  // "d"
      default: info_word = '0;
    endcase
  end

  always_comb begin
    ctl_addr_o = CrStatus;
    unique case (fill_i)
      tess_bridge_pkg::FILL_CTL: ctl_addr_o = addr_i[11:0];
      tess_bridge_pkg::FILL_STATS: begin
        unique case (fw)
          5'd2:  ctl_addr_o = 12'(tess_params_pkg::CR_T_INSTR_LO);
          5'd3:  ctl_addr_o = 12'(tess_params_pkg::CR_T_INSTR_HI);
          5'd16: ctl_addr_o = 12'(tess_params_pkg::CR_T_IDLE_LO);
          5'd17: ctl_addr_o = 12'(tess_params_pkg::CR_T_IDLE_HI);
          5'd18: ctl_addr_o = 12'(tess_params_pkg::CR_T_SYNCWAIT_LO);
          5'd19: ctl_addr_o = 12'(tess_params_pkg::CR_T_SYNCWAIT_HI);
          5'd20: ctl_addr_o = 12'(tess_params_pkg::CR_T_EXCH_LO);
          5'd21: ctl_addr_o = 12'(tess_params_pkg::CR_T_EXCH_HI);
          5'd22: ctl_addr_o = 12'(tess_params_pkg::CR_T_STATE);
          5'd23: ctl_addr_o = 12'(tess_params_pkg::CR_T_EXIT);
          // words 4..15: instructions of context (w-4)/2 (CTX_SEL), low word first
          default: ctl_addr_o = fw[0] ? 12'(tess_params_pkg::CR_C_INSTRET_HI) :
                                      12'(tess_params_pkg::CR_C_INSTRET_LO);
        endcase
      end
      tess_bridge_pkg::FILL_RESULT: begin
        unique case (fw[3:0])
          4'd1:    ctl_addr_o = 12'(tess_params_pkg::CR_CYCLE_LO);
          4'd2:    ctl_addr_o = 12'(tess_params_pkg::CR_CYCLE_HI);
          4'd3:    ctl_addr_o = 12'(tess_params_pkg::CR_T_EXIT);
          4'd4:    ctl_addr_o = 12'(tess_params_pkg::CR_ERR_TILE);
          4'd5:    ctl_addr_o = 12'(tess_params_pkg::CR_ERR_CONTEXT);
          4'd6:    ctl_addr_o = 12'(tess_params_pkg::CR_ERR_PC);
          4'd7:    ctl_addr_o = 12'(tess_params_pkg::CR_ERR_CAUSE);
          4'd8:    ctl_addr_o = 12'(tess_params_pkg::CR_ERR_VALUE);
          default: ctl_addr_o = CrStatus;      // words 0 and 9
        endcase
      end
      default: ;
    endcase
  end

  // Bridge registers (full 32-bit offset match).
  logic breg_bad, breg_lost, breg_clock, breg_hit;
  assign breg_bad   = !addr_hi_i && (addr_i == tess_params_pkg::CR_LINK_BAD_FRAMES);
  assign breg_lost  = !addr_hi_i && (addr_i == tess_params_pkg::CR_LINK_CONSOLE_LOST);
  assign breg_clock = !addr_hi_i && (addr_i == tess_params_pkg::CR_LINK_CLOCK);
  assign breg_hit   = breg_bad || breg_lost || breg_clock;

  // The requested tile's cycle counter as 32-bit words.
  localparam int Yw = $clog2(NumTiles * 2);
  logic [Yw-1:0] cycle_idx;               // the word of the requested tile's cycle counter
  assign cycle_idx = Yw'(32'(tile_i) * 32'd2 + 32'(fw[0]));

  // The byte comes from one of: the control register read (byte bsel, masked), a bridge register,
  // the tile's cycle counter, a constant (INFO, the stop reason), or is 0. Each source is cut to
  // its byte first, so that the selection works on bytes.
  logic [1:0]  bsel;
  logic        fzero;                     // the byte is 0
  logic [7:0]  fmask;
  logic        use_breg, use_tcyc, use_reason;
  logic [7:0]  reason;                    // stop reason of the run result
  logic [7:0]  rd_byte, breg_byte, tcyc_byte, info_byte;
  logic [31:0] breg_word;
  always_comb begin
    if (state_i == StHalted) begin
      reason = 8'd0;
    end else if (state_i == StError) begin
      reason = 8'd1;
    end else if (state_i == StSync) begin
      reason = ctl_rdata_i[4] ? 8'd3 : 8'd4;
    end else begin
      reason = 8'd2;
    end
  end

  always_comb begin
    bsel       = fb;
    fzero      = 1'b0;
    fmask      = 8'hFF;
    use_breg   = 1'b0;
    use_tcyc   = 1'b0;
    use_reason = 1'b0;
    unique case (fill_i)
      tess_bridge_pkg::FILL_CTL: use_breg = breg_hit;
      tess_bridge_pkg::FILL_STATS: begin
        use_tcyc = (fw[4:1] == 4'd0);
        if (fw == 5'd22) fmask = {7'd0, fb == 2'd0};
        // The reply has six contexts' counts; those of contexts beyond Contexts are 0.
        fzero = (fw[4:1] >= 4'd2) && (fw[4:1] <= 4'd7) && ctx_absent;
      end
      tess_bridge_pkg::FILL_RESULT: begin
        unique case (fw[3:0])
          4'd0: begin
            use_reason = 1'b1;
            fzero      = (fb != 2'd0);
          end
          4'd3: fzero = (state_i != StHalted);
          4'd4, 4'd5, 4'd6, 4'd7, 4'd8: fzero = (state_i != StError);
          4'd9: begin
            bsel  = {1'b1, fb[0]};            // the sync id, STATUS[31:16]
            fzero = (state_i != StSync) || fb[1];
          end
          default: ;
        endcase
      end
      default: ;
    endcase
  end

  assign breg_word = breg_bad ? bad_frames_i : (breg_lost ? cons_lost_i : clock_i);
  assign rd_byte   = ctl_rdata_i[8*bsel +: 8] & fmask;
  assign breg_byte = breg_word[8*fb +: 8];
  assign tcyc_byte = tile_cycle_i[8*{cycle_idx, fb} +: 8];
  assign info_byte = info_word[8*fb +: 8];

  always_comb begin
    if (fill_i == tess_bridge_pkg::FILL_INFO) begin
      byte_o = info_byte;
    end else if (fzero) begin
      byte_o = 8'd0;
    end else if (use_reason) begin
      byte_o = reason;
    end else if (use_breg) begin
      byte_o = breg_byte;
    end else if (use_tcyc) begin
      byte_o = tcyc_byte;
    end else begin
      byte_o = rd_byte;
    end
  end

  assign breg_hit_o  = breg_hit;
  assign stats_ctx_o = stats_ctx;
  assign ctx_word_o  = (fill_i == tess_bridge_pkg::FILL_STATS) && (idx_i[2:0] == 3'd0) &&
                       (idx_i[6:3] >= 4'd2) && (idx_i[6:3] <= 4'd7) && !ctx_absent;

endmodule
