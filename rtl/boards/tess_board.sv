// A tessera board: the chip behind the UART link bridge (docs/bringup.md). Board-independent;
// a board's top (rtl/boards/<board>/) adds its clock, pins and LEDs, and the board simulation
// (host/board, tessera-board-sim) verilates this module with its UART pins on a pty.
// Reset: rst_ni may be asynchronous (a button); it is synchronised here and every register of the
// board is reset synchronously. uart_rx_i is synchronised in tess_uart_rx.
// Baud rate: ClkPerBit = clock / baud (12 MHz / 115200 baud = 104).
module tess_board #(
  parameter int NumTiles     = tess_params_pkg::NUM_TILES,
  parameter int MemBytes     = tess_params_pkg::TILE_MEM_BYTES,
  parameter bit HasFpu       = tess_params_pkg::HAS_FPU != 0,
  parameter bit HasMulDiv    = tess_params_pkg::HAS_MULDIV != 0,
  parameter int CounterBits  = tess_params_pkg::COUNTER_BITS,
  parameter bit HasExchange  = tess_params_pkg::HAS_EXCHANGE != 0,
  parameter bit HasCheckpoint = tess_params_pkg::HAS_CHECKPOINT != 0,
  parameter int Contexts     = tess_params_pkg::NUM_CONTEXTS,
  parameter bit MatrixUnit   = tess_params_pkg::MATRIX_UNIT != 0,
  parameter int ClkPerBit    = 104,
  parameter int CyclesPerMs  = 12000,
  parameter int MaxPayload   = 1024,
  parameter int ConsoleBytes = 1024
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic uart_rx_i,
  output logic uart_tx_o,
  output logic busy_o,        // a request, run or partial frame is in progress
  output logic running_o,     // the chip runs
  output logic error_o        // a frame was rejected since reset (bad CRC, ...)
);

  // Reset synchroniser: asserts at once (on the next edge), releases two edges after rst_ni.
  logic [1:0] rst_sync_q;
  always_ff @(posedge clk_i) begin
    rst_sync_q <= {rst_sync_q[0], rst_ni};
  end
  logic rst_n;
  assign rst_n = rst_sync_q[1] && rst_ni;

  logic       rx_valid, rx_err, tx_valid, tx_ready;
  logic [7:0] rx_data, tx_data;

  tess_uart_rx #(
    .ClkPerBit (ClkPerBit)
  ) u_uart_rx (
    .clk_i   (clk_i),
    .rst_ni  (rst_n),
    .rx_i    (uart_rx_i),
    .valid_o (rx_valid),
    .data_o  (rx_data),
    .err_o   (rx_err)
  );

  tess_uart_tx #(
    .ClkPerBit (ClkPerBit)
  ) u_uart_tx (
    .clk_i   (clk_i),
    .rst_ni  (rst_n),
    .valid_i (tx_valid),
    .data_i  (tx_data),
    .ready_o (tx_ready),
    .tx_o    (uart_tx_o)
  );

  logic                            chip_rst_n, run;
  logic                            host_req, host_we, host_err;
  logic [15:0]                     host_tile;
  logic [31:0]                     host_addr, host_wdata, host_rdata;
  logic [3:0]                      host_be;
  logic                            ctl_we;
  logic [11:0]                     ctl_addr;
  logic [31:0]                     ctl_wdata, ctl_rdata;
  logic                            ctl_err;
  logic [3:0]                      state;
  logic                            stopping;
  logic [63:0]                     cycle;
  logic [NumTiles-1:0]             console_valid;
  logic [NumTiles*8-1:0]           console_byte;
  logic [NumTiles*64-1:0]          tile_cycle;
  logic [NumTiles*Contexts*64-1:0] unused_instret;  // STATS reads counts through CTX_SEL/C_INSTRET
  logic [31:0]                     bad_frames;

  tess_link_bridge #(
    .NumTiles     (NumTiles),
    .MemBytes     (MemBytes),
    .Contexts     (Contexts),
    .MaxPayload   (MaxPayload),
    .ConsoleBytes (ConsoleBytes),
    .CyclesPerMs  (CyclesPerMs),
    .HasFpu       (HasFpu),
    .HasMulDiv    (HasMulDiv),
    .CounterBits  (CounterBits),
    .HasExchange  (HasExchange),
    .HasCheckpoint (HasCheckpoint),
    .MatrixUnit    (MatrixUnit)
  ) u_bridge (
    .clk_i           (clk_i),
    .rst_ni          (rst_n),
    .rx_valid_i      (rx_valid),
    .rx_data_i       (rx_data),
    .tx_valid_o      (tx_valid),
    .tx_data_o       (tx_data),
    .tx_ready_i      (tx_ready),
    .chip_rst_no     (chip_rst_n),
    .run_o           (run),
    .host_req_o      (host_req),
    .host_we_o       (host_we),
    .host_tile_o     (host_tile),
    .host_addr_o     (host_addr),
    .host_be_o       (host_be),
    .host_wdata_o    (host_wdata),
    .host_rdata_i    (host_rdata),
    .host_err_i      (host_err),
    .ctl_we_o        (ctl_we),
    .ctl_addr_o      (ctl_addr),
    .ctl_wdata_o     (ctl_wdata),
    .ctl_rdata_i     (ctl_rdata),
    .ctl_err_i       (ctl_err),
    .state_i         (state),
    .stopping_i      (stopping),
    .cycle_i         (cycle),
    .console_valid_i (console_valid),
    .console_byte_i  (console_byte),
    .tile_cycle_i    (tile_cycle),
    .busy_o          (busy_o),
    .running_o       (running_o),
    .bad_frames_o    (bad_frames)
  );

  // Retirement outputs are for in-process simulators; a board has no use for them.
  logic [NumTiles-1:0]    unused_retire_valid;
  logic [NumTiles*64-1:0] unused_retire_cycle;
  logic [NumTiles*3-1:0]  unused_retire_ctx;
  logic [NumTiles*32-1:0] unused_retire_pc, unused_retire_insn, unused_retire_value;
  logic [NumTiles*2-1:0]  unused_retire_dest;
  logic [NumTiles*5-1:0]  unused_retire_rd;
  logic                   unused_rx_err;
  assign unused_rx_err = rx_err;

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
  ) u_chip (
    .clk_i           (clk_i),
    .rst_ni          (chip_rst_n),
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
    .retire_valid_o  (unused_retire_valid),
    .retire_cycle_o  (unused_retire_cycle),
    .retire_ctx_o    (unused_retire_ctx),
    .retire_pc_o     (unused_retire_pc),
    .retire_insn_o   (unused_retire_insn),
    .retire_dest_o   (unused_retire_dest),
    .retire_rd_o     (unused_retire_rd),
    .retire_value_o  (unused_retire_value),
    .tile_cycle_o    (tile_cycle),
    .instret_o       (unused_instret)
  );

  assign error_o = (bad_frames != 32'd0);

endmodule
