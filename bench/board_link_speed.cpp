// board_link_speed: throughput and latency of the link over the simulated board's UART
// (tessera-board-sim on a pty, docs/bringup.md). Reports wall-clock figures and, from the
// harness's cycle count, the same figures in simulated board time (what a board with that clock
// and baud rate would give), plus the share of the line rate that carries payload.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <vector>

#include "cli_numbers.hpp"
#include "server_process.hpp"
#include "tessera/chip_params.h"
#include "tessera/device.hpp"

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  size_t bytes = 16384;
  unsigned smallReads = 200;
  CLI::App app{"board_link_speed: link throughput over the simulated board UART"};
  app.add_option("--bytes", bytes, "bytes per transfer direction")->capture_default_str();
  app.add_option("--small-reads", smallReads, "4-byte reads for the latency")
      ->capture_default_str();
  tessera::cli::requireFiniteNumbers(app);
  CLI11_PARSE(app, argc, argv);

  tessera::link::ServerProcess board(TESSERA_BOARD_SIM_PATH, {});
  auto dev = tessera::openDevice(board.deviceString());
  std::vector<uint8_t> block(bytes, 0x5A);
  // Board clock cycles of an operation, from the bridge's CR_LINK_CLOCK; the cycles of the two
  // CTRL_READs around it (one such pair, measured first) are subtracted. The simulated board's
  // clock stops while the harness sleeps waiting for the host, so board time counts the line
  // and the bridge, not the host's turnaround.
  auto boardCycles = [&]() { return dev->readControl(TESS_CR_LINK_CLOCK); };
  uint32_t c0 = boardCycles();
  const uint32_t pair = boardCycles() - c0;
  auto t0 = Clock::now();
  c0 = boardCycles();
  dev->writeMemory(0, 0, block);
  const double wrCycles = static_cast<double>(boardCycles() - c0 - pair);
  const double wr = since(t0);
  t0 = Clock::now();
  c0 = boardCycles();
  dev->readMemory(0, 0, block);
  const double rdCycles = static_cast<double>(boardCycles() - c0 - pair);
  const double rd = since(t0);
  std::vector<double> lat;
  std::vector<uint8_t> word(4);
  for (unsigned i = 0; i < smallReads; ++i) {
    t0 = Clock::now();
    dev->readMemory(0, 4 * i, word);
    lat.push_back(since(t0));
  }
  std::sort(lat.begin(), lat.end());
  // The simulated board: TESSERA_BOARD_CYCLES_PER_MS cycles per ms, TESSERA_BOARD_CLK_PER_BIT
  // cycles per bit, 10 bits a byte; a 1 KiB-payload frame carries 1024 of 1052 bytes.
  const double baud = 1000.0 * TESSERA_BOARD_CYCLES_PER_MS / TESSERA_BOARD_CLK_PER_BIT;
  fmt::print("board_link_speed: {} bytes each way, simulated line {:.0f} baud\n", bytes, baud);
  const double hz = 1000.0 * TESSERA_BOARD_CYCLES_PER_MS;
  fmt::print("  write  {:8.1f} KB/s wall, {:6.1f} KB/s in board time ({:.0f} board cycles)\n",
             bytes / wr / 1e3, bytes / (wrCycles / hz) / 1e3, wrCycles);
  fmt::print("  read   {:8.1f} KB/s wall, {:6.1f} KB/s in board time ({:.0f} board cycles)\n",
             bytes / rd / 1e3, bytes / (rdCycles / hz) / 1e3, rdCycles);
  fmt::print("  board time / wall time: {:.2f} (the simulation's speed against a real board)\n",
             (wrCycles + rdCycles) / hz / (wr + rd));
  fmt::print("  4-byte read, median {:.2f} ms wall\n", lat[lat.size() / 2] * 1e3);
  fmt::print("  line-rate bound: {:.1f} KB/s payload at {:.0f} baud, {:.1f} KB/s at 115200 baud\n",
             baud / 10 * 1024 / 1052 / 1e3, baud, 115200.0 / 10 * 1024 / 1052 / 1e3);
  return 0;
}
