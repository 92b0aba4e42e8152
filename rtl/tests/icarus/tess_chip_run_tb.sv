// Icarus run of one device program on the 4-tile chip (timed against the verilated chip by
// scripts/bench-rtl.sh), or on another configuration through the parameters (iverilog -P; the
// iCE40 board's with rtl/tests/icarus/run-ice40.sh, also on Yosys' netlist of it with TESS_NETLIST): the image
// (+image=<file>, written by elf2memh.py: one word per line for the whole tile memory) is read
// into tile 0's SRAM array (TESS_NETLIST: written through the host port), tiles 1..3 are disabled
// through T_ENABLE as RtlDevice does for a single-tile run, and the chip runs until it leaves
// RUNNING or +max_cycles=<n> (default 10000000) clock cycles pass. With +runs=<n> (default 1) the
// program runs n times, each after CTRL.RESET and the image loaded again, with a line
//   RUN <i> state=<STATUS state> cycles=<chip cycles> exit=<tile 0 exit code>
// for each run but the last. Prints tile 0's console, then one line for the last run
//   RESULT state=<STATUS state> cycles=<chip cycles> exit=<tile 0 exit code> clocks=<clocks run>
//   ERROR pc=<ERR_PC> cause=<ERR_CAUSE> value=<ERR_VALUE>   (hex; only in the error state)
//   COUNTERS instr=<T_INSTR> idle=<T_IDLE> syncwait=<T_SYNCWAIT> exch=<T_EXCH> ctx=<C_INSTRET of
//            contexts 0..5, through CTX_SEL, space-separated>   (tile 0)
// and PASS when the chip halted with exit code 0.
// Latency: none (testbench).
module tess_chip_run_tb;

  parameter int NumTiles = 4;
  parameter int MemBytes = tess_params_pkg::TILE_MEM_BYTES;
  parameter bit HasFpu   = tess_params_pkg::HAS_FPU != 0;
  parameter bit HasMulDiv = tess_params_pkg::HAS_MULDIV != 0;
  parameter int CounterBits = tess_params_pkg::COUNTER_BITS;
  parameter bit HasExchange   = tess_params_pkg::HAS_EXCHANGE != 0;
  parameter bit HasCheckpoint = tess_params_pkg::HAS_CHECKPOINT != 0;
  parameter int Contexts = tess_params_pkg::NUM_CONTEXTS;
  parameter bit MatrixUnit = tess_params_pkg::MATRIX_UNIT != 0;

  `include "tess_chip_tb_dut.svh"

  always #5 clk = ~clk;

  // Console bytes of tile 0, sampled before the edge that commits them (as RtlDevice does).
  always @(posedge clk) begin
    if (run && console_valid[0]) begin
      $write("%c", console_byte[7:0]);
    end
  end

  task automatic ctl_write(input logic [11:0] addr, input logic [31:0] data);
    ctl_we    = 1'b1;
    ctl_addr  = addr;
    ctl_wdata = data;
    @(negedge clk);
    ctl_we = 1'b0;
  endtask

  task automatic ctl_read(input logic [11:0] addr, output logic [31:0] data);
    ctl_addr = addr;
    #1;
    data = ctl_rdata;
  endtask

  string       image;
  longint      max_cycles;
  int          runs;
  longint      clocks;
  logic [31:0] exit_code;
  logic [31:0] err_pc, err_cause, err_value;
  logic [31:0] count_lo, count_hi;

  // A 64-bit counter of the selected tile (LO at offset lo, HI at lo + 4).
  task automatic ctl_read64(input logic [11:0] lo, output longint value);
    ctl_read(lo, count_lo);
    ctl_read(lo + 12'd4, count_hi);
    value = {count_hi, count_lo};
  endtask

  longint c_instr, c_idle, c_swait, c_exch, c_ctx;

  // The image into tile 0's memory a word per cycle through the host port, as RtlDevice loads
  // it: the netlist has no SRAM array to write, and with the matrix unit the SRAM is four banks.
  logic [31:0] image_words [MemBytes / 4];
  task automatic load_image;
    $readmemh(image, image_words, 0, MemBytes / 4 - 1);
    for (int w = 0; w < MemBytes / 4; w++) begin
      host_req   = 1'b1;
      host_we    = 1'b1;
      host_tile  = '0;
      host_addr  = 32'(4 * w);
      host_be    = 4'hf;
      host_wdata = image_words[w];
      @(negedge clk);
    end
    host_req = 1'b0;
    host_we  = 1'b0;
  endtask

  initial begin
    if (!$value$plusargs("image=%s", image)) begin
      $display("FAIL: no +image=<file.memh>");
      $finish;
    end
    if (!$value$plusargs("max_cycles=%d", max_cycles)) begin
      max_cycles = 10000000;
    end
    if (!$value$plusargs("runs=%d", runs)) begin
      runs = 1;
    end
    clk        = 1'b0;
    rst_n      = 1'b0;
    run        = 1'b0;
    host_req   = 1'b0;
    host_we    = 1'b0;
    host_tile  = '0;
    host_addr  = '0;
    host_be    = '0;
    host_wdata = '0;
    ctl_we     = 1'b0;
    ctl_addr   = '0;
    ctl_wdata  = '0;
    repeat (2) @(negedge clk);
    rst_n = 1'b1;
    @(negedge clk);
    load_image();

    for (int r = 1; r <= runs; r++) begin
      if (r > 1) begin
        // CTRL.RESET, then the image again (a reset keeps the memory; the program changed it).
        ctl_write(12'(tess_params_pkg::CR_CTRL), 32'd1);
        repeat (2) @(negedge clk);  // the reset takes effect a cycle after the write
        load_image();
      end
      for (int t = 1; t < NumTiles; t++) begin
        ctl_write(12'(tess_params_pkg::CR_TILE_SEL), 32'(t));
        ctl_write(12'(tess_params_pkg::CR_T_ENABLE), 32'd0);
      end
      ctl_write(12'(tess_params_pkg::CR_TILE_SEL), 32'd0);
      ctl_write(12'(tess_params_pkg::CR_CTRL), 32'd2);  // RUN
      run    = 1'b1;
      clocks = 0;
      while (state == 4'(tess_params_pkg::ST_RUNNING) && clocks < max_cycles) begin
        @(negedge clk);
        clocks++;
      end
      run = 1'b0;
      ctl_read(12'(tess_params_pkg::CR_T_EXIT), exit_code);
      if (r < runs) begin
        $display("");
        $display("RUN %0d state=%0d cycles=%0d exit=%0d", r, state, cycle, exit_code);
      end
    end
    $display("");
    $display("RESULT state=%0d cycles=%0d exit=%0d clocks=%0d", state, cycle, exit_code, clocks);
    if (state == 4'(tess_params_pkg::ST_ERROR)) begin
      ctl_read(12'(tess_params_pkg::CR_ERR_PC), err_pc);
      ctl_read(12'(tess_params_pkg::CR_ERR_CAUSE), err_cause);
      ctl_read(12'(tess_params_pkg::CR_ERR_VALUE), err_value);
      $display("ERROR pc=%08x cause=%0d value=%08x", err_pc, err_cause, err_value);
    end
    ctl_read64(12'(tess_params_pkg::CR_T_INSTR_LO), c_instr);
    ctl_read64(12'(tess_params_pkg::CR_T_IDLE_LO), c_idle);
    ctl_read64(12'(tess_params_pkg::CR_T_SYNCWAIT_LO), c_swait);
    ctl_read64(12'(tess_params_pkg::CR_T_EXCH_LO), c_exch);
    $write("COUNTERS instr=%0d idle=%0d syncwait=%0d exch=%0d ctx=", c_instr, c_idle, c_swait,
           c_exch);
    for (int c = 0; c < Contexts; c++) begin
      ctl_write(12'(tess_params_pkg::CR_CTX_SEL), 32'(c));
      ctl_read64(12'(tess_params_pkg::CR_C_INSTRET_LO), c_ctx);
      if (c != 0) $write(" ");
      $write("%0d", c_ctx);
    end
    $display("");
    if (state == 4'(tess_params_pkg::ST_HALTED) && exit_code == 32'd0) begin
      $display("PASS");
    end else begin
      $display("FAIL");
    end
    $finish;
  end

endmodule
