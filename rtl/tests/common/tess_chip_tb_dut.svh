// The chip under test of the Icarus testbenches (rtl/tests/smoke/tess_chip_smoke_tb.sv,
// rtl/tests/icarus/tess_chip_run_tb.sv): every port of tess_chip as a testbench signal, and the
// instance u_dut. Include it inside the testbench module after the parameters NumTiles,
// MemBytes, HasFpu, HasMulDiv, CounterBits, HasExchange, HasCheckpoint, Contexts and MatrixUnit. With
// TESS_NETLIST defined the instance is Yosys' netlist of the chip, tess_chip_netlist.
  logic                            clk;
  logic                            rst_n;
  logic                            run;
  logic                            host_req;
  logic                            host_we;
  logic [15:0]                     host_tile;
  logic [31:0]                     host_addr;
  logic [3:0]                      host_be;
  logic [31:0]                     host_wdata;
  logic [31:0]                     host_rdata;
  logic                            host_err;
  logic                            ctl_we;
  logic [11:0]                     ctl_addr;
  logic [31:0]                     ctl_wdata;
  logic [31:0]                     ctl_rdata;
  logic                            ctl_err;
  logic [3:0]                      state;
  logic                            stopping;
  logic [63:0]                     cycle;
  logic [NumTiles-1:0]             console_valid;
  logic [NumTiles*8-1:0]           console_byte;
  logic [NumTiles-1:0]             retire_valid;
  logic [NumTiles*64-1:0]          retire_cycle;
  logic [NumTiles*3-1:0]           retire_ctx;
  logic [NumTiles*32-1:0]          retire_pc;
  logic [NumTiles*32-1:0]          retire_insn;
  logic [NumTiles*2-1:0]           retire_dest;
  logic [NumTiles*5-1:0]           retire_rd;
  logic [NumTiles*32-1:0]          retire_value;
  logic [NumTiles*64-1:0]          tile_cycle;
  logic [NumTiles*Contexts*64-1:0] instret;

`ifdef TESS_NETLIST
  // The post-synthesis netlist of tess_chip (rtl/tests/icarus/run-ice40.sh --netlist): its
  // parameters are fixed by the synthesis, which must use the testbench's values.
  tess_chip_netlist u_dut (
`else
  tess_chip #(
    .NumTiles (NumTiles),
    .MemBytes (MemBytes),
    .HasFpu   (HasFpu),
    .HasMulDiv (HasMulDiv),
    .Contexts  (Contexts),
    .CounterBits (CounterBits),
    .HasExchange   (HasExchange),
    .HasCheckpoint (HasCheckpoint),
    .MatrixUnit    (MatrixUnit)
  ) u_dut (
`endif
    .clk_i           (clk),
    .rst_ni          (rst_n),
    .run_i           (run),
    .host_req_i      (host_req),
    .host_we_i       (host_we),
    .host_tile_i     (host_tile),
    .host_addr_i     (host_addr),
    .host_be_i       (host_be),
    .host_wdata_i    (host_wdata),
    .host_rdata_o    (host_rdata),
    .host_err_o      (host_err),
    .ctl_we_i        (ctl_we),
    .ctl_addr_i      (ctl_addr),
    .ctl_wdata_i     (ctl_wdata),
    .ctl_rdata_o     (ctl_rdata),
    .ctl_err_o       (ctl_err),
    .state_o         (state),
    .stopping_o      (stopping),
    .cycle_o         (cycle),
    .console_valid_o (console_valid),
    .console_byte_o  (console_byte),
    .retire_valid_o  (retire_valid),
    .retire_cycle_o  (retire_cycle),
    .retire_ctx_o    (retire_ctx),
    .retire_pc_o     (retire_pc),
    .retire_insn_o   (retire_insn),
    .retire_dest_o   (retire_dest),
    .retire_rd_o     (retire_rd),
    .retire_value_o  (retire_value),
    .tile_cycle_o    (tile_cycle),
    .instret_o       (instret)
  );
