// link_speed: link throughput and latency side by side — in-process, TCP loopback and pty —
// each fronting the same backend. Starts its own tessera-server children (127.0.0.1 only).
// Large writes: whole-tile writes (64 KiB frames); small reads: one 4-byte word, one round trip.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "cli_numbers.hpp"
#include "server_process.hpp"
#include "tessera/device.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Figures {
  double writeMBps = 0;
  double readMBps = 0;
  double smallReadUs = 0;  // median
};

Figures measure(tessera::Device& dev, double seconds) {
  const tessera::ChipInfo info = dev.info();
  std::vector<uint8_t> block(info.tileMemBytes, 0xA5);
  Figures f;
  size_t bytes = 0;
  auto t0 = Clock::now();
  while (Clock::now() - t0 < std::chrono::duration<double>(seconds)) {
    for (unsigned t = 0; t < info.tiles; ++t) dev.writeMemory(t, 0, block);
    bytes += block.size() * info.tiles;
  }
  f.writeMBps = bytes / 1e6 / std::chrono::duration<double>(Clock::now() - t0).count();
  bytes = 0;
  t0 = Clock::now();
  while (Clock::now() - t0 < std::chrono::duration<double>(seconds)) {
    for (unsigned t = 0; t < info.tiles; ++t) dev.readMemory(t, 0, block);
    bytes += block.size() * info.tiles;
  }
  f.readMBps = bytes / 1e6 / std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<double> us;
  uint8_t word[4];
  t0 = Clock::now();
  while (Clock::now() - t0 < std::chrono::duration<double>(seconds) || us.size() < 10) {
    const auto s = Clock::now();
    dev.readMemory(0, 0x100, word);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - s).count());
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  f.smallReadUs = us[us.size() / 2];
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"link_speed: link throughput and latency, in-process vs TCP loopback vs pty"};
  std::string backend = "model";
  double seconds = 1.0;
  app.add_option("--device", backend, "backend the server fronts (model or rtl)")
      ->capture_default_str();
  app.add_option("--seconds", seconds, "time per measurement")->capture_default_str();
  tessera::cli::requireFiniteNumbers(app);
  CLI11_PARSE(app, argc, argv);
  try {
    fmt::print("{:<22} {:>14} {:>14} {:>18}\n", "path (" + backend + ")", "write MB/s", "read MB/s",
               "4-byte read us");
    auto row = [&](const std::string& name, tessera::Device& dev) {
      const Figures f = measure(dev, seconds);
      fmt::print("{:<22} {:>14.1f} {:>14.1f} {:>18.1f}\n", name, f.writeMBps, f.readMBps,
                 f.smallReadUs);
    };
    {
      auto dev = tessera::openDevice(backend);
      row("in-process", *dev);
    }
    {
      tessera::link::ServerProcess server(TESSERA_SERVER_PATH,
                                          {"--device", backend, "--listen", "127.0.0.1:0"});
      auto dev = tessera::openDevice(server.deviceString());
      row("tcp loopback", *dev);
    }
    {
      tessera::link::ServerProcess server(TESSERA_SERVER_PATH, {"--device", backend, "--pty"});
      auto dev = tessera::openDevice(server.deviceString());
      row("pty (serial:)", *dev);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "link_speed: {}\n", e.what());
    return 1;
  }
  return 0;
}
