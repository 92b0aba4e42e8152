// Tile MMIO page (docs/tile.md, "MMIO registers") at tess_params_pkg::MMIO_BASE: decodes one
// word access from EX into events for the core (EXIT, CONSOLE, WAIT, DONE, RUN w) and holds
// RUN_ARG and XCHG_PROG (docs/chip.md: the exchange program of the next sync, cleared at its
// release; SYNC arrives at a sync). Access checks: only word accesses to mapped registers in their direction, else an
// access fault; RUN/WAIT by a worker, DONE by the supervisor and RUN of a running worker are
// context misuse, and so are XCHG_PROG/SYNC writes by a worker and a SYNC while a worker runs.
// Read data and events are combinational in EX; RUN_ARG updates at the clock edge.
module tess_mmio #(
  parameter int Contexts = tess_params_pkg::NUM_CONTEXTS
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic                req_i,        // aligned access to the MMIO page, no earlier trap
  input  logic                we_i,
  input  logic                word_i,       // access size is a word
  input  logic [11:0]         offset_i,     // byte offset in the page
  input  logic [31:0]         wdata_i,
  input  logic [2:0]          ctx_i,
  input  logic [Contexts-1:0] running_i,    // context state as seen in EX
  input  logic                commit_i,     // the access commits: registers may change
  input  logic                xchg_clear_i, // a sync releases this tile: XCHG_PROG := 0
  output logic [31:0]         rdata_o,
  output logic                access_fault_o,
  output logic                misuse_o,
  output logic                exit_o,
  output logic                console_o,
  output logic                wait_o,
  output logic                done_o,
  output logic                run_o,
  output logic [2:0]          run_ctx_o,    // worker started by run_o
  output logic [31:0]         run_arg_o,
  output logic                sync_o,       // SYNC written (descriptor = wdata_i)
  output logic [31:0]         xchg_prog_o,
  // checkpoint state written by the host while the core is held (docs/checkpoint.md)
  input  logic                hs_run_arg_we_i,
  input  logic                hs_xchg_we_i,
  input  logic [31:0]         hs_wdata_i
);


  // Register offsets within the page, from the chip parameters.
  localparam int Base = tess_params_pkg::MMIO_BASE;
  localparam logic [11:0] OffExit    = 12'(tess_params_pkg::MMIO_EXIT - Base);
  localparam logic [11:0] OffConsole = 12'(tess_params_pkg::MMIO_CONSOLE - Base);
  localparam logic [11:0] OffWait    = 12'(tess_params_pkg::MMIO_WAIT - Base);
  localparam logic [11:0] OffDone    = 12'(tess_params_pkg::MMIO_DONE - Base);
  localparam logic [11:0] OffRunArg  = 12'(tess_params_pkg::MMIO_RUN_ARG - Base);
  localparam logic [11:0] OffRunBase = 12'(tess_params_pkg::MMIO_RUN_BASE - Base);
  localparam logic [11:0] OffWorkers = 12'(tess_params_pkg::MMIO_WORKERS - Base);
  localparam logic [11:0] OffXchg    = 12'(tess_params_pkg::MMIO_XCHG_PROG - Base);
  localparam logic [11:0] OffSync    = 12'(tess_params_pkg::MMIO_SYNC - Base);

  logic [31:0] run_arg_q, run_arg_d;
  logic [31:0] xchg_q, xchg_d;
  logic        is_run;
  logic [11:0] run_rel;
  logic [2:0]  run_ctx;
  logic [7:0]  running;       // running_i padded to the eight values of a context index
  logic        mapped_r;
  logic        mapped_w;
  logic        supervisor;
  logic        ok;

  assign supervisor = ctx_i == 3'd0;
  assign run_rel    = offset_i - OffRunBase;
  assign is_run     = (offset_i >= OffRunBase) && (run_rel < 12'(4 * (Contexts - 1)));
  assign run_ctx    = 3'(run_rel[11:2] + 10'd1);
  assign running    = 8'(running_i);

  always_comb begin
    mapped_r = 1'b0;
    mapped_w = 1'b0;
    unique case (offset_i)
      OffExit, OffConsole, OffWait, OffDone, OffSync: mapped_w = 1'b1;
      OffRunArg, OffXchg: begin
        mapped_r = 1'b1;
        mapped_w = 1'b1;
      end
      OffWorkers: mapped_r = 1'b1;
      default:    mapped_w = is_run;
    endcase
  end

  assign access_fault_o = req_i && (!word_i || (we_i ? !mapped_w : !mapped_r));
  assign ok             = req_i && !access_fault_o;

  always_comb begin
    misuse_o = 1'b0;
    if (ok && we_i) begin
      if (is_run) begin
        misuse_o = !supervisor || running[run_ctx];
      end else if (offset_i == OffWait) begin
        misuse_o = !supervisor;
      end else if (offset_i == OffDone) begin
        misuse_o = supervisor;
      end else if (offset_i == OffXchg) begin
        misuse_o = !supervisor;
      end else if (offset_i == OffSync) begin
        // Every DONE committed before this EX counts (running_i is the state as seen here).
        misuse_o = !supervisor || (running_i[Contexts-1:1] != '0);
      end
    end
  end

  assign exit_o    = ok && we_i && (offset_i == OffExit);
  assign console_o = ok && we_i && (offset_i == OffConsole);
  assign wait_o    = ok && we_i && !misuse_o && (offset_i == OffWait);
  assign done_o    = ok && we_i && !misuse_o && (offset_i == OffDone);
  assign run_o     = ok && we_i && !misuse_o && is_run;
  assign run_ctx_o = run_ctx;
  assign run_arg_o = run_arg_q;
  assign sync_o    = ok && we_i && !misuse_o && (offset_i == OffSync);
  assign xchg_prog_o = xchg_q;

  always_comb begin
    rdata_o = '0;
    if (offset_i == OffWorkers) begin
      rdata_o = 32'(running_i) & ~32'd1;
    end else if (offset_i == OffRunArg) begin
      rdata_o = run_arg_q;
    end else if (offset_i == OffXchg) begin
      rdata_o = xchg_q;
    end
  end

  always_comb begin
    run_arg_d = run_arg_q;
    if (ok && commit_i && we_i && (offset_i == OffRunArg)) begin
      run_arg_d = wdata_i;
    end
    if (hs_run_arg_we_i) begin
      run_arg_d = hs_wdata_i;
    end
  end

  // A write in the release cycle cannot happen: the supervisor is blocked at a sync until then.
  always_comb begin
    xchg_d = xchg_q;
    if (xchg_clear_i) begin
      xchg_d = '0;
    end else if (ok && commit_i && we_i && !misuse_o && (offset_i == OffXchg)) begin
      xchg_d = wdata_i;
    end
    if (hs_xchg_we_i) begin
      xchg_d = hs_wdata_i;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      run_arg_q <= '0;
      xchg_q    <= '0;
    end else begin
      run_arg_q <= run_arg_d;
      xchg_q    <= xchg_d;
    end
  end

endmodule
