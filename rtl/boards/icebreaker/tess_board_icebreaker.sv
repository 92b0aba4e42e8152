// iCEBreaker (Lattice iCE40 UP5K-SG48) board top: 12 MHz oscillator, the FTDI UART at 115200 baud
// (12 MHz / 104), the user button as reset, the red LED for rejected frames and the green LED
// while the chip runs. Pins: tess_board_icebreaker.pcf. Built by scripts/fpga-ice40.sh.
// The defaults are the board's reduced configuration, ICE40 in rtl/params.json ("configs"):
// one RV32I tile (no M, no F) with two contexts, 4 KiB and 32-bit tile counters, no exchange
// engine, no checkpoint registers (docs/bringup.md, "iCE40").
module tess_board_icebreaker #(
  parameter int NumTiles = tess_params_pkg::ICE40_NUM_TILES,
  parameter int MemBytes = tess_params_pkg::ICE40_TILE_MEM_BYTES,
  parameter bit HasFpu   = tess_params_pkg::ICE40_HAS_FPU != 0,
  parameter bit HasMulDiv = tess_params_pkg::ICE40_HAS_MULDIV != 0,
  parameter int CounterBits = tess_params_pkg::ICE40_COUNTER_BITS,
  parameter bit HasExchange   = tess_params_pkg::ICE40_HAS_EXCHANGE != 0,
  parameter bit HasCheckpoint = tess_params_pkg::ICE40_HAS_CHECKPOINT != 0,
  parameter int Contexts = tess_params_pkg::ICE40_NUM_CONTEXTS,
  parameter bit MatrixUnit = tess_params_pkg::ICE40_MATRIX_UNIT != 0
) (
  input  logic CLK,
  input  logic BTN_N,
  input  logic RX,
  output logic TX,
  output logic LEDR_N,
  output logic LEDG_N
);

  logic busy, running, error;
  logic unused_busy;
  assign unused_busy = busy;

  tess_board #(
    .NumTiles     (NumTiles),
    .MemBytes     (MemBytes),
    .HasFpu       (HasFpu),
    .HasMulDiv    (HasMulDiv),
    .CounterBits  (CounterBits),
    .HasExchange  (HasExchange),
    .HasCheckpoint (HasCheckpoint),
    .MatrixUnit   (MatrixUnit),
    .Contexts     (Contexts),
    .ClkPerBit    (104),
    .CyclesPerMs  (12000),
    .MaxPayload   (256),
    .ConsoleBytes (256)
  ) u_board (
    .clk_i     (CLK),
    .rst_ni    (BTN_N),
    .uart_rx_i (RX),
    .uart_tx_o (TX),
    .busy_o    (busy),
    .running_o (running),
    .error_o   (error)
  );

  assign LEDR_N = !error;
  assign LEDG_N = !running;

endmodule
