// One tessera tile: SRAM (MemBytes, dual-port, synchronous read), the barrel-threaded core and
// its MMIO page, and a host memory port (docs/tile.md).
//
// Ports:
//   run_i        0 = held (the host may use the memory port), 1 = run. The first cycle with
//                run_i = 1 after reset is cycle 0; run_i = 0 later pauses the whole pipeline.
//   host_*       memory access while run_i = 0: one word per cycle, byte enables on writes,
//                read data on host_rdata_o one cycle after the request. Ignored while running.
//   halting_o    an EXIT or trap has stopped issue (cycle_o is final); older instructions drain.
//   halted_o     the tile halted (EXIT or trap) and every older instruction has retired;
//                exit_code_o / trap_* say why. cycle_o is then the tile's cycle count h + 1.
//   console_*    one byte per CONSOLE store, in its EX cycle.
//   cycle_o, instret_o (per context), idle_o: counters since reset (TileStats).
//   retire_*     retirement trace: one record per retiring instruction in its WB cycle;
//                retire_cycle_o = WB cycle - 5, retire_dest_o 0 none / 1 x / 2 f.
// Latency: host read data 1 cycle; tile pipeline timing per tess_core.
module tess_tile #(
  parameter int MemBytes = tess_params_pkg::TILE_MEM_BYTES,
  parameter int TileId   = 0,
  parameter int NumTiles = 1,
  localparam int Contexts = tess_params_pkg::NUM_CONTEXTS,
  localparam int Aw       = $clog2(MemBytes / 4)
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      run_i,
  // host memory port
  input  logic                      host_req_i,
  input  logic                      host_we_i,
  input  logic [3:0]                host_be_i,
  input  logic [Aw-1:0]             host_addr_i,
  input  logic [31:0]               host_wdata_i,
  output logic [31:0]               host_rdata_o,
  // status
  output logic                      halting_o,
  output logic                      halted_o,
  output logic [31:0]               exit_code_o,
  output logic                      trap_o,
  output logic [2:0]                trap_ctx_o,
  output logic [31:0]               trap_pc_o,
  output logic [4:0]                trap_cause_o,
  output logic [31:0]               trap_value_o,
  output logic                      console_valid_o,
  output logic [7:0]                console_byte_o,
  // counters
  output logic [63:0]               cycle_o,
  output logic [Contexts*64-1:0]    instret_o,    // context k at [64*k +: 64]
  output logic [63:0]               idle_o,
  // retirement trace
  output logic                      retire_valid_o,
  output logic [63:0]               retire_cycle_o,
  output logic [2:0]                retire_ctx_o,
  output logic [31:0]               retire_pc_o,
  output logic [31:0]               retire_insn_o,
  output logic [1:0]                retire_dest_o,
  output logic [4:0]                retire_rd_o,
  output logic [31:0]               retire_value_o
);

  logic          imem_req;
  logic [Aw-1:0] imem_addr;
  logic [31:0]   imem_rdata;
  logic          dmem_req;
  logic          dmem_we;
  logic [3:0]    dmem_be;
  logic [Aw-1:0] dmem_addr;
  logic [31:0]   dmem_wdata;
  logic [31:0]   b_rdata;
  logic          b_req;
  logic          b_we;
  logic [3:0]    b_be;
  logic [Aw-1:0] b_addr;
  logic [31:0]   b_wdata;

  tess_core #(
    .MemBytes (MemBytes),
    .TileId   (TileId),
    .NumTiles (NumTiles)
  ) u_core (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .run_i           (run_i),
    .imem_req_o      (imem_req),
    .imem_addr_o     (imem_addr),
    .imem_rdata_i    (imem_rdata),
    .dmem_req_o      (dmem_req),
    .dmem_we_o       (dmem_we),
    .dmem_be_o       (dmem_be),
    .dmem_addr_o     (dmem_addr),
    .dmem_wdata_o    (dmem_wdata),
    .dmem_rdata_i    (b_rdata),
    .halting_o       (halting_o),
    .halted_o        (halted_o),
    .exit_code_o     (exit_code_o),
    .trap_o          (trap_o),
    .trap_ctx_o      (trap_ctx_o),
    .trap_pc_o       (trap_pc_o),
    .trap_cause_o    (trap_cause_o),
    .trap_value_o    (trap_value_o),
    .console_valid_o (console_valid_o),
    .console_byte_o  (console_byte_o),
    .cycle_o         (cycle_o),
    .instret_o       (instret_o),
    .idle_o          (idle_o),
    .retire_valid_o  (retire_valid_o),
    .retire_cycle_o  (retire_cycle_o),
    .retire_ctx_o    (retire_ctx_o),
    .retire_pc_o     (retire_pc_o),
    .retire_insn_o   (retire_insn_o),
    .retire_dest_o   (retire_dest_o),
    .retire_rd_o     (retire_rd_o),
    .retire_value_o  (retire_value_o)
  );

  // Port B belongs to the core while running and to the host while held.
  always_comb begin
    if (run_i) begin
      b_req   = dmem_req;
      b_we    = dmem_we;
      b_be    = dmem_be;
      b_addr  = dmem_addr;
      b_wdata = dmem_wdata;
    end else begin
      b_req   = host_req_i;
      b_we    = host_we_i;
      b_be    = host_be_i;
      b_addr  = host_addr_i;
      b_wdata = host_wdata_i;
    end
  end

  assign host_rdata_o = b_rdata;

  tess_sram #(
    .Words (MemBytes / 4)
  ) u_sram (
    .clk_i     (clk_i),
    .a_req_i   (imem_req),
    .a_addr_i  (imem_addr),
    .a_rdata_o (imem_rdata),
    .b_req_i   (b_req),
    .b_we_i    (b_we),
    .b_be_i    (b_be),
    .b_addr_i  (b_addr),
    .b_wdata_i (b_wdata),
    .b_rdata_o (b_rdata)
  );

endmodule
