// Simulation top of the verilated chips that RtlDevice drives (Vtess_chip4 / Vtess_chip16): the
// chip, with its host-port and control-port inputs taken through registers that the driver loads
// with a strobe. Not part of the chip: FPGA and ASIC flows, the board top and the Icarus
// testbenches use tess_chip directly.
//
// Why (docs/benchmarks.md, "RTL, third step"): Verilator 5.006 evaluates all logic that depends
// combinationally on a top-level input on every eval(), twice per clock, whether an input changed
// or not. Every tile's port-B mux and checkpoint-state read mux depend on host_* and ctl_*, so
// with them as top-level inputs every tile, disabled ones included, was evaluated twice per cycle
// (over a third of the time with one busy tile of 16). Behind these registers the same logic runs
// only when a tile's clock ticks or the driver loads new port values.
//
// Timing: the chip sees the values of the ports at the last rising edge of port_load_i, and
// nothing else changes; loading at any time before a clock edge or before reading an output is
// the same as setting tess_chip's ports then (the driver loads after setting the ports, before
// every tick and before reading ctl_rdata_o / ctl_err_o). clk_i, rst_ni and run_i go straight to
// the chip (run_i is registered inside it). Outputs are tess_chip's.
module tess_chip_sim #(
  parameter int NumTiles = tess_params_pkg::NUM_TILES,
  parameter int MemBytes = tess_params_pkg::TILE_MEM_BYTES,
  parameter bit HasFpu   = tess_params_pkg::HAS_FPU != 0,
  // 0 only in a build verilated to measure what the unit costs (TESSERA_RTL_NO_MATRIX_UNIT)
  parameter bit MatrixUnit = tess_params_pkg::MATRIX_UNIT != 0,
  localparam int Contexts = tess_params_pkg::NUM_CONTEXTS
) (
  input  logic                          clk_i,
  input  logic                          rst_ni,
  input  logic                          run_i,
  input  logic                          port_load_i,  // rising edge: the chip takes the ports
  // host memory port (tess_chip)
  input  logic                          host_req_i,
  input  logic                          host_we_i,
  input  logic [15:0]                   host_tile_i,
  input  logic [31:0]                   host_addr_i,
  input  logic [3:0]                    host_be_i,
  input  logic [31:0]                   host_wdata_i,
  output logic [31:0]                   host_rdata_o,
  output logic                          host_err_o,
  // control and status registers (tess_chip)
  input  logic                          ctl_we_i,
  input  logic [11:0]                   ctl_addr_i,
  input  logic [31:0]                   ctl_wdata_i,
  output logic [31:0]                   ctl_rdata_o,
  output logic                          ctl_err_o,
  // status and per tile (tess_chip)
  output logic [3:0]                    state_o,
  output logic                          stopping_o,
  output logic [63:0]                   cycle_o,
  output logic [NumTiles-1:0]           console_valid_o,
  output logic [NumTiles*8-1:0]         console_byte_o,
  output logic [NumTiles-1:0]           retire_valid_o,
  output logic [NumTiles*64-1:0]        retire_cycle_o,
  output logic [NumTiles*3-1:0]         retire_ctx_o,
  output logic [NumTiles*32-1:0]        retire_pc_o,
  output logic [NumTiles*32-1:0]        retire_insn_o,
  output logic [NumTiles*2-1:0]         retire_dest_o,
  output logic [NumTiles*5-1:0]         retire_rd_o,
  output logic [NumTiles*32-1:0]        retire_value_o,
  output logic [NumTiles*64-1:0]        tile_cycle_o,
  output logic [NumTiles*Contexts*64-1:0] instret_o
);

  logic        host_req_q;
  logic        host_we_q;
  logic [15:0] host_tile_q;
  logic [31:0] host_addr_q;
  logic [3:0]  host_be_q;
  logic [31:0] host_wdata_q;
  logic        ctl_we_q;
  logic [11:0] ctl_addr_q;
  logic [31:0] ctl_wdata_q;

  // No reset: the driver loads the ports before the first clock edge.
  always_ff @(posedge port_load_i) begin
    host_req_q   <= host_req_i;
    host_we_q    <= host_we_i;
    host_tile_q  <= host_tile_i;
    host_addr_q  <= host_addr_i;
    host_be_q    <= host_be_i;
    host_wdata_q <= host_wdata_i;
    ctl_we_q     <= ctl_we_i;
    ctl_addr_q   <= ctl_addr_i;
    ctl_wdata_q  <= ctl_wdata_i;
  end

  tess_chip #(
    .NumTiles   (NumTiles),
    .MemBytes   (MemBytes),
    .HasFpu     (HasFpu),
    .MatrixUnit (MatrixUnit)
  ) u_chip (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .run_i           (run_i),
    .host_req_i      (host_req_q),
    .host_we_i       (host_we_q),
    .host_tile_i     (host_tile_q),
    .host_addr_i     (host_addr_q),
    .host_be_i       (host_be_q),
    .host_wdata_i    (host_wdata_q),
    .host_rdata_o    (host_rdata_o),
    .host_err_o      (host_err_o),
    .ctl_we_i        (ctl_we_q),
    .ctl_addr_i      (ctl_addr_q),
    .ctl_wdata_i     (ctl_wdata_q),
    .ctl_rdata_o     (ctl_rdata_o),
    .ctl_err_o       (ctl_err_o),
    .state_o         (state_o),
    .stopping_o      (stopping_o),
    .cycle_o         (cycle_o),
    .console_valid_o (console_valid_o),
    .console_byte_o  (console_byte_o),
    .retire_valid_o  (retire_valid_o),
    .retire_cycle_o  (retire_cycle_o),
    .retire_ctx_o    (retire_ctx_o),
    .retire_pc_o     (retire_pc_o),
    .retire_insn_o   (retire_insn_o),
    .retire_dest_o   (retire_dest_o),
    .retire_rd_o     (retire_rd_o),
    .retire_value_o  (retire_value_o),
    .tile_cycle_o    (tile_cycle_o),
    .instret_o       (instret_o)
  );

endmodule
