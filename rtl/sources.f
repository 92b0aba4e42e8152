# Every RTL source of the chip, in compile order, relative to rtl/: the one list that
# rtl/CMakeLists.txt (verilate), scripts/lint-rtl.sh (Verilator, Yosys, Icarus) and
# rtl/tests/icarus/build.sh read (the latter two through scripts/rtl-sources.sh). The generated
# chip-parameter package (rtl/params.json -> tess_params_pkg.sv) comes first and is not listed.
# The include files core/*.svh are included from core/ and are not listed either.
tess_pkg.sv
prim/tess_clock_gate.sv
fpu/tess_fpu_round.sv
fpu/tess_fpu.sv
fpu/tess_fpu_divsqrt.sv
core/tess_core_pkg.sv
core/tess_decoder.sv
core/tess_alu.sv
core/tess_mul.sv
core/tess_div.sv
core/tess_regfile.sv
core/tess_sram.sv
core/tess_csr.sv
core/tess_mmio.sv
core/tess_result_queue.sv
core/tess_core_fp.sv
core/tess_core_ctx.sv
core/tess_core_id.sv
core/tess_core_ex.sv
core/tess_core_wb.sv
core/tess_amp_fma.sv
core/tess_amp.sv
core/tess_core.sv
core/tess_tile.sv
chip/tess_exchange.sv
chip/tess_exchange_absent.sv
chip/tess_sync.sv
chip/tess_chip.sv
bridge/tess_bridge_pkg.sv
bridge/tess_link_crc.sv
bridge/tess_link_rx.sv
bridge/tess_link_run.sv
bridge/tess_link_reply.sv
bridge/tess_link_seq.sv
bridge/tess_link_tx.sv
bridge/tess_link_console.sv
bridge/tess_uart_rx.sv
bridge/tess_uart_tx.sv
bridge/tess_link_bridge.sv
boards/tess_board.sv
