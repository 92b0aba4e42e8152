// Icarus run of one device program on the 4-tile chip (scripts/bench-rtl.sh times it against
// Verilator): the image (+image=<file>, written by elf2memh.py: one word per line for the whole
// tile memory) is read into tile 0's SRAM array, tiles 1..3 are disabled through T_ENABLE as
// RtlDevice does for a single-tile run, and the chip runs until it leaves RUNNING or
// +max_cycles=<n> (default 10000000) clock cycles pass. Prints tile 0's console, then one line
//   RESULT state=<STATUS state> cycles=<chip cycles> exit=<tile 0 exit code> clocks=<clocks run>
// and PASS when the chip halted with exit code 0.
// Latency: none (testbench).
module tess_chip_run_tb;

  localparam int NumTiles = 4;
  localparam int MemBytes = tess_params_pkg::TILE_MEM_BYTES;
  localparam int Contexts = tess_params_pkg::NUM_CONTEXTS;

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

  tess_chip #(
    .NumTiles (NumTiles),
    .MemBytes (MemBytes)
  ) u_dut (
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
  longint      clocks;
  logic [31:0] exit_code;

  initial begin
    if (!$value$plusargs("image=%s", image)) begin
      $display("FAIL: no +image=<file.memh>");
      $finish;
    end
    if (!$value$plusargs("max_cycles=%d", max_cycles)) begin
      max_cycles = 10000000;
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
    $readmemh(image, u_dut.g_tile[0].u_tile.u_sram.mem, 0, MemBytes / 4 - 1);
    repeat (2) @(negedge clk);
    rst_n = 1'b1;
    @(negedge clk);

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
    $display("");
    $display("RESULT state=%0d cycles=%0d exit=%0d clocks=%0d", state, cycle, exit_code, clocks);
    if (state == 4'(tess_params_pkg::ST_HALTED) && exit_code == 32'd0) begin
      $display("PASS");
    end else begin
      $display("FAIL");
    end
    $finish;
  end

endmodule
